/**
 * The band registry's rules for one submitted fact (docs/writes.md): value against the band's
 * kind, dimension, classes and physical range; unit; absence reason; writer level; privacy;
 * times against the responder's clock; derivative parents, function and recomputation. Every
 * refusal names the fact index and the field. Nothing here writes, and only checkDerivatives reads
 * the store. Reads never re-apply these rules: facts stored before a rule existed stay readable as
 * they were signed.
 */
import { isCell } from '../../protocol/cell64.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { Scope } from '../../protocol/receipt.js';
import { parseRfc3339 } from '../../protocol/rfc3339.js';
import { tslotRange } from '../../protocol/tslot.js';
import type { BandEntry, FunctionEntry, ValueKind } from '../../registry/registry.js';
import type { AbsenceReason } from '../../sources/contract.js';
import type { FactKind, StoredFact } from '../../store/contract.js';
import { scopeKey } from '../../store/entry.js';
import { DERIVE_FUNCTIONS, withinTolerance } from './derive-functions.js';

/** Protocol level of each kind of writer (docs/writes.md, "Signatures": writes are L2; the responder's own key is L3). */
export const LEVEL_OF = { responder: 3, device: 2, operator: 2 } as const;
export type AttesterKind = keyof typeof LEVEL_OF;

/** Privacy classes a fact may declare; `restricted` needs a responder or device key at cell resolution. */
export const FACT_PRIVACY_CLASSES = ['public', 'restricted'] as const;

/** The typed reasons of an absence (docs/writes.md, "Per fact"). */
export const ABSENCE_REASONS = [
  'unavailable_capability',
  'outside_coverage',
  'archetype_seed_unavailable',
  'gpu_unavailable',
  'upstream_error',
  'upstream_timeout',
] as const satisfies readonly AbsenceReason[];

/** Parents one derivative may name: bounds the store lookups a single fact can cause. */
export const MAX_PARENTS = 64;
const FACT_CID_RE = /^[a-z2-7]{52}$/;

/**
 * How far ahead of this responder's clock a fact's signed_at, its derivation.captured_at or the
 * start of its tslot may lie: clock skew between a writer and the responder, not a window for
 * dating facts ahead. Published in /v1/limits (fact_future_skew_s).
 */
export const MAX_FUTURE_SKEW_S = 300;

/**
 * Provenance classes whose values are observations, or computed from observations, or a person's
 * reading of them: such a value cannot describe a slot that has not begun. Left out on purpose:
 * `model_output` (a model may legitimately speak of a slot ahead, as a forecast does; those keep
 * the protocol's one-slot allowance of checkTslot) and `unclassified` (nothing is known, so
 * nothing is clearly wrong).
 */
const OBSERVED_CLASSES: ReadonlySet<string> = new Set(['direct_sensor', 'deterministic_index', 'human_curated']);

