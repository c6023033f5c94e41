/**
 * The embedded driver's geocoder cache (geo/geocache.ts, GeoCache): its own database file,
 * `${dataDir}/geocache.sqlite`, as before the cache moved under the store, so the answers a
 * data directory already holds stay usable. A file apart from index.sqlite (derived from the
 * log, rebuilt by deleting it) and from documents.sqlite (kept for good, every commit synced):
 * a cache entry lost to a power cut is only asked again, so commits here are not synced
 * (`synchronous = NORMAL`). Opened on first use: a responder that never geocodes makes no file.
 * Expired rows are removed a few at a time as answers are written, by the writer's clock.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CachedAnswer, GeoCache } from '../../geo/geocache.js';

/** Expired rows removed per write: pruning is spread over writes, never one long delete. */
const PRUNE_BATCH = 32;

interface Opened {
  db: Database.Database;
  get: Database.Statement<[string, number], { source: string; payload: string; stored_at: number }>;
  put: Database.Statement<[string, string, string, number, number], unknown>;
  prune: Database.Statement<[number], unknown>;
}

export class SqliteGeoCache implements GeoCache {
  readonly driver = 'sqlite' as const;
  private opened: Opened | undefined;
  private closed = false;

  constructor(private readonly dataDir: string) {}

  private open(): Opened {
    if (this.closed) throw new Error('geocache: the store is closed');
    if (this.opened) return this.opened;
    mkdirSync(this.dataDir, { recursive: true });
    const db = new Database(join(this.dataDir, 'geocache.sqlite'));
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec(`CREATE TABLE IF NOT EXISTS geocache (key TEXT PRIMARY KEY, source TEXT NOT NULL, payload TEXT NOT NULL, stored_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
        CREATE INDEX IF NOT EXISTS geocache_expiry ON geocache (expires_at);`);
      this.opened = {
        db,
        get: db.prepare('SELECT source, payload, stored_at FROM geocache WHERE key = ? AND expires_at > ?'),
        put: db.prepare('INSERT OR REPLACE INTO geocache (key, source, payload, stored_at, expires_at) VALUES (?, ?, ?, ?, ?)'),
        prune: db.prepare(`DELETE FROM geocache WHERE key IN (SELECT key FROM geocache WHERE expires_at <= ? LIMIT ${PRUNE_BATCH})`),
      };
    } catch (err) {
      db.close();
      throw err;
    }
    return this.opened;
  }

  async get(key: string, now = Date.now()): Promise<CachedAnswer | undefined> {
    const row = this.open().get.get(key, now);
    return row ? { source: row.source as CachedAnswer['source'], payload: JSON.parse(row.payload), stored_at: row.stored_at } : undefined;
  }

  async put(key: string, a: CachedAnswer, ttlMs: number): Promise<void> {
    const o = this.open();
    o.put.run(key, a.source, JSON.stringify(a.payload), a.stored_at, a.stored_at + ttlMs);
    o.prune.run(a.stored_at); // the writer's clock: never the row just written
  }

  close(): void {
    this.closed = true;
    this.opened?.db.close();
    this.opened = undefined;
  }
}
