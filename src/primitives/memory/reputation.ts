/**
 * Attester reputation, updated best effort (docs/memory-insight.md, "Reputation at GET
 * /v1/contributors"): per attester key, over PUBLIC facts only,
 * - accepted: its public facts stored here (FactReader.publicFactsByAttester);
 * - corroborated: the other attester keys whose newest fact at some shared public slot agrees
 *   with its newest fact there;
 * - contradicted: the other attester keys that disagree with it at some such slot.
 * Independent disagreements are counted, not facts: one key writing 20 disagreeing facts (in one
 * batch or twenty) moves another key's count by one, so a key cannot be buried by a single critic.
 * Agreement follows the contradiction rules (contradictions.ts): the band's scalar tolerance,
 * the vector cosine threshold, class equality; each attester counts with its newest comparable
 * fact per slot, and one fact may count as both (three attesters, two sides). Scoped facts are
 * never read: the slots come from the memory index under the null scope.
 *
 * The scan is bounded (REPUTATION_MAX_SLOTS shared slots, `truncated` past that) and cached per
 * log size, like the contributors listing it feeds; one computation runs at a time, and while it
 * runs readers get the previous table (stale by the writes since: its log_size says so).
 */
import type { BandEntry } from '../../registry/registry.js';
import type { StoredFact } from '../../store/contract.js';
import type { MemoryReader, SharedSlot } from '../../store/memory.js';
import type { ServiceContext } from '../context/context.js';
import { VECTOR_AGREEMENT_COSINE, comparable, compareValues, newestPerAttester, slotHistory } from './contradictions.js';

export const REPUTATION_MAX_SLOTS = 10_000;

/** What the counts mean, as GET /v1/contributors states it. */
export const REPUTATION_NOTE =
  'Per attester, public facts only: accepted = its public facts stored here; corroborated / contradicted = how many OTHER attester keys agree / disagree with its newest fact at some (cell, band, tslot) slot both wrote ' +
  `(scalar: the band's agreement_tolerance, else 1e-6 relative; vector: cosine >= ${VECTOR_AGREEMENT_COSINE}; categorical: the same class). Each other key counts once however many facts it wrote; a key may count on both sides. ` +
  'Best effort: at most 10 000 shared slots are scanned (truncated says when more exist), recomputed when the log grows (docs/memory-insight.md).';
const SLOT_PAGE = 500;
/** Slots whose versions are read in parallel. */
const HISTORY_CHUNK = 16;

export interface AttesterReputation {
  accepted: number;
  corroborated: number;
  contradicted: number;
}

export interface ReputationTable {
  /** Attester key → counts (keys with public facts, plus any seen at a shared slot). */
  by_attester: Map<string, AttesterReputation>;
  slots_scanned: number;
  /** True when more shared public slots exist than were scanned: corroborated/contradicted are lower bounds. */
  truncated: boolean;
  /** False when the store has no memory index yet: only `accepted` is counted. */
  available: boolean;
  log_size: number;
  computed_at: string;
}

const zero = (): AttesterReputation => ({ accepted: 0, corroborated: 0, contradicted: 0 });

/** Per attester: the other keys that agreed and disagreed with it at some slot. */
type Peers = (attester: string) => { agreed: Set<string>; disagreed: Set<string> };

/** Adds one slot's agreements: each attester's newest fact against every other attester's. */
function countSlot(peers: Peers, band: BandEntry, history: readonly StoredFact[]): void {
  const facts = newestPerAttester(history, band);
  for (let i = 0; i < facts.length; i++) {
    const p = peers(facts[i].fact.attester);
    for (let j = 0; j < facts.length; j++) {
      if (i === j) continue;
      (compareValues(band, facts[i].value, facts[j].value).agree ? p.agreed : p.disagreed).add(facts[j].fact.attester);
    }
  }
}

