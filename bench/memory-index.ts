/**
 * `npm run bench memory-index`: the agent-memory index of the embedded store (SQLite over the
 * real DiskLog), or of the PostgreSQL driver (`--driver postgres`, a throwaway schema in
 * SVC_DATABASE_URL, default the local server; `VACUUM ANALYZE` after the load, as autovacuum
 * does within a minute of a bulk load). Builds a store in a temp dir with N notes of realistic text (a Zipf-distributed
 * vocabulary of 4 000 words, 8–40 words per note, tags, cells, entities, some vectors) spread
 * over 200 scopes plus public notes, N/10 aliases and M edges (exclusive and open kinds, some
 * closing earlier ones), all appended through `store.append` in batches; then times the reads.
 * Prints one JSON object: write throughput (notes/s, aliases/s, edges/s), searchNotes p50/p99
 * (1–3 words drawn from the same vocabulary, public and scoped, some with tag or box filters),
 * filter-only searches, aliases p99, edges as-of p99, and bytes on disk.
 *
 *   node --import tsx bench/memory-index.ts                       (100 000 notes, 100 000 edges)
 *   node --import tsx bench/memory-index.ts --notes 1000000 --edges 1000000
 *   options: --queries 1000  --public 0.1 (share of public notes)  --scopes 200  --batch 256
 *            --concurrency 4  --keep (leave the store in its temp dir or schema)
 *            --driver sqlite|postgres
 *
 * Target (docs/memory.md): searchNotes p99 ≤ 25 ms at 1 000 000 notes; edge as-of p99 small at
 * 1 000 000 edges. Query words are drawn from the same Zipf law as the text, so common words
 * (in most notes of a scope) are asked as often as they occur: the hard case for a ranker.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { installFastBlake3 } from '../src/crypto/fast-blake3.js';
import { cellOf } from '../src/protocol/cell64.js';
import { anchorId, factCid } from '../src/protocol/cid.js';
import { isoSeconds, type Scope } from '../src/protocol/receipt.js';
import type { AppendBatch, Store } from '../src/store/contract.js';
import type { NoteSearch } from '../src/store/memory.js';
import { openDiskLog } from '../src/store/log/disk-log.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { makeBatch, makeFact, testSigner } from '../test/store/support/facts.js';
import { searchText } from '../test/store/support/note-search.js';
import { percentiles, pgOnce, seededRandom } from './harness.js';

installFastBlake3(); // as the service does at boot

const { values: opt } = parseArgs({
  options: {
    notes: { type: 'string', default: '100000' },
    edges: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '1000' },
    public: { type: 'string', default: '0.1' },
    scopes: { type: 'string', default: '200' },
    batch: { type: 'string', default: '256' },
    concurrency: { type: 'string', default: '4' },
    keep: { type: 'boolean', default: false },
    driver: { type: 'string', default: 'sqlite' },
  },
});
const NOTES = Number(opt.notes);
const EDGES = Number(opt.edges);
const QUERIES = Math.max(500, Number(opt.queries));
const PUBLIC = Number(opt.public);
const SCOPES = Number(opt.scopes);
const BATCH = Number(opt.batch);
const CONCURRENCY = Number(opt.concurrency);
const ALIASES = Math.round(NOTES / 10);
const progress = (line: string) => process.stderr.write(`[memory-index] ${line}\n`);
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

// ---- deterministic corpus ----------------------------------------------------------------------

const rnd = seededRandom(0x5eed);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
const between = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));

/** A sampler of ranks 0..n-1 with P(k) ∝ 1/(k+1)^s. */
function zipf(n: number, s = 1): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cdf[k] = sum += 1 / (k + 1) ** s;
  for (let k = 0; k < n; k++) cdf[k] /= sum;
  return () => {
    const u = rnd();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** 4 000 distinct pronounceable words (1–4 syllables), so the porter stemmer has real work. */
const VOCAB: string[] = (() => {
  const onsets = ['b', 'c', 'd', 'f', 'g', 'h', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'st', 'tr', 'br', 'gr', 'pl', 'sh', 'ch', 'th'];
  const nuclei = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'ou', 'io'];
  const codas = ['', '', '', 'n', 'r', 's', 'l', 'nd', 'st', 'ng', 'ed', 'ing', 'er', 'ation'];
  const words = new Set<string>();
  while (words.size < 4000) {
    let w = '';
    const syllables = between(1, 4);
    for (let i = 0; i < syllables; i++) w += pick(onsets) + pick(nuclei);
    words.add(w + pick(codas));
  }
  return [...words];
})();
const word = zipf(VOCAB.length);
const words = (n: number) => Array.from({ length: n }, () => VOCAB[word()]);
const TAGS = Array.from({ length: 40 }, (_, i) => `tag${i}`);
const tagRank = zipf(TAGS.length);
const CELLS = Array.from({ length: 2000 }, (_, i) => ({ lat: 45 + (i % 50) * 0.1, lng: 5 + Math.floor(i / 50) * 0.1 })).map((c) => ({ ...c, cell: cellOf(c.lat, c.lng) }));
const ENTITIES = Array.from({ length: Math.max(1000, Math.round(Math.max(NOTES, EDGES) / 10)) }, (_, n) => anchorId({ kind: 'thing', n }));
const SCOPE_LIST: Scope[] = Array.from({ length: SCOPES }, (_, i) => ({ agent_id: `agent-${i}` }));
const scopeOfBatch = (): Scope | null => (rnd() < PUBLIC ? null : pick(SCOPE_LIST));
const EPOCH = Date.parse('2024-01-01T00:00:00Z') / 1000;
const iso = (unix: number) => new Date(unix * 1000).toISOString().slice(0, 19) + 'Z';

