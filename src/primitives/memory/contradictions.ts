/**
 * Contradictions (docs/memory-insight.md): (cell, band, tslot) slots where the newest signed
 * values of two different attesters disagree. Slots come from the memory index
 * (`sharedSlots`: written by at least two attesters, scope-exact); per slot the stored versions
 * (store.history at that tslot) give each attester's newest fact, and every pair of them is
 * compared by the band's kind:
 * - scalar: |a − b| > the band's `agreement_tolerance` (absolute, in its unit), or, without one,
 *   > AGREEMENT_RELATIVE_DEFAULT × max(|a|, |b|);
 * - vector: cosine(a, b) < VECTOR_AGREEMENT_COSINE (a zero vector agrees only with an equal one);
 * - categorical: the class ids differ.
 * Record bands (memory records, answer steps) are not observations and are never compared;
 * absences state that no value exists and are left out, as are values that do not fit the band.
 *
 * With `record: true` (REST only: a write the responder performs) each listed pair not already
 * joined by a `contradicts` edge gets one `memory.edge` record signed by the responder, in the
 * scope of the facts, from the newer fact to the older one. The same rules feed the attester
 * reputation counts (reputation.ts).
 */
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { recordBody } from '../../protocol/memory-records.js';
import { AddressQuota, addressKey, quotaPerOwner } from '../../lib/address-quota.js';
import { isoSeconds, type Receipt, type Scope } from '../../protocol/receipt.js';
import { parseRfc3339 } from '../../protocol/rfc3339.js';
import { AGREEMENT_RELATIVE_DEFAULT, type BandEntry } from '../../registry/registry.js';
import type { StoredFact } from '../../store/contract.js';
import { EDGE_BAND, type MemoryReader, type SharedSlot } from '../../store/memory.js';
import { mintFacts } from '../write/attest.js';
import { requireCell } from '../../protocol/cell-token.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { cosine, evenPick, isNum, isVec, requireBand, round } from '../reads/common.js';
import { requestScope } from '../scopes/request.js';
import { parseBboxArray, parsePolygon, sampleArea, type Area } from '../reads/geometry.js';
import { walkStored } from '../reads/region.js';
import { resolveCell } from '../reads/recall.js';

/** Two vectors of a band agree when their cosine is at least this. */
export const VECTOR_AGREEMENT_COSINE = 0.95;
export const CONTRADICTION_LIMITS = {
  cells: 256,
  bands: 64,
  limit: { min: 1, max: 200, default: 50 },
  /** Shared slots examined by one call at most; next_after continues from the last one. */
  slots_scanned: 2000,
} as const;
/** Shared slots asked of the index per page. */
const SLOT_PAGE = 250;
/** Slots whose versions are read in parallel. */
const HISTORY_CHUNK = 16;

export type AgreementKind = 'scalar' | 'vector' | 'categorical';
export type Measure = { abs_diff: number; tolerance: number; tolerance_source: 'registry' | 'relative_default' } | { cosine: number | null; threshold: number } | { equal: boolean };

export interface Comparison {
  kind: AgreementKind;
  agree: boolean;
  measure: Measure;
}

/** The memory index, or not_yet_implemented when the store driver has none yet. */
export function memoryIndex(ctx: ServiceContext): MemoryReader {
  const m = (ctx.store as { memory?: MemoryReader }).memory;
  if (!m || typeof m.sharedSlots !== 'function') {
    throw new SvcError('not_yet_implemented', 'the memory index (shared slots, edges) is not available on this store driver yet', {
      workaround: "read each attester's facts with POST /v1/recall and its attester filter, and compare them",
    });
  }
  return m;
}

/** True for the bands whose values are compared (not record bands). */
export function comparable(band: BandEntry | undefined): band is BandEntry {
  return band !== undefined && band.value_kind !== 'record';
}

/** A stored fact's value when it can be compared for its band, else undefined (absences, bad shapes). */
export function comparableValue(f: StoredFact, band: BandEntry): number | number[] | undefined {
  if (f.kind === 'absence') return undefined;
  const v = f.body.value;
  if (band.value_kind === 'vector') return isVec(v, band.dim) ? v : undefined;
  if (band.value_kind === 'categorical') return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
  return isNum(v) ? v : undefined;
}

