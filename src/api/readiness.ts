/**
 * What /health and /ready say about the parts a responder needs: the store and the hot cache.
 * /health stays cheap (no round trip: it only reads the Redis connection state), /ready asks
 * each part to answer within a short timeout, so a balancer stops sending traffic to a
 * responder whose store is stuck or whose shared cache is gone.
 */
import { SvcError } from '../protocol/errors.js';
import type { CachedStore } from '../store/index.js';
import { RedisCache } from '../store/cache/redis-cache.js';

/** How long the store may take to tell its log size. */
export const STORE_READY_TIMEOUT_MS = 2000;
/** How long Redis may take to answer a PING. */
export const REDIS_READY_TIMEOUT_MS = 500;

export interface CacheHealth {
  kind: 'redis' | 'memory';
  status: 'ok' | 'unreachable';
}

export interface ReadyChecks {
  store: 'ok' | 'unreachable';
  redis: 'ok' | 'unreachable' | 'not_configured';
}

/** The hot cache as /health shows it; the in-process cache is always there. */
export function cacheHealth(store: CachedStore): CacheHealth {
  if (!(store.cache instanceof RedisCache)) return { kind: 'memory', status: 'ok' };
  return { kind: 'redis', status: store.cache.connected ? 'ok' : 'unreachable' };
}

async function storeAnswers(store: CachedStore, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((res) => {
    timer = setTimeout(() => res(false), timeoutMs);
  });
  try {
    return await Promise.race([
      store.log.size().then(
        () => true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Both checks run at once; the answer when all pass, else a 503 `overloaded` naming the first failing part. */
export async function readiness(store: CachedStore): Promise<{ ready: true; checks: ReadyChecks }> {
  const redis = store.cache instanceof RedisCache ? store.cache : undefined;
  const [storeOk, redisOk] = await Promise.all([storeAnswers(store, STORE_READY_TIMEOUT_MS), redis ? redis.ping(REDIS_READY_TIMEOUT_MS) : Promise.resolve(true)]);
  const checks: ReadyChecks = { store: storeOk ? 'ok' : 'unreachable', redis: !redis ? 'not_configured' : redisOk ? 'ok' : 'unreachable' };
  if (storeOk && redisOk) return { ready: true, checks };
  const component = storeOk ? 'redis' : 'store';
  throw new SvcError('overloaded', `not ready: the ${component === 'redis' ? 'Redis hot cache' : 'store'} does not answer`, { component, checks, retry_after: 1 });
}
