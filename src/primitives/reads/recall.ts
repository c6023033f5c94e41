/**
 * recall (docs/reads.md, "Recall"): the stored signed facts at a cell, materializing on a miss, in
 * a SignedResponse whose receipt covers exactly the facts returned (filters apply before signing).
 */
import { contentId } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { isoSeconds, scopeFieldsSet, type AsOf, type Cost, type Receipt, type Scope } from '../../protocol/receipt.js';
import { checkTslot, currentTslot, tslotRange } from '../../protocol/tslot.js';
import { PROVENANCE_CLASSES, type FactQuery, type ProvenanceClass, type StoredFact } from '../../store/contract.js';
import type { BandEntry } from '../../registry/registry.js';
import { issueReceipt, issueFromTemplate, receiptTemplate, type ReceiptExtras, type ServiceContext } from '../context/context.js';
import type { ReceiptTemplate } from '../../protocol/receipt-template.js';
import { capturedAt, serveFact, sourceVersion, type ServedFact } from '../facts/facts-view.js';
import { skippedNote, type MaterializeNote, type MaterializeResult } from '../context/materialize-note.js';
import { deepFreeze } from '../../protocol/freeze.js';
import { warmGet, warmSet } from './warm-reads.js';
import { directCell } from '../../protocol/cell-token.js';
import { parseRfc3339 } from '../../protocol/rfc3339.js';

/** The default set attempted on an empty cell when no bands were asked (docs/reads.md, "Recall"). */
export const DEFAULT_BANDS = ['copdem30m.elevation_mean', 'weather.temperature_2m'] as const;

/** Extra answer parts recall may add (`include`). */
export type RecallInclude = 'edges' | 'freshness';

/** A recall, as the operation's schema admits it (types, bounds and enums already checked). */
export interface RecallRequest {
  cell: string;
  bands?: string[];
  tslot?: number;
  as_of_tslot?: number;
  as_of_signed_at?: string;
  provenance?: readonly ProvenanceClass[];
  deterministic?: boolean;
  /** Keep only facts these keys wrote (b32): per band the newest such fact. */
  attester?: string[];
  scope?: Scope;
  include?: readonly RecallInclude[];
}

/**
 * A typed edge touching a returned fact: its supersession (computed), or an edge of the memory
 * index (derived_from, contradicts, agents' edges; docs/memory.md) with its valid time.
 */
export interface Edge {
  edge_cid: string;
  kind: string;
  from: string;
  to: string;
  valid_from?: number;
  valid_to?: number | null;
  closed_at?: number | null;
  stated_by?: string;
}

/** Memory-index edges read per returned fact at most: recall stays one bounded read per fact. */
const EDGES_PER_FACT = 32;

export interface SignedResponse {
  cell: string;
  facts: ServedFact[];
  receipt: Receipt;
  bands_already_attested_at_cell: string[];
  caveats: string[];
  materialize_notes: MaterializeNote[];
  edges?: Edge[];
  freshness?: Array<{ fact_cid: string; band: string; age_s: number; cadence_s: number; staleness: number; stale: boolean }>;
  place?: { query: string; cell64: string; label?: string; is_high_confidence?: boolean };
}

export type RecallResult = SignedResponse;

/** Supersession links of the facts plus the memory edges into or out of each (same scope, recorded by the as-of bound), each edge once. */
async function edgesOf(ctx: ServiceContext, facts: readonly StoredFact[], scope: Scope | null, recordedAt?: string): Promise<Edge[]> {
  const out = new Map<string, Edge>();
  for (const f of facts) {
    if (f.supersedes) {
      const e = { kind: 'supersedes' as const, from: f.fact_cid, to: f.supersedes };
      out.set(contentId(e), { edge_cid: contentId(e), ...e });
    }
  }
  const lists = await Promise.all(
    facts.map((f) => ctx.store.memory.edges({ scope, record: f.fact_cid, direction: 'both', limit: EDGES_PER_FACT, ...(recordedAt ? { recorded_at: recordedAt } : {}) })),
  );
  for (const e of lists.flat()) {
    out.set(e.edge_cid, { edge_cid: e.edge_cid, kind: e.kind, from: e.from, to: e.to, valid_from: e.valid_from, valid_to: e.valid_to, closed_at: e.closed_at, stated_by: e.stated_by });
  }
  return [...out.values()];
}

// Each response's ETag (a strong validator over the sorted fact_cids), kept beside it so the body never shows it.
const etags = new WeakMap<SignedResponse, string>();

/** The HTTP ETag of a response recall returned. */
export function recallEtag(r: SignedResponse): string | undefined {
  return etags.get(r);
}

