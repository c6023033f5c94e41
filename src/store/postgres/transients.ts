/**
 * The PostgreSQL driver's short-lived state (contract.ts, TransientStore). One table shared by
 * every responder of the deployment: the primary key makes a single-use claim atomic across
 * processes, so a statement replayed at another responder is refused there too.
 */
import type pg from 'pg';
import { rows } from './pg-db.js';
import type { Tables } from './tables.js';

/** Expired rows removed per write: pruning is spread over writes, never one long delete. */
const PRUNE_BATCH = 64;

export class PgTransients {
  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
    private readonly now: () => Date,
  ) {}

  private async prune(now: number): Promise<void> {
    await rows(this.pool, `DELETE FROM ${this.t.transients} WHERE (ns, key) IN (SELECT ns, key FROM ${this.t.transients} WHERE expires_at <= $1 LIMIT ${PRUNE_BATCH})`, [now]);
  }

  /** Insert, or take over a row whose time is up; no row back only for a live duplicate. */
  async claimOnce(ns: string, key: string, expiresAtMs: number): Promise<boolean> {
    const now = this.now().getTime();
    const got = await rows(
      this.pool,
      `INSERT INTO ${this.t.transients} AS t (ns, key, value, expires_at) VALUES ($1, $2, NULL, $3)
      ON CONFLICT (ns, key) DO UPDATE SET value = NULL, expires_at = EXCLUDED.expires_at WHERE t.expires_at <= $4 RETURNING 1 AS ok`,
      [ns, key, Math.ceil(expiresAtMs), now],
    );
    await this.prune(now);
    return got.length === 1;
  }

  async put(ns: string, key: string, value: string, expiresAtMs: number): Promise<void> {
    const now = this.now().getTime();
    await rows(
      this.pool,
      `INSERT INTO ${this.t.transients} (ns, key, value, expires_at) VALUES ($1, $2, $3, $4)
      ON CONFLICT (ns, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
      [ns, key, value, Math.ceil(expiresAtMs)],
    );
    await this.prune(now);
  }

  async get(ns: string, key: string): Promise<string | null> {
    const got = await rows<{ value: string | null }>(this.pool, `SELECT value FROM ${this.t.transients} WHERE ns = $1 AND key = $2 AND expires_at > $3`, [ns, key, this.now().getTime()]);
    return got[0]?.value ?? null;
  }
}