function isoSecond(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Refusal of a time (`what` names it in the message) more than MAX_FUTURE_SKEW_S ahead of `nowMs`. */
function inFuture(field: string, what: string, ms: number, nowMs: number, code: 'invalid_argument' | 'tslot_mismatch' = 'invalid_argument', extra: Record<string, unknown> = {}): SvcError {
  const ahead = Math.ceil((ms - nowMs) / 1000);
  return new SvcError(code, `${field}: ${what} ${isoSecond(ms)} lies ${ahead} s ahead of this responder's clock (${isoSecond(nowMs)}); at most ${MAX_FUTURE_SKEW_S} s of clock skew is allowed`, {
    field,
    reason: 'in_future',
    ahead_s: ahead,
    max_skew_s: MAX_FUTURE_SKEW_S,
    responder_time: isoSecond(nowMs),
    ...extra,
  });
}

/**
 * A fact's times against the responder's clock (docs/writes.md, "Times"): a fact signed in the
 * future, or describing an observation not yet made, would later be read as a fresh value (its age
 * is measured from those times). `signedAtMs` is the body's signed_at, already checked as RFC 3339
 * (undefined when the body has none); `tslot` is the fact's resolved tslot on the band's grid.
 * - signed_at, derivation.captured_at: at most MAX_FUTURE_SKEW_S ahead → invalid_argument,
 *   reason in_future; captured_at, when present, must be RFC 3339 like signed_at.
 * - tslot: for bands in OBSERVED_CLASSES only, the slot must have begun (its start at most
 *   MAX_FUTURE_SKEW_S ahead) → tslot_mismatch, reason in_future. The protocol's own grid check
 *   (checkTslot) lets any band name the slot after the current one; for an observed band that is
 *   a whole unit (a day, 30 days, a year) of claimed future, which is what this closes.
 */
export function checkFactTimes(at: string, body: Record<string, unknown>, band: BandEntry, tslot: number, signedAtMs: number | undefined, nowMs: number): void {
  const limit = nowMs + MAX_FUTURE_SKEW_S * 1000;
  if (signedAtMs !== undefined && signedAtMs > limit) throw inFuture(`${at}.signed_at`, 'signed_at', signedAtMs, nowMs);
  const derivation = body.derivation;
  if (typeof derivation === 'object' && derivation !== null && !Array.isArray(derivation) && 'captured_at' in derivation) {
    const field = `${at}.derivation.captured_at`;
    const captured = parseRfc3339((derivation as Record<string, unknown>).captured_at);
    if (!Number.isFinite(captured)) throw invalidArgument(field, 'expected an RFC 3339 timestamp (when the observation was made)');
    if (captured > limit) throw inFuture(field, 'captured_at', captured, nowMs);
  }
  if (band.tempo !== 'static' && OBSERVED_CLASSES.has(band.provenance_class)) {
    const startMs = tslotRange(tslot, band.tempo).start_unix * 1000;
    if (startMs > limit) {
      throw inFuture(`${at}.tslot`, `${band.key} holds ${band.provenance_class} values, which cannot describe a slot that has not begun; tslot ${tslot} starts at`, startMs, nowMs, 'tslot_mismatch', {
        band: band.key,
        tempo: band.tempo,
        slot_start: isoSecond(startMs),
      });
    }
  }
}

/** A short rendering of a refused value for a message (vectors can be long). */
function show(v: unknown): string {
  const s = v === undefined ? 'nothing' : JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function levelNumber(level: string): number {
  const m = /^L(\d)$/.exec(level);
  return m ? Number(m[1]) : 0;
}

/** A physically impossible value: outside the band's declared range. */
function outOfRange(field: string, v: number, band: BandEntry): SvcError | undefined {
  const r = band.value_range;
  if (r === undefined) return undefined;
  const [lo, hi] = r;
  if ((lo === null || v >= lo) && (hi === null || v <= hi)) return undefined;
  const span = `[${lo ?? '-inf'}, ${hi ?? 'inf'}]`;
  return new SvcError('invalid_argument', `${field}: ${v} is outside the physically possible range ${span} ${band.unit} of ${band.key}`, {
    field,
    band: band.key,
    value_range: [lo, hi],
  });
}

/** `value` of a primary or derivative fact against the band's value_kind (docs/writes.md, "Per fact"). */
export function checkValue(at: string, value: unknown, band: BandEntry): void {
  const field = `${at}.value`;
  if (band.value_kind === 'record') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidArgument(field, `${band.key} is a record band: expected a map, got ${show(value)}`);
    return;
  }
  if (band.value_kind === 'scalar') {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidArgument(field, `${band.key} is a scalar band: expected a finite number, got ${show(value)}`);
    const e = outOfRange(field, value, band);
    if (e) throw e;
    return;
  }
  if (band.value_kind === 'vector') {
    const dim = band.dim!;
    if (!Array.isArray(value) || value.length !== dim) {
      throw invalidArgument(field, `${band.key} is a vector band: expected an array of exactly ${dim} numbers, got ${Array.isArray(value) ? `${value.length} items` : show(value)}`);
    }
    // A binary code band (unit `bit`) holds one sign bit per component.
    const bits = band.unit === 'bit';
    for (let j = 0; j < dim; j++) {
      const x = value[j];
      if (bits ? x !== 0 && x !== 1 : typeof x !== 'number' || !Number.isFinite(x)) {
        throw invalidArgument(`${field}[${j}]`, `${band.key} expects ${bits ? '0 or 1' : 'a finite number'} in every component, got ${show(x)}`);
      }
      const e = outOfRange(`${field}[${j}]`, x as number, band);
      if (e) throw e;
    }
    return;
  }
  // Categorical: the class id as the number the materializers sign (point-connector.ts), not its text.
  const classes = band.classes ?? {};
  if (typeof value !== 'number' || !Number.isInteger(value) || !(String(value) in classes)) {
    throw invalidArgument(field, `${band.key} is categorical: expected a class id number, one of ${Object.keys(classes).join(', ')}; got ${show(value)}`);
  }
}

/**
 * Everything about one fact that its band decides: value, unit, absence reason, writer level and
 * privacy. `kind` and `cell` are already checked; the body is never changed (an omitted unit
 * stays omitted: the signed bytes are the attester's).
 */
export function checkAgainstBand(at: string, body: Record<string, unknown>, kind: FactKind, cell: string, band: BandEntry, writer: AttesterKind): void {
  if (levelNumber(band.min_level) > LEVEL_OF[writer]) {
    throw new SvcError('level_too_low', `${at}.band: ${band.key} needs level ${band.min_level} (a ${writer} key is L${LEVEL_OF[writer]})`, { field: `${at}.band`, required: band.min_level });
  }
  // Records (answer steps) live at entity subjects only, so a read of a cell never meets one.
  if (band.value_kind === 'record' && !cell.startsWith('svc:entity:')) {
    throw new SvcError('unaddressable_subject', `${at}.cell: ${band.key} records are filed under an svc:entity: subject, not a cell`, { field: `${at}.cell` });
  }
  // derived.* bands hold derivation results only (docs/writes.md, "Derivations"): a value there
  // without parents to recompute it from would pass for one.
  if (band.key.startsWith('derived.') && kind !== 'derivative') {
    throw invalidArgument(`${at}.kind`, `${band.key} holds derivative facts only (derivation: {fn, parents}); got ${kind}`);
  }
  if (kind === 'absence') {
    if (body.value !== null) throw invalidArgument(`${at}.value`, 'must be null for an absence');
    const reason = body.absence_reason;
    if (typeof reason !== 'string' || !(ABSENCE_REASONS as readonly string[]).includes(reason)) {
      throw invalidArgument(`${at}.absence_reason`, `an absence needs one of ${ABSENCE_REASONS.join(', ')}; got ${show(reason)}`);
    }
  } else {
    if ('absence_reason' in body) throw invalidArgument(`${at}.absence_reason`, `only an absence carries one (this fact is ${kind})`);
    checkValue(at, body.value, band);
  }
  if ('unit' in body && body.unit !== band.unit) {
    throw invalidArgument(`${at}.unit`, `${band.key} is declared in ${band.unit}; got ${show(body.unit)} (send ${band.unit} or leave unit out)`);
  }
  const declared = body.privacy_class;
  if (declared !== undefined && (typeof declared !== 'string' || !(FACT_PRIVACY_CLASSES as readonly string[]).includes(declared))) {
    throw invalidArgument(`${at}.privacy_class`, `expected one of ${FACT_PRIVACY_CLASSES.join(', ')}`);
  }
  // A fact may be stricter than its band, never laxer.
  if (band.privacy_class === 'restricted' && declared === 'public') {
    throw invalidArgument(`${at}.privacy_class`, `${band.key} is restricted: a fact on it cannot be declared public`);
  }
  const privacy = declared ?? band.privacy_class;
  if (privacy === 'restricted' && writer === 'operator' && isCell(cell)) {
    throw new SvcError('privacy_refused', `${at}.privacy_class: restricted facts at full cell resolution need a responder or device key (or an svc:entity: subject)`, { field: `${at}.privacy_class` });
  }
}

/** The parents a derivative names (`derivation.parents`), shape-checked; resolution comes later. */
export function derivativeParents(at: string, body: Record<string, unknown>): string[] {
  const derivation = body.derivation;
  const field = `${at}.derivation.parents`;
  if (typeof derivation !== 'object' || derivation === null || Array.isArray(derivation)) {
    throw invalidArgument(`${at}.derivation`, 'a derivative needs derivation: {fn, parents: [fact_cid, ...]}');
  }
  const parents = (derivation as Record<string, unknown>).parents;
  if (!Array.isArray(parents) || parents.length === 0 || parents.length > MAX_PARENTS) {
    throw invalidArgument(field, `a derivative names 1 to ${MAX_PARENTS} parent fact_cids; got ${show(parents)}`);
  }
  parents.forEach((p, j) => {
    if (typeof p !== 'string' || !FACT_CID_RE.test(p)) throw invalidArgument(`${field}[${j}]`, `expected a fact_cid (52 base32 characters), got ${show(p)}`);
    if (parents.indexOf(p) !== j) throw invalidArgument(`${field}[${j}]`, `${p} is named twice (parents[${parents.indexOf(p)}]); name each parent once`);
  });
  return parents as string[];
}

/** The function a derivative names (`derivation.fn`): a key of the function registry. */
export function derivativeFn(at: string, body: Record<string, unknown>, functions: ReadonlyMap<string, FunctionEntry>): string {
  const fn = (body.derivation as Record<string, unknown>).fn;
  const field = `${at}.derivation.fn`;
  if (typeof fn !== 'string' || fn === '') throw invalidArgument(field, `a derivative names its function (a key of /v1/functions, e.g. nd.delta@1); got ${show(fn)}`);
  if (!functions.has(fn)) throw new SvcError('function_not_in_registry', `${field}: ${fn} is not a registered derivation function (see /v1/functions)`, { field, fn });
  return fn;
}

/** One derivative of a batch, as checkDerivatives needs it. */
export interface DerivativeCheck {
  /** `facts[i]`. */
  at: string;
  cell: string;
  scope: Scope | null;
  fn: string;
  value: unknown;
  parents: string[];
}

/** What checking one derivative established. */
export interface DerivativeVerdict {
  /** True when its value was recomputed here from the parents (DERIVE_FUNCTIONS) and matched. */
  recomputed: boolean;
}

/**
 * The derivative rules that need the store (docs/writes.md, "Derivations"), for every derivative of
 * an authenticated batch, before anything is written:
 * - each parent is stored here and visible to the derivative's scope (public, or the same
 *   scope; otherwise it is not found, as for any reader of that scope) → cid_not_found;
 * - each parent is at the derivative's own cell → invalid_argument, reason parent_cell_mismatch;
 * - a recomputable function (DERIVE_FUNCTIONS) gets its arity, parents of one scalar band that
 *   are values (not absences), and the value it computes from them, within 1e-9 relative →
 *   invalid_argument, reason recomputation_mismatch, with expected and got.
 * A parent in the same batch is not stored yet. Each distinct cid is read once per batch.
 */
export async function checkDerivatives(
  items: readonly DerivativeCheck[],
  getFact: (cid: string) => Promise<StoredFact | null>,
  valueKindOf: (band: string) => ValueKind | undefined,
): Promise<DerivativeVerdict[]> {
  const seen = new Map<string, Promise<StoredFact | null>>();
  const lookup = (cid: string) => {
    let p = seen.get(cid);
    if (!p) seen.set(cid, (p = getFact(cid)));
    return p;
  };
  const found = await Promise.all(items.map((it) => Promise.all(it.parents.map(lookup))));
  return items.map((it, i) => {
    const parents = found[i];
    const own = scopeKey(it.scope);
    parents.forEach((p, j) => {
      const field = `${it.at}.derivation.parents[${j}]`;
      if (p === null || (scopeKey(p.scope) !== '' && scopeKey(p.scope) !== own)) {
        throw new SvcError('cid_not_found', `${field}: no fact is stored here under ${it.parents[j]} (store the parent first)`, { field, fact_cid: it.parents[j] });
      }
      if (p.cell !== it.cell) {
        throw new SvcError('invalid_argument', `${field}: the parent is at ${p.cell}, the derivative at ${it.cell}; a derivative and all its parents share one cell`, {
          field,
          reason: 'parent_cell_mismatch',
          parent_cell: p.cell,
          cell: it.cell,
        });
      }
    });
    const fn = DERIVE_FUNCTIONS.get(it.fn);
    if (!fn) return { recomputed: false };
    const n = it.parents.length;
    if (n < fn.arity.min || n > fn.arity.max) {
      const want = fn.arity.min === fn.arity.max ? `exactly ${fn.arity.min}` : `${fn.arity.min} to ${fn.arity.max}`;
      throw invalidArgument(`${it.at}.derivation.parents`, `${it.fn} takes ${want} parents; got ${n}`);
    }
    const band = parents[0]!.band;
    const values = parents.map((p, j) => {
      const field = `${it.at}.derivation.parents[${j}]`;
      const f = p!;
      if (f.band !== band) {
        throw new SvcError('invalid_argument', `${field}: ${it.fn} takes parents of one band; this parent is ${f.band}, parents[0] is ${band}`, { field, reason: 'parent_band_mismatch' });
      }
      if (f.kind === 'absence') throw new SvcError('invalid_argument', `${field}: the parent is an absence; ${it.fn} computes over values`, { field, reason: 'parent_not_scalar' });
      const v = f.body.value;
      if (valueKindOf(f.band) !== 'scalar' || typeof v !== 'number' || !Number.isFinite(v)) {
        throw new SvcError('invalid_argument', `${field}: ${it.fn} computes over scalar values; the parent is a ${valueKindOf(f.band) ?? 'unknown'} fact of ${f.band}`, {
          field,
          reason: 'parent_not_scalar',
        });
      }
      return v;
    });
    const expected = fn.compute(values);
    const got = it.value;
    if (typeof got !== 'number' || !Number.isFinite(got) || !withinTolerance(expected, got)) {
      const field = `${it.at}.value`;
      throw new SvcError('invalid_argument', `${field}: ${it.fn} of the parents is ${expected}, the derivative says ${show(got)} (tolerance 1e-9 relative)`, {
        field,
        reason: 'recomputation_mismatch',
        expected,
        got,
      });
    }
    return { recomputed: true };
  });
}

/**
 * Existence only: every parent is stored here (unknown → cid_not_found naming the parent's
 * field), each distinct cid looked up once. The write path runs checkDerivatives, which does
 * this and the cell, scope and recomputation rules; bench/ingest.ts measures this part alone.
 */
export async function resolveParents(items: { at: string; parents: string[] }[], exists: (cid: string) => Promise<boolean>): Promise<void> {
  const seen = new Map<string, Promise<boolean>>();
  const lookup = (cid: string) => {
    let p = seen.get(cid);
    if (!p) seen.set(cid, (p = exists(cid)));
    return p;
  };
  const found = await Promise.all(items.map((it) => Promise.all(it.parents.map(lookup))));
  items.forEach((it, i) => {
    const j = found[i].indexOf(false);
    if (j >= 0) {
      const field = `${it.at}.derivation.parents[${j}]`;
      throw new SvcError('cid_not_found', `${field}: no fact is stored here under ${it.parents[j]} (store the parent first)`, { field, fact_cid: it.parents[j] });
    }
  });
}