function record(band: string, value: Record<string, unknown>, scope: Scope | null): Record<string, unknown> {
  return makeFact({ cell: `svc:entity:${anchorId(value)}`, band, tslot: 0, value, unit: 'record', scope: scope ?? undefined });
}

let noteSeq = 0;
function noteBatch(): AppendBatch {
  const scope = scopeOfBatch();
  return makeBatch(
    Array.from({ length: BATCH }, () => {
      const n = noteSeq++;
      const value: Record<string, unknown> = {
        text: words(between(8, 40)).join(' '),
        tags: [...new Set(Array.from({ length: between(1, 3) }, () => TAGS[tagRank()]))],
        observed_at: iso(EPOCH + n * 60),
      };
      if (rnd() < 0.7) value.cell = pick(CELLS).cell;
      if (rnd() < 0.15) value.entity = pick(ENTITIES);
      if (rnd() < 0.05) value.vector = Array.from({ length: 32 }, () => round(rnd() * 2 - 1, 4));
      return record('memory.note', value, scope);
    }),
    { sign: false, provenance_class: 'human_curated' },
  );
}

function aliasBatch(): AppendBatch {
  const scope = scopeOfBatch();
  return makeBatch(
    Array.from({ length: BATCH }, () => record('memory.alias', { entity: pick(ENTITIES), phrase: words(between(2, 5)).join(' ') }, scope)),
    { sign: false, provenance_class: 'human_curated' },
  );
}

