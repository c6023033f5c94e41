/**
 * A note search's answer: each ranked note served signed (its fact with its own receipt), its
 * thread neighbours when asked (`context`), and one receipt binding every note returned.
 */
import { SvcError } from '../../protocol/errors.js';
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import { scopeKey } from '../../store/entry.js';
import { NOTE_BAND, type NoteHit } from '../../store/memory.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import { mapLimit, READ_CONCURRENCY } from '../reads/common.js';

export interface Ranked {
  h: NoteHit;
  score: number | null;
  cos: number | null;
  t: number | null;
  /** Whether the note was observed inside the query's time expression (absent without one). */
  inWindow?: boolean;
  distance?: number;
}

export interface ServedNote {
  fact_cid: string;
  attester: string;
  accepted_at: string;
  /** Valid time of the note: its observed_at, else its signed_at (ISO), or null. */
  observed_at: string | null;
  note: unknown;
  fact: ServedFact;
}

/**
 * A neighbour in a hit's thread: its fact (with its own receipt) names it; no fact_cid beside it,
 * which a verifier would take for a reference the search's receipt must bind (it binds the
 * ranked notes only, in rank order).
 */
export type ContextNote = Omit<ServedNote, 'fact_cid'>;

const asContext = ({ fact_cid: _, ...rest }: ServedNote): ContextNote => rest;

export interface SearchResult extends ServedNote {
  score: number | null;
  text_score: number | null;
  cosine: number | null;
  distance_m?: number;
  in_time_window?: boolean;
  context?: { before: ContextNote[]; after: ContextNote[] };
}

export interface SearchAnswer {
  query: string | null;
  ranking: 'text' | 'vector' | 'hybrid' | 'newest';
  weights?: { text: number; vector: number };
  scope: Scope | null;
  asOf?: string;
  top: Ranked[];
  context: number;
  interpretation: Record<string, unknown>;
  vectorScanTruncated?: boolean;
  /** The best candidate's cosine, which vector scores are divided by (null: no positive cosine). */
  bestCosine?: number | null;
}

const round6 = (x: number | null) => (x === null ? null : Number(x.toFixed(6)));

async function served(ctx: ServiceContext, h: NoteHit, scope: Scope | null): Promise<ServedNote> {
  const f = await ctx.store.getFact(h.fact_cid);
  // The index is scope-exact; a fact that does not match is an index fault, never served.
  if (!f || f.band !== NOTE_BAND || scopeKey(f.scope) !== scopeKey(scope)) {
    throw new SvcError('internal', `memory index: note ${h.fact_cid} does not match its store row`);
  }
  return {
    fact_cid: h.fact_cid,
    attester: h.attester,
    accepted_at: h.accepted_at,
    observed_at: h.observed_at === null ? null : isoSeconds(h.observed_at * 1000),
    note: f.body.value,
    fact: await serveFact(ctx, f),
  };
}

export async function serveSearch(ctx: ServiceContext, a: SearchAnswer) {
  // Every item runs (no shouldStart), so no slot is left undefined.
  const results = (await mapLimit(a.top, READ_CONCURRENCY, async (r): Promise<SearchResult> => {
    const base = await served(ctx, r.h, a.scope);
    const out: SearchResult = {
      ...base,
      score: round6(r.score),
      // Normalized to the best candidate: raw scores carry the scope's statistics, which are
      // the scope's own, but a ratio is all a reader needs to compare notes of one answer.
      text_score: round6(r.t),
      cosine: round6(r.cos),
    };
    if (r.distance !== undefined) out.distance_m = r.distance;
    if (r.inWindow !== undefined) out.in_time_window = r.inWindow;
    if (a.context > 0) {
      const thread = r.h.thread;
      const near =
        thread === null
          ? { before: [], after: [] }
          : await ctx.store.memory.noteNeighbours({ scope: a.scope, fact_cid: r.h.fact_cid, thread, n: a.context, ...(a.asOf ? { accepted_before: a.asOf } : {}) });
      out.context = {
        before: (await Promise.all(near.before.map((h) => served(ctx, h, a.scope)))).map(asContext),
        after: (await Promise.all(near.after.map((h) => served(ctx, h, a.scope)))).map(asContext),
      };
    }
    return out;
  })) as SearchResult[];
  // The receipt binds the ranked notes in rank order (a verifier checks the order); a context
  // note is bound by its own fact receipt, and being a neighbour is shown, not signed.
  const cids = results.map((r) => r.fact_cid);
  const cells = [...new Set(results.map((r) => r.fact.cell as string))];
  return {
    query: a.query,
    ranking: a.ranking,
    engine: 'bm25f',
    index: ctx.store.driver === 'sqlite' ? 'sqlite_fts5' : 'postgres_gin',
    weights: a.weights,
    interpretation: a.interpretation,
    results,
    ...(a.vectorScanTruncated !== undefined ? { vector_scan_truncated: a.vectorScanTruncated } : {}),
    ...(a.bestCosine !== undefined ? { best_cosine: a.bestCosine } : {}),
    receipt: issueReceipt(ctx, 'memory_search', cells, cids, { scope: a.scope ?? undefined, ...(a.asOf ? { as_of: { transaction_time: a.asOf } } : {}) }),
  };
}
