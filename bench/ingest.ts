/**
 * Durable ingest on the embedded driver (SQLite index over the real DiskLog): facts/s and CPU
 * per fact for batches of 1 (at concurrency 32, exercising group commit), 16 and 256;
 * single-fact append latency at concurrency 1 and 32; bytes on disk per fact (log, index, and
 * the index split by table). Prints one JSON object.
 *
 *   node --import tsx bench/ingest.ts            (SVC_BENCH_SCALE=0.25 for a quick run)
 *   SVC_BENCH_ONLY=batch_256,c32                 (run only the named cases; for profiling)
 *   SVC_BENCH_PORTABLE_BLAKE3=1                  (keep the portable hash, as before the swap)
 *   SVC_ATTESTER_DAILY_FACTS=N                   (attest cases: with the per-attester daily quota on)
 *
 * The attest_16 / attest_256 cases go through acceptBatch (the /v1/attest path without HTTP:
 * registry checks of every fact, batch root, Ed25519, append) with an operator key, to show
 * what checking a fact costs next to storing it. `rules_us_per_fact` then times the registry
 * rules alone over the same facts (docs/writes.md: value, unit, reason, level, privacy,
 * derivative parents through the store, the quota lookup once per batch), so their share of
 * the attest CPU can be read off one run on a shared machine.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { installFastBlake3 } from '../src/crypto/fast-blake3.js';
import { loadConfig } from '../src/config.js';
import { acceptBatch, type AttestRequest } from '../src/primitives/write/attest.js';
import { checkAgainstBand, derivativeParents, resolveParents } from '../src/primitives/write/fact-rules.js';
import * as P from '../src/protocol/index.js';
import { cellOf } from '../src/protocol/cell64.js';
import { openService, type Service } from '../src/service.js';
import type { AppendBatch, Store } from '../src/store/contract.js';
import { openDiskLog, type DiskLog } from '../src/store/log/disk-log.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { makeBatch, makeFact, testSigner } from '../test/store/support/facts.js';
import { attestedFact, parentFacts } from './attest-mix.js';

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

const attestSeed = P.blake3(P.utf8('bench ingest attester'));
const attestKey = P.b32encode(P.portableEd25519.publicKey(attestSeed));
/** A signed attest request over `facts` (signed before timing, as a client would). */
function signedBatch(svc: Service, facts: Record<string, unknown>[]): AttestRequest {
  const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
  const sig = P.portableEd25519.sign(P.attesterDigest(root, svc.manifests.registry_cid, svc.manifests.schema_cid), attestSeed);
  return { batch_root: Array.from(root), attester: attestKey, signature: P.b32encode(sig), facts };
}

/** CPU microseconds the registry rules take over `work` when run on their own (the facts are stored by now). */
async function rulesCost(svc: Service, work: AttestRequest[]): Promise<number> {
  const day = new Date().toISOString().slice(0, 10);
  const cpu0 = process.cpuUsage();
  for (const b of work) {
    const derivatives: { at: string; parents: string[] }[] = [];
    b.facts.forEach((f, i) => {
      const at = `facts[${i}]`;
      checkAgainstBand(at, f, f.kind as 'primary', f.cell as string, svc.registry.bands.get(f.band as string)!, 'operator');
      if (f.kind === 'derivative') derivatives.push({ at, parents: derivativeParents(at, f) });
    });
    if (derivatives.length > 0) await resolveParents(derivatives, async (cid) => (await svc.store.getFact(cid)) !== null);
    if (svc.config.attesterDailyFacts !== undefined) await svc.store.attesterFactsOn(attestKey, day);
  }
  const cpu = process.cpuUsage(cpu0);
  return cpu.user + cpu.system;
}

/** Attested ingest through acceptBatch: `count` batches of `size` at `concurrency`. */
async function attest(name: string, size: number, count: number, concurrency: number) {
  const dataDir = join(root, name);
  const env = { SVC_LOG_LEVEL: 'silent', SVC_ATTESTER_DAILY_FACTS: process.env.SVC_ATTESTER_DAILY_FACTS };
  const svc = await openService(loadConfig(env, { dataDir, attesterKeys: [attestKey] }), { materializers: [] });
  try {
    // Parents for the derivative facts, stored before timing starts.
    const seed = parentFacts();
    const parents = (await acceptBatch(svc, signedBatch(svc, seed))).fact_cids;
    const work = Array.from({ length: count }, () =>
      signedBatch(
        svc,
        Array.from({ length: size }, () => attestedFact(factSeq++, parents)),
      ),
    );
    let next = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < work.length) await acceptBatch(svc, work[next++]);
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const facts = size * count;
    const rules = await rulesCost(svc, work);
    const cpuPerFact = (cpu.user + cpu.system) / facts;
    return {
      batch_size: size,
      concurrency,
      facts,
      seconds: round(seconds, 3),
      facts_per_s: Math.round(facts / seconds),
      cpu_us_per_fact: Math.round(cpuPerFact),
      quota: svc.config.attesterDailyFacts ?? null,
      rules_us_per_fact: round(rules / facts, 2),
      rules_share_of_attest_cpu: round(rules / facts / cpuPerFact, 3),
    };
  } finally {
    await svc.close();
  }
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
    const a16 = want('attest_16') ? await attest('a16', 16, n(640), 4) : undefined;
    const a256 = want('attest_256') ? await attest('a256', 256, n(48), 2) : undefined;
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
      attest: { batch_16: a16, batch_256: a256 },
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
