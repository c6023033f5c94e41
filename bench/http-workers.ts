/**
 * Warm signed recall from one process against the same from SVC_WORKERS=2 (one store owner, two
 * HTTP workers), over loopback with autocannon, in one run. Both responders run at once on their
 * own data directories and the loads alternate between them round by round, so the machine's
 * drift cancels within a pair. Prints one JSON object.
 *
 * On a 2-core machine the load generator needs CPU too, so the measured throughput of two
 * workers is bounded by what the generator leaves them. CPU time is therefore read from /proc for
 * every process of each responder (owner and workers) and for the generator around each load:
 * `accounted` divides the cores by the server's own CPU per request, which is what the server
 * would sustain with the generator on other cores. One worker runs pinned to core 0 with the
 * generator on core 1 (as bench http-recall does); the two-worker responder and the generator
 * share both cores during its loads.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as P from '../src/protocol/index.js';
import { canPinCores, childrenOf, closedUpstreams, parisBatch, spawnNodeOn, treeCpuMicros } from './harness.js';
import { LoadGenerator, median, type LoadSpec } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const opSeed = P.blake3(P.utf8('bench operator'));
const opKey = P.b32encode(P.portableEd25519.publicKey(opSeed));

interface Responder {
  name: string;
  workers: number;
  child: ChildProcess;
  base: string;
  data: string;
  body: string;
}

function pin(pid: number, cores: string): void {
  if (canPinCores) execFileSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: 'ignore' });
}

async function start(name: string, workers: number): Promise<Responder> {
  const port = 18000 + Math.floor(Math.random() * 2000) + (workers - 1) * 2000;
  const data = mkdtempSync(join(tmpdir(), `svc-bench-workers-${workers}-`));
  const env = {
    ...process.env,
    ...closedUpstreams(),
    PORT: String(port),
    SVC_HOST: '127.0.0.1',
    SVC_DATA: data,
    SVC_WORKERS: String(workers),
    SVC_LOG_LEVEL: 'warn',
    SVC_RATE_LIMIT_RPS: '1000000',
    SVC_RATE_LIMIT_BURST: '1000000',
    SVC_ATTESTER_KEYS: opKey,
  };
  // One worker on core 0 like bench http-recall; two workers may use both cores.
  const args = ['--import', 'tsx', 'src/cli.ts', 'serve'];
  const proc = workers === 1 ? spawnNodeOn(0, args, { env, stdio: 'inherit' }) : spawn(process.execPath, args, { env, stdio: 'inherit' });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok && (workers === 1 || childrenOf(proc.pid!).length === workers)) break;
    } catch {}
    if (i > 600) throw new Error(`${name} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // Every worker up: each answers its own connections.
  await new Promise((r) => setTimeout(r, 1500));
  const manifests = await (await fetch(`${base}/v1/manifests`)).json();
  const seeded = parisBatch(opSeed, manifests);
  const att = await fetch(`${base}/v1/attest`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(seeded.envelope) });
  if (!att.ok) throw new Error(`attest failed: ${await att.text()}`);
  const body = JSON.stringify(seeded.recall);
  // Warm every worker: fresh connections alternate between them.
  for (let i = 0; i < 400; i++) {
    await (await fetch(`${base}/v1/recall`, { method: 'POST', headers: { 'content-type': 'application/json', connection: i < 20 ? 'close' : 'keep-alive' }, body })).arrayBuffer();
  }
  return { name, workers, child: proc, base, data, body };
}

/** CPU µs of this process's waited-for children (a finished wrk is one), from /proc/self/stat. */
function childrenCpuMicros(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[13]) + Number(f[14])) * 1e6) / 100;
}

const wrkScript = join(mkdtempSync(join(tmpdir(), 'svc-bench-wrk-')), 'post.lua');

