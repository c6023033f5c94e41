/**
 * What /v1/ask reads for each intent, through the read primitives themselves (recall,
 * find_similar, state_diff, corpus_state_stats), so an answer's facts are exactly what those
 * calls would return. A topic's bands are read in one recall, which fetches every missing band
 * in parallel. A window wholly in the past reads stored history instead and never fetches: a
 * read must not invent history, so missing past slots become next steps (trajectory, backfill).
 */
import { SvcError } from '../../protocol/errors.js';
import { currentTslot, tslotOf } from '../../protocol/tslot.js';
import type { StoredFact } from '../../store/contract.js';
import type { ServiceContext } from '../context/context.js';
import { corpusStateStats } from '../reads/corpus-stats.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import type { MaterializeNote } from '../context/materialize-note.js';
import { dataAvailability } from '../materialize/materializers-info.js';
import { recall } from '../reads/recall.js';
import { windowTslots } from '../reads/series.js';
import { findSimilar } from '../embeddings/similar.js';
import { DEFAULT_ENCODER, stateDiff } from '../embeddings/state.js';
import { backfillStep, recallSlotStep, similarStep, stateDiffStep, trajectoryStep, type NextStep } from '../steps/next-steps.js';
import type { TimeWindow } from './time.js';

export interface Gathered {
  facts: ServedFact[];
  bandsAttested: string[];
  notes: MaterializeNote[];
  caveats: string[];
  /** Cells and fact_cids beyond the asked cell's facts that the answer used (neighbours). */
  extraCells: string[];
  extraCids: string[];
  /** foundation_embeddings of the response. */
  embeddings: Record<string, unknown>;
  steps: NextStep[];
  /** How time was read: the current slot of each band, or stored history over the window. */
  timeMode: 'current' | 'history' | null;
}

const empty = (): Gathered => ({ facts: [], bandsAttested: [], notes: [], caveats: [], extraCells: [], extraCids: [], embeddings: {}, steps: [], timeMode: null });

/** The newest stored fact of `band` inside the window (static bands: the one fact). */
async function newestInWindow(ctx: ServiceContext, cell: string, band: string, time: TimeWindow): Promise<StoredFact | undefined> {
  const entry = ctx.registry.bands.get(band)!;
  if (entry.tempo === 'static') return (await ctx.store.latest({ cell, bands: [band], scope: null }))[0];
  const [from, to] = windowTslots(entry, [time.start_unix, time.end_unix]);
  const rows = await ctx.store.history({ cell, bands: [band], tslot_from: from, tslot_to: to, scope: null });
  let best: StoredFact | undefined;
  for (const f of rows) if (!best || f.tslot > best.tslot || (f.tslot === best.tslot && f.accepted_at >= best.accepted_at)) best = f;
  return best;
}

/** A topic's bands at the cell: the current slots through recall, or stored history over a past window. */
export async function readTopic(ctx: ServiceContext, cell: string, bands: string[], time: TimeWindow | undefined, deadline: number): Promise<Gathered> {
  const g = empty();
  if (!time || time.reaches_now) {
    const r = await recall(ctx, { cell, bands }, { deadline });
    g.facts = r.facts;
    g.bandsAttested = r.bands_already_attested_at_cell;
    g.notes = r.materialize_notes;
    g.caveats = [...r.caveats];
    g.timeMode = time ? 'current' : null;
    return g;
  }
  g.timeMode = 'history';
  const found = await Promise.all(bands.map((b) => newestInWindow(ctx, cell, b, time)));
  g.facts = await Promise.all(found.filter((f): f is StoredFact => f !== undefined).map((f) => serveFact(ctx, f)));
  g.bandsAttested = await ctx.store.bandsAt(cell, null);
  const missing = bands.filter((_, i) => !found[i]);
  if (missing.length > 0) {
    g.caveats.push(`No stored fact inside the asked window for ${missing.join(', ')}: past slots are read from storage only (a read never invents history).`);
    for (const b of missing) {
      const band = ctx.registry.bands.get(b)!;
      if (ctx.materializers.forBand(b)?.history) g.steps.push(backfillStep(cell, b, time.start_unix, time.end_unix));
      else if (band.tempo !== 'static') g.steps.push(trajectoryStep(cell, b, time.start_unix, time.end_unix));
    }
  }
  return g;
}

