/**
 * What a memory record must say (docs/writes.md, "Memory records"): the body rules of the record
 * bands (memory.*, device.enrollment / revocation / trace), checked by the write path after the
 * band's own rules (fact-rules.ts). Every refusal names the fact and the field
 * (`facts[i].value.<field>`); nothing here reads or writes the store. The subject rule lives in
 * protocol/memory-records.ts, shared with clients that build record bodies.
 */
import { isB32 } from '../../protocol/base32.js';
import { isCell } from '../../protocol/cell64.js';
import { isAnchorId, isFactCid } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { KEY_ANCHORED_BANDS, isMemoryRecordBand, recordSubject } from '../../protocol/memory-records.js';
import { parseRfc3339 } from '../../protocol/rfc3339.js';
import { EDGE_TYPES } from '../../store/memory.js';

/** Edge types a memory.edge record may state: supersedes and derived_from are implied by facts themselves. */
export const STATED_EDGE_TYPES: readonly string[] = EDGE_TYPES.filter((t) => t !== 'supersedes' && t !== 'derived_from');

export const NOTE_TEXT_MAX = 8000;
export const NOTE_FACTS_MAX = 64;
export const NOTE_TAGS_MAX = 32;
/** A note's speaker (who said or wrote what it records) and thread (the conversation or session it belongs to). */
export const NOTE_SPEAKER_MAX = 100;
export const NOTE_THREAD_MAX = 128;
export const NOTE_VECTOR_DIM: readonly [number, number] = [2, 1024];
export const TAG_RE = /^[a-z0-9][a-z0-9_.:-]{0,63}$/;
export const ENTITY_KIND_RE = /^[a-z][a-z0-9_]{0,63}$/;
const LANG_RE = /^[A-Za-z0-9-]{1,35}$/;
const HEX64_RE = /^[0-9a-f]{64}$/;

type Obj = Record<string, unknown>;

