/**
 * Redis HotCache (SVC_REDIS_URL) via ioredis. Commands fail fast instead of queueing
 * (`enableOfflineQueue: false`, one retry, a short command timeout) and every failure is
 * swallowed here: reported to `onError` and answered as a miss, so Redis being slow or down
 * degrades reads to the store and never fails them.
 *
 * Generations (redis-generations.ts) never repeat, and nothing is vouched for before the
 * connection's era check: after every (re)connect `generation` answers -1 ("unknown: do not
 * cache") until this client has confirmed that the era belongs to the Redis run it is talking
 * to. A write whose bump failed is kept and re-recorded as soon as Redis answers again;
 * until then this process does not cache the cell either.
 */
import { Redis, ReplyError } from 'ioredis';
import { throttledErrorLog, type CacheErrorHook, type CacheHit, type HotCache } from './hot-cache.js';
import { BUMP_LUA, CHECK_ERA_LUA, ERA_KEY, GENERATION_LUA, freshEra, freshGeneration, genKey, legacyKey, runIdOf } from './redis-generations.js';

export interface RedisCacheOptions {
  url: string;
  /** Prefix of every key (default "svc:cache:"); tests use a random one. */
  keyPrefix?: string;
  /** Per-command timeout in ms (default 100). */
  commandTimeoutMs?: number;
  /** Connect timeout in ms (default 1000). */
  connectTimeoutMs?: number;
  /**
   * Lifetime of a cell's generation record, refreshed on every bump (default 7 days). Its
   * expiry is harmless (the next read draws a fresh generation); it only bounds memory.
   */
  generationTtlS?: number;
  onError?: CacheErrorHook;
  /** Client name shown by CLIENT LIST (default "svc-cache"). */
  connectionName?: string;
}

/** Cells whose bump is kept for a retry at most; beyond it the era is reset instead. */
const MAX_PENDING_BUMPS = 10_000;
/** Retry period of lost bumps and of a failed era check (ms). */
const RETRY_MS = 250;

interface ScriptCommands {
  svcGeneration(era: string, gen: string, legacy: string, fresh: number, ttlS: number, startEra: string): Promise<number>;
  svcBump(era: string, gen: string, legacy: string, fresh: number, ttlS: number): Promise<number>;
  svcCheckEra(era: string, runId: string, fresh: string): Promise<string>;
}

