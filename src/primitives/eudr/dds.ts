/**
 * POST /v1/eudr_dds (docs/eudr.md): plots in, a signed due-diligence statement shaped after Annex
 * II of Regulation (EU) 2023/1115 out. Every plot is checked before anything is read (geometry,
 * HS code against Annex I, country code, a cattle plot given as a point), so a bad plot changes
 * nothing. Then each plot's cells are sampled inside it and read through recall (the forest
 * baseline at the cut-off and the Hansen loss year), its verdict decided (verdict.ts), and, when
 * asked, its visual evidence read (visual.ts). One receipt binds the union of every cell and
 * fact_cid read; bundles cite the evidence. The work is bounded: at most MAX_PLOTS plots and
 * MAX_TOTAL_CELLS sampled cells, reads in flight bounded, and a deadline after which the plots not
 * yet assessed are listed in a typed `partial` block instead of being guessed.
 */
import { Pool } from '../../lib/pool.js';
import { contentId } from '../../protocol/cid.js';
import { invalidArgument } from '../../protocol/errors.js';
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { mapLimit } from '../reads/common.js';
import { readCellBands } from './reads.js';
import { requestScope } from '../scopes/request.js';
import { keepEvidenceBundles } from '../tokens/bundles.js';
import { checkPlotCodes } from './annex.js';
import { parsePlotGeometry, plotAreaHa } from './geometry.js';
import { defaultCellsPerPlot, MAX_CELLS_PER_PLOT, samplePlotCells } from './sample.js';
import type { Commodity, DdsStatement, ForestBaseline, OperatorInfo, PlotAssessment, PlotGeometry, PlotInput, PlotVerdict } from './types.js';
import { decidePlot, MMU_HA, type CellReading } from './verdict.js';
import { visualEvidence } from './visual.js';

export const MAX_PLOTS = 1000;
/** Sampled cells over all plots of one statement. */
export const MAX_TOTAL_CELLS = 200_000;
/** Point plots are declared plots of at most this many hectares (and never cattle). */
export const POINT_PLOT_MAX_HA = 4;
export const DEFAULT_CUT_OFF = '2020-12-31';
/** Cell reads in flight for one statement. */
const READS_IN_FLIGHT = 32;
/** Plots assessed at once. */
const PLOTS_IN_FLIGHT = 4;

export const LEGALITY_DISCLAIMER =
  'Legality under the laws of the country of production (Article 3(b) and Article 2(40) of Regulation (EU) 2023/1115: land use rights, environmental protection, labour, human rights, tax, anti-corruption, trade and customs, and the rights of indigenous peoples) is outside Earth-observation scope. This statement assesses deforestation only; no legality module ran (legality_module "none"). The operator remains responsible for the legality assessment.';

/** A request, as the operation's schema admits it. */
export interface DdsRequest {
  plots: PlotInput[];
  cut_off_date?: string;
  forest_baseline_override?: ForestBaseline;
  legality_module?: string;
  max_cells_per_plot?: number;
  operator?: OperatorInfo;
  scope?: Scope;
}

/** A plot after validation: what its assessment starts from. */
interface ReadyPlot {
  input: PlotInput;
  index: number;
  geometry: PlotGeometry;
  area_ha: number | null;
  commodity: Commodity;
  is_cattle: boolean;
  /** Cells asked for (the sample may hold fewer where the plot is small). */
  requested: number;
  cells: Array<{ cell: string; lat: number; lng: number }>;
}

