/**
 * The embedded driver's artifacts (contract.ts, ArtifactStore): a database file of its own,
 * `${dataDir}/artifacts.sqlite`, beside index.sqlite, documents.sqlite and transients.sqlite.
 * Not in index.sqlite (derived from the log and rebuilt from it) and not in documents.sqlite
 * (kept for good and written with a full sync per put): artifacts are derived data, bounded in
 * bytes and evicted, and each can be rebuilt from its signed derivation record, so this file is
 * written with `synchronous = NORMAL` (a crash keeps every committed put; a power cut may lose
 * the last ones, which are then rebuilt on their next resolve).
 *
 * Two tables: `artifacts` describes every artifact ever stored (media type, size, rebuild hint,
 * times; `evicted_at` once its bytes are gone) and `artifact_bytes` holds the bytes of the
 * stored ones, so eviction scans descriptions only and never pages through blobs.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { bytesCid } from '../../protocol/cid.js';
import { SvcError } from '../../protocol/errors.js';
import { ARTIFACT_MAX_BYTES_DEFAULT, ARTIFACT_TOUCH_MS, checkArtifactCid, checkArtifactPut, checkArtifactRange, evictionOrder, infoOf, type EvictionCandidate, type InfoRow } from '../artifacts.js';
import type { ArtifactBytes, ArtifactInfo, ArtifactStore, StoreConfig } from '../contract.js';
import { isDiskFull, storageFull } from '../disk-full.js';

export class SqliteArtifacts implements ArtifactStore {
  private readonly db: Database.Database;
  private readonly s: Record<'describe' | 'insertMeta' | 'restore' | 'insertBytes' | 'total' | 'candidates' | 'dropBytes' | 'markEvicted' | 'whole' | 'part' | 'touch' | 'count', Database.Statement>;
  private readonly putTx: (cid: string, mediaType: string, bytes: Uint8Array, rebuild: string | null, now: number) => { stored: boolean; evicted: string[] };

  readonly maxBytes: number;

  constructor(
    config: Pick<StoreConfig, 'dataDir' | 'artifactMaxBytes'>,
    private readonly now: () => Date,
  ) {
    this.maxBytes = config.artifactMaxBytes ?? ARTIFACT_MAX_BYTES_DEFAULT;
    this.db = new Database(join(config.dataDir, 'artifacts.sqlite'));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS artifacts (
      cid        TEXT PRIMARY KEY,
      media_type TEXT NOT NULL,
      size       INTEGER NOT NULL,
      rebuild    TEXT,
      stored_at  INTEGER NOT NULL,
      used_at    INTEGER NOT NULL,
      evicted_at INTEGER
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS artifact_bytes (
      cid   TEXT PRIMARY KEY,
      bytes BLOB NOT NULL
    );`);
    const p = (sql: string) => this.db.prepare(sql);
    this.s = {
      describe: p('SELECT cid, media_type, size, rebuild, stored_at, evicted_at FROM artifacts WHERE cid = ?'),
      insertMeta: p('INSERT INTO artifacts (cid, media_type, size, rebuild, stored_at, used_at, evicted_at) VALUES (?, ?, ?, ?, ?, ?, NULL)'),
      // An evicted artifact put again (a rebuild) is stored anew; a missing rebuild hint is filled in.
      restore: p('UPDATE artifacts SET stored_at = ?, used_at = ?, evicted_at = NULL, rebuild = coalesce(rebuild, ?) WHERE cid = ?'),
      insertBytes: p('INSERT INTO artifact_bytes (cid, bytes) VALUES (?, ?)'),
      total: p('SELECT coalesce(sum(size), 0) FROM artifacts WHERE evicted_at IS NULL').pluck(),
      candidates: p('SELECT cid, size, used_at, stored_at FROM artifacts WHERE evicted_at IS NULL'),
      dropBytes: p('DELETE FROM artifact_bytes WHERE cid = ?'),
      markEvicted: p('UPDATE artifacts SET evicted_at = ? WHERE cid = ? AND evicted_at IS NULL'),
      whole: p('SELECT a.media_type, a.size, b.bytes FROM artifacts a JOIN artifact_bytes b ON b.cid = a.cid WHERE a.cid = ? AND a.evicted_at IS NULL'),
      part: p('SELECT a.media_type, a.size, substr(b.bytes, ?, ?) AS bytes FROM artifacts a JOIN artifact_bytes b ON b.cid = a.cid WHERE a.cid = ? AND a.evicted_at IS NULL'),
      touch: p('UPDATE artifacts SET used_at = ? WHERE cid = ? AND used_at <= ? AND evicted_at IS NULL'),
      count: p('SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM artifacts WHERE evicted_at IS NULL'),
    };
    const tx = this.db.transaction((cid: string, mediaType: string, bytes: Uint8Array, rebuild: string | null, now: number) => {
      const row = this.s.describe.get(cid) as InfoRow | undefined;
      if (row && row.evicted_at === null) return { stored: false, evicted: [] };
      if (row) this.s.restore.run(now, now, rebuild, cid);
      else this.s.insertMeta.run(cid, mediaType, bytes.length, rebuild, now, now);
      this.s.insertBytes.run(cid, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      let evicted: string[] = [];
      if ((this.s.total.get() as number) > this.maxBytes) {
        evicted = evictionOrder(this.s.candidates.all() as EvictionCandidate[], cid, this.maxBytes);
        for (const e of evicted) {
          this.s.dropBytes.run(e);
          this.s.markEvicted.run(now, e);
        }
      }
      return { stored: true, evicted };
    });
    // BEGIN IMMEDIATE: the size check and the eviction see no other writer's put half done.
    this.putTx = (...a) => tx.immediate(...a);
  }

  private fault(what: string, err: unknown): never {
    if (isDiskFull(err)) throw storageFull('artifacts', err); // nothing stored: the caller may retry
    throw new SvcError('internal', `artifacts.${what}: ${(err as Error).message}`, {}, { cause: err });
  }

  async put(mediaType: string, bytes: Uint8Array, rebuild: string | null = null): Promise<{ cid: string; stored: boolean; evicted: string[] }> {
    checkArtifactPut(mediaType, bytes, rebuild);
    const cid = bytesCid(bytes);
    try {
      return { cid, ...this.putTx(cid, mediaType, bytes, rebuild, this.now().getTime()) };
    } catch (err) {
      this.fault('put', err);
    }
  }

  async read(cid: string, range?: { start: number; end: number }): Promise<ArtifactBytes | null> {
    checkArtifactCid(cid);
    checkArtifactRange(range);
    try {
      const row = (range ? this.s.part.get(range.start + 1, range.end - range.start + 1, cid) : this.s.whole.get(cid)) as { media_type: string; size: number; bytes: Buffer } | undefined;
      if (!row) return null;
      const now = this.now().getTime();
      this.s.touch.run(now, cid, now - ARTIFACT_TOUCH_MS);
      return { media_type: row.media_type, size: row.size, bytes: new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength) };
    } catch (err) {
      this.fault('read', err);
    }
  }

  async info(cid: string): Promise<ArtifactInfo | null> {
    checkArtifactCid(cid);
    try {
      const row = this.s.describe.get(cid) as InfoRow | undefined;
      return row ? infoOf(row) : null;
    } catch (err) {
      this.fault('info', err);
    }
  }

  async evict(cid: string): Promise<boolean> {
    checkArtifactCid(cid);
    try {
      return this.db.transaction(() => {
        const changed = this.s.markEvicted.run(this.now().getTime(), cid).changes === 1;
        if (changed) this.s.dropBytes.run(cid);
        return changed;
      })();
    } catch (err) {
      this.fault('evict', err);
    }
  }

  async usage(): Promise<{ artifacts: number; bytes: number; max_bytes: number }> {
    try {
      const r = this.s.count.get() as { n: number; bytes: number };
      return { artifacts: r.n, bytes: r.bytes, max_bytes: this.maxBytes };
    } catch (err) {
      this.fault('usage', err);
    }
  }

  close(): void {
    this.db.close();
  }
}
