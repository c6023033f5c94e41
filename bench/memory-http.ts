/**
 * `npm run bench memory-http`: agent notes end to end over loopback HTTP on the embedded store.
 * A responder on a temp data directory; one listed agent key writes N notes through
 * POST /v1/memory/notes (256 per signed batch, 2 batches in flight), then POST /v1/memory/search
 * is timed one request at a time (words drawn from the note vocabulary, some with tag or radius
 * filters, some hybrid with a vector), and a pair of edges is recalled as of two times. Prints one
 * JSON object: write throughput (notes/s, end to end: schema, record rules, Merkle root, Ed25519
 * verify, log fsync, index), search p50/p99 (whole request: ranking, fact reads, per-fact
 * receipts, response receipt, JSON) and edges_recall p50/p99. Last, `--rounds` bursts of
 * `--concurrent` searches of `--heavy-words` distinct words each are sent at once: every
 * request's latency (answered or refused), p50/p99/max, and how many were refused (503
 * overloaded with retry_after, the search concurrency limit) are reported.
 *
 *   node --import tsx bench/memory-http.ts [--notes 100000] [--queries 500] [--concurrent 50] [--heavy-words 32] [--rounds 4]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import * as P from '../src/protocol/index.js';
import { buildApp } from '../src/api/app.js';
import { loadConfig } from '../src/config.js';
import { openService } from '../src/service.js';
import { loadRegistry } from '../src/registry/registry.js';
import { percentiles, seededRandom } from './harness.js';

const { values: opt } = parseArgs({
  options: {
    notes: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '500' },
    concurrent: { type: 'string', default: '50' },
    'heavy-words': { type: 'string', default: '32' },
    rounds: { type: 'string', default: '4' },
  },
});
const NOTES = Number(opt.notes);
const QUERIES = Number(opt.queries);
const CONCURRENT = Number(opt.concurrent);
const HEAVY_WORDS = Number(opt['heavy-words']);
const ROUNDS = Number(opt.rounds);
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
// No daily quotas (SVC_ATTESTER_DAILY_FACTS unset, SVC_NOTE_DAILY_QUOTA=0: one key writes every
// note) and no rate limit: the bench measures the work. The search concurrency limit stays at its
// default (SVC_MEMORY_SEARCH_CONCURRENCY), which the bursts measure.
const config = loadConfig({ SVC_LOG_LEVEL: 'silent', SVC_NOTE_DAILY_QUOTA: '0' }, { dataDir: data, rateLimitRps: 1e9, rateLimitBurst: 1e9, attesterKeys: [agent], upstreams: closed });
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

/**
 * The burst client, in a worker thread: an outside client's requests reach the server whatever it
 * is busy with, while a client sharing its event loop would only send the next one when the
 * server yields. Each POST has a connection of its own (no keep-alive pool, whose idle sockets
 * the server may be closing). Posts `[{ms, status, code, retry_after}]` back.
 */
const BURST_CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { request } = require('node:http');
function post(body) {
  const data = JSON.stringify(body);
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(workerData.url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        resolve({ ms: performance.now() - start, status: res.statusCode, code: json.code ?? null, retry_after: json.retry_after ?? null });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}
Promise.all(workerData.bodies.map(post)).then((r) => parentPort.postMessage(r), (e) => parentPort.postMessage({ error: String(e) }));
`;

function burst(bodies: unknown[]): Promise<Array<{ ms: number; status: number; code: string | null; retry_after: number | null }>> {
  return new Promise((resolve, reject) => {
    const w = new Worker(BURST_CLIENT, { eval: true, workerData: { url: `${base}/v1/memory/search`, bodies } });
    w.once('message', (m) => {
      void w.terminate();
      if (Array.isArray(m)) resolve(m);
      else reject(new Error(m.error));
    });
    w.once('error', reject);
  });
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
  // ---- bursts of heavy searches ---------------------------------------------------------------------
  const heavy: number[] = [];
  const answered: number[] = [];
  const refusals: Record<string, number> = {};
  for (let round = 0; round < ROUNDS; round++) {
    const bodies = Array.from({ length: CONCURRENT }, () => {
      const words = new Set<string>();
      while (words.size < HEAVY_WORDS) words.add(word());
      return { query: [...words].join(' '), limit: 10 };
    });
    for (const r of await burst(bodies)) {
      heavy.push(r.ms);
      if (r.status === 200) answered.push(r.ms);
      else if (typeof r.retry_after !== 'number') throw new Error(`heavy search: ${r.status} ${r.code} without retry_after`);
      else refusals[`${r.status} ${r.code}`] = (refusals[`${r.status} ${r.code}`] ?? 0) + 1;
    }
  }
  const all = [...kinds.text, ...kinds.text_filtered, ...kinds.hybrid, ...kinds.filters_only];
  console.log(
    JSON.stringify(
      {
        bench: 'memory-http',
        store: 'sqlite (embedded)',
        notes: NOTES,
        write: { notes_per_s: Math.round(NOTES / writeS), batch: BATCH, in_flight: 2, seconds: Math.round(writeS * 10) / 10 },
        search_all: percentiles(all),
        search_by_kind: Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, v.length > 0 ? percentiles(v) : { n: 0 }])),
        searches_with_no_result: empty,
        concurrent_heavy_search: {
          concurrent: CONCURRENT,
          words: HEAVY_WORDS,
          rounds: ROUNDS,
          search_concurrency_limit: config.memorySearchConcurrency ?? null,
          all: { ...percentiles(heavy), max_ms: Number(Math.max(...heavy).toFixed(3)) },
          answered: answered.length > 0 ? { ...percentiles(answered), max_ms: Number(Math.max(...answered).toFixed(3)) } : { n: 0 },
          refused: refusals,
        },
      },
      null,
      2,
    ),
  );
} finally {
  await app.close();
  await service.close();
  rmSync(data, { recursive: true, force: true });
}
