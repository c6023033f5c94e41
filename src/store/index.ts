/**
 * Opens the storage deployment the configuration names: SQLite over the on-disk log (default)
 * or PostgreSQL (when `databaseUrl` is set), behind a hot cache (Redis when `redisUrl` is set,
 * else in-process LRU).
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { SvcError } from '../protocol/errors.js';
import { cachedStore, type CachedStore, type CachedStoreOptions } from './cache/cached-store.js';
import { throttledErrorLog, type CacheErrorHook, type HotCache } from './cache/hot-cache.js';
import { LruCache } from './cache/lru-cache.js';
import { RedisCache } from './cache/redis-cache.js';
import type { Store, StoreConfig, TreeHeadSigner } from './contract.js';
import { openDiskLog } from './log/disk-log.js';
import { DEFAULT_SCHEMA } from './postgres/schema.js';
import { createSqliteStore } from './sqlite/sqlite-store.js';
import { connectRemoteStore } from './remote/remote-store.js';
import { isMessage, type Channel } from './remote/rpc.js';
import type { BumpedMessage, BumpMessage } from './remote/store-host.js';

export type { CachedStore } from './cache/cached-store.js';
export type { CachedReader, HotCache } from './cache/hot-cache.js';

export interface OpenStoreOptions extends CachedStoreOptions {
  /** Open-summary and fault lines (default: stderr). */
  logger?: (line: string) => void;
  /** Entries kept by the in-process cache when no Redis is configured (default 10 000). */
  lruEntries?: number;
  /** How long to wait for Redis at start before serving with a cold, degraded cache (default 1 s). */
  redisReadyMs?: number;
  /** Redis key prefix (default: see `redisKeyPrefixOf`). */
  redisKeyPrefix?: string;
  /** Clock for transaction times (accepted_at): the service's own, so a simulated clock reaches the log. */
  clock?: () => Date;
}

/**
 * The storage a hot cache fronts: the PostgreSQL database and schema (host, port, database,
 * schema; never the credentials), or the embedded store's data directory.
 */
export function storeIdentity(config: StoreConfig): string {
  const schema = config.databaseSchema ?? DEFAULT_SCHEMA;
  if (!config.databaseUrl) return `sqlite|${resolve(config.dataDir)}`;
  try {
    const u = new URL(config.databaseUrl);
    const host = u.hostname || u.searchParams.get('host') || '';
    return `postgres|${host}|${u.port || '5432'}|${decodeURIComponent(u.pathname.replace(/^\//, ''))}|${schema}`;
  } catch {
    return `postgres|${config.databaseUrl}|${schema}`;
  }
}

/**
 * Default Redis key prefix: `<prefix>:cache:<12 hex of the store identity>:`. Cached query
 * results and facts belong to one store (a fact's log index and inclusion proof differ between
 * stores even when its content id does not), so deployments sharing a Redis server must never
 * share keys, while the responders of one deployment must (a write on one ends the others' warm
 * answers through the cell generations kept there).
 */
export function redisKeyPrefixOf(config: StoreConfig): string {
  const id = createHash('sha256').update(storeIdentity(config)).digest('hex').slice(0, 12);
  return `${config.prefix ?? 'svc'}:cache:${id}:`;
}

/** The PostgreSQL driver, loaded only when configured (so an embedded deployment never loads pg). */
async function openPostgres(config: StoreConfig, signer: TreeHeadSigner, logger?: (line: string) => void, now?: () => Date): Promise<Store> {
  let mod: typeof import('./postgres/postgres-store.js');
  try {
    mod = await import('./postgres/postgres-store.js');
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new SvcError('internal', 'postgres driver not available', { reason: (err as Error).message }, { cause: err });
    }
    throw err;
  }
  return mod.createPostgresStore(config, signer, { logger, schema: config.databaseSchema, ...(now ? { now } : {}) });
}

async function openSqlite(config: StoreConfig, signer: TreeHeadSigner, logger?: (line: string) => void, now?: () => Date): Promise<Store> {
  const log = await openDiskLog({ dir: join(config.dataDir, 'log'), signer, segmentMaxBytes: config.segmentMaxBytes, prefix: config.prefix });
  try {
    return await createSqliteStore(config, log, { logger, ...(now ? { now } : {}) });
  } catch (err) {
    await log.close();
    throw err;
  }
}

/** Open the configured store behind its hot cache; close() closes store, log and cache. */
export async function openStore(config: StoreConfig, signer: TreeHeadSigner, opts: OpenStoreOptions = {}): Promise<CachedStore> {
  const store = config.databaseUrl ? await openPostgres(config, signer, opts.logger, opts.clock) : await openSqlite(config, signer, opts.logger, opts.clock);
  return behindHotCache(store, config, opts);
}

/**
 * The store of a worker process (docs/deploy.md, "Worker processes"): every call goes to the
 * process owning the store over `channel`, behind this worker's own hot cache (Redis when
 * configured). Without Redis the owner asks every worker to end the touched cells' generations
 * before it acknowledges a write (store-host.ts); this answers those requests.
 */
export async function openRemoteStore(config: StoreConfig, channel: Channel, opts: OpenStoreOptions = {}): Promise<CachedStore> {
  const remote = await connectRemoteStore(channel);
  const cached = await behindHotCache(remote, config, opts);
  channel.on('message', (m) => {
    if (!isMessage<BumpMessage>(m, 'bump')) return;
    const cells = Array.isArray(m.cells) ? m.cells : [];
    const bumped = cached.cache.bumpGenerations ? cached.cache.bumpGenerations(cells) : Promise.all(cells.map((c) => cached.cache.bumpGeneration(c)));
    // Confirmed even when the cache failed: an LRU bump cannot fail, and a Redis cache is not asked.
    void bumped.catch(() => undefined).then(() => channel.send({ svc: 'bumped', id: m.id } satisfies BumpedMessage));
  });
  // From here on this worker's cache follows every write: the owner waits for its confirmations.
  channel.send({ svc: 'subscribed' });
  return cached;
}

async function behindHotCache(store: Store, config: StoreConfig, opts: OpenStoreOptions): Promise<CachedStore> {
  const onError: CacheErrorHook = opts.onError ?? throttledErrorLog(30_000, opts.logger);
  let cache: HotCache;
  if (config.redisUrl) {
    const redis = new RedisCache({ url: config.redisUrl, onError, keyPrefix: opts.redisKeyPrefix ?? redisKeyPrefixOf(config) });
    if (!(await redis.ready(opts.redisReadyMs ?? 1000))) {
      (opts.logger ?? ((l: string) => process.stderr.write(l + '\n')))('hot cache: redis not reachable yet; reads go to the store until it is');
    }
    cache = redis;
  } else {
    cache = new LruCache({ maxEntries: opts.lruEntries });
  }
  const cached = cachedStore(store, cache, { ...opts, onError });
  // The cache wrapper forwards the contract's reads and writes; storage health comes from below.
  if (store.storageHealth) cached.storageHealth = () => store.storageHealth!();
  return cached;
}