/** Check every plot (nothing is read yet) and sample its cells. */
export function preparePlots(req: DdsRequest): ReadyPlot[] {
  if (req.plots.length > MAX_PLOTS) throw invalidArgument('plots', `at most ${MAX_PLOTS} plots per statement (got ${req.plots.length}); split the shipment into several statements`);
  const seen = new Set<string>();
  let total = 0;
  const ready = req.plots.map((p, i) => {
    const at = `plots[${i}]`;
    if (seen.has(p.plot_id)) throw invalidArgument(`${at}.plot_id`, `plot_id "${p.plot_id}" appears twice`);
    seen.add(p.plot_id);
    const { commodity, is_cattle } = checkPlotCodes(p, at);
    const geometry = parsePlotGeometry(p.geometry_geojson, `${at}.geometry_geojson`);
    if (geometry.type === 'Point' && is_cattle) {
      throw invalidArgument(
        `${at}.geometry_geojson`,
        `plot "${p.plot_id}": a cattle plot (HS ${p.commodity_hs}) must be given as a polygon; a point is accepted only for plots of ${POINT_PLOT_MAX_HA} ha or less that are not cattle`,
      );
    }
    const area_ha = plotAreaHa(geometry);
    const n = geometry.type === 'Point' ? 1 : Math.min(req.max_cells_per_plot ?? defaultCellsPerPlot(area_ha), MAX_CELLS_PER_PLOT);
    total += n;
    if (total > MAX_TOTAL_CELLS) {
      throw invalidArgument('max_cells_per_plot', `the plots would sample more than ${MAX_TOTAL_CELLS} cells in all (reached at plot ${i}); lower max_cells_per_plot or split the statement`);
    }
    const cells = samplePlotCells(geometry, n, `${p.plot_id}|${JSON.stringify(geometry.coordinates)}`);
    return { input: p, index: i, geometry, area_ha, commodity, is_cattle, requested: n, cells };
  });
  return ready;
}

function bandsFor(baseline: ForestBaseline): string[] {
  if (baseline === 'jrc_gfc2020_v3') return ['forest.jrc_gfc2020', 'forest.lossyear'];
  if (baseline === 'hansen_only') return ['forest.treecover2000', 'forest.lossyear'];
  return ['forest.jrc_gfc2020', 'forest.treecover2000', 'forest.lossyear'];
}

export interface RunOptions {
  deadline: number;
  /** Called after each plot is assessed. */
  onPlot?: (done: number, total: number) => void;
}

/** Assess one plot; undefined when the deadline came before its reads finished. */
async function assessPlot(ctx: ServiceContext, plot: ReadyPlot, baseline: ForestBaseline, cutOff: string, opts: RunOptions, reads: Pool): Promise<{ a: PlotAssessment; cells: string[] } | undefined> {
  if (Date.now() >= opts.deadline) return undefined;
  const bands = bandsFor(baseline);
  const cids = new Set<string>();
  const failures = new Map<string, number>();
  const readings = await Promise.all(
    plot.cells.map((c) =>
      reads.run(async (): Promise<CellReading> => {
        const r = await readCellBands(ctx, c.cell, bands, opts.deadline);
        for (const cid of r.factCids) cids.add(cid);
        for (const f of r.failures) failures.set(f, (failures.get(f) ?? 0) + 1);
        const loss = r.values.get('forest.lossyear');
        return {
          cell: c.cell,
          lat: c.lat,
          lng: c.lng,
          jrc: r.values.get('forest.jrc_gfc2020')?.value,
          treecover: r.values.get('forest.treecover2000')?.value,
          lossyear: loss?.value,
          lossFactCid: loss?.cid,
        };
      }),
    ),
  );
  // Reads cut short by the deadline would decide the plot on missing data: it is left out instead.
  if (Date.now() >= opts.deadline) return undefined;
  const n = decidePlot(readings, plot.area_ha, baseline, cutOff);
  // Missing readings are explained, so "insufficient data" says whether an upstream failed.
  if (n.verdict === 'insufficient_data' && failures.size > 0) {
    n.reason += `; reads that could not be fetched: ${[...failures].map(([why, k]) => `${k} × ${why}`).join(', ')} (retry later, or check /v1/sources)`;
  }
  const p = plot.input;
  const a: PlotAssessment = {
    plot_id: p.plot_id,
    country_of_production: p.country_of_production,
    commodity_hs: p.commodity_hs,
    commodity: plot.commodity,
    is_cattle: plot.is_cattle,
    quantity_kg: p.quantity_kg,
    ...(p.commodity_name !== undefined ? { commodity_name: p.commodity_name } : {}),
    ...(p.supplier !== undefined ? { supplier: p.supplier } : {}),
    geometry: plot.geometry,
    area_ha: plot.area_ha === null ? null : Math.round(plot.area_ha * 10000) / 10000,
    cells_requested: plot.requested,
    cells_sampled: plot.cells.length,
    mmu_ha: MMU_HA,
    ...n,
    fact_cids: [],
  };
  if (p.request_visual_evidence) {
    const loss = new Set(n.loss_cells.map((l) => l.cell));
    const ordered = [...plot.cells.filter((c) => loss.has(c.cell)), ...plot.cells.filter((c) => !loss.has(c.cell))];
    const v = await visualEvidence(ctx, ordered, opts.deadline);
    a.visual_evidence = v.evidence;
    for (const c of v.factCids) cids.add(c);
  }
  a.fact_cids = [...cids].sort();
  return { a, cells: plot.cells.map((c) => c.cell) };
}

