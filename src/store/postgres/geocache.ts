/**
 * The PostgreSQL driver's geocoder cache (geo/geocache.ts, GeoCache): table `geocache` in the
 * deployment's schema, created with the others (schema.ts) and read on the store's pool, so
 * every responder of the deployment shares the answers. Expired rows are removed a few at a
 * time as answers are written, by the writer's clock.
 */
import type pg from 'pg';
import type { CachedAnswer } from '../../geo/geocache.js';
import { int, rows } from './pg-db.js';
import type { Tables } from './tables.js';

/** Expired rows removed per write: pruning is spread over writes, never one long delete. */
const PRUNE_BATCH = 32;

export class PgGeoCache {
  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
  ) {}

  async get(key: string, now = Date.now()): Promise<CachedAnswer | undefined> {
    const got = await rows<{ source: CachedAnswer['source']; payload: unknown; stored_at: string }>(
      this.pool,
      `SELECT source, payload, stored_at FROM ${this.t.geocache} WHERE key = $1 AND expires_at > $2`,
      [key, now],
    );
    const row = got[0];
    return row ? { source: row.source, payload: row.payload, stored_at: int(row.stored_at) } : undefined;
  }

  async put(key: string, a: CachedAnswer, ttlMs: number): Promise<void> {
    await rows(
      this.pool,
      `INSERT INTO ${this.t.geocache} (key, source, payload, stored_at, expires_at) VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (key) DO UPDATE SET source = EXCLUDED.source, payload = EXCLUDED.payload, stored_at = EXCLUDED.stored_at, expires_at = EXCLUDED.expires_at`,
      [key, a.source, JSON.stringify(a.payload), a.stored_at, a.stored_at + ttlMs],
    );
    // The writer's clock: never the row just written (its expiry is after its stored_at).
    await rows(this.pool, `DELETE FROM ${this.t.geocache} WHERE key IN (SELECT key FROM ${this.t.geocache} WHERE expires_at <= $1 LIMIT ${PRUNE_BATCH})`, [a.stored_at]);
  }
}
