/**
 * `svc serve` as a real process tree for the worker tests: the owner and its workers in a
 * process group of their own, on a loopback port, with one operator attester key allowed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as P from '../../src/protocol/index.js';
import { childrenOf, closedUpstreams } from '../../bench/harness.js';
import { attesterFromSeed, type TestAttester } from './attester.js';

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

export const operator: TestAttester = attesterFromSeed(P.blake3(P.utf8('worker test operator')));

export interface ServeTree {
  child: ChildProcess;
  base: string;
  stderr: () => string;
  /** Pids of the owner's children (the workers), read from /proc. */
  workerPids(): number[];
}

/** Start `svc serve` with `workers` workers on `dataDir`; resolves once every worker listens. */
export async function startServe(dataDir: string, workers: number, env: Record<string, string> = {}): Promise<ServeTree> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      SVC_HOST: '127.0.0.1',
      SVC_DATA: dataDir,
      SVC_WORKERS: String(workers),
      SVC_LOG_LEVEL: 'warn',
      SVC_RATE_LIMIT_RPS: '100000',
      SVC_RATE_LIMIT_BURST: '100000',
      SVC_ATTESTER_KEYS: operator.publicKey,
      // No test may reach an outside host: every upstream at a closed loopback port.
      ...closedUpstreams(),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let err = '';
  child.stderr!.on('data', (c) => (err += c));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`svc serve exited: ${err}`);
    if (workers > 1 ? err.includes('workers serve') : await up(base)) break;
    if (Date.now() > deadline) {
      killTree(child);
      throw new Error(`svc serve did not start within 120 s: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    base,
    stderr: () => err,
    workerPids: () => childrenOf(child.pid!),
  };
}

async function up(base: string): Promise<boolean> {
  try {
    return (await fetch(`${base}/health`)).ok;
  } catch {
    return false;
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILL the whole process group. */
export function killTree(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
}

/** POST JSON on a fresh connection (so round-robin spreads requests over the workers). */
export async function post(base: string, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}
