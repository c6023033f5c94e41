/**
 * `npm run bench locate`: gazetteer start-up (time, heap and RSS delta, in this fresh process)
 * and locate latency p50/p99 per offline tier after start (resolution + LocateResp assembly,
 * and the full primitive with its store read for one tier). Prints one JSON object.
 * Targets: offline tiers p99 ≤ 2 ms after start; gazetteer start-up ≤ 1 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentiles } from './harness.js';

const mem0 = process.memoryUsage();
const t0 = performance.now();
const { gazetteer } = await import('../src/geo/gazetteer.js');
const g = gazetteer();
const startupMs = performance.now() - t0;
const mem1 = process.memoryUsage();

const { createLocator } = await import('../src/geo/locator.js');
const { memoryGeoCache } = await import('../src/geo/geocache.js');
const { locateCore } = await import('../src/geo/respond.js');
const locator = createLocator({ cache: memoryGeoCache(), timeoutMs: 1000 });

const TIERS: Record<string, string[]> = {
  wide_bbox_table: ['Sahara', 'Lake Baikal', 'Amazon River', 'Pacific Ocean', 'Alps', 'Black Forest', 'Yellowstone National Park', 'Borneo'],
  country: ['France', 'Japan', 'Brazil', 'DEU', 'Россия', 'Kenya', 'Canada', 'Fiji'],
  admin1: ['Bavaria', 'California', 'Quebec', 'Sichuan', 'Maharashtra', 'Chukotka', 'Catalonia', 'Queensland'],
  embedded: ['Paris', 'Springfield, IL', '東京', 'Москва', 'São Paulo', 'Munich, Bavaria, Germany', 'Nairobi', 'Anadyr'],
  pois: ['Eiffel Tower', 'Mount Everest', 'Taj Mahal', 'Machu Picchu', '富士山', 'North Pole', 'Statue of Liberty', 'Uluru'],
};
const ROUNDS = 300;

async function measure(queries: string[], full: boolean): Promise<number[]> {
  const out: number[] = [];
  for (const q of queries)
    for (let i = 0; i < 20; i++) {
      const r = await locator.resolveName(q);
      if (full) locateCore(g, r);
    } // warm-up (and sample memo)
  for (let round = 0; round < ROUNDS; round++) {
    for (const q of queries) {
      const s = performance.now();
      const r = await locator.resolveName(q);
      if (full) locateCore(g, r);
      out.push(performance.now() - s);
    }
  }
  return out;
}

const tiers: Record<string, { resolve: ReturnType<typeof percentiles>; with_response: ReturnType<typeof percentiles> }> = {};
for (const [tier, queries] of Object.entries(TIERS)) {
  for (const q of queries) {
    const via = (await locator.resolveName(q)).via;
    if (via !== tier) throw new Error(`bench query ${q} answered from ${via}, not ${tier}`);
  }
  tiers[tier] = { resolve: percentiles(await measure(queries, false)), with_response: percentiles(await measure(queries, true)) };
}
const direct: number[] = [];
for (let i = 0; i < 3000; i++) {
  const lat = -60 + ((i * 7.31) % 130);
  const lng = -180 + ((i * 13.7) % 360);
  const s = performance.now();
  locateCore(g, locator.resolvePoint(lat, lng));
  direct.push(performance.now() - s);
}

// The full primitive (validation, resolution, response, data_at_this_cell store read) on a real service.
const dir = mkdtempSync(join(tmpdir(), 'svc-bench-locate-'));
const { loadConfig } = await import('../src/config.js');
const { openService } = await import('../src/service.js');
const { locate } = await import('../src/primitives/locate/locate.js');
const service = await openService(loadConfig({ SVC_LOG_LEVEL: 'silent', SVC_UPSTREAM_PHOTON_URL: 'off:', SVC_UPSTREAM_NOMINATIM_URL: 'off:' }, { dataDir: dir }), { materializers: [] });
const prim: number[] = [];
for (let i = 0; i < 50; i++) await locate(service, { place: 'Paris' });
for (let round = 0; round < ROUNDS; round++) {
  for (const q of TIERS.embedded) {
    const s = performance.now();
    await locate(service, { place: q });
    prim.push(performance.now() - s);
  }
}
await service.close();
rmSync(dir, { recursive: true, force: true });

const worstP99 = Math.max(...Object.values(tiers).map((t) => t.with_response.p99_ms));
console.log(
  JSON.stringify({
    bench: 'locate',
    node: process.version,
    gazetteer: {
      ...g.stats,
      startup_ms: Math.round(startupMs),
      process_heap_delta_mb: Math.round(((mem1.heapUsed - mem0.heapUsed) / 1e6) * 10) / 10,
      rss_delta_mb: Math.round(((mem1.rss - mem0.rss) / 1e6) * 10) / 10,
    },
    tiers,
    direct_latlng: percentiles(direct),
    primitive_embedded_with_store: percentiles(prim),
    targets: { offline_p99_ms: 2, startup_ms: 1000 },
    within_targets: { offline_p99: worstP99 <= 2, startup: startupMs <= 1000 },
    ratios: { worst_tier_p99_to_target: Number((worstP99 / 2).toFixed(3)), startup_to_target: Number((startupMs / 1000).toFixed(3)) },
  }),
);