/** Whether two comparable values of `band` agree, and the measure that decided it. */
export function compareValues(band: BandEntry, a: number | number[], b: number | number[]): Comparison {
  if (band.value_kind === 'vector') {
    const va = a as number[];
    const vb = b as number[];
    const c = cosine(va, vb);
    const agree = c === null ? va.length === vb.length && va.every((x, i) => x === vb[i]) : c >= VECTOR_AGREEMENT_COSINE;
    return { kind: 'vector', agree, measure: { cosine: c === null ? null : round(c), threshold: VECTOR_AGREEMENT_COSINE } };
  }
  if (band.value_kind === 'categorical') {
    const equal = a === b;
    return { kind: 'categorical', agree: equal, measure: { equal } };
  }
  const x = a as number;
  const y = b as number;
  const diff = Math.abs(x - y);
  const fromRegistry = band.agreement_tolerance !== undefined;
  const tolerance = fromRegistry ? band.agreement_tolerance! : AGREEMENT_RELATIVE_DEFAULT * Math.max(Math.abs(x), Math.abs(y));
  return {
    kind: 'scalar',
    agree: diff <= tolerance,
    measure: { abs_diff: round(diff), tolerance: round(tolerance), tolerance_source: fromRegistry ? 'registry' : 'relative_default' },
  };
}

/** When a fact was signed (its body's signed_at, else when it was accepted), in ms. */
export function signedMs(f: StoredFact): number {
  const t = parseRfc3339(f.body.signed_at);
  return Number.isFinite(t) ? t : Date.parse(f.accepted_at);
}

/** Newest first: signed time, then acceptance, then fact_cid (so the order never depends on the driver). */
function newerFirst(a: StoredFact, b: StoredFact): number {
  return signedMs(b) - signedMs(a) || (a.accepted_at < b.accepted_at ? 1 : a.accepted_at > b.accepted_at ? -1 : 0) || (a.fact_cid < b.fact_cid ? -1 : a.fact_cid > b.fact_cid ? 1 : 0);
}

/**
 * Each attester's newest fact at one slot (history is oldest first), keeping those with a
 * comparable value, newest first. An attester whose newest fact is an absence has no value now.
 */
export function newestPerAttester(history: readonly StoredFact[], band: BandEntry): Array<{ fact: StoredFact; value: number | number[] }> {
  const by = new Map<string, StoredFact>();
  for (const f of history) by.set(f.attester, f);
  const out: Array<{ fact: StoredFact; value: number | number[] }> = [];
  for (const f of [...by.values()].sort(newerFirst)) {
    const value = comparableValue(f, band);
    if (value !== undefined) out.push({ fact: f, value });
  }
  return out;
}

/** The stored versions at one slot, as the memory index named it (scope-exact). */
export function slotHistory(ctx: ServiceContext, slot: SharedSlot, scope: Scope | null): Promise<StoredFact[]> {
  return ctx.store.history({ cell: slot.cell, bands: [slot.band], tslot: slot.tslot, scope });
}

export interface Side {
  fact_cid: string;
  attester: string;
  value: unknown;
  /** The body's signed_at, or null when the attester did not sign a time. */
  signed_at: string | null;
  accepted_at: string;
}

export interface Contradiction {
  cell: string;
  band: string;
  tslot: number;
  kind: AgreementKind;
  /** The newer fact (a recorded `contradicts` edge points from it). */
  a: Side;
  /** The older fact. */
  b: Side;
  measure: Measure;
}

function side(f: StoredFact): Side {
  return { fact_cid: f.fact_cid, attester: f.attester, value: f.body.value, signed_at: typeof f.body.signed_at === 'string' ? f.body.signed_at : null, accepted_at: f.accepted_at };
}

/** Every disagreeing pair of attesters at one slot (newer fact first in each pair). */
export function slotContradictions(slot: SharedSlot, band: BandEntry, history: readonly StoredFact[]): Contradiction[] {
  const facts = newestPerAttester(history, band);
  const out: Contradiction[] = [];
  for (let i = 0; i < facts.length; i++) {
    for (let j = i + 1; j < facts.length; j++) {
      const c = compareValues(band, facts[i].value, facts[j].value);
      if (!c.agree) out.push({ cell: slot.cell, band: slot.band, tslot: slot.tslot, kind: c.kind, a: side(facts[i].fact), b: side(facts[j].fact), measure: c.measure });
    }
  }
  return out;
}

// ---- the request -------------------------------------------------------------------------------

/** A contradictions listing, as the operation's schema admits it (types, bounds and defaults applied). */
export interface ContradictionsRequest {
  cell?: string;
  cells?: string[];
  bbox?: number[];
  /** Any object: checked as GeoJSON by parsePolygon. */
  polygon?: object;
  bands?: string[];
  scope?: Scope;
  /** A next_after cursor: its format is checked by decodeCursor. */
  after?: string;
  limit: number;
  record: boolean;
}

