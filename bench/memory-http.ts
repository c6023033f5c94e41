/**
 * `npm run bench memory-http`: agent notes end to end over loopback HTTP on the embedded store.
 * A responder on a temp data directory; one listed agent key writes N notes through
 * POST /v1/memory/notes (256 per signed batch, 2 batches in flight), then POST /v1/memory/search
 * is timed one request at a time (words drawn from the note vocabulary, some with tag or radius
 * filters, some hybrid with a vector), and a pair of edges is recalled as of two times. Prints one
 * JSON object: write throughput (notes/s, end to end: schema, record rules, Merkle root, Ed25519
 * verify, log fsync, index), search p50/p99 (whole request: ranking, fact reads, per-fact
 * receipts, response receipt, JSON) and edges_recall p50/p99.
 *
 *   node --import tsx bench/memory-http.ts [--notes 100000] [--queries 500]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as P from '../src/protocol/index.js';
import { buildApp } from '../src/api/app.js';
import { loadConfig } from '../src/config.js';
import { openService } from '../src/service.js';
import { loadRegistry } from '../src/registry/registry.js';
import { percentiles, seededRandom } from './harness.js';

const { values: opt } = parseArgs({ options: { notes: { type: 'string', default: '100000' }, queries: { type: 'string', default: '500' } } });
const NOTES = Number(opt.notes);
const QUERIES = Number(opt.queries);
const BATCH = 256;
const progress = (line: string) => process.stderr.write(`[memory-http] ${line}\n`);

const rnd = seededRandom(0x51ed);
// A Zipf vocabulary of 3 000 made-up words, so common words are common and rare ones rare.
const SYL = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'si', 'de', 'po', 'ga', 'fe', 'zu', 'bi', 'ho'];
const VOCAB = Array.from({ length: 3000 }, (_, i) => SYL[i % 15] + SYL[Math.floor(i / 15) % 15] + SYL[Math.floor(i / 225) % 15] + (i >= 3375 ? 'x' : ''));
const cdf = (() => {
  const c = new Float64Array(VOCAB.length);
  let s = 0;
  for (let k = 0; k < VOCAB.length; k++) c[k] = s += 1 / (k + 1);
  for (let k = 0; k < VOCAB.length; k++) c[k] /= s;
  return c;
})();
function word(): string {
  const u = rnd();
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cdf[mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return VOCAB[lo];
}
const TAGS = ['pump', 'maize', 'flood', 'soil', 'fence', 'harvest', 'pest', 'irrigation'];
const centre = { lat: 52.1, lng: 5.1 };

const data = mkdtempSync(join(tmpdir(), 'svc-bench-memory-http-'));
const agentSeed = P.blake3(P.utf8('bench memory agent'));
const agent = P.b32encode(P.portableEd25519.publicKey(agentSeed));
const closed: Record<string, string> = { PHOTON: 'off', NOMINATIM: 'off' };
for (const s of loadRegistry().sourceList) closed[s.env.replace(/^SVC_UPSTREAM_/, '').replace(/_URL$/, '')] = 'http://127.0.0.1:9';
// No daily quota (SVC_ATTESTER_DAILY_FACTS unset) and no rate limit: the bench measures the work.
const config = loadConfig({ SVC_LOG_LEVEL: 'silent' }, { dataDir: data, rateLimitRps: 1e9, rateLimitBurst: 1e9, attesterKeys: [agent], upstreams: closed });
const service = await openService(config);
const app = await buildApp(service);
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address() as { port: number };
const base = `http://127.0.0.1:${addr.port}`;
const m = service.manifests;

function signed(facts: Record<string, unknown>[]) {
  const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
  const sig = P.portableEd25519.sign(P.attesterDigest(root, m.registry_cid, m.schema_cid), agentSeed);
  return { batch_root: Array.from(root), attester: agent, signature: P.b32encode(sig), facts };
}
async function post(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

try {
  // ---- writes -----------------------------------------------------------------------------------
  let made = 0;
  const note = () => {
    const n = 8 + Math.floor(rnd() * 32);
    const value: Record<string, unknown> = {
      text: Array.from({ length: n }, word).join(' '),
      cell: P.cellOf(centre.lat + (rnd() - 0.5) * 0.5, centre.lng + (rnd() - 0.5) * 0.5),
      tags: [...new Set([TAGS[Math.floor(rnd() * TAGS.length)], TAGS[Math.floor(rnd() * TAGS.length)]])],
      observed_at: new Date(Date.UTC(2026, 0, 1) + Math.floor(rnd() * 300) * 86_400_000).toISOString().slice(0, 19) + 'Z',
    };
    if (rnd() < 0.25) value.vector = Array.from({ length: 16 }, () => Math.round((rnd() - 0.5) * 1000) / 1000);
    value.text = `${value.text} n${made++}`; // every note distinct
    return P.recordBody('memory.note', value, { signed_at: '2026-11-20T12:00:00Z' });
  };
  const t0 = performance.now();
  const batches = Math.ceil(NOTES / BATCH);
  let next = 0;
  async function writer(): Promise<void> {
    while (next < batches) {
      const i = next++;
      const facts = Array.from({ length: Math.min(BATCH, NOTES - i * BATCH) }, note);
      const r = await post('/v1/memory/notes', signed(facts));
      if (r.status !== 200) throw new Error(`write ${i}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
      if (i % 50 === 0) progress(`${Math.min(NOTES, (i + 1) * BATCH)} notes`);
    }
  }
  await Promise.all([writer(), writer()]);
  const writeS = (performance.now() - t0) / 1000;

  const edgeA = P.recordBody('memory.edge', { type: 'part_of', from: P.anchorId({ f: 1 }), to: P.anchorId({ farm: 'x' }), valid_from: '2026-01-01T00:00:00Z' }, { signed_at: '2026-11-20T12:00:00Z' });
  const edgeB = P.recordBody('memory.edge', { type: 'part_of', from: P.anchorId({ f: 1 }), to: P.anchorId({ farm: 'y' }), valid_from: '2026-06-01T00:00:00Z' }, { signed_at: '2026-11-20T12:00:01Z' });
  if ((await post('/v1/edges', signed([edgeA, edgeB]))).status !== 200) throw new Error('edges write failed');

  // ---- reads ------------------------------------------------------------------------------------
  const kinds: Record<string, number[]> = { text: [], text_filtered: [], hybrid: [], filters_only: [], edges_as_of: [] };
  let empty = 0;
  for (let q = 0; q < QUERIES; q++) {
    const words = Array.from({ length: 1 + Math.floor(rnd() * 3) }, word).join(' ');
    const r = rnd();
    let kind: string;
    let body: Record<string, unknown>;
    if (r < 0.5) [kind, body] = ['text', { query: words }];
    else if (r < 0.7) [kind, body] = ['text_filtered', { query: words, tags: [TAGS[Math.floor(rnd() * TAGS.length)]], cell: P.cellOf(centre.lat, centre.lng), radius_m: 10_000 }];
    else if (r < 0.85) [kind, body] = ['hybrid', { query: words, vector: Array.from({ length: 16 }, () => rnd() - 0.5) }];
    else [kind, body] = ['filters_only', { tags: [TAGS[Math.floor(rnd() * TAGS.length)]], observed_from: '2026-03-01T00:00:00Z' }];
    const s = performance.now();
    const res = await post('/v1/memory/search', body);
    kinds[kind].push(performance.now() - s);
    if (res.status !== 200) throw new Error(`search: ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
    if (res.json.results.length === 0) empty++;
  }
  for (let q = 0; q < 200; q++) {
    const s = performance.now();
    const res = await post('/v1/edges/recall', { record: P.anchorId({ f: 1 }), valid_at: q % 2 ? '2026-03-01T00:00:00Z' : '2026-07-01T00:00:00Z' });
    kinds.edges_as_of.push(performance.now() - s);
    if (res.json.edges?.length !== 1) throw new Error('edges as-of answered wrong');
  }
  const all = [...kinds.text, ...kinds.text_filtered, ...kinds.hybrid, ...kinds.filters_only];
  console.log(JSON.stringify({
    bench: 'memory-http',
    store: 'sqlite (embedded)',
    notes: NOTES,
    write: { notes_per_s: Math.round(NOTES / writeS), batch: BATCH, in_flight: 2, seconds: Math.round(writeS * 10) / 10 },
    search_all: percentiles(all),
    search_by_kind: Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, percentiles(v)])),
    searches_with_no_result: empty,
  }, null, 2));
} finally {
  await app.close();
  await service.close();
  rmSync(data, { recursive: true, force: true });
}
