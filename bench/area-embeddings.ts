/**
 * `npm run bench area-embeddings`: tessera_field and region_archetype_map (docs/rasters.md) over
 * the GeoTessera fixture's 10 m tile (320 × 320 pixels, per-pixel scales, three archetypes).
 * Prints JSON:
 *  - field_cold_256: GET /v1/tessera_field of a 256 × 256 box on a fresh responder (no tile
 *    header, record or artifact held), the fixture answering every request after BENCH_DELAY_MS
 *    (default 100); requests, bytes read from the .npy files against their size;
 *  - field_warm_256: the same request again on that responder;
 *  - field_rebuild_256: POST /v1/tessera_field/resolve after the artifact was evicted, from cold
 *    tile headers;
 *  - archetypes_k6_256: POST /v1/region_archetype_map k = 6 over the same box, its field already
 *    made (the clustering and the map), and from a fresh responder (field and clustering);
 *  - kmeans_k6_random: the clustering alone on 65 536 random unit vectors of 128 values (no
 *    structure: the iteration bound is reached), the cost of one assignment pass.
 */
import { build, type TestApp } from '../test/support/app.js';
import { startRasterUpstreams } from '../test/sources/fixtures/raster-upstreams.js';
import { TESSERA_FINE } from '../test/sources/fixtures/raster-scenes.js';
import { fineBox, TESSERA_NOW } from '../test/support/area-embeddings.js';
import { kmeans, kmeansSeed, KMEANS_MAX_ITERATIONS } from '../src/primitives/rasters/archetype-kmeans.js';
import { median } from './load.js';

const DELAY = Number(process.env.BENCH_DELAY_MS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ms = (x: number) => Number(x.toFixed(1));
/** A box whose window on the 10 m tile is exactly 256 × 256 pixels. */
const BOX = fineBox(32, 32, 285, 285);
const QUERY = `/v1/tessera_field?min_lat=${BOX.min_lat}&min_lng=${BOX.min_lng}&max_lat=${BOX.max_lat}&max_lng=${BOX.max_lng}&year=2025`;

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const a = performance.now();
  const r = await f();
  return [r, performance.now() - a];
}