/** The cell's embedding and its nearest stored neighbours (the similar-places intent). */
export async function readSimilar(ctx: ServiceContext, cell: string, deadline: number): Promise<Gathered> {
  const g = empty();
  const r = await recall(ctx, { cell, bands: [DEFAULT_ENCODER] }, { deadline });
  g.facts = r.facts;
  g.bandsAttested = r.bands_already_attested_at_cell;
  g.notes = r.materialize_notes;
  g.caveats = [...r.caveats];
  const vector = r.facts.find((f) => f.band === DEFAULT_ENCODER && f.kind === 'primary');
  if (!vector) {
    g.caveats.push(`No ${DEFAULT_ENCODER} embedding at this cell, so similar places cannot be ranked from it.`);
    return g;
  }
  try {
    const s = await findSimilar(ctx, { key: cell, k: 10 }, { deadline });
    g.embeddings[DEFAULT_ENCODER] = {
      kind: 'neighbors',
      mode: s.mode,
      query: s.query,
      neighbors: s.neighbors,
      searched: s.searched,
    };
    g.extraCells = s.neighbors.map((n) => n.cell);
    g.extraCids = s.neighbors.map((n) => n.fact_cid).filter((c): c is string => typeof c === 'string');
    g.caveats.push(...s.caveats);
    g.steps.push(similarStep(cell, 25));
  } catch (e) {
    if (!(e instanceof SvcError)) throw e;
    g.caveats.push(`find_similar: ${e.message}`);
  }
  return g;
}

/** The topic's bands now, and the embedding change between the asked year and the newest (what changed). */
export async function readChange(ctx: ServiceContext, cell: string, bands: string[], time: TimeWindow | undefined, deadline: number): Promise<Gathered> {
  const g = await readTopic(ctx, cell, bands, undefined, deadline);
  const now = ctx.now().getTime();
  const current = g.facts.find((f) => f.band === DEFAULT_ENCODER && f.kind === 'primary');
  const b = typeof current?.tslot === 'number' ? current.tslot : currentTslot('slow', now);
  let a = time ? tslotOf(time.start_unix, 'slow') : b - 1;
  if (a >= b) a = b - 1;
  g.timeMode = time ? 'current' : null;
  const stored = (await ctx.store.latest({ cell, bands: [DEFAULT_ENCODER], tslot: a, scope: null }))[0];
  if (stored) g.facts.push(await serveFact(ctx, stored));
  else {
    // The earlier year's embedding is fetched like any missing slot (the source has yearly layers).
    const past = await recall(ctx, { cell, bands: [DEFAULT_ENCODER], tslot: a }, { deadline });
    g.notes.push(...past.materialize_notes);
    for (const f of past.facts) if (!g.facts.some((x) => x.fact_cid === f.fact_cid)) g.facts.push(f);
    if (!past.facts.some((f) => f.kind === 'primary'))
      g.steps.push(recallSlotStep(cell, DEFAULT_ENCODER, a, `the ${DEFAULT_ENCODER} embedding of the earlier year (tslot ${a}) that the comparison needs`));
  }
  // state_diff's result is typed loosely (a record): read the fields it documents.
  const d = (await stateDiff(ctx, { cell, tslot_a: a, tslot_b: b })) as unknown as {
    a: unknown;
    b: unknown;
    cosine?: number | null;
    l2?: number | null;
    residual_l2: number | null;
  };
  const side = (x: unknown) => x as { fact_cid: string | null; tslot: number };
  const cos = typeof d.cosine === 'number' ? d.cosine : null;
  g.embeddings[DEFAULT_ENCODER] = {
    kind: 'change',
    tslot_a: a,
    tslot_b: b,
    year_a: yearOfSlow(a),
    year_b: yearOfSlow(b),
    slot_a: slowSpan(a),
    slot_b: slowSpan(b),
    cosine: cos,
    change: cos === null ? null : Math.round((1 - cos) * 1e6) / 1e6,
    l2: d.l2 ?? null,
    residual_l2: d.residual_l2,
    fact_cid_a: side(d.a).fact_cid,
    fact_cid_b: side(d.b).fact_cid,
  };
  for (const cid of [side(d.a).fact_cid, side(d.b).fact_cid]) if (cid && !g.facts.some((f) => f.fact_cid === cid)) g.extraCids.push(cid);
  g.steps.push(stateDiffStep(cell, a, b));
  return g;
}

const YEAR_S = 31_536_000;

/**
 * The calendar year a slow tslot stands for. Slow slots are 365-day units counted from 1970, so
 * they drift against calendar years (slot 50 runs 2019-12-20 to 2020-12-18): the year of the
 * slot's middle is the one it mostly covers.
 */
export function yearOfSlow(tslot: number): number {
  return new Date((tslot + 0.5) * YEAR_S * 1000).getUTCFullYear();
}

/** The dates a slow tslot covers. */
function slowSpan(tslot: number): [string, string] {
  const d = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
  return [d(tslot * YEAR_S), d((tslot + 1) * YEAR_S - 1)];
}

/** The corpus snapshot and, for a topic, its bands' availability (corpus questions). */
export async function readCorpus(ctx: ServiceContext, bands: readonly string[]) {
  const stats = await corpusStateStats(ctx);
  const availability = bands.length > 0 ? dataAvailability(ctx).bands.filter((b) => bands.includes(b.band)) : undefined;
  return { stats, availability };
}
