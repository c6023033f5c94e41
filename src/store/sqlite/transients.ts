/**
 * The embedded driver's short-lived state (contract.ts, TransientStore): a database file of its
 * own beside index.sqlite. It is not derived from the log, so it must not share the index's
 * deferred transaction (which commits up to 200 ms after an apply): a single-use claim has to be
 * durable before the caller acts on it, and here each call commits on its own, synchronously.
 *
 * Two connections to the one file: claims commit with `synchronous = FULL` (synced to the disk:
 * a replay is refused even after a power cut), plain values (kept answer steps) with `NORMAL`
 * (in the WAL before the call resolves, so they survive a crash of the process; a power cut may
 * lose the last of them, and their tokens then answer not found). The sync is most of what a
 * kept step costs (about 0.5 ms of a warm ask on the development disk; docs/performance.md).
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { SvcError } from '../../protocol/errors.js';
import type { TransientStore } from '../contract.js';
import { isDiskFull, storageFull } from '../disk-full.js';
import { startCheckpointer, type Checkpointer } from './checkpointer.js';

/** Expired rows removed per write: pruning is spread over writes, never one long delete. */
const PRUNE_BATCH = 64;

export class SqliteTransients implements TransientStore {
  private readonly db: Database.Database;
  /** The same file with `synchronous = NORMAL`, for values that need not survive a power cut. */
  private readonly relaxed: Database.Database;
  private readonly checkpoints: Checkpointer;
  private readonly claim: Database.Statement<[string, string, string | null, number, number], unknown>;
  private readonly upsert: Database.Statement<[string, string, string, number], unknown>;
  private readonly read: Database.Statement<[string, string, number], string | null>;
  private readonly prune: Database.Statement<[number], unknown>;

  constructor(
    dataDir: string,
    private readonly now: () => Date,
  ) {
    const path = join(dataDir, 'transients.sqlite');
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    // A claim is acted on as soon as it returns: it must survive a power cut, not only a crash.
    this.db.pragma('synchronous = FULL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS transients (
      ns         TEXT NOT NULL,
      key        TEXT NOT NULL,
      value      TEXT,
      expires_at INTEGER NOT NULL,
      PRIMARY KEY (ns, key)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS transients_expiry ON transients (expires_at);`);
    // Insert, or take over a row whose time is up; `changes` is 0 only for a live duplicate.
    this.claim = this.db.prepare(`INSERT INTO transients (ns, key, value, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at WHERE transients.expires_at <= ?`);
    this.relaxed = new Database(path);
    this.relaxed.pragma('synchronous = NORMAL');
    // Checkpoints run on a thread of their own (checkpointer.ts), not inside a request's commit.
    this.db.pragma('wal_autocheckpoint = 0');
    this.relaxed.pragma('wal_autocheckpoint = 0');
    this.checkpoints = startCheckpointer(path);
    this.upsert = this.relaxed.prepare(`INSERT INTO transients (ns, key, value, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`);
    this.read = this.db.prepare(`SELECT value FROM transients WHERE ns = ? AND key = ? AND expires_at > ?`).pluck() as Database.Statement<[string, string, number], string | null>;
    this.prune = this.db.prepare(`DELETE FROM transients WHERE (ns, key) IN (SELECT ns, key FROM transients WHERE expires_at <= ? LIMIT ${PRUNE_BATCH})`);
  }

  private write<T>(what: string, fn: (now: number) => T): T {
    const now = this.now().getTime();
    try {
      const out = fn(now);
      this.prune.run(now);
      return out;
    } catch (err) {
      if (isDiskFull(err)) throw storageFull('transients', err);
      throw new SvcError('internal', `transients.${what}: ${(err as Error).message}`, {}, { cause: err });
    }
  }

  async claimOnce(ns: string, key: string, expiresAtMs: number): Promise<boolean> {
    return this.write('claimOnce', (now) => this.claim.run(ns, key, null, Math.ceil(expiresAtMs), now).changes === 1);
  }

  async put(ns: string, key: string, value: string, expiresAtMs: number): Promise<void> {
    this.write('put', () => this.upsert.run(ns, key, value, Math.ceil(expiresAtMs)));
  }

  async get(ns: string, key: string): Promise<string | null> {
    return this.read.get(ns, key, this.now().getTime()) ?? null;
  }

  /** The checkpoint thread stops first, so this process's last connection is the one that closes the WAL. */
  async close(): Promise<void> {
    await this.checkpoints.stop();
    this.relaxed.close();
    this.db.close();
  }
}
