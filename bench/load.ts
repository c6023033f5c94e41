/**
 * Paired HTTP loads. This machine's speed drifts by tens of percent within seconds, so a ratio
 * of two throughputs is taken from short loads run back to back, many times, and reported as a
 * median: the drift cancels within a pair. The load generator is one long-lived autocannon child
 * (on core 1 when pinning) driven over IPC; the server's CPU time per request comes from
 * /proc/<pid>/stat around each load, which shows cost even when the generator is the limit.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { canPinCores } from './harness.js';

export interface LoadSpec {
  url: string;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  connections?: number;
  duration?: number;
  /** Fixed offered rate over all connections (autocannon overallRate). */
  overallRate?: number;
}

export interface LoadResult {
  rps: number;
  total: number;
  p50_ms: number;
  p99_ms: number;
  p99_9_ms: number;
  /** Server CPU (user + system) per request, µs; undefined without a server pid. */
  server_cpu_us?: number;
}

/** CPU time (user + system) of `pid` in µs, from /proc (clock ticks of 10 ms on Linux). */
function cpuMicros(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1e6) / 100;
  } catch {
    return undefined;
  }
}

export class LoadGenerator {
  private constructor(private readonly child: ChildProcess) {}

  /** The generator's process id (its CPU time is read from /proc by benches that account for it). */
  get pid(): number {
    return this.child.pid!;
  }

  static async start(core = 1): Promise<LoadGenerator> {
    const child = fork(new URL('./load-child.mjs', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`load generator exited (${code})`)));
    });
    if (canPinCores) execFileSync('taskset', ['-p', '-c', String(core), String(child.pid)], { stdio: 'ignore' });
    return new LoadGenerator(child);
  }

  /** One load; `serverPid` adds the server's CPU time per request. Throws on non-2xx or errors. */
  async run(spec: LoadSpec, serverPid?: number): Promise<LoadResult> {
    const cpu0 = serverPid === undefined ? undefined : cpuMicros(serverPid);
    const reply = await new Promise<any>((resolve) => {
      this.child.once('message', resolve);
      this.child.send({ connections: 2, duration: 2, ...spec });
    });
    const cpu1 = serverPid === undefined ? undefined : cpuMicros(serverPid);
    if (!reply.ok) throw new Error(`load on ${spec.url} failed: ${JSON.stringify(reply)}`);
    const out: LoadResult = { rps: Math.round(reply.rps), total: reply.total, p50_ms: reply.p50_ms, p99_ms: reply.p99_ms, p99_9_ms: reply.p99_9_ms };
    if (cpu0 !== undefined && cpu1 !== undefined && reply.total > 0) out.server_cpu_us = Math.round((cpu1 - cpu0) / reply.total);
    return out;
  }

  close(): void {
    this.child.send('exit');
  }
}

/** Median of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * `rounds` rounds of every spec back to back (order rotated each round); per spec the median
 * rps and CPU/request, and per round the rps ratio of each spec to the first.
 */
export async function pairedRounds(gen: LoadGenerator, specs: Record<string, LoadSpec>, rounds: number, serverPid?: number) {
  const names = Object.keys(specs);
  const runs: Record<string, LoadResult[]> = Object.fromEntries(names.map((n) => [n, []]));
  const ratios: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length]);
    const round: Record<string, LoadResult> = {};
    for (const n of order) round[n] = await gen.run(specs[n], serverPid);
    for (const n of names) {
      runs[n].push(round[n]);
      ratios[n].push(round[n].rps / round[names[0]].rps);
    }
  }
  return Object.fromEntries(
    names.map((n) => [
      n,
      {
        rps_median: Math.round(median(runs[n].map((x) => x.rps))),
        ratio_to_first_median: Number(median(ratios[n]).toFixed(3)),
        ratio_range: [Number(Math.min(...ratios[n]).toFixed(3)), Number(Math.max(...ratios[n]).toFixed(3))],
        server_cpu_us_median: runs[n][0].server_cpu_us === undefined ? undefined : median(runs[n].map((x) => x.server_cpu_us!)),
        // Share of the wall time the server was busy (rps × CPU per request): well below 1 means the
        // load generator, not the server, set the pace, and the rps ratio understates the server.
        server_busy_median: runs[n][0].server_cpu_us === undefined ? undefined : Number(median(runs[n].map((x) => (x.rps * x.server_cpu_us!) / 1e6)).toFixed(2)),
      },
    ]),
  );
}
