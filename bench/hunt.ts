/**
 * hunt (spec 4.10) against fixture upstreams that answer after 200 ms per band read:
 * - cold: one algal_bloom hunt over 32 never-read cells (2 bands each), wall over HTTP inject;
 * - warm: the same hunt repeated, p50/p99 over in-process inject and over a loopback socket;
 * - scaling: cold wall time at 8 / 32 / 128 samples (128 is beyond the spec cap: a bench-only
 *   override through the primitive, to show how the materializer pool bounds the fan-out).
 * Prints one JSON line. Run: node --import tsx bench/hunt.ts [warm_runs]
 */
import { hunt } from '../src/primitives/hunt/hunt.js';
import type { MaterializeOutcome } from '../src/sources/contract.js';
import { build } from '../test/support/app.js';
import { fakeConnector, slow } from '../test/support/fake-connector.js';
import { percentiles } from './harness.js';

const UPSTREAM_MS = 200;
const runs = Number(process.argv[2] ?? 50);
const ok = (v: number): MaterializeOutcome => ({ status: 'value', value: v, provenance: { source: 'fixture', captured_at: '2026-11-20T00:00:00Z' }, fn: 'fixture@1' });
const fixture = fakeConnector(['indices.ndci', 'indices.mndwi'], {
  'indices.ndci': slow(UPSTREAM_MS, ok(0.3)),
  'indices.mndwi': slow(UPSTREAM_MS, ok(0.4)),
});
// Each box is fresh (nothing stored there), so every hunt below starts cold.
const box = (i: number) => ({ min_lat: 41.6 + i * 0.05, min_lng: -83.2, max_lat: 41.62 + i * 0.05, max_lng: -83.18 });

const t = await build({}, {}, { materializers: [fixture] });
try {
  const payload = { event: 'algal_bloom', polygon_bbox: box(0) };
  const calls0 = t.service.materializations.upstreamCalls;
  const t0 = performance.now();
  const cold = await t.app.inject({ method: 'POST', url: '/v1/hunt', payload });
  const coldMs = performance.now() - t0;
  if (cold.statusCode !== 200) throw new Error(`hunt failed: ${cold.body}`);
  const coldBody = cold.json();
  const coldCalls = t.service.materializations.upstreamCalls - calls0;

  const warm: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const s = performance.now();
    const r = await t.app.inject({ method: 'POST', url: '/v1/hunt', payload });
    if (r.statusCode !== 200) throw new Error(`warm hunt failed: ${r.body}`);
    if (i >= 3) warm.push(performance.now() - s);
  }
  const w = percentiles(warm);
  // The same warm hunt over a real loopback socket (the figure is over HTTP).
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const overHttp: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const s = performance.now();
    const r = await fetch(`${base}/v1/hunt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`warm hunt over HTTP failed: ${r.status}`);
    if (i >= 3) overHttp.push(performance.now() - s);
  }
  const h = percentiles(overHttp);
  if (t.service.materializations.upstreamCalls - calls0 !== coldCalls) throw new Error('warm hunts went upstream');

  const scaling: Record<string, number> = {};
  let i = 1;
  for (const n of [8, 32, 128]) {
    const s = performance.now();
    const r = await hunt(t.service, { event: 'algal_bloom', polygon_bbox: box(i++) }, { samples: n });
    scaling[`samples_${n}_ms`] = Math.round(performance.now() - s);
    if (r.cells_sampled !== n) throw new Error(`expected ${n} samples, got ${r.cells_sampled}`);
  }
  console.log(
    JSON.stringify({
      bench: 'hunt',
      upstream_ms_per_read: UPSTREAM_MS,
      cold: { cells: coldBody.cells_sampled, bands_per_cell: 2, upstream_calls: coldCalls, wall_ms: Math.round(coldMs), hotspots: coldBody.hotspots.length, target_ms: 700 },
      warm: { runs: w.n, p50_ms: w.p50_ms, p99_ms: w.p99_ms, target_p99_ms: 50 },
      warm_http: { runs: h.n, p50_ms: h.p50_ms, p99_ms: h.p99_ms, target_p99_ms: 50 },
      scaling,
      store: t.service.store.driver,
      node: process.version,
    }),
  );
} finally {
  await t.close();
}
