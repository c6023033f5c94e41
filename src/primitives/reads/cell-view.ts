/**
 * The cell view (GET /v1/cells/:cell64): geometry of one cell plus what the store holds there —
 * the latest fact per attested band, served with its own receipt. A view never materializes,
 * so looking at a cell cannot change it.
 */
import { cellBbox, cellCenter, neighbours, pitchMetres } from '../../protocol/cell64.js';
import { requireCell } from '../../protocol/cell-token.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact } from '../facts/facts-view.js';
import { GRID_CAVEAT } from './recall.js';

/** Geometry and stored contents of one cell, with a receipt over the facts shown. */
export async function cellView(ctx: ServiceContext, cell64: string) {
  const cell = requireCell(ctx.config.prefix, cell64, 'cell64'); // a cell64 or a cell token; else invalid_cell with the grammar reason
  const read = await ctx.store.readLatest({ cell, scope: null });
  const stored = [...read.facts].sort((a, b) => (a.band < b.band ? -1 : a.band > b.band ? 1 : 0));
  const facts = await Promise.all(stored.map((f) => serveFact(ctx, f)));
  const limit = ctx.config.scanCellLimit;
  const versions = await ctx.store.history({ cell, scope: null, limit: limit + 1 });
  const centre = cellCenter(cell);
  const bands = stored.map((f, i) => {
    const entry = ctx.registry.bands.get(f.band);
    return {
      band: f.band,
      title: entry?.title ?? null,
      value_kind: entry?.value_kind ?? null,
      provenance_class: entry?.provenance_class ?? f.provenance_class,
      tslot: f.tslot,
      fact: facts[i],
    };
  });
  return {
    cell64: cell,
    center: centre,
    bbox: cellBbox(cell),
    pitch_m: pitchMetres(centre.lat),
    neighbours: neighbours(cell),
    bands_attested: stored.map((f) => f.band),
    bands,
    counts: {
      bands: stored.length,
      absences: stored.filter((f) => f.kind === 'absence').length,
      // Every stored version (all tslots and supersessions), capped by the scan limit.
      versions: Math.min(versions.length, limit),
      versions_truncated: versions.length > limit,
    },
    caveats: [GRID_CAVEAT],
    receipt: issueReceipt(
      ctx,
      'cell_view',
      [cell],
      facts.map((f) => f.fact_cid),
      {
        merkle_proof: stored[0]?.proof,
        cost: { credits: 0, was_cached: read.was_cached },
      },
    ),
  };
}
