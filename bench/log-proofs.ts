/**
 * Disk-log benchmark: builds logs of 1 M (and with BENCH_LOG_10M=1 also 10 M) ~200-byte
 * entries through the bulk-append path, reopens them, then measures inclusion proofs,
 * consistency proofs and historical roots at random positions, plus append throughput with
 * group commit at concurrency 1 and 32. Prints one JSON object on stdout; progress on stderr.
 *
 * Hashing: by default the run installs the log's single-chunk BLAKE3 (blake3-small.ts) through
 * the protocol's `setBlake3Implementation` hook, after checking it against the reference, since
 * the pure-JS reference makes a 10 M build take minutes; BENCH_LOG_HASH=reference measures the
 * reference instead. The JSON says which one ran.
 *
 * Run: node --import tsx bench/log-proofs.ts   (BENCH_LOG_DIR=… to build somewhere other
 * than the OS temp dir, BENCH_LOG_KEEP=1 to keep the directories).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { equalBytes } from '../src/protocol/bytes.js';
import { portableEd25519, randomSeed } from '../src/protocol/ed25519.js';
import { blake3Reference, setBlake3Implementation } from '../src/protocol/hash.js';
import { leafHash, verifyConsistency, verifyInclusion } from '../src/protocol/log-tree.js';
import type { TreeHeadSigner } from '../src/store/contract.js';
import { blake3Small } from '../src/store/log/blake3-small.js';
import { openDiskLog, type DiskLog } from '../src/store/log/disk-log.js';

const seed = randomSeed();
const signer: TreeHeadSigner = { publicKey: portableEd25519.publicKey(seed), epoch: 0, sign: (d) => portableEd25519.sign(d, seed) };
const BULK = 1 << 16;
const SAMPLES = Number(process.env.BENCH_LOG_SAMPLES ?? 2000);
const APPEND_MS = Number(process.env.BENCH_LOG_APPEND_MS ?? 3000);

function progress(msg: string): void {
  process.stderr.write(`[log-bench] ${msg}\n`);
}

/** A 198-byte canonical CBOR map {"i": uint32, "p": bytes(186)}, distinct per i. */
function entryOf(i: number): Uint8Array {
  const e = new Uint8Array(198);
  e.set([0xa2, 0x61, 0x69, 0x1a]);
  new DataView(e.buffer).setUint32(4, i >>> 0);
  e.set([0x61, 0x70, 0x58, 186], 8);
  let x = (i * 2654435761) >>> 0 || 1;
  for (let k = 12; k < 198; k++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    e[k] = x & 0xff;
  }
  return e;
}

function rand(n: number): number {
  return Math.floor(Math.random() * n);
}

function stats(samplesMs: number[]): { median_us: number; p99_us: number; mean_us: number } {
  const s = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  const round = (ms: number) => Math.round(ms * 1000 * 10) / 10;
  return { median_us: round(at(0.5)), p99_us: round(at(0.99)), mean_us: round(s.reduce((a, b) => a + b, 0) / s.length) };
}

async function timeEach(n: number, fn: (k: number) => Promise<unknown>): Promise<number[]> {
  for (let k = 0; k < Math.min(200, n); k++) await fn(k); // warm-up: JIT and page cache
  (globalThis as { gc?: () => void }).gc?.();
  const out: number[] = [];
  for (let k = 0; k < n; k++) {
    const t = performance.now();
    await fn(k);
    out.push(performance.now() - t);
  }
  return out;
}

function newDir(tag: string): string {
  return mkdtempSync(join(process.env.BENCH_LOG_DIR ?? tmpdir(), `svc-log-bench-${tag}-`));
}

