/**
 * Redis HotCache (SVC_REDIS_URL) via ioredis. Commands fail fast instead of queueing
 * (`enableOfflineQueue: false`, one retry, a short command timeout) and every failure is
 * swallowed here: reported to `onError` and answered as a miss, so Redis being slow or down
 * degrades reads to the store and never fails them.
 */
import { Redis } from 'ioredis';
import { throttledErrorLog, type CacheErrorHook, type HotCache } from './hot-cache.js';

export interface RedisCacheOptions {
  url: string;
  /** Prefix of every key (default "svc:cache:"); tests use a random one. */
  keyPrefix?: string;
  /** Per-command timeout in ms (default 100). */
  commandTimeoutMs?: number;
  /** Connect timeout in ms (default 1000). */
  connectTimeoutMs?: number;
  /**
   * Lifetime of a cell's generation key, refreshed on every bump (default 7 days). It must
   * exceed every value TTL: a generation that expired restarts at 0, and that is only safe
   * once every value cached under the old numbers has expired too.
   */
  generationTtlS?: number;
  onError?: CacheErrorHook;
}

/** HotCache over Redis that never throws from get/set/bump/generation. */
export class RedisCache implements HotCache {
  private readonly redis: Redis;
  private readonly onError: CacheErrorHook;
  private readonly generationTtlS: number;
  private closed = false;

  constructor(opts: RedisCacheOptions) {
    this.onError = opts.onError ?? throttledErrorLog();
    this.generationTtlS = opts.generationTtlS ?? 7 * 86_400;
    this.redis = new Redis(opts.url, {
      keyPrefix: opts.keyPrefix ?? 'svc:cache:',
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: opts.commandTimeoutMs ?? 100,
      connectTimeout: opts.connectTimeoutMs ?? 1000,
      // Keep trying to reconnect in the background, backing off to 5 s.
      retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 6), 5000),
    });
    // Without a listener an 'error' event would crash the process.
    this.redis.on('error', (err: Error) => {
      if (!this.closed) this.onError(err, 'connection');
    });
  }

  /** Resolves true once connected, false if not within `timeoutMs` (the cache works either way). */
  ready(timeoutMs = 1000): Promise<boolean> {
    if (this.redis.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.redis.on('ready', onReady);
    });
  }

  private async guard<T>(op: string, fallback: T, fn: () => Promise<T>): Promise<T> {
    if (this.closed) return fallback;
    try {
      return await fn();
    } catch (err) {
      this.onError(err instanceof Error ? err : new Error(String(err)), op);
      return fallback;
    }
  }

  get(key: string): Promise<Uint8Array | null> {
    return this.guard('get', null, async () => {
      const buf = await this.redis.getBuffer(`v:${key}`);
      return buf === null ? null : new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    });
  }

  set(key: string, value: Uint8Array, ttlS: number): Promise<void> {
    return this.guard('set', undefined, async () => {
      await this.redis.set(`v:${key}`, Buffer.from(value.buffer, value.byteOffset, value.byteLength), 'EX', Math.max(1, Math.ceil(ttlS)));
    });
  }

  bumpGeneration(cell: string): Promise<void> {
    return this.guard('bumpGeneration', undefined, async () => {
      const res = await this.redis.multi().incr(`g:${cell}`).expire(`g:${cell}`, this.generationTtlS).exec();
      const failed = res?.find(([err]) => err);
      if (res === null || failed) throw failed?.[0] ?? new Error('redis: MULTI aborted');
    });
  }

  generation(cell: string): Promise<number> {
    // -1 (unknown) rather than 0 on a fault: a reader must not file results under a guess.
    return this.guard('generation', -1, async () => {
      const v = await this.redis.get(`g:${cell}`);
      return v === null ? 0 : Number(v);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.redis.status === 'ready') {
      try {
        await this.redis.quit();
        return;
      } catch {
        // fall through to a hard disconnect
      }
    }
    this.redis.disconnect();
  }
}