function show(v: unknown): string {
  const s = v === undefined ? 'nothing' : JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** Length in characters (code points), so a limit does not depend on UTF-16 surrogates. */
function chars(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function obj(field: string, v: unknown): Obj {
  if (!isObj(v)) throw invalidArgument(field, `expected an object, got ${show(v)}`);
  return v;
}

/** Refuses a key outside `allowed` and a missing required one. */
function fields(field: string, v: Obj, required: readonly string[], optional: readonly string[], what: string): void {
  const all = [...required, ...optional];
  for (const k of Object.keys(v)) {
    if (!all.includes(k)) throw invalidArgument(`${field}.${k}`, `is not a field of ${what} (fields: ${all.join(', ')})`);
  }
  for (const k of required) {
    if (!(k in v)) throw invalidArgument(`${field}.${k}`, `is required in ${what}`);
  }
}

function text(field: string, v: unknown, max: number, opts: { min?: number; nonBlank?: boolean } = {}): string {
  const min = opts.min ?? 1;
  if (typeof v !== 'string') throw invalidArgument(field, `expected a string, got ${show(v)}`);
  const n = chars(v);
  if (n < min || n > max) throw invalidArgument(field, `expected ${min} to ${max} characters, got ${n}`);
  if (opts.nonBlank && v.trim() === '') throw invalidArgument(field, 'must not be blank');
  return v;
}

function instant(field: string, v: unknown): number {
  const ms = parseRfc3339(v);
  if (!Number.isFinite(ms)) throw invalidArgument(field, `expected an RFC 3339 timestamp (e.g. 2026-01-02T03:04:05Z), got ${show(v)}`);
  return ms;
}

function cidList(field: string, v: unknown, max: number): string[] {
  if (!Array.isArray(v) || v.length > max) throw invalidArgument(field, `expected an array of at most ${max} fact_cids, got ${Array.isArray(v) ? `${v.length} items` : show(v)}`);
  v.forEach((c, j) => {
    if (!isFactCid(c)) throw invalidArgument(`${field}[${j}]`, `expected a fact_cid (52 base32 characters), got ${show(c)}`);
  });
  return v as string[];
}

function entityCid(field: string, v: unknown): string {
  if (!isAnchorId(v)) throw invalidArgument(field, `expected an entity_cid (26 base32 characters), got ${show(v)}`);
  return v;
}

function publicKey(field: string, v: unknown): string {
  if (!isB32(v, 32)) throw invalidArgument(field, `expected an Ed25519 public key (52 base32 characters), got ${show(v)}`);
  return v;
}

// ---- per band --------------------------------------------------------------------------------

function note(f: string, v: Obj): void {
  fields(f, v, ['text'], ['cell', 'entity', 'facts', 'tags', 'observed_at', 'vector', 'speaker', 'thread'], 'memory.note');
  text(`${f}.text`, v.text, NOTE_TEXT_MAX, { nonBlank: true });
  if (v.speaker !== undefined) text(`${f}.speaker`, v.speaker, NOTE_SPEAKER_MAX, { nonBlank: true });
  if (v.thread !== undefined) text(`${f}.thread`, v.thread, NOTE_THREAD_MAX, { nonBlank: true });
  if (v.cell !== undefined && !isCell(v.cell)) throw invalidArgument(`${f}.cell`, `expected a cell64 (from /v1/locate), got ${show(v.cell)}`);
  if (v.entity !== undefined) entityCid(`${f}.entity`, v.entity);
  if (v.facts !== undefined) cidList(`${f}.facts`, v.facts, NOTE_FACTS_MAX);
  if (v.tags !== undefined) {
    const tags = v.tags;
    if (!Array.isArray(tags) || tags.length > NOTE_TAGS_MAX)
      throw invalidArgument(`${f}.tags`, `expected an array of at most ${NOTE_TAGS_MAX} tags, got ${Array.isArray(tags) ? `${tags.length} items` : show(tags)}`);
    const seen = new Set<string>();
    tags.forEach((t, j) => {
      if (typeof t !== 'string' || !TAG_RE.test(t)) throw invalidArgument(`${f}.tags[${j}]`, `expected a tag matching ${TAG_RE.source} (lower case, 1 to 64 characters), got ${show(t)}`);
      if (seen.has(t)) throw invalidArgument(`${f}.tags[${j}]`, `${show(t)} is listed twice`);
      seen.add(t);
    });
  }
  if (v.observed_at !== undefined) instant(`${f}.observed_at`, v.observed_at);
  if (v.vector !== undefined) {
    const vec = v.vector;
    const [lo, hi] = NOTE_VECTOR_DIM;
    if (!Array.isArray(vec) || vec.length < lo || vec.length > hi)
      throw invalidArgument(`${f}.vector`, `expected an array of ${lo} to ${hi} finite numbers, got ${Array.isArray(vec) ? `${vec.length} items` : show(vec)}`);
    vec.forEach((x, j) => {
      if (typeof x !== 'number' || !Number.isFinite(x)) throw invalidArgument(`${f}.vector[${j}]`, `expected a finite number, got ${show(x)}`);
    });
  }
}

function alias(f: string, v: Obj): void {
  fields(f, v, ['entity', 'phrase'], ['lang'], 'memory.alias');
  entityCid(`${f}.entity`, v.entity);
  text(`${f}.phrase`, v.phrase, 200, { nonBlank: true });
  if (v.lang !== undefined && (typeof v.lang !== 'string' || !LANG_RE.test(v.lang))) {
    throw invalidArgument(`${f}.lang`, `expected a language tag of 1 to 35 letters, digits and hyphens (e.g. en, nl-BE), got ${show(v.lang)}`);
  }
}

function edge(f: string, v: Obj): void {
  fields(f, v, ['type', 'from', 'to', 'valid_from'], ['valid_to', 'invalidates', 'reason'], 'memory.edge');
  if (typeof v.type !== 'string' || !STATED_EDGE_TYPES.includes(v.type)) {
    const implied = v.type === 'supersedes' || v.type === 'derived_from' ? ` (${v.type} is implied by the facts themselves and never stated by a record)` : '';
    throw invalidArgument(`${f}.type`, `expected one of ${STATED_EDGE_TYPES.join(', ')}, got ${show(v.type)}${implied}`);
  }
  for (const end of ['from', 'to'] as const) {
    const x = v[end];
    if (!isFactCid(x) && !isAnchorId(x)) throw invalidArgument(`${f}.${end}`, `expected a fact_cid (52 base32 characters) or an entity_cid (26), got ${show(x)}`);
  }
  if (v.from === v.to) throw invalidArgument(`${f}.to`, 'an edge joins two different records (to equals from)');
  const from = instant(`${f}.valid_from`, v.valid_from);
  if (v.valid_to !== undefined) {
    const to = instant(`${f}.valid_to`, v.valid_to);
    if (!(to > from)) throw invalidArgument(`${f}.valid_to`, `must be after valid_from (${String(v.valid_from)})`);
  }
  if (v.invalidates !== undefined) cidList(`${f}.invalidates`, v.invalidates, 16);
  if (v.reason !== undefined) text(`${f}.reason`, v.reason, 500, { min: 0 });
}

function polygon(f: string, p: unknown): void {
  const g = obj(f, p);
  fields(f, g, ['type', 'coordinates'], [], 'a GeoJSON Polygon');
  if (g.type !== 'Polygon') throw invalidArgument(`${f}.type`, `expected "Polygon", got ${show(g.type)}`);
  const rings = g.coordinates;
  if (!Array.isArray(rings) || rings.length !== 1)
    throw invalidArgument(`${f}.coordinates`, `expected exactly one ring (no holes), got ${Array.isArray(rings) ? `${rings.length} rings` : show(rings)}`);
  const ring = rings[0];
  const rf = `${f}.coordinates[0]`;
  if (!Array.isArray(ring) || ring.length < 4 || ring.length > 1000)
    throw invalidArgument(rf, `expected a ring of 4 to 1000 [lng, lat] positions, got ${Array.isArray(ring) ? `${ring.length} positions` : show(ring)}`);
  ring.forEach((pos, j) => {
    const pf = `${rf}[${j}]`;
    if (!Array.isArray(pos) || pos.length !== 2 || !pos.every((x) => typeof x === 'number' && Number.isFinite(x)))
      throw invalidArgument(pf, `expected [lng, lat] as two finite numbers, got ${show(pos)}`);
    const [lng, lat] = pos as [number, number];
    if (lng < -180 || lng > 180) throw invalidArgument(pf, `longitude ${lng} is outside [-180, 180] (positions are [lng, lat])`);
    if (lat < -90 || lat > 90) throw invalidArgument(pf, `latitude ${lat} is outside [-90, 90] (positions are [lng, lat])`);
  });
  const [a, z] = [ring[0] as number[], ring[ring.length - 1] as number[]];
  if (a[0] !== z[0] || a[1] !== z[1]) throw invalidArgument(`${rf}[${ring.length - 1}]`, 'the ring is not closed: the last position must equal the first');
}

function entity(f: string, v: Obj): void {
  fields(f, v, ['kind', 'name', 'geometry'], ['attributes'], 'memory.entity');
  if (typeof v.kind !== 'string' || !ENTITY_KIND_RE.test(v.kind))
    throw invalidArgument(`${f}.kind`, `expected a kind matching ${ENTITY_KIND_RE.source} (e.g. field, building, river), got ${show(v.kind)}`);
  text(`${f}.name`, v.name, 200, { nonBlank: true });
  const gf = `${f}.geometry`;
  const g = obj(gf, v.geometry);
  const keys = Object.keys(g);
  if (keys.length !== 1 || (keys[0] !== 'cell' && keys[0] !== 'polygon')) throw invalidArgument(gf, `expected exactly one of {cell: cell64} or {polygon: GeoJSON Polygon}, got keys ${show(keys)}`);
  if ('cell' in g) {
    if (!isCell(g.cell)) throw invalidArgument(`${gf}.cell`, `expected a cell64 (from /v1/locate), got ${show(g.cell)}`);
  } else {
    polygon(`${gf}.polygon`, g.polygon);
  }
  if (v.attributes !== undefined) {
    const af = `${f}.attributes`;
    const attrs = obj(af, v.attributes);
    const entries = Object.entries(attrs);
    if (entries.length > 64) throw invalidArgument(af, `at most 64 attributes, got ${entries.length}`);
    for (const [k, x] of entries) {
      if (k.length === 0 || chars(k) > 64) throw invalidArgument(af, `attribute names are 1 to 64 characters, got ${show(k)}`);
      const ok = typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x)) || (typeof x === 'string' && chars(x) <= 500);
      if (!ok) throw invalidArgument(`${af}.${k}`, `expected a string of at most 500 characters, a finite number or a boolean, got ${show(x)}`);
    }
  }
}

