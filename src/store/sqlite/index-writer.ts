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
 */
import type { Database, Statement } from 'better-sqlite3';
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
      throw err;
    }
    for (const e of items) this.facts += e.facts.length;
    if (this.facts >= COMMIT_FACTS) this.commit();
    else this.timer ??= setTimeout(() => this.commitLater(), COMMIT_MS).unref();
    return inserted;
  }

  /** Commit what is applied (before a non-derived write, at close, at the end of a replay chunk). */
  commit(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.facts = 0;
    if (!this.db.inTransaction) return;
    try {
      this.end.run();
    } catch (err) {
      if (this.db.inTransaction) this.rollback.run();
      this.q.resetCaches();
      throw err;
    }
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
