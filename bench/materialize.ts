/**
 * Lazy materialization against fixture upstreams that answer after 200 ms:
 * - a cold recall of 8 bands at one cell (elevation, 5 weather, 2 air) against the sum of the
 *   same 8 recalls made one after another (target: ≤ 250 ms for the parallel one);
 * - 100 concurrent recalls of one cold cell → upstream requests per provider call (target 1);
 * - per-connector overhead beyond the upstream latency (direct materialize, median of 5) and the
 *   end-to-end overhead of a cold single-band recall (fetch + sign + durable append + receipt).
 * Prints one JSON object.
 *
 *   node --import tsx bench/materialize.ts
 */
import { cellOf } from '../src/protocol/cell64.js';
import { JSON_CONNECTORS } from '../src/sources/json-connectors.js';
import { build } from '../test/support/app.js';
import { fixtureDeps, requestFor } from '../test/sources/fixtures/json-deps.js';
import { PATHS, startJsonUpstreams } from '../test/sources/fixtures/json-upstreams.js';

const DELAY_MS = 200;
const BANDS = [
  'copdem30m.elevation_mean',
  'weather.temperature_2m',
  'weather.precipitation',
  'weather.wind_speed_10m',
  'weather.relative_humidity_2m',
  'weather.cloud_cover',
  'air.pm2_5',
  'air.ozone',
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number) => Math.round(x * 10) / 10;

const fx = await startJsonUpstreams();
for (const p of Object.values(PATHS)) fx.behave(p, { delayMs: DELAY_MS });
const t = await build({ upstreams: fx.upstreams, materializerTimeoutSecs: 10 });
let seq = 0;
const freshCell = () => cellOf(-33 + seq++ * 0.0137, 151.2);
const recall = async (cell: string, bands: string[]) => {
  const started = performance.now();
  const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell, bands } });
  const ms = performance.now() - started;
  const body = r.json();
  const ok = r.statusCode === 200 && body.materialize_notes.every((n: { status: string }) => n.status === 'materialized');
  if (!ok) throw new Error(`recall failed: ${r.body.slice(0, 400)}`);
  return ms;
};

try {
  // Warm up the code paths (JIT, SQLite statements) on a throwaway cell.
  await recall(freshCell(), BANDS);

  // 1. Eight bands cold, in one recall, against the same eight one after another.
  const parallelRuns: number[] = [];
  for (let i = 0; i < 5; i++) parallelRuns.push(await recall(freshCell(), BANDS));
  const sequential: Record<string, number> = {};
  for (const b of BANDS) sequential[b] = await recall(freshCell(), [b]);
  const sequentialSum = Object.values(sequential).reduce((a, b) => a + b, 0);
  const parallel = median(parallelRuns);

  // 2. One hundred concurrent recalls of one cold cell.
  fx.requests.length = 0;
  const cell = freshCell();
  const started = performance.now();
  await Promise.all(Array.from({ length: 100 }, () => recall(cell, BANDS)));
  const burstMs = performance.now() - started;
  const perPath = Object.fromEntries(
    Object.entries(PATHS)
      .map(([k, p]) => [k, fx.count(p)])
      .filter(([, n]) => (n as number) > 0),
  );
  const burstRequests = fx.requests.length;

  // 3. Overhead beyond upstream latency: each connector directly, then a full cold recall.
  const deps = fixtureDeps(fx, { timeoutSecs: 10 });
  const connectorOverhead: Record<string, number> = {};
  for (const factory of JSON_CONNECTORS) {
    const c = factory(deps);
    if (c.key === 'open_meteo_archive') continue; // past days only; measured through backfill, not recall
    const band = c.bands[0];
    const runs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const s = performance.now();
      const out = await c.materialize(requestFor(freshCell(), band, { budgetMs: 10_000 }));
      runs.push(performance.now() - s);
      if (out.status === 'error' || out.status === 'timeout') throw new Error(`${c.key}: ${out.reason}`);
    }
    // MODIS asks LST and QC in parallel: one upstream latency, like the others.
    connectorOverhead[`${c.key}:${band}`] = round(median(runs) - DELAY_MS);
  }
  const recallOverhead = round(median(Object.values(sequential)) - DELAY_MS);

  // 4. The same 8-band cold recall with instant upstreams: what the responder itself adds
  //    (batching window, minting each fact durably, receipts), measured in this run.
  for (const p of Object.values(PATHS)) fx.behave(p, {});
  const floorRuns: number[] = [];
  for (let i = 0; i < 5; i++) floorRuns.push(await recall(freshCell(), BANDS));

  console.log(
    JSON.stringify(
      {
        bench: 'materialize',
        upstream_delay_ms: DELAY_MS,
        cold_recall_8_bands: {
          bands: BANDS,
          parallel_wall_ms: round(parallel),
          parallel_best_ms: round(Math.min(...parallelRuns)),
          parallel_runs_ms: parallelRuns.map(round),
          sequential_sum_ms: round(sequentialSum),
          speedup: round(sequentialSum / parallel),
          target_ms: 250,
          within_target: parallel <= 250,
          zero_latency_upstream_wall_ms: round(median(floorRuns)),
        },
        concurrent_100_same_cold_cell: {
          wall_ms: round(burstMs),
          upstream_requests_by_path: perPath,
          upstream_requests_total: burstRequests,
          provider_calls: Object.keys(perPath).length,
          target_requests_per_provider_call: 1,
          within_target: Object.values(perPath).every((n) => n === 1),
        },
        overhead_beyond_upstream_ms: {
          connector_direct_median: connectorOverhead,
          cold_single_band_recall_median: recallOverhead,
        },
      },
      null,
      2,
    ),
  );
} finally {
  await t.close();
  await fx.close();
}