const EXCLUSIVE = ['part_of', 'located_in', 'owned_by'];
const OPEN = ['mentions', 'related_to', 'observed_with', 'same_as'];
/** Recent edge cids per scope key, for `invalidates`. */
const recentEdges = new Map<string, string[]>();
const TO_POOL = Math.min(ENTITIES.length, Math.max(1000, Math.round(EDGES / 5)));
// Targets are Zipf-distributed: a few records (a farm, a person) are where many edges point.
const toRank = zipf(TO_POOL, 0.8);
/** A uniform sample of written edges (reservoir), which the edge queries ask about. */
const EDGE_SAMPLE = 4096;
const edgeSample: Array<{ scope: Scope | null; from: string; to: string }> = [];
let edgesSeen = 0;
function sampleEdge(e: { scope: Scope | null; from: string; to: string }): void {
  edgesSeen++;
  if (edgeSample.length < EDGE_SAMPLE) edgeSample.push(e);
  else if (rnd() < EDGE_SAMPLE / edgesSeen) edgeSample[Math.floor(rnd() * EDGE_SAMPLE)] = e;
}
function edgeBatch(): AppendBatch {
  const scope = scopeOfBatch();
  const key = JSON.stringify(scope);
  const recent = recentEdges.get(key) ?? [];
  recentEdges.set(key, recent);
  const bodies = Array.from({ length: BATCH }, () => {
    const validFrom = EPOCH + between(0, 2 * 365 * 86400);
    const value: Record<string, unknown> = {
      type: rnd() < 0.3 ? pick(EXCLUSIVE) : pick(OPEN),
      from: pick(ENTITIES),
      to: ENTITIES[toRank()],
      valid_from: iso(validFrom),
    };
    sampleEdge({ scope, from: value.from as string, to: value.to as string });
    if (rnd() < 0.1) value.valid_to = iso(validFrom + between(86400, 365 * 86400));
    if (rnd() < 0.03 && recent.length > 0) value.invalidates = [pick(recent)];
    const body = record('memory.edge', value, scope);
    recent.push(factCid(body));
    if (recent.length > 64) recent.shift();
    return body;
  });
  return makeBatch(bodies, { sign: false, provenance_class: 'human_curated' });
}

// ---- store and drivers ---------------------------------------------------------------------------

const root = mkdtempSync(join(tmpdir(), 'svc-bench-memory-'));
let clockS = Date.parse('2026-03-01T00:00:00Z') / 1000;
const startS = clockS;
// Transaction time steps a second per append, so recorded_at bounds fall between entries.
const now = () => new Date(clockS++ * 1000);
const PG_URL = process.env.SVC_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const pgSchema = `bench_memory_${Math.random().toString(36).slice(2, 10)}`;
if (opt.driver !== 'sqlite' && opt.driver !== 'postgres') throw new Error('--driver: sqlite or postgres');
const onPostgres = opt.driver === 'postgres';

const pgAdmin = <R extends pg.QueryResultRow>(text: string) => pgOnce<R>(PG_URL, text);

const store: Store = onPostgres
  ? await createPostgresStore({ dataDir: root, databaseUrl: PG_URL, scanCellLimit: 1000 }, testSigner(), { schema: pgSchema, logger: () => {}, now })
  : await createSqliteStore({ dataDir: root, scanCellLimit: 1000 }, await openDiskLog({ dir: join(root, 'log'), signer: testSigner() }), { logger: () => {}, now });

/** Append `total` records built by `make` (BATCH per batch), CONCURRENCY in flight; seconds spent in append. */
async function load(what: string, total: number, make: () => AppendBatch): Promise<{ seconds: number; per_s: number; cpu_us_per_record: number }> {
  const batches = Math.ceil(total / BATCH);
  const CHUNK = 64; // batches built ahead, untimed
  let seconds = 0;
  let cpu = 0;
  for (let done = 0; done < batches; ) {
    const work = Array.from({ length: Math.min(CHUNK, batches - done) }, make);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < work.length) await store.append(work[next++]);
      }),
    );
    seconds += (performance.now() - t0) / 1000;
    const c = process.cpuUsage(cpu0);
    cpu += c.user + c.system;
    done += work.length;
    if (done % 512 < CHUNK) progress(`${what}: ${done * BATCH} of ${batches * BATCH} (${Math.round((done * BATCH) / seconds)}/s)`);
  }
  const records = batches * BATCH;
  return { seconds: round(seconds, 1), per_s: Math.round(records / seconds), cpu_us_per_record: Math.round(cpu / records) };
}