/** Computes the table (no cache): the public facts per attester, then the bounded slot scan. */
export async function computeReputation(
  ctx: ServiceContext,
  logSize: number,
  opts: { maxSlots?: number; publicFacts?: ReadonlyArray<{ attester: string; facts: number }> } = {},
): Promise<ReputationTable> {
  const maxSlots = opts.maxSlots ?? REPUTATION_MAX_SLOTS;
  const by = new Map<string, AttesterReputation>();
  const get = (k: string) => {
    let r = by.get(k);
    if (!r) by.set(k, (r = zero()));
    return r;
  };
  for (const a of opts.publicFacts ?? (await ctx.store.publicFactsByAttester())) get(a.attester).accepted = a.facts;
  const seen = new Map<string, { agreed: Set<string>; disagreed: Set<string> }>();
  const peers: Peers = (k) => {
    let p = seen.get(k);
    if (!p) seen.set(k, (p = { agreed: new Set(), disagreed: new Set() }));
    return p;
  };
  const settle = () => {
    for (const [k, p] of seen) Object.assign(get(k), { corroborated: p.agreed.size, contradicted: p.disagreed.size });
  };
  const mem = (ctx.store as { memory?: MemoryReader }).memory;
  const table: ReputationTable = { by_attester: by, slots_scanned: 0, truncated: false, available: false, log_size: logSize, computed_at: ctx.now().toISOString() };
  if (!mem || typeof mem.sharedSlots !== 'function') return table;
  table.available = true;
  let after: SharedSlot | undefined;
  while (table.slots_scanned < maxSlots) {
    const want = Math.min(SLOT_PAGE, maxSlots - table.slots_scanned);
    const page = await mem.sharedSlots({ scope: null, after, limit: want });
    table.slots_scanned += page.length;
    for (let i = 0; i < page.length; i += HISTORY_CHUNK) {
      const chunk = page.slice(i, i + HISTORY_CHUNK).filter((s) => comparable(ctx.registry.bands.get(s.band)));
      const histories = await Promise.all(chunk.map((slot) => slotHistory(ctx, slot, null)));
      chunk.forEach((slot, k) => countSlot(peers, ctx.registry.bands.get(slot.band)!, histories[k]));
    }
    if (page.length < want) {
      settle();
      return table;
    }
    after = page[page.length - 1];
  }
  // The bound was reached: one more key says whether anything was left unscanned.
  table.truncated = (await mem.sharedSlots({ scope: null, after, limit: 1 })).length > 0;
  settle();
  return table;
}

// Per store: the newest table and the one computation in flight (at most one at a time).
const cache = new WeakMap<object, { table?: ReputationTable; pending?: Promise<ReputationTable> }>();

/**
 * The reputation table for the log: reused while the log size is unchanged. When the log has
 * grown, one new computation starts and the previous table is answered meanwhile (its log_size
 * says which log it counts); only the very first call waits. `publicFacts`: the per-attester
 * public fact counts when the caller already holds them for this log size (saves a scan). Best
 * effort: with no table yet and a failed scan the answer is null (the caller lists without
 * reputation), and the next call tries again.
 */
export async function attesterReputation(ctx: ServiceContext, publicFacts?: ReadonlyArray<{ attester: string; facts: number }>): Promise<ReputationTable | null> {
  const size = await ctx.store.log.size();
  let entry = cache.get(ctx.store);
  if (!entry) cache.set(ctx.store, (entry = {}));
  const e = entry;
  if (e.table && e.table.log_size === size) return e.table;
  if (!e.pending) {
    const p = computeReputation(ctx, size, { publicFacts });
    e.pending = p;
    p.then(
      (t) => {
        if (!e.table || t.log_size >= e.table.log_size) e.table = t;
      },
      () => undefined,
    ).finally(() => {
      if (e.pending === p) e.pending = undefined;
    });
  }
  if (e.table) return e.table;
  try {
    return await e.pending;
  } catch {
    return null;
  }
}