async function main(): Promise<void> {
  const up = await startRasterUpstreams(['tessera']);
  const npy = [...up.files.entries()].filter(([p]) => p.includes(TESSERA_FINE.name) && p.endsWith('.npy'));
  const npyBytes = npy.reduce((n, [, b]) => n + b.length, 0);
  const rows: Record<string, number[]> = { cold: [], warm: [], rebuild: [], map_warm_field: [], map_cold: [] };
  const info: Record<string, unknown> = {};
  const fresh = () => build({ upstreams: up.upstreams, timeoutSecs: 60, checkResponses: false }, {}, { now: () => TESSERA_NOW, driver: 'sqlite' });
  try {
    // One unmeasured round warms the JIT; then every round is a fresh responder.
    for (let i = -1; i < ROUNDS; i++) {
      const t: TestApp = await fresh();
      try {
        up.reset();
        up.switches = { delay: { ms: DELAY } };
        const [r, cold] = await timed(() => t.app.inject({ method: 'GET', url: QUERY }));
        const body = r.json();
        if (r.statusCode !== 200 || body.status !== 'field') throw new Error(`tessera_field: ${r.statusCode} ${r.body.slice(0, 400)}`);
        const requests = up.requests.length;
        const read = up.requests
          .filter((x) => x.path.endsWith('.npy'))
          .reduce((n, x) => {
            const m = /^bytes=(\d+)-(\d+)$/.exec(x.range ?? '');
            return n + (m ? Number(m[2]) - Number(m[1]) + 1 : 0);
          }, 0);
        const [, warm] = await timed(() => t.app.inject({ method: 'GET', url: QUERY }));
        // Rebuild from the record with cold tile headers.
        await t.service.store.artifacts.evict(body.artifact_cid);
        for (const m of t.service.materializers.list()) (m as { cog?: { clear(): void }; npy?: unknown }).npy && (m as { cog?: { clear(): void } }).cog?.clear();
        const [rr, rebuild] = await timed(() => t.app.inject({ method: 'POST', url: '/v1/tessera_field/resolve', payload: { token: body.token } }));
        if (rr.json().artifact?.state !== 'rebuilt') throw new Error(`resolve: ${rr.body.slice(0, 300)}`);
        up.switches = {};
        const [mr, mapWarm] = await timed(() => t.app.inject({ method: 'POST', url: '/v1/region_archetype_map', payload: { bbox: BOX, year: 2025, k: 6 } }));
        const mb = mr.json();
        if (mb.status !== 'map') throw new Error(`region_archetype_map: ${mr.body.slice(0, 400)}`);
        if (i < 0) continue;
        rows.cold.push(cold);
        rows.warm.push(warm);
        rows.rebuild.push(rebuild);
        rows.map_warm_field.push(mapWarm);
        Object.assign(info, {
          window: `${body.width} x ${body.height}`,
          artifact_bytes: body.bytes,
          upstream_requests: requests,
          npy_bytes_read: read,
          npy_bytes: npyBytes,
          map: { iterations: mb.iterations, converged: mb.converged, valid_pixels: mb.valid_pixels, archetype_pixels: mb.archetypes.map((a: { pixels: number }) => a.pixels), map_bytes: mb.bytes },
        });
      } finally {
        up.switches = {};
        await t.close();
      }
      // The map from nothing: field and clustering on a fresh responder.
      const t2 = await fresh();
      try {
        up.switches = { delay: { ms: DELAY } };
        const [mr, mapCold] = await timed(() => t2.app.inject({ method: 'POST', url: '/v1/region_archetype_map', payload: { bbox: BOX, year: 2025, k: 6 } }));
        if (mr.json().status !== 'map') throw new Error(`region_archetype_map: ${mr.body.slice(0, 400)}`);
        if (i >= 0) rows.map_cold.push(mapCold);
      } finally {
        up.switches = {};
        await t2.close();
      }
    }
  } finally {
    await up.close();
  }

  // k-means alone on unstructured data: 65 536 random unit vectors.
  const n = 65_536;
  const dim = 128;
  const x = new Float32Array(n * dim);
  let h = 12345;
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let d = 0; d < dim; d++) {
      h = (Math.imul(h, 1103515245) + 12345) >>> 0;
      const v = h / 2 ** 32 - 0.5;
      x[i * dim + d] = v;
      s += v * v;
    }
    const norm = Math.sqrt(s);
    for (let d = 0; d < dim; d++) x[i * dim + d] /= norm;
  }
  const [res, kmMs] = await timed(() => kmeans(x, n, dim, 6, kmeansSeed('a'.repeat(26), 6)));

  const stat = (xs: number[]) => ({ ms_median: ms(median(xs)), ms_rounds: xs.map(ms) });
  console.log(
    JSON.stringify(
      {
        bench: 'area-embeddings',
        upstream_delay_ms_per_request: DELAY,
        rounds: ROUNDS,
        tile: { name: TESSERA_FINE.name, pixels: `${TESSERA_FINE.size} x ${TESSERA_FINE.size}`, resolution_m: TESSERA_FINE.res },
        ...info,
        field_cold_256: stat(rows.cold),
        field_warm_256: stat(rows.warm),
        field_rebuild_256: stat(rows.rebuild),
        archetypes_k6_256_field_made: stat(rows.map_warm_field),
        archetypes_k6_256_cold: stat(rows.map_cold),
        kmeans_k6_random: {
          vectors: n,
          dim,
          ms: ms(kmMs),
          iterations: res?.iterations,
          converged: res?.converged,
          max_iterations: KMEANS_MAX_ITERATIONS,
          ms_per_iteration: res ? ms(kmMs / (res.iterations + 1)) : null,
        },
      },
      null,
      2,
    ),
  );
}

await main();
