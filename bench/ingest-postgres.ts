/**
 * Durable ingest on the PostgreSQL driver (log and index in one schema, one COMMIT per group):
 * facts/s for batches of 1 (at concurrency 32, exercising group commit), 16 and 256 (2 and 8
 * clients); single-fact append latency at concurrency 1 and 32; transactions, bytes per fact and
 * the CPU per fact of this process and of the local server. Runs in a throwaway schema against
 * SVC_DATABASE_URL (default: the local server). Prints one JSON object.
 *
 *   node --import tsx bench/ingest-postgres.ts      (SVC_BENCH_SCALE=0.25 for a quick run)
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import pg from 'pg';
import { installFastBlake3 } from '../src/crypto/fast-blake3.js';
import { cellOf } from '../src/protocol/cell64.js';
import type { AppendBatch, Store } from '../src/store/contract.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { makeBatch, makeFact, testSigner } from '../test/store/support/facts.js';
import { pgOnce, postgresCpuMicros } from './harness.js';

// As the service does at boot (src/service.ts), so the bench measures what a responder runs.
const fastBlake3 = installFastBlake3();
const URL = process.env.SVC_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const SCALE = Number(process.env.SVC_BENCH_SCALE ?? '1');
const signer = testSigner();
const BANDS = ['copdem30m.elevation_mean', 'indices.ndvi', 'era5.t2m', 'soilgrids.soc_0_30'];
const CELLS = Array.from({ length: 1000 }, (_, i) => cellOf(40 + (i % 40) * 0.01, -3 + Math.floor(i / 40) * 0.01));
const schemas: string[] = [];
let factSeq = 0;

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** `count` batches of `size` distinct, realistic facts (built before timing starts). */
function batches(count: number, size: number): AppendBatch[] {
  return Array.from({ length: count }, () =>
    makeBatch(
      Array.from({ length: size }, () => {
        const n = factSeq++;
        return makeFact({ cell: CELLS[n % CELLS.length], band: BANDS[n % BANDS.length], tslot: 20_000 + (n % 97), value: Math.round(n * 7.31) / 100, unit: 'x' });
      }),
      { sign: false },
    ),
  );
}

const admin = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => pgOnce<R>(URL, text, values);

async function openStore(): Promise<{ store: Store; schema: string; commits: () => number }> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  schemas.push(schema);
  let commits = 0;
  const store = await createPostgresStore({ dataDir: '/nonexistent', databaseUrl: URL, scanCellLimit: 10_000 }, signer, {
    schema,
    logger: () => {},
    onCommit: () => commits++,
  });
  return { store, schema, commits: () => commits };
}

/** Run `work` over the batches with at most `concurrency` appends in flight; per-append ms. */
async function drive(store: Store, work: AppendBatch[], concurrency: number): Promise<{ seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < work.length) {
        const b = work[next++];
        const s = performance.now();
        await store.append(b);
        latencies.push(performance.now() - s);
      }
    }),
  );
  return { seconds: (performance.now() - t0) / 1000, latencies };
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Ingest `count` batches of `size` at `concurrency`: throughput, commits and bytes per fact. */
async function ingest(size: number, count: number, concurrency: number) {
  const work = batches(count, size);
  const warm = batches(Math.max(concurrency, Math.ceil(count / 20)), size);
  const { store, schema, commits } = await openStore();
  // Warm-up (JIT, pool connections, prepared statements) in the same schema; not timed.
  await drive(store, warm, concurrency);
  const c0 = commits();
  const cpu0 = process.cpuUsage();
  const server0 = postgresCpuMicros();
  const { seconds } = await drive(store, work, concurrency);
  const cpu = process.cpuUsage(cpu0);
  const serverCpu = postgresCpuMicros() - server0;
  const txns = commits() - c0;
  const facts = size * count;
  const stored = size * (count + warm.length);
  await store.close();
  const [bytes] = await admin<{ log: string; index: string }>(
    `SELECT (pg_total_relation_size($1::regclass) + pg_total_relation_size($2::regclass))::text AS log,
            (pg_total_relation_size($3::regclass) + pg_total_relation_size($4::regclass))::text AS index`,
    [`"${schema}".log_entries`, `"${schema}".log_nodes`, `"${schema}".facts`, `"${schema}".edges`],
  );
  return {
    batch_size: size,
    concurrency,
    facts,
    seconds: round(seconds, 3),
    facts_per_s: Math.round(facts / seconds),
    // CPU of this process per fact.
    cpu_us_per_fact: Math.round((cpu.user + cpu.system) / facts),
    // CPU of the local server's processes per fact (0: the server is not on this machine).
    server_cpu_us_per_fact: Math.round(serverCpu / facts),
    commits: txns,
    facts_per_commit: round(facts / Math.max(1, txns)),
    bytes_per_fact: { log: Math.round(Number(bytes.log) / stored), index: Math.round(Number(bytes.index) / stored) },
  };
}

/** Single-fact append latency at `concurrency` (ms). */
async function latency(count: number, concurrency: number) {
  const work = batches(count, 1);
  const { store } = await openStore();
  await drive(store, batches(20, 1), concurrency);
  const { latencies } = await drive(store, work, concurrency);
  await store.close();
  latencies.sort((a, b) => a - b);
  return { concurrency, appends: count, p50_ms: round(pct(latencies, 50), 2), p99_ms: round(pct(latencies, 99), 2) };
}

async function main(): Promise<void> {
  const n = (x: number) => Math.max(1, Math.round(x * SCALE));
  try {
    const [server] = await admin<{ version: string; sync: string; fsync: string }>(
      `SELECT current_setting('server_version') AS version, current_setting('synchronous_commit') AS sync, current_setting('fsync') AS fsync`,
    );
    const b1 = await ingest(1, n(10_240), 32);
    const b16 = await ingest(16, n(640), 4);
    const b256 = await ingest(256, n(48), 2);
    // Several clients: the next groups are checked and encoded while one transaction runs.
    const b256c8 = await ingest(256, n(96), 8);
    const lat1 = await latency(n(400), 1);
    const lat32 = await latency(n(4000), 32);
    const out = {
      bench: 'store.ingest',
      driver: 'postgres',
      server: { version: server.version, synchronous_commit: server.sync, fsync: server.fsync },
      node: process.version,
      blake3: fastBlake3 ? 'wasm' : 'portable',
      host: { cpus: availableParallelism(), loadavg_1m: round(loadavg()[0], 2) },
      scale: SCALE,
      ingest: { batch_1: b1, batch_16: b16, batch_256: b256, batch_256_c8: b256c8 },
      append_latency: { c1: lat1, c32: lat32 },
      ratios: {
        batch_16_over_batch_1: round(b16.facts_per_s / b1.facts_per_s, 2),
        batch_256_over_batch_1: round(b256.facts_per_s / b1.facts_per_s, 2),
        p50_c32_over_c1: round(lat32.p50_ms / lat1.p50_ms, 2),
      },
    };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } finally {
    for (const s of schemas) await admin(`DROP SCHEMA IF EXISTS "${s}" CASCADE`).catch(() => undefined);
  }
}

await main();
