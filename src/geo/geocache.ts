/**
 * Persistent cache of network geocoder answers (the `cache` tier): a small SQLite file
 * `${dataDir}/geocache.sqlite` on the embedded deployment, or a table in PostgreSQL when the
 * service runs on it. Entries expire (30 days for answers, 1 day for "nobody knows this place").
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** What a cache entry holds: the network tier that answered and its normalized answer, or a miss. */
export interface CachedAnswer {
  source: 'photon' | 'nominatim' | 'none';
  /** JSON of the resolution (opaque to the cache). */
  payload: unknown;
  stored_at: number;
}

export interface GeoCache {
  readonly driver: 'sqlite' | 'postgres' | 'memory';
  get(key: string, now?: number): Promise<CachedAnswer | undefined>;
  put(key: string, answer: CachedAnswer, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}

export const ANSWER_TTL_MS = 30 * 24 * 3600 * 1000;
export const MISS_TTL_MS = 24 * 3600 * 1000;

/** SQLite-backed cache; the file is created on first write or read. */
export function sqliteGeoCache(dataDir: string): GeoCache {
  type Db = import('better-sqlite3').Database;
  let db: Db | undefined;
  let getStmt: import('better-sqlite3').Statement<[string, number], { source: string; payload: string; stored_at: number }> | undefined;
  let putStmt: import('better-sqlite3').Statement<[string, string, string, number, number]> | undefined;
  const open = async (): Promise<void> => {
    if (db) return;
    const Database = (await import('better-sqlite3')).default;
    mkdirSync(dataDir, { recursive: true });
    db = new Database(join(dataDir, 'geocache.sqlite'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE IF NOT EXISTS geocache (key TEXT PRIMARY KEY, source TEXT NOT NULL, payload TEXT NOT NULL, stored_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)');
    getStmt = db.prepare('SELECT source, payload, stored_at FROM geocache WHERE key = ? AND expires_at > ?');
    putStmt = db.prepare('INSERT OR REPLACE INTO geocache (key, source, payload, stored_at, expires_at) VALUES (?, ?, ?, ?, ?)');
  };
  return {
    driver: 'sqlite',
    async get(key, now = Date.now()) {
      await open();
      const row = getStmt!.get(key, now);
      return row ? { source: row.source as CachedAnswer['source'], payload: JSON.parse(row.payload), stored_at: row.stored_at } : undefined;
    },
    async put(key, a, ttlMs) {
      await open();
      putStmt!.run(key, a.source, JSON.stringify(a.payload), a.stored_at, a.stored_at + ttlMs);
    },
    async close() {
      db?.close();
      db = undefined;
    },
  };
}

/** PostgreSQL-backed cache: one table `${prefix}_geocache` in the service database. */
export function postgresGeoCache(databaseUrl: string, prefix = 'svc'): GeoCache {
  const table = `${prefix.replace(/[^a-z0-9_]/g, '_')}_geocache`;
  let pool: import('pg').Pool | undefined;
  let ready: Promise<void> | undefined;
  const init = (): Promise<void> => {
    ready ??= (async () => {
      const pg = (await import('pg')).default;
      // Small and lazy: the cache is a side table, never the hot path of the store.
      pool = new pg.Pool({ connectionString: databaseUrl, max: 2, idleTimeoutMillis: 10_000, allowExitOnIdle: true });
      pool.on('error', () => {});
      await pool.query(`CREATE TABLE IF NOT EXISTS ${table} (key TEXT PRIMARY KEY, source TEXT NOT NULL, payload JSONB NOT NULL, stored_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)`);
    })();
    return ready;
  };
  return {
    driver: 'postgres',
    async get(key, now = Date.now()) {
      await init();
      const r = await pool!.query(`SELECT source, payload, stored_at FROM ${table} WHERE key = $1 AND expires_at > $2`, [key, now]);
      const row = r.rows[0];
      return row ? { source: row.source, payload: row.payload, stored_at: Number(row.stored_at) } : undefined;
    },
    async put(key, a, ttlMs) {
      await init();
      await pool!.query(
        `INSERT INTO ${table} (key, source, payload, stored_at, expires_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (key) DO UPDATE SET source = EXCLUDED.source, payload = EXCLUDED.payload, stored_at = EXCLUDED.stored_at, expires_at = EXCLUDED.expires_at`,
        [key, a.source, JSON.stringify(a.payload), a.stored_at, a.stored_at + ttlMs],
      );
    },
    async close() {
      await pool?.end();
      pool = undefined;
      ready = undefined;
    },
  };
}

/** In-process cache (tests, and when no data directory is wanted). */
export function memoryGeoCache(): GeoCache {
  const m = new Map<string, { a: CachedAnswer; expires: number }>();
  return {
    driver: 'memory',
    async get(key, now = Date.now()) {
      const e = m.get(key);
      return e && e.expires > now ? e.a : undefined;
    },
    async put(key, a, ttlMs) {
      m.set(key, { a, expires: a.stored_at + ttlMs });
    },
    async close() {
      m.clear();
    },
  };
}
