/**
 * A private redis-server for tests that must restart, flush or snapshot Redis: the shared server
 * at SVC_TEST_REDIS_URL belongs to every suite running at once, so nothing destructive runs
 * there. Loopback only, no persistence unless a test asks for a snapshot (SAVE).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** Skip reason when no redis-server binary is installed (never skipped under REQUIRE). */
export const redisServerSkip: string | false =
  spawnSync('redis-server', ['--version']).status === 0 || process.env.SVC_TEST_REQUIRE_SERVICES === '1' ? false : 'redis-server not installed: restart tests need a private Redis';

export interface PrivateRedis {
  readonly url: string;
  /** A plain client (for FLUSHDB, SAVE, inspection); reconnects across restarts. */
  readonly admin: Redis;
  /** Kill the server (SIGKILL: nothing is saved) and start it again on the same port and dir. */
  restart(): Promise<void>;
  /** Freeze / thaw the server process (SIGSTOP / SIGCONT): clients see timeouts, state survives. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

async function waitUp(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined);
    try {
      await r.connect();
      await r.ping();
      return;
    } catch {
      await new Promise((res) => setTimeout(res, 50));
    } finally {
      r.disconnect();
    }
  }
  throw new Error(`redis-server at ${url} did not come up`);
}

/** Start redis-server on a free loopback port with its own data dir (removed on stop); `extra` adds server options. */
export async function startPrivateRedis(extra: string[] = []): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess;
  const launch = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'no', '--loglevel', 'warning', ...extra], {
      stdio: 'ignore',
    });
    await waitUp(url);
  };
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((res) => child.once('exit', res));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  };
  try {
    await launch();
  } catch (err) {
    await kill();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const admin = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  admin.on('error', () => undefined);
  return {
    url,
    admin,
    async restart() {
      await kill();
      await launch();
      // The admin client reconnects on its own; wait for it so callers can use it at once.
      for (let i = 0; i < 100 && admin.status !== 'ready'; i++) await new Promise((res) => setTimeout(res, 20));
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async stop() {
      admin.disconnect();
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