function trace(f: string, v: Obj): void {
  fields(f, v, ['substrate', 'inputs', 'outputs', 'started_at', 'ended_at'], ['steps_digest', 'summary'], 'device.trace');
  const sf = `${f}.substrate`;
  const s = obj(sf, v.substrate);
  fields(sf, s, ['kind', 'version'], ['hardware'], 'a substrate');
  text(`${sf}.kind`, s.kind, 64);
  text(`${sf}.version`, s.version, 64);
  if (s.hardware !== undefined) text(`${sf}.hardware`, s.hardware, 128);
  cidList(`${f}.inputs`, v.inputs, 256);
  cidList(`${f}.outputs`, v.outputs, 256);
  if (v.steps_digest !== undefined && (typeof v.steps_digest !== 'string' || !HEX64_RE.test(v.steps_digest))) {
    throw invalidArgument(`${f}.steps_digest`, `expected 64 lower-case hex characters, got ${show(v.steps_digest)}`);
  }
  const started = instant(`${f}.started_at`, v.started_at);
  const ended = instant(`${f}.ended_at`, v.ended_at);
  if (ended < started) throw invalidArgument(`${f}.ended_at`, `must not be before started_at (${String(v.started_at)})`);
  if (v.summary !== undefined) text(`${f}.summary`, v.summary, 2000, { min: 0 });
}

