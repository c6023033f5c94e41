/** Tiny benchmark harness: run a function for a time budget, report ops/s (median of rounds). */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import pg from 'pg';
import * as P from '../src/protocol/index.js';
import { loadRegistry } from '../src/registry/registry.js';
export interface Rate {
  ops_per_s: number;
  rounds: number[];
}

/** Median ops/s of `rounds` rounds of about `ms` milliseconds each. */
export function rate(fn: () => void, ms = 300, rounds = 3): Rate {
  for (let i = 0; i < 50; i++) fn(); // warm-up
  const results: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let n = 0;
    const start = performance.now();
    let now = start;
    while (now - start < ms) {
      for (let i = 0; i < 16; i++) fn();
      n += 16;
      now = performance.now();
    }
    results.push(Math.round((n * 1000) / (now - start)));
  }
  const sorted = [...results].sort((a, b) => a - b);
  return { ops_per_s: sorted[Math.floor(sorted.length / 2)], rounds: results };
}

/** A seeded uniform generator on [0, 1) (mulberry32): benchmark corpora are the same every run. */
export function seededRandom(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** p50/p99 of a list of latencies in ms. */
export function percentiles(samples: number[]): { p50_ms: number; p99_ms: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { p50_ms: Number(at(0.5).toFixed(3)), p99_ms: Number(at(0.99).toFixed(3)), n: s.length };
}

/**
 * Whether HTTP benches put the server and the load generator on separate cores: two or more
 * cores and taskset present, unless BENCH_PIN=0. Sharing one core measures the scheduler as
 * much as the server.
 */
export const canPinCores = process.env.BENCH_PIN !== '0' && availableParallelism() >= 2 && existsSync('/usr/bin/taskset');

/** Move this process to `core` (no-op without pinning). */
export function pinSelf(core: number): void {
  if (canPinCores) execFileSync('taskset', ['-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' });
}

/** Spawn `node args…` on `core` when pinning (a negative core: unpinned), else unpinned. */
export function spawnNodeOn(core: number, args: string[], opts: SpawnOptions = {}): ChildProcess {
  return canPinCores && core >= 0 ? spawn('taskset', ['-c', String(core), process.execPath, ...args], opts) : spawn(process.execPath, args, opts);
}

/** Every upstream at a closed loopback port, as responder env: an HTTP bench never leaves the machine. */
export function closedUpstreams(): Record<string, string> {
  const env: Record<string, string> = { SVC_UPSTREAM_PHOTON_URL: 'off', SVC_UPSTREAM_NOMINATIM_URL: 'off' };
  for (const s of loadRegistry().sourceList) {
    env[s.env] = 'http://127.0.0.1:9';
    env[s.env.replace(/_URL$/, '_ASSETS_URL')] = 'http://127.0.0.1:9';
  }
  return env;
}

/**
 * The warm-read benches' corpus: four facts at one Paris cell, each in its band's current slot
 * (so a warm read never tries to refresh them) with a value in the band's unit, signed by `seed`
 * as one batch under `manifests`; and the recall of two of those bands the benches repeat.
 */
export function parisBatch(seed: Uint8Array, manifests: { registry_cid: string; schema_cid: string }) {
  const cell = P.cellOf(48.8566, 2.3522);
  const values: Record<string, number> = { 'copdem30m.elevation_mean': 35, 'weather.temperature_2m': 11.5, 'indices.ndvi': 0.42, 'air.pm2_5': 9.5 };
  const facts = Object.entries(values).map(([band, value]) => ({
    kind: 'primary',
    cell,
    band,
    tslot: band === 'copdem30m.elevation_mean' ? 0 : band === 'indices.ndvi' ? P.currentTslot('medium') : P.currentTslot('fast'),
    value,
  }));
  const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
  const signature = P.b32encode(P.portableEd25519.sign(P.attesterDigest(root, manifests.registry_cid, manifests.schema_cid), seed));
  const envelope = { batch_root: Array.from(root), attester: P.b32encode(P.portableEd25519.publicKey(seed)), signature, facts };
  return { cell, envelope, recall: { cell, bands: ['copdem30m.elevation_mean', 'indices.ndvi'] } };
}

/** Children of `pid` (Linux /proc): a responder's worker processes. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** CPU time (user + system) in µs used so far by `pid` and its children, from /proc (clock ticks of 10 ms). */
export function treeCpuMicros(pid: number): number {
  let ticks = 0;
  for (const p of [pid, ...childrenOf(pid)]) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // gone meanwhile: nothing more to count
    }
  }
  return (ticks * 1e6) / 100;
}

/**
 * CPU (µs) used so far by the local PostgreSQL server's processes (postmaster, backends, WAL
 * writer …), read from /proc: a bench that keeps its connections open across a timed span
 * gets the server's share of that span as the difference of two readings. 0 when no local
 * server runs (a remote server's CPU cannot be read).
 */
export function postgresCpuMicros(): number {
  let ticks = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/comm`, 'utf8').trim() !== 'postgres') continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Own time plus that of exited children already waited for (backends that closed).
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      // gone meanwhile
    }
  }
  return (ticks * 1e6) / 100;
}

/** One statement on a connection of its own (bench set-up, sizes, clean-up), its rows. */
export async function pgOnce<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(text, values)).rows;
  } finally {
    await c.end();
  }
}
