/**
 * Index writes with deferred commits. Every append is durable in the log before the index
 * sees it, and open replays whatever the index had not committed, so the index needs no
 * commit per append: applies run as savepoints inside one open transaction, which commits
 * `COMMIT_MS` after it began (or sooner, past `COMMIT_FACTS` facts, before a write the log
 * cannot rebuild, and at close). Readers share the connection, so they see every applied fact
 * at once. What a commit costs is the pages it rewrites, and with randomly keyed indexes that
 * is close to one page per fact per index whatever the transaction's size; a commit every
 * few milliseconds (group commit of single-fact appends) paid it again and again for the same
 * pages.
 *
 * Commits come after the acknowledgements, so a commit must never lose what it held: on a full
 * disk SQLite answers COMMIT with SQLITE_FULL and rolls the whole transaction back. The writer
 * keeps the entries applied since the last commit and applies them again at once, in a fresh
 * transaction held in memory (cache spill off, so no page goes to the full WAL), before any
 * reader can run; readers never see an acknowledged fact disappear, and the caller retries the
 * commit until the disk takes it (sqlite-store.ts).
 */
import type { Database, Statement } from 'better-sqlite3';
import { diskFaults, isDiskFull } from '../disk-full.js';
import type { IndexedEntry } from './indexed-entry.js';
import type { Queries } from './queries.js';

/** Longest an applied entry waits for its index commit. */
const COMMIT_MS = 200;
/** Facts per transaction beyond which it commits at once (bounds the WAL of bulk loads). */
const COMMIT_FACTS = 1 << 17;

export class IndexWriter {
  private timer: NodeJS.Timeout | undefined;
  private facts = 0;
  private readonly begin: Statement;
  private readonly end: Statement;
  private readonly rollback: Statement;
  /** What the open transaction holds: applied again if SQLite rolls it back on a full disk. */
  private uncommitted: Array<{ items: IndexedEntry[]; newSize: number }> = [];
  /** True while cache spill is off (restored transactions stay in memory until they commit). */
  private spillOff = false;
  /** Set when a rolled-back transaction could not be applied again (see takeLost). */
  private lost = false;
  /** Insert entries and set the watermark: a savepoint inside the open transaction. */
  private readonly txn: (items: IndexedEntry[], newSize: number) => boolean[][];

  constructor(
    private readonly db: Database,
    private readonly q: Queries,
    appliedKey: string,
    /** Called when a deferred commit fails (the applies it held are lost until a reopen replays them). */
    private readonly onCommitError: (err: unknown) => void,
  ) {
    this.begin = db.prepare('BEGIN');
    this.end = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.txn = db.transaction((items: IndexedEntry[], newSize: number) => {
      const inserted = q.insertEntries(items);
      q.setMeta.run(appliedKey, String(newSize));
      return inserted;
    });
  }

  /**
   * Apply entries (their trees, facts and the applied watermark `newSize`) all or nothing.
   * Returns, per entry, which facts were new.
   */
  apply(items: IndexedEntry[], newSize: number): boolean[][] {
    if (!this.db.inTransaction) this.begin.run();
    let inserted: boolean[][];
    try {
      inserted = this.txn(items, newSize);
    } catch (err) {
      this.q.resetCaches(); // rolled back to the savepoint: ids it interned do not exist
      if (isDiskFull(err)) this.restore(); // SQLite may have rolled back the whole transaction
      throw err;
    }
    this.uncommitted.push({ items, newSize });
    for (const e of items) this.facts += e.facts.length;
    if (this.facts >= COMMIT_FACTS) {
      try {
        this.commit();
      } catch (err) {
        // Out of space the applies are held again (these included): report it, do not fail them.
        if (!isDiskFull(err)) throw err;
        this.onCommitError(err);
      }
    } else {
      this.timer ??= setTimeout(() => this.commitLater(), COMMIT_MS).unref();
    }
    return inserted;
  }

  /** Commit what is applied (before a non-derived write, at close, at the end of a replay chunk). */
  commit(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.db.inTransaction) {
      try {
        diskFaults.hook?.('index.commit', this.db);
        this.end.run();
      } catch (err) {
        if (isDiskFull(err)) {
          // The transaction stays (or is applied again): the caller retries the commit.
          if (!this.db.inTransaction) {
            this.q.resetCaches();
            this.restore();
          }
          throw err;
        }
        if (this.db.inTransaction) this.rollback.run();
        this.q.resetCaches();
        this.uncommitted = [];
        this.facts = 0;
        throw err;
      }
    }
    this.uncommitted = [];
    this.facts = 0;
    if (this.spillOff) {
      this.db.pragma('cache_spill = true');
      this.spillOff = false;
    }
  }

  /** Apply again, in memory, what a rolled-back transaction held. */
  private restore(): void {
    if (this.db.inTransaction || this.uncommitted.length === 0) return;
    if (!this.spillOff) {
      this.db.pragma('cache_spill = false');
      this.spillOff = true;
    }
    try {
      this.begin.run();
      for (const u of this.uncommitted) this.txn(u.items, u.newSize);
    } catch {
      if (this.db.inTransaction) this.rollback.run();
      this.q.resetCaches();
      this.uncommitted = [];
      this.facts = 0;
      this.lost = true;
    }
  }

  /**
   * True (once) when a transaction rolled back by a full disk could not be applied again: the
   * index then reflects only its committed watermark, and the caller replays the log from there.
   */
  takeLost(): boolean {
    const lost = this.lost;
    this.lost = false;
    return lost;
  }

  private commitLater(): void {
    this.timer = undefined;
    if (!this.db.open) return;
    try {
      this.commit();
    } catch (err) {
      this.onCommitError(err);
    }
  }
}