function unixSeconds(field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw invalidArgument(field, `expected Unix seconds (a non-negative integer), got ${show(v)}`);
  return v;
}

/** A time the responder states in a key record: RFC 3339 text or Unix seconds. */
function statedTime(field: string, v: unknown): void {
  if (typeof v === 'number') unixSeconds(field, v);
  else instant(field, v);
}

// The key records are signed by the responder alone (L3): shape checks only.
function enrollment(f: string, v: Obj): void {
  fields(f, v, ['key', 'platform', 'evidence', 'enrolled_at'], [], 'device.enrollment');
  publicKey(`${f}.key`, v.key);
  text(`${f}.platform`, v.platform, 64);
  obj(`${f}.evidence`, v.evidence);
  statedTime(`${f}.enrolled_at`, v.enrolled_at);
}

function revocation(f: string, v: Obj): void {
  fields(f, v, ['key', 'reason', 'requested_by', 'revoked_at'], [], 'device.revocation');
  publicKey(`${f}.key`, v.key);
  text(`${f}.reason`, v.reason, 500, { min: 0 });
  text(`${f}.requested_by`, v.requested_by, 200);
  statedTime(`${f}.revoked_at`, v.revoked_at);
}

function bearerRevocation(f: string, v: Obj): void {
  fields(f, v, ['key', 'not_before'], [], 'memory.bearer_revocation');
  publicKey(`${f}.key`, v.key);
  // Unix seconds, as the signed request states it and keys/standing.ts reads it.
  unixSeconds(`${f}.not_before`, v.not_before);
}

const RULES: Record<string, (field: string, value: Obj) => void> = {
  'memory.note': note,
  'memory.alias': alias,
  'memory.edge': edge,
  'memory.entity': entity,
  'device.trace': trace,
  'device.enrollment': enrollment,
  'device.revocation': revocation,
  'memory.bearer_revocation': bearerRevocation,
};

/**
 * The record rules for one fact of a memory record band (a no-op for any other band): a
 * primary fact at tslot 0, a value of exactly the band's fields, filed under the subject its
 * content names. Called after checkAgainstBand, so the value is already a map.
 */
export function checkRecord(at: string, body: Record<string, unknown>, kind: string, cell: string, band: string, tslot: number): void {
  const rule = RULES[band];
  if (!rule || !isMemoryRecordBand(band)) return;
  if (kind !== 'primary') throw invalidArgument(`${at}.kind`, `a ${band} record is a primary fact (a record states something or is not written), got ${kind}`);
  if (tslot !== 0) {
    throw new SvcError('tslot_mismatch', `${at}.tslot: ${band} is static and has the single tslot 0 (got ${tslot})`, { field: `${at}.tslot`, band, valid: [0] });
  }
  const value = obj(`${at}.value`, body.value);
  rule(`${at}.value`, value);
  const subject = recordSubject(band, value);
  if (cell !== subject) {
    const anchor = KEY_ANCHORED_BANDS.has(band) ? 'anchorId({key: value.key})' : 'anchorId(value)';
    throw new SvcError('unaddressable_subject', `${at}.cell: a ${band} record is filed under svc:entity:${anchor}, which for this value is ${subject} (got ${cell})`, {
      field: `${at}.cell`,
      expected: subject,
    });
  }
}