/** One wrk load (C, one thread): far less CPU per request than autocannon, so the server, not the generator, is measured. */
async function wrkLoad(url: string, body: string, connections: number, seconds: number, cores: string): Promise<{ rps: number; p99_ms: number; total: number; generator_cpu_us: number }> {
  writeFileSync(wrkScript, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["content-type"] = "application/json"\n`);
  const c0 = childrenCpuMicros();
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', wrkScript, url];
  const child = canPinCores ? spawn('taskset', ['-c', cores, 'wrk', ...args]) : spawn('wrk', args);
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  await new Promise((r) => child.once('exit', r));
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const total = Number(/(\d+) requests in/.exec(out)?.[1]);
  const m = /\s99%\s+([\d.]+)(us|ms|s)/.exec(out);
  const p99 = m ? Number(m[1]) * (m[2] === 'us' ? 1e-3 : m[2] === 's' ? 1e3 : 1) : Number.NaN;
  if (!(rps > 0) || /Non-2xx/.test(out)) throw new Error(`wrk failed: ${out}`);
  return { rps, p99_ms: p99, total, generator_cpu_us: Math.round((childrenCpuMicros() - c0) / total) };
}

const useWrk = process.env.BENCH_LOADGEN !== 'autocannon' && existsSync('/usr/bin/wrk');
const gen = await LoadGenerator.start(1);
const one = await start('one_process', 1);
const two = await start('two_workers', 2);

interface Sample {
  rps: number;
  p99_ms: number;
  server_cpu_us: number;
  generator_cpu_us: number;
  server_busy_cores: number;
}

async function load(r: Responder, spec: Partial<LoadSpec> = {}): Promise<Sample> {
  // The generator keeps core 1 while the pinned single process holds core 0; it shares both with two workers.
  const cores = r.workers === 1 ? '1' : '0,1';
  pin(gen.pid, cores);
  const s0 = treeCpuMicros(r.child.pid!);
  const g0 = treeCpuMicros(gen.pid);
  const t0 = performance.now();
  let res: { rps: number; p99_ms: number; total: number; generator_cpu_us?: number };
  if (useWrk && spec.overallRate === undefined) res = await wrkLoad(`${r.base}/v1/recall`, r.body, CONNECTIONS, SECONDS, cores);
  else res = await gen.run({ url: `${r.base}/v1/recall`, method: 'POST', body: r.body, connections: CONNECTIONS, duration: SECONDS, ...spec });
  const wall = (performance.now() - t0) * 1000;
  const s = treeCpuMicros(r.child.pid!) - s0;
  const g = res.generator_cpu_us ?? Math.round((treeCpuMicros(gen.pid) - g0) / res.total);
  return { rps: Math.round(res.rps), p99_ms: res.p99_ms, server_cpu_us: Math.round(s / res.total), generator_cpu_us: g, server_busy_cores: Number((s / wall).toFixed(2)) };
}

try {
  const runs: Record<string, Sample[]> = { one: [], two: [] };
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['one', 'two'] as const) : (['two', 'one'] as const);
    const got: Record<string, Sample> = {};
    for (const k of order) got[k] = await load(k === 'one' ? one : two);
    runs.one.push(got.one);
    runs.two.push(got.two);
    ratios.push(got.two.rps / got.one.rps);
  }
  const summary = (xs: Sample[]) => ({
    rps_median: Math.round(median(xs.map((x) => x.rps))),
    p99_ms_median: median(xs.map((x) => x.p99_ms)),
    server_cpu_us_per_request: median(xs.map((x) => x.server_cpu_us)),
    generator_cpu_us_per_request: median(xs.map((x) => x.generator_cpu_us)),
    server_busy_cores: median(xs.map((x) => x.server_busy_cores)),
  });
  const s1 = summary(runs.one);
  const s2 = summary(runs.two);
  // Half of the two-worker maximum, at a fixed offered rate.
  const half = Math.max(1, Math.floor(s2.rps_median / 2));
  const halfRuns: Sample[] = [];
  for (let i = 0; i < Math.max(1, Math.round(ROUNDS / 3)); i++) halfRuns.push(await load(two, { overallRate: half, duration: SECONDS * 2, connections: 4 }));
  const accountedOne = 1e6 / s1.server_cpu_us_per_request;
  const accountedTwo = (2 * 1e6) / s2.server_cpu_us_per_request;
  console.log(
    JSON.stringify(
      {
        bench: 'http-workers',
        rounds: ROUNDS,
        seconds_per_load: SECONDS,
        connections: CONNECTIONS,
        pinned: canPinCores,
        load_generator: useWrk ? 'wrk (one thread); autocannon for the fixed-rate half load' : 'autocannon',
        one_process: s1,
        two_workers: s2,
        measured_ratio_two_over_one: { median: Number(median(ratios).toFixed(3)), range: [Number(Math.min(...ratios).toFixed(3)), Number(Math.max(...ratios).toFixed(3))] },
        // What each would sustain with the generator elsewhere: cores ÷ server CPU per request.
        accounted_rps: { one_process_one_core: Math.round(accountedOne), two_workers_two_cores: Math.round(accountedTwo) },
        accounted_ratio_two_over_one: Number((accountedTwo / accountedOne).toFixed(3)),
        two_workers_half_load: {
          target_rps: half,
          achieved_rps: Math.round(median(halfRuns.map((x) => x.rps))),
          p99_ms_median: median(halfRuns.map((x) => x.p99_ms)),
          p99_ms_worst: Math.max(...halfRuns.map((x) => x.p99_ms)),
        },
        targets: { accounted_ratio_two_over_one: '>= 1.6 (0.8 x N)', half_load_p99_ms: '<= 2' },
      },
      null,
      2,
    ),
  );
} finally {
  gen.close();
  for (const r of [one, two]) {
    r.child.kill('SIGTERM');
    await new Promise((res) => r.child.once('exit', res));
    rmSync(r.data, { recursive: true, force: true });
  }
}
