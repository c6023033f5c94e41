/**
 * The PostgreSQL driver's artifacts (contract.ts, ArtifactStore): two tables in the deployment's
 * schema, created with the others (schema.ts), so an artifact one responder stores every
 * responder of the schema serves, and an eviction by one is seen by all. `artifacts` describes
 * every artifact ever stored; `artifact_bytes` holds the bytes (bytea) of the stored ones.
 *
 * A put is one transaction holding a transaction-scoped advisory lock on the schema's artifact
 * key, so two responders putting at once evict in turn and the bound holds for the schema, not
 * per process. Reads take no lock; a read that loses a race with an eviction answers "not held".
 */
import type pg from 'pg';
import { utf8 } from '../../protocol/bytes.js';
import { bytesCid } from '../../protocol/cid.js';
import { blake3 } from '../../protocol/hash.js';
import { ARTIFACT_TOUCH_MS, checkArtifactCid, checkArtifactPut, checkArtifactRange, evictionOrder, infoOf, type InfoRow } from '../artifacts.js';
import type { ArtifactBytes, ArtifactInfo } from '../contract.js';
import { buf, int, rows } from './pg-db.js';
import type { Tables } from './tables.js';

/** The advisory-lock key of a schema's artifact puts: first 8 bytes of H("svc.pg.artifacts" ‖ 0 ‖ table), signed. */
function lockKey(table: string): string {
  const d = blake3(utf8(`svc.pg.artifacts\u0000${table}`));
  let x = 0n;
  for (let i = 0; i < 8; i++) x = (x << 8n) | BigInt(d[i]);
  return BigInt.asIntN(64, x).toString();
}

export class PgArtifacts {
  private readonly lock: string;

  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
    private readonly now: () => Date,
    readonly maxBytes: number,
  ) {
    this.lock = lockKey(t.artifacts);
  }

  async put(mediaType: string, bytes: Uint8Array, rebuild: string | null = null): Promise<{ cid: string; stored: boolean; evicted: string[] }> {
    checkArtifactPut(mediaType, bytes, rebuild);
    const cid = bytesCid(bytes);
    const now = this.now().getTime();
    const { artifacts: a, artifactBytes: b } = this.t;
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      await c.query('SELECT pg_advisory_xact_lock($1::bigint)', [this.lock]);
      const held = await rows<{ evicted_at: string | null }>(c, `SELECT evicted_at FROM ${a} WHERE cid = $1`, [cid]);
      if (held.length === 1 && held[0].evicted_at === null) {
        await c.query('COMMIT');
        return { cid, stored: false, evicted: [] };
      }
      if (held.length === 1) {
        await rows(c, `UPDATE ${a} SET stored_at = $2, used_at = $2, evicted_at = NULL, rebuild = coalesce(rebuild, $3) WHERE cid = $1`, [cid, now, rebuild]);
      } else {
        await rows(c, `INSERT INTO ${a} (cid, media_type, size, rebuild, stored_at, used_at, evicted_at) VALUES ($1, $2, $3, $4, $5, $5, NULL)`, [cid, mediaType, bytes.length, rebuild, now]);
      }
      await rows(c, `INSERT INTO ${b} (cid, bytes) VALUES ($1, $2) ON CONFLICT (cid) DO UPDATE SET bytes = EXCLUDED.bytes`, [cid, buf(bytes)]);
      let evicted: string[] = [];
      const [{ total }] = await rows<{ total: string }>(c, `SELECT coalesce(sum(size), 0) AS total FROM ${a} WHERE evicted_at IS NULL`);
      if (int(total) > this.maxBytes) {
        const cands = await rows<{ cid: string; size: string; used_at: string; stored_at: string }>(c, `SELECT cid, size, used_at, stored_at FROM ${a} WHERE evicted_at IS NULL`);
        evicted = evictionOrder(
          cands.map((r) => ({ cid: r.cid, size: int(r.size), used_at: int(r.used_at), stored_at: int(r.stored_at) })),
          cid,
          this.maxBytes,
        );
        if (evicted.length > 0) {
          await rows(c, `DELETE FROM ${b} WHERE cid = ANY($1::text[])`, [evicted]);
          await rows(c, `UPDATE ${a} SET evicted_at = $2 WHERE cid = ANY($1::text[])`, [evicted, now]);
        }
      }
      await c.query('COMMIT');
      return { cid, stored: true, evicted };
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }

  async read(cid: string, range?: { start: number; end: number }): Promise<ArtifactBytes | null> {
    checkArtifactCid(cid);
    checkArtifactRange(range);
    const { artifacts: a, artifactBytes: b } = this.t;
    const part = range ? 'substring(b.bytes from $2::int for $3::int)' : 'b.bytes';
    const args = range ? [cid, range.start + 1, range.end - range.start + 1] : [cid];
    const got = await rows<{ media_type: string; size: string; bytes: Buffer; used_at: string }>(
      this.pool,
      `SELECT a.media_type, a.size, a.used_at, ${part} AS bytes FROM ${a} a JOIN ${b} b ON b.cid = a.cid WHERE a.cid = $1 AND a.evicted_at IS NULL`,
      args,
    );
    if (got.length === 0) return null;
    const r = got[0];
    const now = this.now().getTime();
    // A read refreshes the last use at most once per ARTIFACT_TOUCH_MS (a row update each time).
    if (int(r.used_at) <= now - ARTIFACT_TOUCH_MS) await rows(this.pool, `UPDATE ${a} SET used_at = $2 WHERE cid = $1 AND used_at < $2`, [cid, now]);
    return { media_type: r.media_type, size: int(r.size), bytes: new Uint8Array(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength) };
  }

  async info(cid: string): Promise<ArtifactInfo | null> {
    checkArtifactCid(cid);
    const got = await rows<InfoRow>(this.pool, `SELECT cid, media_type, size, rebuild, stored_at, evicted_at FROM ${this.t.artifacts} WHERE cid = $1`, [cid]);
    return got.length === 1 ? infoOf(got[0]) : null;
  }

  async evict(cid: string): Promise<boolean> {
    checkArtifactCid(cid);
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      await c.query('SELECT pg_advisory_xact_lock($1::bigint)', [this.lock]);
      const got = await rows(c, `UPDATE ${this.t.artifacts} SET evicted_at = $2 WHERE cid = $1 AND evicted_at IS NULL RETURNING 1 AS ok`, [cid, this.now().getTime()]);
      if (got.length === 1) await rows(c, `DELETE FROM ${this.t.artifactBytes} WHERE cid = $1`, [cid]);
      await c.query('COMMIT');
      return got.length === 1;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }

  async usage(): Promise<{ artifacts: number; bytes: number; max_bytes: number }> {
    const [r] = await rows<{ n: string; bytes: string }>(this.pool, `SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM ${this.t.artifacts} WHERE evicted_at IS NULL`);
    return { artifacts: int(r.n), bytes: int(r.bytes), max_bytes: this.maxBytes };
  }
}
