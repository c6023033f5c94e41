/**
 * `npm run bench band-cube`: band_cube and its rebuild (docs/rasters.md, "band_cube"). Prints JSON:
 *  - cold: a 6-slot cube (tslots 687..692) of a 256 × 256 box of s2.B04 on a fresh responder (no
 *    scene, COG header, block, record or artifact cached), the fixture upstream adding
 *    BENCH_DELAY_MS (default 100) to every request. Each slot holds one scene (1 % cloud, so it is
 *    chosen) whose red asset is a 4096 × 4096 uint16 COG in 1024 × 1024 DEFLATE tiles (Sentinel-2's
 *    own tiling) with noisy pixels, the box across four tiles (the worst case for a 256-pixel
 *    window). The six files have the same bytes (made once) but are six hrefs: nothing read for
 *    one slice serves another;
 *  - the requests, the bytes read and the round trips on the critical path;
 *  - the same request again (record found, headers and blocks cached);
 *  - rebuild: cube_resolve after the artifact was evicted, from cold COG caches;
 *  - the CPU time of the process over the cold request and the rebuild, the figure that holds on
 *    a loaded machine (wall times there include waiting for a core).
 */
import { s2Item, type S2ItemDef } from '../test/sources/fixtures/raster-scenes.js';
import { gdalAvailable } from '../test/sources/fixtures/raster-tiff.js';
import { redCog, SIDE, TILE } from './red-cog.js';
import { startRasterUpstreams } from '../test/sources/fixtures/raster-upstreams.js';
import { build, type TestApp } from '../test/support/app.js';
import { pixelBox, RASTER_NOW, servedBytes } from '../test/support/rasters.js';
import { median } from './load.js';

const DELAY = Number(process.env.BENCH_DELAY_MS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ms = (x: number) => Number(x.toFixed(1));

/** One scene per slot 687..692, mid-slot, clearer than every fixture item. */
const ITEMS: S2ItemDef[] = ['2026-06-20', '2026-07-20', '2026-08-19', '2026-09-18', '2026-10-18', '2026-11-17'].map((day, i) => ({
  idx: 20 + i,
  id: `S2B_33TWL_${day.replaceAll('-', '')}_9_L2A`,
  datetime: `${day}T10:00:00.000000Z`,
  cloud: 1,
  baseline: '05.11',
  applied: false,
  offset: -0.1,
  proj: 'properties',
}));
const path = (d: S2ItemDef) => `/sentinel-cogs/sentinel-s2-l2a-cogs/33/T/WL/${d.datetime.slice(0, 4)}/${Number(d.datetime.slice(5, 7))}/${d.id}/B04.tif`;

async function main(): Promise<void> {
  const up = await startRasterUpstreams(['s2']);
  const t0 = performance.now();
  const red = redCog();
  const madeMs = performance.now() - t0;
  for (const d of ITEMS) {
    up.s2Extra.push(s2Item(d, up.origin));
    up.files.set(path(d), red);
  }
  const fileBytes = ITEMS.length * red.length;
  const payload = { bbox: pixelBox(128, 128, 383, 383), band: 's2.B04', from: '2026-06-20', to: '2026-11-22' };
  const cold: Array<{ ms: number; cpu_ms: number; requests: number; bytes_read: number; width: number; height: number; planes: number; bytes: number }> = [];
  const rebuildCpu: number[] = [];
  /** CPU time of this process (server and fixture alike) over `fn`, in ms: the work, whatever else the machine runs. */
  const cpuOf = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const c0 = process.cpuUsage();
    const out = await fn();
    const c = process.cpuUsage(c0);
    return [out, (c.user + c.system) / 1000];
  };
  const repeat: number[] = [];
  const rebuild: number[] = [];
  let rebuildRequests = 0;
  let last: TestApp | undefined;
  try {
    // One unmeasured round warms the JIT; then every round is a fresh responder (cold caches).
    for (let i = -1; i < ROUNDS; i++) {
      const t = await build({ upstreams: up.upstreams, timeoutSecs: 60, checkResponses: false }, {}, { now: () => RASTER_NOW, driver: 'sqlite' });
      try {
        up.reset();
        up.switches = { delay: { ms: DELAY } };
        const a = performance.now();
        const [r, cpu] = await cpuOf(() => t.app.inject({ method: 'POST', url: '/v1/band_cube', payload }));
        const took = performance.now() - a;
        const body = r.json();
        if (r.statusCode !== 200 || body.status !== 'cube' || body.planes !== 6) throw new Error(`band_cube: ${r.statusCode} ${r.body.slice(0, 600)}`);
        const requests = up.requests.length;
        const bytesRead = ITEMS.reduce((n, d) => n + servedBytes(up, path(d)), 0);
        const b = performance.now();
        await t.app.inject({ method: 'POST', url: '/v1/band_cube', payload });
        const again = performance.now() - b;
        await t.service.store.artifacts.evict(body.artifact_cid);
        for (const m of t.service.materializers.list()) (m as { reader?: { clear(): void } }).reader?.clear();
        up.reset();
        up.switches = { delay: { ms: DELAY } };
        const c = performance.now();
        const [rr, rcpu] = await cpuOf(() => t.app.inject({ method: 'POST', url: '/v1/cube/resolve', payload: { token: body.token } }));
        const rebuilt = performance.now() - c;
        if (rr.json().artifact?.state !== 'rebuilt') throw new Error(`cube_resolve: ${rr.body.slice(0, 300)}`);
        if (i < 0) continue;
        rebuildRequests = up.requests.length;
        rebuildCpu.push(rcpu);
        cold.push({ ms: ms(took), cpu_ms: ms(cpu), requests, bytes_read: bytesRead, width: body.width, height: body.height, planes: body.planes, bytes: body.bytes });
        repeat.push(again);
        rebuild.push(rebuilt);
      } finally {
        up.switches = {};
        if (last) await last.close();
        last = t;
      }
    }
  } finally {
    await last?.close();
    await up.close();
  }
  const coldMs = cold.map((c) => c.ms);
  console.log(
    JSON.stringify(
      {
        bench: 'band-cube',
        upstream_delay_ms_per_request: DELAY,
        cogs: {
          count: ITEMS.length,
          same_bytes: true,
          width: SIDE,
          height: SIDE,
          tile: TILE,
          compression: 'deflate',
          made_by: gdalAvailable() ? 'gdal_translate -of COG' : 'in-test writer',
          bytes: fileBytes,
          made_in_ms: ms(madeMs),
        },
        cold_6_slices: {
          window: `${cold[0].width} x ${cold[0].height}`,
          planes: cold[0].planes,
          artifact_bytes: cold[0].bytes,
          ms_median: ms(median(coldMs)),
          ms_rounds: coldMs,
          cpu_ms_median: ms(median(cold.map((c) => c.cpu_ms))),
          upstream_requests: cold[0].requests,
          bytes_read_from_cogs: cold[0].bytes_read,
          cog_bytes: fileBytes,
        },
        repeat_same_request_ms_median: ms(median(repeat)),
        rebuild_after_eviction_ms_median: ms(median(rebuild)),
        rebuild_ms_rounds: rebuild.map(ms),
        rebuild_cpu_ms_median: ms(median(rebuildCpu)),
        rebuild_upstream_requests: rebuildRequests,
      },
      null,
      2,
    ),
  );
}

await main();