export const GRID_CAVEAT = 'A cell is about 9.55 m across at the equator (narrower east-west away from it): a value describes the cell, not an exact point.';

/** Resolve `cell` (cell64, an `svc:cell:` token, or a place name through locate when wired). */
export async function resolveCell(ctx: ServiceContext, cell: unknown, field = 'cell'): Promise<{ cell: string; place?: SignedResponse['place'] }> {
  if (typeof cell !== 'string' || cell.length === 0) throw invalidArgument(field, 'expected a cell64 or a place name');
  const direct = directCell(ctx.config.prefix, cell, field);
  if (direct !== undefined) return { cell: direct };
  // An entity token names an object, not a place (never geocoded): its facts are read by entity.
  if (/^(?:[a-z][a-z0-9_-]*:entity|meme):/.test(cell)) {
    throw new SvcError('invalid_cell', `${field}: ${JSON.stringify(cell.slice(0, 80))} names an entity, not a cell; read it with POST /v1/entity/recall {entity} (docs/entities.md)`, {
      field,
      next: { method: 'POST', path: '/v1/entity/recall', body: { entity: cell } },
    });
  }
  // Dotted tokens without spaces are a (possibly mistyped) cell64, never a place name.
  const looksLikeCell = /^[a-zA-Z0-9]{1,8}(\.[a-zA-Z0-9]{0,8}){1,5}$/.test(cell);
  if (!looksLikeCell && ctx.locate) {
    const loc = await ctx.locate(cell).catch((e: unknown) => {
      throw cellHint(e, field);
    });
    return { cell: loc.cell64, place: { query: cell, cell64: loc.cell64, label: loc.label, is_high_confidence: loc.is_high_confidence } };
  }
  throw new SvcError('invalid_cell', `${field}: ${JSON.stringify((cell as string).slice(0, 64))} is not a cell64${ctx.locate ? '' : ' (place names need the locate tier)'}`, { field });
}

/** Geocoder failures whose hint says "pass lat and lng": true for locate, not for a `cell` field. */
const LAT_LNG_HINTED = new Set(['no_geocoder_match', 'place_not_found', 'geocoder_transport_down']);

/** A locate failure under a `cell` field, with a hint this operation can follow. */
function cellHint(e: unknown, field: string): unknown {
  if (!(e instanceof SvcError) || !LAT_LNG_HINTED.has(e.code)) return e;
  const hint = `${field} takes a cell64 or a place name: refine the name (add ", Region, Country"), or pass a cell64 — POST /v1/locate {lat, lng} (the svc_locate tool) turns coordinates into one${e.code === 'geocoder_transport_down' ? '; or retry later' : ''}.`;
  return new SvcError(e.code, e.message, { ...e.details, field, hint }, { status: e.httpStatus, cause: e });
}

/** The provenance classes a request admits (`provenance` ∩ `deterministic`). */
export function provenanceFilter(provenance?: readonly ProvenanceClass[], deterministic?: boolean): ProvenanceClass[] | undefined {
  let set: ProvenanceClass[] | undefined;
  if (provenance !== undefined) set = [...new Set(provenance)];
  if (deterministic !== undefined) {
    const det: ProvenanceClass[] = ['direct_sensor', 'deterministic_index'];
    const allowed = deterministic ? det : PROVENANCE_CLASSES.filter((c) => !det.includes(c));
    set = (set ?? [...PROVENANCE_CLASSES]).filter((c) => allowed.includes(c));
  }
  return set;
}

/** Split requested bands into registered entries and unknown keys (all unknown → band_not_in_registry). */
export function resolveBands(ctx: ServiceContext, bands: string[] | undefined): { known: BandEntry[]; unknown: string[] } {
  if (bands === undefined) return { known: [], unknown: [] };
  const known: BandEntry[] = [];
  const unknown: string[] = [];
  for (const b of [...new Set(bands)]) {
    const e = ctx.registry.bands.get(b);
    if (e) known.push(e);
    else unknown.push(b);
  }
  if (known.length === 0 && unknown.length > 0) {
    const hints = unknown.map((u) => ctx.registry.bandList.find((e) => e.key.endsWith(`.${u}`) || e.key.split('.').pop() === u)?.key).filter(Boolean);
    throw new SvcError('band_not_in_registry', `bands: ${unknown.join(', ')} not in the active manifest; bands need their namespace prefix (see /v1/bands)`, {
      field: 'bands',
      unknown,
      did_you_mean: hints,
    });
  }
  return { known, unknown };
}