async function buildAndMeasure(n: number): Promise<Record<string, unknown>> {
  const dir = newDir(String(n));
  try {
    progress(`building ${n} entries in ${dir}`);
    const log = await openDiskLog({ dir, signer });
    const t0 = performance.now();
    for (let from = 0; from < n; from += BULK) {
      const batch: Uint8Array[] = [];
      for (let i = from; i < Math.min(n, from + BULK); i++) batch.push(entryOf(i));
      await log.bulkAppend(batch);
      if ((from / BULK) % 16 === 15) progress(`  ${from + batch.length} entries, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    const buildS = (performance.now() - t0) / 1000;
    const fsyncs = log.fsyncCount;
    await log.close();

    const t1 = performance.now();
    const opened = await openDiskLog({ dir, signer });
    const openMs = performance.now() - t1;
    progress(`built in ${buildS.toFixed(1)} s, reopened in ${openMs.toFixed(0)} ms`);
    const result = await measureProofs(opened, n);
    await opened.close();
    return {
      entries: n,
      entry_bytes: 198,
      build_s: Math.round(buildS * 10) / 10,
      build_entries_per_s: Math.round(n / buildS),
      build_fsyncs: fsyncs,
      reopen_ms: Math.round(openMs),
      reopen_rebuilt_nodes: opened.recovery.rebuilt_nodes,
      ...result,
    };
  } finally {
    if (!process.env.BENCH_LOG_KEEP) rmSync(dir, { recursive: true, force: true });
  }
}

async function measureProofs(log: DiskLog & { recovery: unknown }, n: number): Promise<Record<string, unknown>> {
  const root = await log.root();
  // Correctness spot checks, outside the timings.
  for (let k = 0; k < 20; k++) {
    const i = rand(n);
    if (!verifyInclusion(i, n, leafHash(entryOf(i)), await log.inclusionProof(i, n), root)) throw new Error(`inclusion ${i} failed`);
    const f = 1 + rand(n - 1);
    if (!verifyConsistency(f, n, await log.root(f), root, await log.consistencyProof(f, n))) throw new Error(`consistency ${f} failed`);
  }
  const incl = await timeEach(SAMPLES, () => log.inclusionProof(rand(n), n));
  const inclHist = await timeEach(SAMPLES, () => {
    const size = 1 + rand(n);
    return log.inclusionProof(rand(size), size);
  });
  const cons = await timeEach(SAMPLES, () => log.consistencyProof(1 + rand(n - 1), n));
  const roots = await timeEach(SAMPLES, () => log.root(1 + rand(n)));
  const entries = await timeEach(SAMPLES, () => log.entry(rand(n)));
  const lookups = await timeEach(SAMPLES, () => log.leafIndexOf(leafHash(entryOf(rand(n)))));
  const busy = await underAppends(log, n);
  return {
    under_concurrent_appends: busy,
    inclusion_proof_at_head: stats(incl),
    inclusion_proof_random_size: stats(inclHist),
    consistency_proof_to_head: stats(cons),
    root_random_size: stats(roots),
    entry_read: stats(entries),
    leaf_index_lookup_incl_hashing: stats(lookups),
  };
}

/**
 * Proofs to the moving head while 8 writers append with group commit in the same process (the
 * responder's situation: every read proves against a tree that grows under it). Stops itself
 * after SAMPLES proofs of each kind; the appended entries stay in the log.
 */
async function underAppends(log: DiskLog, n: number): Promise<Record<string, unknown>> {
  let stop = false;
  let appended = 0;
  let next = n;
  const writer = async () => {
    while (!stop) {
      await log.append(entryOf(next++));
      appended++;
    }
  };
  const writers = Array.from({ length: 8 }, writer);
  // Proofs resolve without touching the event loop's I/O phase: each sample first lets the
  // writers' fsync completions run (untimed), so appends really interleave with the proofs.
  const sample = async (fn: (size: number) => Promise<unknown>) => {
    const out: number[] = [];
    for (let k = 0; k < SAMPLES; k++) {
      await new Promise((r) => setImmediate(r));
      const size = await log.size();
      const t = performance.now();
      await fn(size);
      out.push(performance.now() - t);
    }
    return out;
  };
  const t0 = performance.now();
  try {
    const incl = await sample((size) => log.inclusionProof(rand(size), size));
    const cons = await sample((size) => log.consistencyProof(1 + rand(size - 1), size));
    return { writers: 8, appends_per_s: Math.round(appended / ((performance.now() - t0) / 1000)), inclusion_proof_at_head: stats(incl), consistency_proof_to_head: stats(cons) };
  } finally {
    stop = true;
    await Promise.all(writers);
  }
}

async function appendThroughput(concurrency: number): Promise<Record<string, unknown>> {
  const dir = newDir(`append${concurrency}`);
  try {
    const log = await openDiskLog({ dir, signer });
    const latencies: number[] = [];
    let next = 0;
    const stop = performance.now() + APPEND_MS;
    const worker = async () => {
      while (performance.now() < stop) {
        const e = entryOf(next++);
        const t = performance.now();
        await log.append(e);
        latencies.push(performance.now() - t);
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const secs = (performance.now() - t0) / 1000;
    const appended = await log.size();
    const fsyncs = log.fsyncCount;
    await log.close();
    const l = stats(latencies);
    return {
      concurrency,
      appends: appended,
      appends_per_s: Math.round(appended / secs),
      fsyncs,
      entries_per_fsync: Math.round((appended / Math.max(1, fsyncs)) * 10) / 10,
      latency_median_ms: l.median_us / 1000,
      latency_p99_ms: l.p99_us / 1000,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const hashName = process.env.BENCH_LOG_HASH === 'reference' ? 'noble-reference' : 'blake3-small';
if (hashName === 'blake3-small') {
  for (let n = 0; n <= 1100; n += 13) {
    const x = entryOf(n).subarray(0, Math.min(198, n));
    const y = new Uint8Array(n).map((_, i) => (i * 7 + n) & 0xff);
    if (!equalBytes(blake3Small(x), blake3Reference(x)) || !equalBytes(blake3Small(y), blake3Reference(y))) throw new Error(`blake3Small differs at ${n}`);
  }
  setBlake3Implementation(blake3Small);
}

const sizes = [1_000_000];
if (process.env.BENCH_LOG_10M === '1') sizes.push(10_000_000);
const started = performance.now();
const logs: Record<string, unknown>[] = [];
for (const n of sizes) logs.push(await buildAndMeasure(n));
progress('append throughput');
const append = [await appendThroughput(1), await appendThroughput(32)];
process.stdout.write(
  JSON.stringify({
    bench: 'log-proofs',
    node: process.version,
    blake3: hashName,
    samples: SAMPLES,
    logs,
    append,
    total_s: Math.round((performance.now() - started) / 100) / 10,
  }) + '\n',
);