const VERDICTS: readonly PlotVerdict[] = ['deforestation_free', 'deforestation_detected', 'no_forest_at_baseline', 'insufficient_data'];

/** Assess every plot and assemble the signed statement. */
export async function runStatement(ctx: ServiceContext, req: DdsRequest, plots: ReadyPlot[], opts: RunOptions): Promise<DdsStatement> {
  const baseline = req.forest_baseline_override ?? 'jrc_gfc2020_v3';
  const cutOff = req.cut_off_date ?? DEFAULT_CUT_OFF;
  const scope = requestScope(req.scope);
  const reads = new Pool(READS_IN_FLIGHT);
  let done = 0;
  const results = await mapLimit(plots, PLOTS_IN_FLIGHT, async (p) => {
    const r = await assessPlot(ctx, p, baseline, cutOff, opts, reads);
    if (r) opts.onPlot?.(++done, plots.length);
    return r;
  });
  const assessed = results.filter((r): r is NonNullable<typeof r> => r !== undefined).map((r) => r.a);
  const missing = plots.filter((_, i) => results[i] === undefined).map((p) => p.input.plot_id);
  const cells = [...new Set(results.flatMap((r) => r?.cells ?? []))];
  const factCids = [...new Set(assessed.flatMap((a) => a.fact_cids))].sort();
  const by_verdict = Object.fromEntries(VERDICTS.map((v) => [v, assessed.filter((a) => a.verdict === v).length])) as Record<PlotVerdict, number>;
  const bundle_tokens = factCids.length > 0 ? await keepEvidenceBundles(ctx, factCids, `EUDR due-diligence evidence, ${assessed.length} plots`) : [];
  const body = {
    schema: `${ctx.config.prefix}.eudr_dds.v1`,
    generated_at: isoSeconds(ctx.now()),
    cut_off_date: cutOff,
    forest_baseline: baseline,
    annex_ii: {
      operator: req.operator ?? null,
      products: assessed.map((a) => ({
        plot_id: a.plot_id,
        commodity_hs: a.commodity_hs,
        commodity: a.commodity,
        commodity_name: a.commodity_name ?? null,
        quantity_kg: a.quantity_kg,
        supplier: a.supplier ?? null,
      })),
      countries_of_production: [...new Set(assessed.map((a) => a.country_of_production))].sort(),
      geolocation: assessed.map((a) => ({ plot_id: a.plot_id, geometry: a.geometry, area_ha: a.area_ha })),
      risk_assessment: assessed.map((a) => ({ plot_id: a.plot_id, verdict: a.verdict, visual_verdict: a.visual_evidence?.verdict ?? null })),
      all_plots_deforestation_free: missing.length === 0 && assessed.length > 0 && assessed.every((a) => a.verdict === 'deforestation_free'),
    },
    plots: assessed,
    summary: { plots: assessed.length, by_verdict, cells_sampled: cells.length, facts: factCids.length },
    legality_module: req.legality_module ?? 'none',
    legality_disclaimer: LEGALITY_DISCLAIMER,
    evidence: { bundle_tokens, fact_count: factCids.length },
    ...(missing.length > 0
      ? {
          partial: {
            reason: 'the time budget ended before these plots were assessed; send them again in another statement',
            plots_done: assessed.length,
            plots_total: plots.length,
            plots_missing: missing,
          },
        }
      : {}),
    ...(scope ? { scope } : {}),
  };
  // The id names the statement's content (JSON has no undefined, so the CBOR hash is well defined).
  const statement_id = contentId(JSON.parse(JSON.stringify(body)));
  const receipt = issueReceipt(ctx, 'eudr_dds', cells, factCids, { ...(scope ? { scope } : {}), cost: { credits: 0, was_cached: false } });
  return { ...body, statement_id, receipt } as DdsStatement;
}