/** Latencies (ms) of `run` over `inputs`, after a warm-up over the first tenth. */
async function time<T>(inputs: T[], run: (x: T) => Promise<unknown>): Promise<{ all: number[]; results: number[] }> {
  for (const x of inputs.slice(0, Math.ceil(inputs.length / 10))) await run(x);
  const all: number[] = [];
  const results: number[] = [];
  for (const x of inputs) {
    const t0 = performance.now();
    const r = await run(x);
    all.push(performance.now() - t0);
    results.push(Array.isArray(r) ? r.length : 0);
  }
  return { all, results };
}

const summary = (ms: number[]) => ({ ...percentiles(ms), max_ms: round(Math.max(...ms), 2), mean_ms: round(ms.reduce((a, b) => a + b, 0) / ms.length, 3) });

const t0 = performance.now();
const write = {
  notes: await load('notes', NOTES, noteBatch),
  aliases: await load('aliases', ALIASES, aliasBatch),
  edges: await load('edges', EDGES, edgeBatch),
};
const endS = clockS;
if (onPostgres) {
  progress('VACUUM ANALYZE');
  const tables = await pgAdmin<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = '${pgSchema}'`);
  for (const { t } of tables) await pgAdmin(`VACUUM ANALYZE "${pgSchema}"."${t}"`);
}

// ---- reads ------------------------------------------------------------------------------------

const queryScope = () => (rnd() < 0.5 ? null : pick(SCOPE_LIST));
interface Tagged<T> {
  kind: string;
  q: T;
}
const noteQueries: Tagged<NoteSearch & { text: string }>[] = Array.from({ length: QUERIES }, () => {
  const q: NoteSearch & { text: string } = { scope: queryScope(), text: words(between(1, 3)).join(' '), limit: rnd() < 0.1 ? 200 : 10 };
  const r = rnd();
  let kind = q.scope === null ? 'public' : 'scoped';
  if (r < 0.2) {
    q.tags = [TAGS[tagRank()]];
    kind += '+tag';
  } else if (r < 0.3) {
    const c = pick(CELLS);
    q.bbox = { min_lat: c.lat - 0.5, max_lat: c.lat + 0.5, min_lng: c.lng - 0.5, max_lng: c.lng + 0.5 };
    kind += '+bbox';
  }
  return { kind, q };
});
progress(`searchNotes: ${noteQueries.length} queries`);
// Ranked as the service ranks (candidates and statistics from the store, BM25F in primitives/memory).
const search = await time(noteQueries, (x) => searchText(store, x.q));
const byKind: Record<string, ReturnType<typeof summary>> = {};
for (const kind of [...new Set(noteQueries.map((x) => x.kind))].sort()) byKind[kind] = summary(search.all.filter((_, i) => noteQueries[i].kind === kind));
// The slowest queries, to see what dominates the tail.
const slowest = search.all
  .map((ms, i) => ({ ms: round(ms, 2), kind: noteQueries[i].kind, text: noteQueries[i].q.text, limit: noteQueries[i].q.limit, hits: search.results[i] }))
  .sort((a, b) => b.ms - a.ms)
  .slice(0, 8);

const filterQueries: NoteSearch[] = Array.from({ length: 500 }, () => {
  const q: NoteSearch = { scope: queryScope(), limit: 10 };
  const r = rnd();
  if (r < 0.25) q.tags = [TAGS[tagRank()], TAGS[tagRank()]];
  else if (r < 0.5) q.entity = pick(ENTITIES);
  else if (r < 0.75) {
    const c = pick(CELLS);
    q.bbox = { min_lat: c.lat - 0.05, max_lat: c.lat + 0.05, min_lng: c.lng - 0.05, max_lng: c.lng + 0.05 };
  } else {
    q.with_vector = true;
    q.limit = 1000;
  }
  return q;
});
progress('filter-only searches');
const filters = await time(filterQueries, (q) => store.memory.searchNotes(q));

progress('aliases');
const aliasQueries = Array.from({ length: 500 }, () => ({ scope: queryScope(), text: words(between(1, 3)).join(' '), limit: 10 }));
const aliases = await time(aliasQueries, (q) => store.memory.aliases(q));

progress('edges');
// A written edge's scope and one of its ends (so most queries find edges); the direction is
// random, so `in` on a `from` (or the reverse) finds only what else points there.
const edgeQueries = Array.from({ length: Math.max(500, QUERIES) }, () => {
  const e = pick(edgeSample);
  return {
    scope: e.scope,
    record: rnd() < 0.5 ? e.from : e.to,
    direction: pick(['out', 'in', 'both'] as const),
    ...(rnd() < 0.5 ? { valid_at: EPOCH + between(0, 2 * 365 * 86400) } : {}),
    ...(rnd() < 0.3 ? { recorded_at: isoSeconds(new Date(between(startS, endS) * 1000)) } : {}),
    ...(rnd() < 0.2 ? { kinds: [pick(EXCLUSIVE)] } : {}),
    limit: 100,
  };
});
const edges = await time(edgeQueries, (q) => store.memory.edges(q));
const edgeSlowest = edges.all
  .map((ms, i) => ({ ms: round(ms, 2), direction: edgeQueries[i].direction, valid_at: 'valid_at' in edgeQueries[i], recorded_at: 'recorded_at' in edgeQueries[i], rows: edges.results[i] }))
  .sort((a, b) => b.ms - a.ms)
  .slice(0, 5);

await store.close();
function duBytes(path: string): number {
  const st = statSync(path);
  return st.isDirectory() ? readdirSync(path).reduce((sum, name) => sum + duBytes(join(path, name)), 0) : st.size;
}
const indexPath = join(root, 'index.sqlite');
let tables: Record<string, number> = {};
let bytes: Record<string, unknown>;
if (onPostgres) {
  const rows = await pgAdmin<{ name: string; bytes: string }>(
    `SELECT tablename AS name, pg_total_relation_size(format('%I.%I', schemaname, tablename))::text AS bytes
       FROM pg_tables WHERE schemaname = '${pgSchema}' ORDER BY 2 DESC`,
  );
  tables = Object.fromEntries(rows.filter((r) => Number(r.bytes) > 1e6).map((r) => [r.name, Math.round(Number(r.bytes) / 1e6)]));
  bytes = { schema_mb: round(rows.reduce((a, r) => a + Number(r.bytes), 0) / 1e6), tables_mb: tables };
  if (!opt.keep) await pgAdmin(`DROP SCHEMA "${pgSchema}" CASCADE`);
} else {
  try {
    const db = new Database(indexPath, { readonly: true });
    const rows = db.prepare(`SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC LIMIT 16`).all() as { name: string; bytes: number }[];
    tables = Object.fromEntries(rows.map((r) => [r.name, Math.round(r.bytes / 1e6)]));
    db.close();
  } catch {
    // a build without dbstat: the totals stand
  }
  bytes = { log_mb: round(duBytes(join(root, 'log')) / 1e6), index_mb: round(duBytes(indexPath) / 1e6), index_tables_mb: tables };
}
const out = {
  bench: 'memory-index',
  driver: opt.driver,
  corpus: { notes: noteSeq, aliases: ALIASES, edges: EDGES, scopes: SCOPES, public_share: PUBLIC, vocabulary: VOCAB.length, batch: BATCH, concurrency: CONCURRENCY },
  write,
  search_notes: { ...summary(search.all), mean_hits: round(search.results.reduce((a, b) => a + b, 0) / search.results.length), by_kind: byKind, slowest },
  search_filters_only: summary(filters.all),
  aliases: summary(aliases.all),
  edges_as_of: { ...summary(edges.all), mean_rows: round(edges.results.reduce((a, b) => a + b, 0) / edges.results.length), slowest: edgeSlowest },
  bytes,
  total_seconds: round((performance.now() - t0) / 1000),
  loadavg: loadavg().map((x) => round(x, 2)),
};
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
if (opt.keep) progress(onPostgres ? `schema ${pgSchema} kept` : `store kept in ${root}`);
else rmSync(root, { recursive: true, force: true });