/**
 * The first moment a stored fact falls due for a refresh: when its band's current slot moves
 * past the fact's slot, or, for an absence, once it is strictly older than the band's cadence
 * (a stored absence stands until then). Static values never fall due.
 */
function dueAtMs(f: StoredFact, band: BandEntry): number {
  let at = Infinity;
  if (band.tempo !== 'static') at = (tslotRange(f.tslot, band.tempo).end_unix ?? Infinity) * 1000;
  if (f.kind === 'absence' && band.cadence_s > 0) at = Math.min(at, Date.parse(f.accepted_at) + band.cadence_s * 1000 + 1);
  return at;
}

/** Everything of a recall answer except its receipt: what a warm repeat can reuse. */
interface PreparedRecall {
  cell: string;
  place?: SignedResponse['place'];
  facts: ServedFact[];
  caveats: string[];
  notes: MaterializeNote[];
  bandsAttested: string[];
  cids: string[];
  etag: string;
  edges?: Edge[];
  freshness?: SignedResponse['freshness'];
  versions?: Record<string, string>;
  /** Oldest upstream capture time among the facts (ms), for cost.source_freshness_s. */
  oldestCaptureMs?: number;
  asOf?: AsOf;
  scope?: Scope;
  proof?: StoredFact['proof'];
  wasCached: boolean;
}

/** A prepared answer an identical later request may reuse, and until when. */
interface Preparation {
  prepared: PreparedRecall;
  generation: number;
  validUntilMs: number;
  reusable: boolean;
}

/** Longest a prepared answer is reused even when nothing says it changed (bounds a lost generation bump). */
const WARM_MAX_AGE_MS = 60_000;

/** The request fields that shape the answer, as a key (freshness ages with the clock: never reused). */
function warmKey(req: RecallRequest, primitive: string): string | undefined {
  if (req.include?.includes('freshness')) return undefined;
  return JSON.stringify([primitive, req.cell, req.bands, req.tslot, req.as_of_tslot, req.as_of_signed_at, req.provenance, req.deterministic, req.attester, req.scope, req.include]);
}

/** Recall of one cell: what it reads and what it tries upstream (docs/reads.md, "Recall"). */
export async function recall(ctx: ServiceContext, req: RecallRequest, opts: { primitive?: string; deadline?: number } = {}): Promise<RecallResult> {
  const started = performance.now();
  const nowMs = ctx.now().getTime();
  const primitive = opts.primitive ?? 'recall';
  const key = warmKey(req, primitive);
  let p = key === undefined ? undefined : await warmGet<PreparedRecall>(ctx, key, nowMs);
  if (!p) {
    const prep = await prepareRecall(ctx, req, nowMs, opts.deadline);
    p = prep.prepared;
    if (key !== undefined && prep.reusable) {
      warmSet(ctx, key, { cell: p.cell, generation: prep.generation, validUntilMs: prep.validUntilMs, value: deepFreeze(p) }, nowMs);
    }
    return respond(ctx, p, p.wasCached, primitive, started, nowMs, false);
  }
  return respond(ctx, p, true, primitive, started, nowMs, true);
}

/** What a prepared answer's receipt binds besides cells and fact_cids. */
function receiptExtras(p: PreparedRecall): ReceiptExtras {
  return { scope: p.scope, as_of: p.asOf, edge_cids: p.edges?.map((e) => e.edge_cid), source_versions: p.versions, merkle_proof: p.proof };
}

// Receipt templates of prepared answers: warm repeats sign through them (only the per-response fields change).
const templates = new WeakMap<PreparedRecall, ReceiptTemplate>();

function templateOf(ctx: ServiceContext, p: PreparedRecall, primitive: string): ReceiptTemplate {
  let t = templates.get(p);
  if (!t || !t.fits(ctx.keys.signer, ctx.manifests)) {
    t = receiptTemplate(ctx, primitive, [p.cell], p.cids, receiptExtras(p));
    templates.set(p, t);
  }
  return t;
}

