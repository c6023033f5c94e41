/**
 * Durable ingest on the embedded driver (SQLite index over the real DiskLog): facts/s and CPU
 * per fact for batches of 1 (at concurrency 32, exercising group commit), 16 and 256;
 * single-fact append latency at concurrency 1 and 32; bytes on disk per fact (log, index, and
 * the index split by table). Prints one JSON object.
 *
 *   node --import tsx bench/ingest.ts            (SVC_BENCH_SCALE=0.25 for a quick run)
 *   SVC_BENCH_ONLY=batch_256,c32                 (run only the named cases; for profiling)
 *   SVC_BENCH_PORTABLE_BLAKE3=1                  (keep the portable hash, as before the swap)
 */
import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { installFastBlake3 } from '../src/crypto/fast-blake3.js';
import { cellOf } from '../src/protocol/cell64.js';
import type { AppendBatch, Store } from '../src/store/contract.js';
import { openDiskLog, type DiskLog } from '../src/store/log/disk-log.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { makeBatch, makeFact, testSigner } from '../test/store/support/facts.js';

// As the service does at boot (src/service.ts), so the bench measures what a responder runs.
const fastBlake3 = process.env.SVC_BENCH_PORTABLE_BLAKE3 ? false : installFastBlake3();
const SCALE = Number(process.env.SVC_BENCH_SCALE ?? '1');
const ONLY = process.env.SVC_BENCH_ONLY ? new Set(process.env.SVC_BENCH_ONLY.split(',')) : null;
const signer = testSigner();
const root = mkdtempSync(join(tmpdir(), 'svc-bench-ingest-'));
const BANDS = ['copdem30m.elevation_mean', 'indices.ndvi', 'era5.t2m', 'soilgrids.soc_0_30'];
const CELLS = Array.from({ length: 1000 }, (_, i) => cellOf(40 + (i % 40) * 0.01, -3 + Math.floor(i / 40) * 0.01));
let factSeq = 0;

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

async function openStore(name: string): Promise<{ store: Store; log: DiskLog; dir: string }> {
  const dir = join(root, name);
  const log = await openDiskLog({ dir: join(dir, 'log'), signer });
  const store = await createSqliteStore({ dataDir: dir, scanCellLimit: 1000 }, log, { logger: () => {} });
  return { store, log, dir };
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

function duBytes(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((sum, name) => sum + duBytes(join(path, name)), 0);
}

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** Bytes per fact of each index table and its indexes (dbstat), to see where the index goes. */
function indexSplit(path: string, facts: number): Record<string, number> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare(`SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC`).all() as { name: string; bytes: number }[];
    return Object.fromEntries(rows.filter((r) => r.bytes / facts >= 1).map((r) => [r.name, Math.round(r.bytes / facts)]));
  } catch {
    return {}; // a build without the dbstat table: the total still stands
  } finally {
    db.close();
  }
}

/** Ingest `count` batches of `size` at `concurrency`; throughput, fsyncs and bytes per fact. */
async function ingest(name: string, size: number, count: number, concurrency: number) {
  const work = batches(count, size);
  const { store, log, dir } = await openStore(name);
  const fsync0 = log.fsyncCount;
  const cpu0 = process.cpuUsage();
  const { seconds } = await drive(store, work, concurrency);
  const cpu = process.cpuUsage(cpu0);
  const fsyncs = log.fsyncCount - fsync0;
  const facts = size * count;
  await store.close(); // closing checkpoints the WAL, so the sizes below are the settled ones
  const logBytes = duBytes(join(dir, 'log'));
  const indexBytes = duBytes(join(dir, 'index.sqlite'));
  const split = indexSplit(join(dir, 'index.sqlite'), facts);
  return {
    batch_size: size,
    concurrency,
    facts,
    seconds: round(seconds, 3),
    facts_per_s: Math.round(facts / seconds),
    // CPU of this process per fact: steadier than wall time on a shared machine.
    cpu_us_per_fact: Math.round((cpu.user + cpu.system) / facts),
    cpu_split_us_per_fact: { user: Math.round(cpu.user / facts), system: Math.round(cpu.system / facts) },
    fsyncs,
    facts_per_fsync: round(facts / Math.max(1, fsyncs)),
    bytes_per_fact: { log: Math.round(logBytes / facts), index: Math.round(indexBytes / facts), total: Math.round((logBytes + indexBytes) / facts), index_split: split },
  };
}

/** Single-fact append latency at `concurrency` (ms). */
async function latency(name: string, count: number, concurrency: number) {
  const work = batches(count, 1);
  const { store } = await openStore(name);
  const warm = batches(20, 1);
  await drive(store, warm, concurrency);
  const cpu0 = process.cpuUsage();
  const { latencies, seconds } = await drive(store, work, concurrency);
  const cpu = process.cpuUsage(cpu0);
  await store.close();
  latencies.sort((a, b) => a - b);
  return {
    concurrency,
    appends: count,
    appends_per_s: Math.round(count / seconds),
    cpu_us_per_append: Math.round((cpu.user + cpu.system) / count),
    p50_ms: round(pct(latencies, 50), 2),
    p99_ms: round(pct(latencies, 99), 2),
  };
}

async function main(): Promise<void> {
  const n = (x: number) => Math.max(1, Math.round(x * SCALE));
  const want = (name: string) => ONLY === null || ONLY.has(name);
  try {
    const b1 = want('batch_1') ? await ingest('b1', 1, n(10_240), 32) : undefined;
    const b16 = want('batch_16') ? await ingest('b16', 16, n(640), 4) : undefined;
    const b256 = want('batch_256') ? await ingest('b256', 256, n(48), 2) : undefined;
    const lat1 = want('c1') ? await latency('lat1', n(400), 1) : undefined;
    const lat32 = want('c32') ? await latency('lat32', n(4000), 32) : undefined;
    const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : round(a / b, 2));
    const out = {
      bench: 'store.ingest',
      driver: 'sqlite',
      log: 'disk',
      node: process.version,
      blake3: fastBlake3 ? 'wasm' : 'portable',
      scale: SCALE,
      // The machine may be shared: CPU per fact is the steadier figure when load is high.
      cores: availableParallelism(),
      loadavg_1m: round(loadavg()[0], 2),
      ingest: { batch_1: b1, batch_16: b16, batch_256: b256 },
      append_latency: { c1: lat1, c32: lat32 },
      ratios: {
        batch_16_over_batch_1: ratio(b16?.facts_per_s, b1?.facts_per_s),
        batch_256_over_batch_1: ratio(b256?.facts_per_s, b1?.facts_per_s),
        // Group commit: single-fact appends/s with 32 in flight over strictly serial appends.
        appends_per_s_c32_over_c1: ratio(lat32?.appends_per_s, lat1?.appends_per_s),
        p50_c32_over_c1: ratio(lat32?.p50_ms, lat1?.p50_ms),
      },
    };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
