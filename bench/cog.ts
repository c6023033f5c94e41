/**
 * Raster connector overhead beyond upstream latency. Each connector reads a cold point (fresh
 * caches: STAC search, COG header, block) and then a warm one (same COG, cached header, another
 * block) against the local fixture upstreams, once with the fixture answering at once and once
 * after 200 ms per request. overhead_ms = latency at 200 ms − round trips × 200 ms, where the
 * round trips on the critical path are (latency at 200 ms − latency at 0 ms) / 200. Prints JSON.
 */
import type { ConnectorFactory, Materializer } from '../src/sources/contract.js';
import { chirpsConnector } from '../src/sources/chirps.js';
import { geoTesseraConnector } from '../src/sources/geotessera.js';
import { hansenGfcConnector } from '../src/sources/hansen-gfc.js';
import { jrcGfc2020Connector } from '../src/sources/jrc-gfc2020.js';
import { jrcGswConnector } from '../src/sources/jrc-gsw.js';
import { sentinel1Connector } from '../src/sources/sentinel1.js';
import { sentinel2Connector } from '../src/sources/sentinel2.js';
import { worldCoverConnector } from '../src/sources/worldcover.js';
import { startRasterUpstreams } from '../test/sources/fixtures/raster-upstreams.js';
import { CHIRPS_TSLOT, s2PointAt, S2_TSLOT, TESSERA_TSLOT } from '../test/sources/fixtures/raster-scenes.js';
import { depsFor, requestAt } from '../test/sources/raster/harness.js';

const DELAY = 200;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

type P = [number, number];
const s2 = (c: number, r: number): P => {
  const p = s2PointAt(c, r);
  return [p.lat, p.lng];
};
const CASES: Array<{ name: string; factory: ConnectorFactory; band: string; tslot?: number; cold: P; warm: P }> = [
  { name: 'sentinel2 (s2.B04)', factory: sentinel2Connector, band: 's2.B04', tslot: S2_TSLOT, cold: s2(129, 129), warm: s2(129, 300) },
  { name: 'sentinel2 (indices.ndvi)', factory: sentinel2Connector, band: 'indices.ndvi', tslot: S2_TSLOT, cold: s2(129, 129), warm: s2(129, 300) },
  { name: 'sentinel1 (s1.vv_db)', factory: sentinel1Connector, band: 's1.vv_db', tslot: S2_TSLOT, cold: s2(129, 129), warm: s2(129, 300) },
  { name: 'worldcover', factory: worldCoverConnector, band: 'landcover.esa_worldcover_2021', cold: [47.9, 15.1], warm: [45.2, 17.8] },
  { name: 'jrc_gsw', factory: jrcGswConnector, band: 'water.gsw_occurrence', cold: [45.05, 15.05], warm: [41.05, 18.05] },
  { name: 'hansen_gfc (LZW strips)', factory: hansenGfcConnector, band: 'forest.treecover2000', cold: [45.05, 15.05], warm: [41.05, 18.05] },
  { name: 'jrc_gfc2020', factory: jrcGfc2020Connector, band: 'forest.jrc_gfc2020', cold: [45.05, 15.05], warm: [-3.3, -60.2] },
  { name: 'chirps', factory: chirpsConnector, band: 'precip.chirps_daily_mm', tslot: CHIRPS_TSLOT, cold: [44.98, 15.02], warm: [44.7, 11.3] },
  { name: 'geotessera', factory: geoTesseraConnector, band: 'geotessera', tslot: TESSERA_TSLOT, cold: [45.05, 15.05], warm: [45.02, 15.08] },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const up = await startRasterUpstreams();
  const deps = depsFor(up, { timeoutMs: 10_000, retries: 0 });
  const read = async (c: Materializer, band: string, [lat, lng]: P, tslot?: number) => {
    const before = up.requests.length;
    const t0 = performance.now();
    const o = await c.materialize(requestAt(band, lat, lng, tslot, 30_000));
    const ms = performance.now() - t0;
    if (o.status !== 'value') throw new Error(`${band} at ${lat},${lng}: ${JSON.stringify(o)}`);
    return { ms, requests: up.requests.length - before };
  };
  const results: Record<string, unknown> = {};
  for (const k of CASES) {
    const lat: Record<string, Record<'cold' | 'warm', number[]>> = {};
    const reqs = { cold: 0, warm: 0 };
    for (const delay of [0, DELAY]) {
      up.switches = delay ? { delay: { ms: delay } } : {};
      lat[delay] = { cold: [], warm: [] };
      // One unmeasured round warms the JIT for this connector.
      for (let i = -1; i < ROUNDS; i++) {
        const c = k.factory(deps);
        const cold = await read(c, k.band, k.cold, k.tslot);
        const warm = await read(c, k.band, k.warm, k.tslot);
        if (i < 0) continue;
        lat[delay].cold.push(cold.ms);
        lat[delay].warm.push(warm.ms);
        reqs.cold = cold.requests;
        reqs.warm = warm.requests;
      }
    }
    const summary = (phase: 'cold' | 'warm') => {
      const at200 = median(lat[DELAY][phase]);
      const at0 = median(lat[0][phase]);
      const trips = Math.round((at200 - at0) / DELAY);
      return {
        requests: reqs[phase],
        round_trips: trips,
        ms_at_0ms_upstream: Number(at0.toFixed(2)),
        ms_at_200ms_upstream: Number(at200.toFixed(1)),
        overhead_ms: Number((at200 - trips * DELAY).toFixed(2)),
      };
    };
    results[k.name] = { cold: summary('cold'), warm: summary('warm') };
  }
  up.reset();
  await up.close();
  console.log(JSON.stringify({ bench: 'cog', upstream_delay_ms: DELAY, rounds: ROUNDS, fixtures_by_gdal: up.gdal, connectors: results }, null, 2));
}

await main();