/** Sign the receipt over a prepared answer and assemble the SignedResponse (`reused`: a warm repeat). */
function respond(ctx: ServiceContext, p: PreparedRecall, wasCached: boolean, primitive: string, started: number, nowMs: number, reused: boolean): RecallResult {
  const lat = ctx.metrics.latency(primitive);
  const cost: Cost = {
    credits: 0,
    was_cached: wasCached,
    latency_p50_ms: lat?.p50_ms ?? Number((performance.now() - started).toFixed(2)),
    latency_p99_ms: lat?.p99_ms ?? Number((performance.now() - started).toFixed(2)),
  };
  if (p.oldestCaptureMs !== undefined) cost.source_freshness_s = Math.max(0, Math.round((nowMs - p.oldestCaptureMs) / 1000));
  const receipt = reused ? issueFromTemplate(ctx, templateOf(ctx, p, primitive), cost) : issueReceipt(ctx, primitive, [p.cell], p.cids, { ...receiptExtras(p), cost });
  const out: RecallResult = {
    cell: p.cell,
    facts: p.facts,
    receipt,
    bands_already_attested_at_cell: p.bandsAttested,
    caveats: p.caveats,
    materialize_notes: p.notes,
  };
  etags.set(out, p.etag);
  if (p.edges) out.edges = p.edges;
  if (p.freshness) out.freshness = p.freshness;
  if (p.place) out.place = p.place;
  return out;
}