export interface RecordedEdge {
  edge_cid: string;
  from: string;
  to: string;
  /** false when a `contradicts` edge between the two facts was already recorded (by anyone, either direction). */
  created: boolean;
}

export interface ContradictionsResult {
  contradictions: Contradiction[];
  /** Pass as `after` to continue; null when every shared slot matching the filters was examined. */
  next_after: string | null;
  slots_examined: number;
  filters: { cells: number | null; bands: string[] | null; region?: { method: string; exhaustive: boolean } };
  /** Only with record: true. */
  recorded?: { edges: RecordedEdge[]; edge_fact_cids: string[]; created: number };
  caveats: string[];
  receipt: Receipt;
}

/** The opaque cursor of a slot. */
export function encodeCursor(s: SharedSlot): string {
  return Buffer.from(JSON.stringify([s.cell, s.band, s.tslot]), 'utf8').toString('base64url');
}

export function decodeCursor(v: unknown, field = 'after'): SharedSlot {
  const bad = () => invalidArgument(field, 'expected a next_after cursor from a previous answer');
  if (typeof v !== 'string' || v.length === 0 || v.length > 600 || !/^[A-Za-z0-9_-]+$/.test(v)) throw bad();
  let x: unknown;
  try {
    x = JSON.parse(Buffer.from(v, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(x) || x.length !== 3 || typeof x[0] !== 'string' || typeof x[1] !== 'string' || !Number.isSafeInteger(x[2]) || (x[2] as number) < 0) throw bad();
  return { cell: x[0], band: x[1], tslot: x[2] as number };
}

/** Cells of a region filter: the stored cells inside it when a prefix walk finds them all, else a deterministic sample. */
async function regionCells(ctx: ServiceContext, area: Area, scope: Scope | null): Promise<{ cells: string[]; method: string; exhaustive: boolean }> {
  const max = CONTRADICTION_LIMITS.cells;
  const s = sampleArea(area, max);
  if (s.exhaustive) return { cells: s.cells, method: s.method, exhaustive: true };
  const walk = await walkStored(ctx, area, scope);
  if (walk && !walk.truncated) return { cells: evenPick(walk.cells, max), method: 'prefix_walk', exhaustive: walk.cells.length <= max };
  if (walk) return { cells: [...new Set([...evenPick(walk.cells, max), ...s.cells])].slice(0, max), method: 'prefix_walk+grid', exhaustive: false };
  return { cells: s.cells, method: s.method, exhaustive: false };
}

interface Parsed {
  scope: Scope | null;
  cells?: string[];
  bands?: BandEntry[];
  region?: { method: string; exhaustive: boolean };
  after?: SharedSlot;
  limit: number;
  record: boolean;
}

async function parseRequest(ctx: ServiceContext, req: ContradictionsRequest): Promise<Parsed> {
  const scope = requestScope(req.scope) ?? null;
  const given = (['cell', 'cells', 'bbox', 'polygon'] as const).filter((k) => req[k] !== undefined);
  if (given.length > 1) throw invalidArgument(given[1], `give at most one of cell, cells, bbox, polygon (got ${given.join(', ')})`);
  const out: Parsed = { scope, limit: req.limit, record: req.record };
  if (req.cell !== undefined) {
    out.cells = [(await resolveCell(ctx, req.cell, 'cell')).cell];
  } else if (req.cells !== undefined) {
    out.cells = [...new Set(req.cells.map((c, i) => requireCell(ctx.config.prefix, c, `cells[${i}]`)))];
  } else if (req.bbox !== undefined || req.polygon !== undefined) {
    const area = req.bbox !== undefined ? parseBboxArray(req.bbox) : parsePolygon(req.polygon);
    const r = await regionCells(ctx, area, scope);
    out.cells = r.cells;
    out.region = { method: r.method, exhaustive: r.exhaustive };
  }
  if (req.bands !== undefined) {
    out.bands = [...new Set(req.bands)].map((b, i) => {
      const e = requireBand(ctx, b, `bands[${i}]`);
      if (e.value_kind === 'record') throw invalidArgument(`bands[${i}]`, `${e.key} is a record band: memory records are statements, not observations, and are never compared`);
      return e;
    });
  }
  if (req.after !== undefined) out.after = decodeCursor(req.after);
  return out;
}

/**
 * List contradictions under one scope (null: public facts only). `allowRecord` is false for
 * callers that may not trigger writes (MCP): `record: true` is then refused, naming the field.
 */
export async function memoryContradictions(ctx: ServiceContext, req: ContradictionsRequest, opts: { allowRecord?: boolean; deadline?: number; ip?: string } = {}): Promise<ContradictionsResult> {
  const p = await parseRequest(ctx, req);
  if (p.record && opts.allowRecord === false) {
    throw invalidArgument('record', 'recording contradictions is a write the responder performs: REST only (POST /v1/memory_contradictions); over MCP this tool only lists');
  }
  const mem = memoryIndex(ctx);
  const caveats: string[] = [
    "A contradiction says two signed values disagree under the band's agreement rule, not which one is right; compare provenance and attesters (fact_meta, GET /v1/contributors).",
    'Each attester counts with its newest fact at the slot; absences and record bands are never compared.',
  ];
  const out: Contradiction[] = [];
  let after = p.after;
  let lastDone: SharedSlot | undefined;
  let examined = 0;
  let finished = false;
  const deadline = opts.deadline ?? Infinity;
  let late = false;
  // An area without a stored cell: nothing to ask the index.
  if (p.cells !== undefined && p.cells.length === 0) finished = true;
  scan: while (!finished && examined < CONTRADICTION_LIMITS.slots_scanned) {
    const want = Math.min(SLOT_PAGE, CONTRADICTION_LIMITS.slots_scanned - examined);
    const page = await mem.sharedSlots({ scope: p.scope, cells: p.cells, bands: p.bands?.map((b) => b.key), after, limit: want });
    // Versions are read a few slots at a time in parallel, then compared in key order.
    for (let i = 0; i < page.length; i += HISTORY_CHUNK) {
      if (Date.now() >= deadline) {
        late = true;
        break scan;
      }
      const chunk = page.slice(i, i + HISTORY_CHUNK);
      const histories = await Promise.all(chunk.map((slot) => (comparable(ctx.registry.bands.get(slot.band)) ? slotHistory(ctx, slot, p.scope) : [])));
      for (const [k, slot] of chunk.entries()) {
        const band = ctx.registry.bands.get(slot.band);
        const found = comparable(band) ? slotContradictions(slot, band, histories[k]) : [];
        // A slot's pairs are never split across pages: stop before a slot that would overflow the page.
        if (out.length > 0 && out.length + found.length > p.limit) break scan;
        examined++;
        out.push(...found);
        lastDone = slot;
        if (out.length >= p.limit) break scan;
      }
    }
    if (page.length < want) {
      finished = true;
      break;
    }
    after = page[page.length - 1];
  }
  if (late) caveats.push('Stopped early to answer within the request deadline: continue with next_after.');
  // The scan may also end exactly at the last slot; the next call then answers an empty page.
  // Stopped before any slot: continue from where this call started (the empty key sorts first).
  const nextAfter = finished ? null : encodeCursor(lastDone ?? p.after ?? { cell: '', band: '', tslot: 0 });
  if (!finished && examined >= CONTRADICTION_LIMITS.slots_scanned) caveats.push(`Examined ${examined} shared slots (the per-call bound): continue with next_after.`);
  if (p.region && !p.region.exhaustive) caveats.push(`The area was narrowed to ${p.cells!.length} cells (${p.region.method}); name cells to cover the rest.`);

  let recorded: ContradictionsResult['recorded'];
  if (p.record && out.length > 0) recorded = await recordContradictions(ctx, mem, out, p.scope, opts.ip);
  else if (p.record) recorded = { edges: [], edge_fact_cids: [], created: 0 };

  const cells = [...new Set(out.map((c) => c.cell))];
  const cids = [...new Set(out.flatMap((c) => [c.a.fact_cid, c.b.fact_cid]))];
  const receipt = issueReceipt(ctx, 'memory_contradictions', cells, cids, {
    scope: p.scope ?? undefined,
    edge_cids: recorded && recorded.edge_fact_cids.length > 0 ? recorded.edge_fact_cids : undefined,
    cost: { credits: 0, was_cached: false },
  });
  const result: ContradictionsResult = {
    contradictions: out,
    next_after: nextAfter,
    slots_examined: examined,
    filters: { cells: p.cells?.length ?? null, bands: p.bands?.map((b) => b.key) ?? null, ...(p.region ? { region: p.region } : {}) },
    caveats,
    receipt,
  };
  if (recorded) result.recorded = recorded;
  return result;
}

// ---- recording ---------------------------------------------------------------------------------

/** Why two values disagree, in words (≤ 500 characters, the edge record's limit). */
export function contradictionReason(c: Contradiction, band: BandEntry | undefined): string {
  const unit = band?.unit ?? '';
  const m = c.measure as Record<string, unknown>;
  let text: string;
  if (c.kind === 'scalar') text = `${c.band} differs by ${String(m.abs_diff)} ${unit} (agreement tolerance ${String(m.tolerance)} ${unit})`;
  else if (c.kind === 'vector') text = `${c.band} differs: cosine ${m.cosine === null ? 'undefined (a zero vector)' : String(m.cosine)} below ${VECTOR_AGREEMENT_COSINE}`;
  else {
    const label = (v: unknown) => `${String(v)}${band?.classes?.[String(v)] ? ` (${band.classes[String(v)]})` : ''}`;
    text = `${c.band} differs: class ${label(c.a.value)} vs ${label(c.b.value)}`;
  }
  return `${text} at ${c.cell} tslot ${c.tslot}`.replace(/\s+/g, ' ').slice(0, 500);
}

const signingQuota = quotaPerOwner<ServiceContext>((ctx) => new AddressQuota(ctx.config.signingQuota, 'responder-signed records'));

/** Charge `n` responder-signed records to the caller's address, all or none; returns the refund. */
function chargeSigning(ctx: ServiceContext, ip: string | undefined, n: number): () => void {
  return signingQuota(ctx).take(addressKey(ip), 0, ctx.now().getTime(), n);
}

// Recordings are serialised per responder process, so two concurrent calls do not both write an edge.
const recordingChains = new WeakMap<object, Promise<unknown>>();

function serialised<T>(ctx: ServiceContext, fn: () => Promise<T>): Promise<T> {
  const prev = recordingChains.get(ctx.store) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  recordingChains.set(
    ctx.store,
    next.catch(() => undefined),
  );
  return next;
}

/**
 * One `memory.edge` record (type contradicts, newer → older) per pair without one, signed by the
 * responder in `scope` and written as one batch; pairs already joined by a contradicts edge (in
 * either direction, by any key) keep that edge.
 */
async function recordContradictions(
  ctx: ServiceContext,
  mem: MemoryReader,
  pairs: readonly Contradiction[],
  scope: Scope | null,
  ip: string | undefined,
): Promise<NonNullable<ContradictionsResult['recorded']>> {
  return serialised(ctx, async () => {
    const edges: RecordedEdge[] = [];
    const bodies: Record<string, unknown>[] = [];
    const pendingAt = new Map<string, number>();
    const signedAt = isoSeconds(ctx.now());
    for (const c of pairs) {
      const from = c.a.fact_cid;
      const to = c.b.fact_cid;
      const key = [from, to].sort().join(':');
      if (pendingAt.has(key)) continue;
      const existing = await mem.edges({ scope, record: from, direction: 'both', kinds: ['contradicts'], limit: 1000 });
      const hit = existing.find((e) => e.kind === 'contradicts' && ((e.from === from && e.to === to) || (e.from === to && e.to === from)));
      if (hit) {
        edges.push({ edge_cid: hit.edge_cid, from: hit.from, to: hit.to, created: false });
        pendingAt.set(key, -1);
        continue;
      }
      const validFrom = c.a.signed_at !== null && Number.isFinite(parseRfc3339(c.a.signed_at)) ? c.a.signed_at : signedAt;
      const value = { type: 'contradicts', from, to, valid_from: validFrom, reason: contradictionReason(c, ctx.registry.bands.get(c.band)) };
      const body = { ...recordBody(EDGE_BAND, value, { signed_at: signedAt, scope: scope ?? undefined }), signer: ctx.keys.publicKeyB32 };
      pendingAt.set(key, edges.length);
      edges.push({ edge_cid: '', from, to, created: true });
      bodies.push(body);
    }
    if (bodies.length > 0) {
      // The caller is anonymous and the responder signs: every new edge counts against the
      // caller's address, all of them or none (docs/security.md, "Quotas").
      const refund = chargeSigning(ctx, ip, bodies.length);
      let res;
      try {
        res = await mintFacts(ctx, bodies, 'memory_contradictions');
      } catch (err) {
        refund();
        throw err;
      }
      let k = 0;
      for (const e of edges) if (e.created) e.edge_cid = res.fact_cids[k++];
    }
    return { edges, edge_fact_cids: edges.map((e) => e.edge_cid), created: bodies.length };
  });
}
