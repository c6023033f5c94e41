/**
 * `npm run bench eudr`: the figures of EUDR statements (docs/eudr.md), in one run, as one JSON
 * object:
 * - a 100-plot statement (1 ha plots, the default ~110 cells a hectare) over the fixture rasters
 *   (test/support/eudr-fixture.ts: a JRC GFC2020 COG and Hansen tiles served with HTTP Range by
 *   the raster fixture server) answering every request after 100 ms: wall time (target ≤ 30 s),
 *   cells, facts and the upstream requests made (the real connectors read COG blocks, which many
 *   cells share);
 * - the same statement over a connector that takes 100 ms for every single cell and band (no block
 *   sharing: the pessimistic bound), with the largest number of upstream requests in flight (the
 *   responder's upstream pool bounds the fan-out at 32);
 * - memory at 1 000 plots (instant upstream, 20 cells a plot): heap and RSS growth, statement size;
 * - report rendering of the 100-plot and 1 000-plot statements.
 * Forest truth: every plot is forest; plots whose index is a multiple of 4 lost their cover in 2022.
 */
import { cellCenter } from '../src/protocol/cell64.js';
import { preparePlots, runStatement, type DdsRequest } from '../src/primitives/eudr/dds.js';
import { renderStatementHtml } from '../src/primitives/eudr/report.js';
import type { MaterializeOutcome, MaterializeRequest } from '../src/sources/contract.js';
import { build } from '../test/support/app.js';
import { boxPolygon, eudrFiles } from '../test/support/eudr-fixture.js';
import { startRasterUpstreams } from '../test/sources/fixtures/raster-upstreams.js';
import { fakeConnector } from '../test/support/fake-connector.js';

const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 100);
const r1 = (x: number) => Math.round(x * 10) / 10;
const mb = (b: number) => r1(b / 1048576);

/** 1 ha squares (100 m × 100 m) on a line near 5°S, 20°E, 200 m apart. */
function plots(n: number): DdsRequest['plots'] {
  const dLat = 100 / 111_320;
  const dLng = 100 / (111_320 * Math.cos((5 * Math.PI) / 180));
  return Array.from({ length: n }, (_, i) => {
    const w = 20 + (i % 40) * 2 * dLng;
    const s = -5 - Math.floor(i / 40) * 2 * dLat;
    return {
      plot_id: `P-${String(i).padStart(4, '0')}`,
      geometry_geojson: boxPolygon([w, s, w + dLng, s + dLat]),
      country_of_production: 'COD',
      commodity_hs: '180100',
      quantity_kg: 1000,
      request_visual_evidence: false,
    };
  });
}

/** The plot index of a cell (from its centre), for the loss truth. */
function plotIndexAt(cell: string): number {
  const { lat, lng } = cellCenter(cell);
  const col = Math.floor((lng - 20) / ((2 * 100) / (111_320 * Math.cos((5 * Math.PI) / 180))));
  const row = Math.floor((-5 - lat) / ((2 * 100) / 111_320)) + 1;
  return row * 40 + col;
}

function connector(delayMs: number) {
  let inFlight = 0;
  let maxInFlight = 0;
  const answer =
    (value: number): ((req: MaterializeRequest) => Promise<MaterializeOutcome>) =>
    async (req) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
        return { status: 'value', value, provenance: { source: 'bench', captured_at: '2026-11-20T00:00:00Z' }, fn: 'bench@1' };
      } finally {
        inFlight--;
      }
    };
  const c = fakeConnector(['forest.jrc_gfc2020', 'forest.lossyear'], {
    'forest.jrc_gfc2020': answer(1),
    'forest.lossyear': (req) => answer(plotIndexAt(req.cell) % 4 === 0 ? 22 : 0)(req),
  });
  return { c, max: () => maxInFlight };
}