async function prepareRecall(ctx: ServiceContext, req: RecallRequest, nowMs: number, requestDeadline?: number): Promise<Preparation> {
  // Upstream work stops at the materializer timeout or the request's own deadline, whichever is first.
  const deadline = Math.min(requestDeadline ?? Infinity, Date.now() + ctx.config.materializerTimeoutSecs * 1000);
  const { cell, place } = await resolveCell(ctx, req.cell);
  const { known, unknown } = resolveBands(ctx, req.bands);
  const provenance = provenanceFilter(req.provenance, req.deterministic);
  const scope = scopeFieldsSet(req.scope);
  if (req.tslot !== undefined) for (const b of known) checkTslot(req.tslot, b.tempo, b.key, nowMs);
  if (req.as_of_tslot !== undefined && (!Number.isSafeInteger(req.as_of_tslot) || req.as_of_tslot < 0)) throw invalidArgument('as_of_tslot', 'expected a non-negative integer');
  let asOfSignedAt: string | undefined;
  if (req.as_of_signed_at !== undefined) {
    const t = parseRfc3339(req.as_of_signed_at);
    if (!Number.isFinite(t)) throw invalidArgument('as_of_signed_at', 'expected an RFC 3339 date-time');
    asOfSignedAt = isoSeconds(t);
  }
  const bounded = req.as_of_tslot !== undefined || asOfSignedAt !== undefined;
  // Read before the store (like the query cache): a write during this read makes the answer stale at once.
  const generation = await ctx.store.generation(cell);
  let validUntilMs = nowMs + WARM_MAX_AGE_MS;

  const query = {
    cell,
    bands: req.bands === undefined ? undefined : known.map((b) => b.key),
    tslot: req.tslot,
    as_of_tslot: req.as_of_tslot,
    as_of_signed_at: asOfSignedAt,
    scope: scope ?? null,
    provenance,
  };
  const read = req.attester === undefined ? await ctx.store.readLatest(query) : { facts: await latestBy(ctx, query, req.attester), was_cached: false };
  const byBand = new Map(read.facts.map((f) => [f.band, f]));
  const notes: MaterializeNote[] = unknown.map((b) => skippedNote(cell, b, 'unknown_band', `${b} is not in the active manifest (see /v1/bands)`));
  const caveats: string[] = [GRID_CAVEAT];

  // Which bands to try upstream: requested ones that are missing or due; the defaults on an empty cell.
  let targets: BandEntry[] = [];
  if (!bounded) {
    if (req.bands === undefined) {
      if (read.facts.length === 0 && (await ctx.store.bandsAt(cell, scope ?? null)).length === 0) {
        targets = DEFAULT_BANDS.map((k) => ctx.registry.bands.get(k)!).filter(Boolean);
      }
    } else {
      targets = known.filter((b) => {
        const f = byBand.get(b.key);
        if (!f) return true;
        if (req.tslot !== undefined) return false;
        const due = dueAtMs(f, b);
        if (nowMs >= due) return true;
        validUntilMs = Math.min(validUntilMs, due);
        return false;
      });
    }
    if (provenance) targets = targets.filter((b) => provenance.includes(b.provenance_class as ProvenanceClass));
    // Only the responder materializes: an attester filter without its key fetches nothing.
    if (req.attester !== undefined && !req.attester.includes(ctx.keys.publicKeyB32)) targets = [];
  }

  const results: MaterializeResult[] = await Promise.all(targets.map((b) => ctx.materializations.materialize(ctx, cell, b, req.tslot ?? currentTslot(b.tempo, nowMs), scope, deadline)));
  for (const r of results) {
    notes.push(r.note);
    if (r.fact) byBand.set(r.fact.band, r.fact);
    else if (byBand.has(r.note.band)) caveats.push(`${r.note.band}: the newest stored fact is older than the band's current slot; refreshing it failed (${r.note.reason_class}).`);
  }
  if (bounded && req.bands !== undefined) {
    for (const b of known) if (!byBand.has(b.key)) caveats.push(`${b.key}: no fact within the requested as-of bounds (bounded reads never fetch).`);
  }

  const stored = [...byBand.values()].sort((a, b) => (a.band < b.band ? -1 : a.band > b.band ? 1 : 0));
  const facts = await Promise.all(stored.map((f) => serveFact(ctx, f)));
  for (const f of stored) {
    const band = ctx.registry.bands.get(f.band);
    if (f.provenance_class === 'model_output' || f.provenance_class === 'human_curated') {
      caveats.push(`${f.band}: provenance class ${f.provenance_class} — not recomputable from a raw sensor source.`);
    }
    if (band && band.cadence_s > 0 && band.tempo !== 'static')
      caveats.push(`${f.band}: native cadence about ${Math.round((band.cadence_s / 86400) * 10) / 10} days; tslot unit is the ${band.tempo} tempo.`);
  }
  if (place && place.is_high_confidence === false)
    caveats.push(`"${place.query}" resolved with low confidence to ${place.cell64}${place.label ? ` (${place.label})` : ''}: check the cell before trusting the answer.`);

  const cids = facts.map((f) => f.fact_cid);
  const edges: Edge[] | undefined = req.include?.includes('edges') ? await edgesOf(ctx, stored, scope ?? null, asOfSignedAt) : undefined;
  const freshness = req.include?.includes('freshness')
    ? stored.map((f) => {
        const band = ctx.registry.bands.get(f.band);
        const t = Date.parse(capturedAt(f) ?? (f.body.signed_at as string) ?? f.accepted_at);
        const age = Math.max(0, Math.round((nowMs - (Number.isFinite(t) ? t : Date.parse(f.accepted_at))) / 1000));
        const cadence = band?.cadence_s ?? 0;
        const staleness = cadence > 0 ? Number((age / cadence).toFixed(3)) : 0;
        return { fact_cid: f.fact_cid, band: f.band, age_s: age, cadence_s: cadence, staleness, stale: staleness > 1 };
      })
    : undefined;

  const versions = Object.fromEntries(stored.map(sourceVersion).filter((v): v is [string, string] => v !== undefined));
  const captured = stored
    .map(capturedAt)
    .filter((x): x is string => !!x)
    .map((x) => Date.parse(x))
    .filter(Number.isFinite);
  const asOf: AsOf | undefined = bounded ? { ...(req.as_of_tslot !== undefined ? { valid_tslot: req.as_of_tslot } : {}), ...(asOfSignedAt ? { transaction_time: asOfSignedAt } : {}) } : undefined;
  const prepared: PreparedRecall = {
    cell,
    facts,
    caveats,
    notes,
    cids,
    etag: etagOf(cids),
    bandsAttested: await ctx.store.bandsAt(cell, scope ?? null),
    wasCached: read.was_cached && results.length === 0,
  };
  if (place) prepared.place = place;
  if (edges) prepared.edges = edges;
  if (freshness) prepared.freshness = freshness;
  if (Object.keys(versions).length > 0) prepared.versions = versions;
  if (captured.length > 0) prepared.oldestCaptureMs = Math.min(...captured);
  if (asOf) prepared.asOf = asOf;
  if (scope) prepared.scope = scope;
  if (stored[0]?.proof) prepared.proof = stored[0].proof;
  return { prepared, generation, validUntilMs, reusable: results.length === 0 && !place && !freshness };
}

/**
 * The newest fact per band among those `attesters` wrote, within the query's bounds: the same
 * order as the store's `latest` (highest tslot, then latest accepted), over the cell's history.
 */
async function latestBy(ctx: ServiceContext, query: FactQuery, attesters: readonly string[]): Promise<StoredFact[]> {
  const keys = new Set(attesters);
  const newest = new Map<string, StoredFact>();
  for (const f of await ctx.store.history(query)) {
    if (!keys.has(f.attester)) continue;
    const cur = newest.get(f.band);
    if (!cur || f.tslot > cur.tslot || (f.tslot === cur.tslot && f.accepted_at >= cur.accepted_at)) newest.set(f.band, f);
  }
  return [...newest.values()];
}

/** ETag: a hash of the sorted fact_cids (stable across calls that return the same facts). */
export function etagOf(cids: readonly string[]): string {
  return `"${contentId([...cids].sort()).slice(0, 32)}"`;
}