/** HotCache over Redis that never throws from get/set/bump/generation. */
export class RedisCache implements HotCache {
  private readonly redis: Redis;
  private readonly scripts: ScriptCommands;
  private readonly onError: CacheErrorHook;
  private readonly generationTtlS: number;
  private closed = false;
  /** Counts connections (every ready and every close moves it): the era check is per connection. */
  private connection = 0;
  private checkedConnection = -1;
  private runId = 'unknown';
  private readonly checkedWaiters = new Set<(ok: boolean) => void>();
  /** Cells written while their bump could not be recorded. */
  private readonly unbumped = new Set<string>();
  /** Too many lost bumps to track one by one: the whole era must be reset. */
  private eraResetDue = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(opts: RedisCacheOptions) {
    this.onError = opts.onError ?? throttledErrorLog();
    this.generationTtlS = opts.generationTtlS ?? 7 * 86_400;
    this.redis = new Redis(opts.url, {
      keyPrefix: opts.keyPrefix ?? 'svc:cache:',
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: opts.commandTimeoutMs ?? 100,
      connectTimeout: opts.connectTimeoutMs ?? 1000,
      connectionName: opts.connectionName ?? 'svc-cache',
      // Keep trying to reconnect in the background, backing off to 5 s.
      retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 6), 5000),
    });
    this.redis.defineCommand('svcGeneration', { numberOfKeys: 3, lua: GENERATION_LUA });
    this.redis.defineCommand('svcBump', { numberOfKeys: 3, lua: BUMP_LUA });
    this.redis.defineCommand('svcCheckEra', { numberOfKeys: 1, lua: CHECK_ERA_LUA });
    this.scripts = this.redis as unknown as ScriptCommands;
    // Without a listener an 'error' event would crash the process.
    this.redis.on('error', (err: Error) => {
      if (!this.closed) this.onError(err, 'connection');
    });
    this.redis.on('ready', () => void this.checkEra(++this.connection));
    this.redis.on('close', () => void ++this.connection);
  }

  /** True once this connection's era check passed: generations may be trusted. */
  private get trusted(): boolean {
    return this.checkedConnection === this.connection && this.redis.status === 'ready';
  }

  /** Lost bumps not yet re-recorded (tests, metrics). */
  get pendingBumps(): number {
    return this.unbumped.size + (this.eraResetDue ? 1 : 0);
  }

  /**
   * Confirm the era belongs to this Redis run (a restarted or restored Redis gets a new one),
   * retrying while the connection lasts. Only then are generations served.
   */
  private async checkEra(conn: number): Promise<void> {
    while (!this.closed && conn === this.connection) {
      try {
        try {
          this.runId = runIdOf(await this.redis.info('server'));
        } catch (err) {
          // A server that refuses INFO to this user (ACL) answers with an error reply: then every
          // connect starts a new era (correct, only colder). A timeout is retried instead.
          if (!(err instanceof ReplyError)) throw err;
          this.runId = 'unknown';
        }
        await this.scripts.svcCheckEra(ERA_KEY, this.runId, freshEra(this.runId));
        if (conn !== this.connection) return;
        this.checkedConnection = conn;
        for (const w of [...this.checkedWaiters]) w(true);
        this.scheduleRetry();
        return;
      } catch (err) {
        this.onError(err as Error, 'checkEra');
        await new Promise((res) => setTimeout(res, RETRY_MS).unref());
      }
    }
  }

  /** Resolves true once connected and checked, false if not within `timeoutMs` (the cache works either way). */
  ready(timeoutMs = 1000): Promise<boolean> {
    if (this.trusted) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.checkedWaiters.delete(done);
        resolve(ok);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.checkedWaiters.add(done);
    });
  }

  /** Whether the connection is up right now (no round trip: cheap enough for every /health). */
  get connected(): boolean {
    return !this.closed && this.redis.status === 'ready';
  }

  /**
   * True when Redis answers a PING within `timeoutMs`. Commands never queue while disconnected,
   * so a down server answers false at once rather than after the timeout.
   */
  async ping(timeoutMs = 500): Promise<boolean> {
    if (this.closed) return false;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((res) => {
      timer = setTimeout(() => res(false), timeoutMs);
    });
    const answer = this.redis.ping().then(
      (r) => r === 'PONG',
      () => false,
    );
    try {
      return await Promise.race([answer, late]);
    } finally {
      clearTimeout(timer);
    }
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

  getEntry(key: string): Promise<CacheHit | null> {
    return this.guard('get', null, async () => {
      // The remaining TTL comes in the same round trip: an in-process copy must not outlive it.
      const res = await this.redis.pipeline().getBuffer(`v:${key}`).pttl(`v:${key}`).exec();
      if (res === null) return null;
      const [[getErr, buf], [ttlErr, ttl]] = res as [[Error | null, Buffer | null], [Error | null, number]];
      if (getErr || ttlErr) throw getErr ?? ttlErr;
      if (buf === null || !(ttl > 0)) return null;
      return { value: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), ttlMs: ttl };
    });
  }

  set(key: string, value: Uint8Array, ttlS: number): Promise<void> {
    return this.guard('set', undefined, async () => {
      await this.redis.set(`v:${key}`, Buffer.from(value.buffer, value.byteOffset, value.byteLength), 'EX', Math.max(1, Math.ceil(ttlS)));
    });
  }

  private bumpOnce(cell: string): Promise<number> {
    return this.scripts.svcBump(ERA_KEY, genKey(cell), legacyKey(cell), freshGeneration(), this.generationTtlS);
  }

  async bumpGeneration(cell: string): Promise<void> {
    if (this.closed) return;
    try {
      await this.bumpOnce(cell);
      this.unbumped.delete(cell);
    } catch (err) {
      this.onError(err instanceof Error ? err : new Error(String(err)), 'bumpGeneration');
      // Other processes may hold answers cached before this write: note it for re-recording.
      if (this.unbumped.size >= MAX_PENDING_BUMPS) {
        this.unbumped.clear();
        this.eraResetDue = true;
      } else if (!this.eraResetDue) {
        this.unbumped.add(cell);
      }
      this.scheduleRetry();
    }
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.closed || this.pendingBumps === 0) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.retryLostBumps().finally(() => this.scheduleRetry());
    }, RETRY_MS);
    this.retryTimer.unref();
  }

  /** Re-record lost writes once Redis answers: one new era, or one bump per cell. */
  private async retryLostBumps(): Promise<void> {
    if (!this.trusted) return; // a reconnect runs checkEra, which schedules the retry again
    try {
      if (this.eraResetDue) {
        await this.redis.set(ERA_KEY, freshEra(this.runId));
        this.eraResetDue = false;
      }
      for (const cell of [...this.unbumped]) {
        await this.bumpOnce(cell);
        this.unbumped.delete(cell);
      }
    } catch (err) {
      this.onError(err as Error, 'retryBump');
    }
  }

  generation(cell: string): Promise<number> {
    // -1 (unknown) rather than a guess: a reader must not file results under it. Unknown while
    // the era is unchecked and while a write to the cell (or a lost write anywhere) is unrecorded.
    if (!this.trusted || this.eraResetDue || this.unbumped.has(cell)) return Promise.resolve(-1);
    return this.guard('generation', -1, async () => {
      const g = await this.scripts.svcGeneration(ERA_KEY, genKey(cell), legacyKey(cell), freshGeneration(), this.generationTtlS, freshEra(this.runId));
      return Number.isSafeInteger(g) && g >= 0 ? g : -1;
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    for (const w of [...this.checkedWaiters]) w(false);
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