// 1. 100 plots of 1 ha inside the fixture rasters' area (10 × 10, 200 m apart), every request after 100 ms.
const fixturePlots: DdsRequest['plots'] = Array.from({ length: 100 }, (_, i) => {
  const dLat = 100 / 111_320;
  const dLng = 100 / (111_320 * Math.cos((50 * Math.PI) / 180));
  const w = 10.001 + (i % 10) * 2 * dLng;
  const s = 49.981 + Math.floor(i / 10) * 2 * dLat;
  return {
    ...plots(1)[0],
    plot_id: `F-${i}`,
    country_of_production: 'DEU',
    commodity_hs: '440399',
    geometry_geojson: boxPolygon([w, s, w + dLng, s + dLat]),
  };
});
const up = await startRasterUpstreams([]);
for (const [path, bytes] of eudrFiles()) up.files.set(path, bytes);
up.switches.delay = { ms: DELAY_MS };
const tf = await build({ upstreams: up.upstreams, materializerTimeoutSecs: 30 });
const reqF: DdsRequest = { plots: fixturePlots };
const f0 = performance.now();
const stF = await runStatement(tf.service as never, reqF, preparePlots(reqF), { deadline: Date.now() + 480_000 });
const wallF = performance.now() - f0;
const requestsF = up.requests.length;
await tf.close();
await up.close();

// 2. The same size over a connector taking 100 ms per cell and band.
const slow = connector(DELAY_MS);
const t1 = await build({ materializerTimeoutSecs: 30 }, {}, { materializers: [slow.c] });
const req100: DdsRequest = { plots: plots(100) };
const p100 = preparePlots(req100);
const s0 = performance.now();
const st100 = await runStatement(t1.service as never, req100, p100, { deadline: Date.now() + 480_000 });
const wall100 = performance.now() - s0;
const r0 = performance.now();
const html100 = renderStatementHtml(st100, { responderKeyB32: t1.service.keys.publicKeyB32 });
const render100 = performance.now() - r0;
await t1.close();

// 3. 1 000 plots, instant upstream, 20 cells a plot.
const fast = connector(0);
const t2 = await build({ materializerTimeoutSecs: 30 }, {}, { materializers: [fast.c] });
global.gc?.();
const heap0 = process.memoryUsage();
const req1000: DdsRequest = { plots: plots(1000), max_cells_per_plot: 20 };
const s1 = performance.now();
const st1000 = await runStatement(t2.service as never, req1000, preparePlots(req1000), { deadline: Date.now() + 480_000 });
const wall1000 = performance.now() - s1;
const heap1 = process.memoryUsage();
const r2 = performance.now();
const html1000 = renderStatementHtml(st1000, { responderKeyB32: t2.service.keys.publicKeyB32 });
const render1000 = performance.now() - r2;
await t2.close();

console.log(
  JSON.stringify(
    {
      bench: 'eudr',
      statement_100_plots_fixture_rasters: {
        upstream_delay_ms: DELAY_MS,
        plots: stF.summary.plots,
        cells_sampled: stF.summary.cells_sampled,
        facts: stF.summary.facts,
        upstream_requests: requestsF,
        wall_s: r1(wallF / 1000),
        target_wall_s: 30,
        statement_kb: r1(Buffer.byteLength(JSON.stringify(stF)) / 1024),
      },
      statement_100_plots_per_cell_upstream: {
        upstream_delay_ms: DELAY_MS,
        cells_sampled: st100.summary.cells_sampled,
        upstream_requests: st100.summary.facts,
        wall_s: r1(wall100 / 1000),
        max_upstream_in_flight: slow.max(),
        floor_s: r1((st100.summary.facts * DELAY_MS) / 1000 / 32),
      },
      statement_1000_plots: {
        cells_per_plot: 20,
        cells_sampled: st1000.summary.cells_sampled,
        facts: st1000.summary.facts,
        wall_s: r1(wall1000 / 1000),
        heap_growth_mb: mb(heap1.heapUsed - heap0.heapUsed),
        rss_growth_mb: mb(heap1.rss - heap0.rss),
        rss_mb: mb(heap1.rss),
        statement_mb: mb(Buffer.byteLength(JSON.stringify(st1000))),
      },
      report_render_ms: { plots_100: r1(render100), plots_1000: r1(render1000), html_kb_100: r1(html100.length / 1024), html_kb_1000: r1(html1000.length / 1024) },
    },
    null,
    2,
  ),
);
