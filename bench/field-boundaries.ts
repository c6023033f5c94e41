/**
 * Field boundaries (docs/field-boundaries.md) over a fixture PMTiles v3 archive on 127.0.0.1
 * that answers every range request after 50 ms:
 * - cold: a 10 km² box (3.16 km × 3.16 km near 48.4° N) on a fresh responder (no header,
 *   directory or tile cached): wall time, range requests, bytes read;
 * - warm: the same box again (everything cached): p50/p99 in process;
 * - warm header, cold tiles: a neighbouring 10 km² box on the same responder.
 * The archive holds ~12-vertex fields of 1.5–4 ha on a jittered grid over 6 km × 6 km, tiled at
 * z15, with leaf directories of 32 entries (so a cold read walks root → leaf like the global
 * archive does). Prints one JSON object. Run: npm run bench field-boundaries [-- --rounds=3]
 */
import { loadConfig } from '../src/config.js';
import { loadRegistry } from '../src/registry/registry.js';
import { ftwConnector } from '../src/sources/ftw.js';
import { UpstreamClient } from '../src/sources/http.js';
import { build, type TestApp } from '../test/support/app.js';
import { buildArchive, startFtwServer, type FixtureField } from '../test/sources/fixtures/ftw-pmtiles.js';
import { percentiles, seededRandom } from './harness.js';

const arg = (k: string, d: number) => Number(process.argv.find((a) => a.startsWith(`--${k}=`))?.split('=')[1] ?? d);
const ROUNDS = arg('rounds', 3);
const WARM = arg('warm', 30);
const LATENCY_MS = 50;
const LAT0 = 48.4;
const LNG0 = 1.45;
const M_LAT = 1 / 111_320;
const M_LNG = 1 / (111_320 * Math.cos((LAT0 * Math.PI) / 180));

/** Fields on a jittered grid over `sideM` metres: irregular 12-gons of about 150–250 m across. */
function fieldsAround(sideM: number): FixtureField[] {
  const rnd = seededRandom(7);
  const out: FixtureField[] = [];
  const step = 180;
  let id = 0;
  for (let y = 0; y < sideM; y += step) {
    for (let x = 0; x < sideM; x += step) {
      const cx = x + step / 2 + (rnd() - 0.5) * 20;
      const cy = y + step / 2 + (rnd() - 0.5) * 20;
      const ring: Array<[number, number]> = [];
      for (let k = 0; k < 12; k++) {
        const a = (k / 12) * 2 * Math.PI;
        const r = (step / 2 - 12) * (0.8 + rnd() * 0.2);
        ring.push([LNG0 + (cx + r * Math.cos(a)) * M_LNG, LAT0 + (cy + r * Math.sin(a)) * M_LAT]);
      }
      ring.push(ring[0]);
      out.push({ layer: 'field-2025-01-01 00:00:00', rings: [ring], properties: { id: `b${id++}`, confidence: Math.round(40 + rnd() * 60) } });
    }
  }
  return out;
}

/** A square box of `km2` with its south-west corner `offM` metres east and north of the grid's corner. */
function box(km2: number, offM: number) {
  const side = Math.sqrt(km2) * 1000;
  const round = (v: number) => Math.round(v * 1e7) / 1e7;
  return { min_lat: round(LAT0 + offM * M_LAT), min_lng: round(LNG0 + offM * M_LNG), max_lat: round(LAT0 + (offM + side) * M_LAT), max_lng: round(LNG0 + (offM + side) * M_LNG) };
}

const fields = fieldsAround(6500);
const archive = buildArchive(fields, { leafSize: 32 });
const srv = await startFtwServer(archive);
srv.delayMs = LATENCY_MS;

async function responder(): Promise<TestApp> {
  const client = new UpstreamClient({ userAgent: 'bench', timeoutMs: 10_000, allowedBaseUrls: [srv.url], retries: 0 });
  const ftw = ftwConnector({ config: loadConfig({}), registry: loadRegistry(), client, baseUrl: () => srv.url });
  // Answers are not schema-checked here, as in production (SVC_CHECK_RESPONSES off).
  return build({ checkResponses: false }, {}, { materializers: [ftw] });
}

async function call(t: TestApp, polygon_bbox: ReturnType<typeof box>) {
  const before = srv.requests.length;
  const s = performance.now();
  const r = await t.app.inject({ method: 'POST', url: '/v1/field_boundaries', payload: { polygon_bbox, max_fields: 5000 } });
  const ms = performance.now() - s;
  if (r.statusCode !== 200) throw new Error(`field_boundaries failed: ${r.body}`);
  const body = r.json();
  return { ms, body, bytesOut: r.rawPayload.length, requests: srv.requests.length - before };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const B10 = box(10, 1000);
const NEXT = box(10, 1000 + Math.sqrt(10) * 1000 * 0.5);
const cold: Array<{ ms: number; requests: number; bytes: number; fields: number; tiles: number; out: number }> = [];
const warmMs: number[] = [];
const neighbour: Array<{ ms: number; requests: number; bytes: number }> = [];
let sample: Record<string, unknown> = {};
// The gazetteer (country lookup) loads once per process: load it before timing the first read.
{
  const t = await responder();
  srv.delayMs = 0;
  await call(t, box(0.01, 10));
  srv.delayMs = LATENCY_MS;
  await t.close();
}
for (let round = 0; round < ROUNDS; round++) {
  const t = await responder();
  try {
    const c = await call(t, B10);
    cold.push({ ms: c.ms, requests: c.requests, bytes: c.body.read.bytes_read, fields: c.body.fields.length, tiles: c.body.read.tiles_covering, out: c.bytesOut });
    if (round === 0) {
      sample = {
        area_km2: c.body.area.area_km2,
        zoom: c.body.read.zoom,
        tiles_covering: c.body.read.tiles_covering,
        tiles_present: c.body.read.tiles_present,
        ranges: srv.requests.slice(-c.requests).map((q) => q.range),
      };
      for (let i = 0; i < WARM + 3; i++) {
        const w = await call(t, B10);
        if (w.requests !== 0) throw new Error('a warm read sent a range request');
        if (i >= 3) warmMs.push(w.ms);
      }
    }
    const n = await call(t, NEXT);
    neighbour.push({ ms: n.ms, requests: n.requests, bytes: n.body.read.bytes_read });
  } finally {
    await t.close();
  }
}
await srv.close();

console.log(
  JSON.stringify(
    {
      bench: 'field-boundaries',
      fixture: { archive_bytes: archive.length, fields: fields.length, leaf_entries: 32, upstream_latency_ms: LATENCY_MS },
      box_10km2: sample,
      cold: {
        wall_ms_median: Number(median(cold.map((c) => c.ms)).toFixed(1)),
        wall_ms: cold.map((c) => Number(c.ms.toFixed(1))),
        range_requests: median(cold.map((c) => c.requests)),
        bytes_read: median(cold.map((c) => c.bytes)),
        fields: cold[0]?.fields,
        answer_bytes: cold[0]?.out,
      },
      warm: { ...percentiles(warmMs), range_requests: 0 },
      neighbour_box_warm_header: {
        wall_ms_median: Number(median(neighbour.map((c) => c.ms)).toFixed(1)),
        range_requests: median(neighbour.map((c) => c.requests)),
        bytes_read: median(neighbour.map((c) => c.bytes)),
      },
    },
    null,
    2,
  ),
);
