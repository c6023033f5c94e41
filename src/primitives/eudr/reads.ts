/**
 * The baseline and loss readings of a statement's cells, read lean: what recall would answer for
 * these static bands (stored facts first, the missing ones fetched, signed and kept through the
 * responder's one materialization path, with its coalescing and bounded upstream pool), without
 * serving each fact with a receipt of its own. A statement samples thousands of cells, and one
 * receipt over all their fact_cids is what it answers; each fact stays fetchable with its own
 * inclusion proof (`/v1/fetch`).
 */
import { currentTslot } from '../../protocol/tslot.js';
import type { StoredFact } from '../../store/contract.js';
import type { ServiceContext } from '../context/context.js';

/** The value and fact_cid of each band with a primary numeric fact at `cell`; every fact_cid read; why each band that could not be fetched was not (its reason class). */
export async function readCellBands(
  ctx: ServiceContext,
  cell: string,
  bands: readonly string[],
  deadline: number,
): Promise<{ values: Map<string, { value: number; cid: string }>; factCids: string[]; failures: string[] }> {
  const byBand = new Map<string, StoredFact>();
  for (const f of (await ctx.store.readLatest({ cell, bands: [...bands], scope: null })).facts) byBand.set(f.band, f);
  const nowMs = ctx.now().getTime();
  const limit = Math.min(deadline, Date.now() + ctx.config.materializerTimeoutSecs * 1000);
  const missing = bands.filter((b) => !byBand.has(b)).map((b) => ctx.registry.bands.get(b)!);
  const fetched = await Promise.all(missing.map((b) => ctx.materializations.materialize(ctx, cell, b, currentTslot(b.tempo, nowMs), undefined, limit)));
  const failures: string[] = [];
  for (const r of fetched) {
    if (r.fact) byBand.set(r.fact.band, r.fact);
    else failures.push(r.note.reason_class ?? 'not_fetched');
  }
  const values = new Map<string, { value: number; cid: string }>();
  for (const f of byBand.values()) if (f.kind === 'primary' && typeof f.body.value === 'number') values.set(f.band, { value: f.body.value, cid: f.fact_cid });
  return { values, factCids: [...byBand.values()].map((f) => f.fact_cid), failures };
}
