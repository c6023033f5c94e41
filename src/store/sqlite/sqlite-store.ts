/**
 * Embedded driver: the transparency log (an `AppendOnlyLog`) is the durable record, and a
 * better-sqlite3 database at `${dataDir}/index.sqlite` indexes it. Life of a fact: append
 * validates the batch, writes one LogEntryV1 to the log (resolves after fsync), then applies
 * the entry to the index all or nothing, in log order (the commit that follows is deferred:
 * index-writer.ts). On open, every log entry the index has not committed is replayed, so a
 * crash between fsync and commit, or a deleted index, heals.
 *
 * A full disk (the log's ENOSPC or SQLite's SQLITE_FULL) is not a fault: writes are refused with
 * `storage_full` while it lasts, every acknowledged fact stays readable (index-writer.ts keeps
 * uncommitted applies in memory), and a timer retries the commit every second, then applies the
 * entries the log took meanwhile, after which writes are taken again, without a reopen.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SvcError } from '../../protocol/errors.js';
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import { FullState, isDiskFull, type StorageHealth } from '../disk-full.js';
import type { AppendBatch, AppendOnlyLog, AppendResult, CorpusStats, FactQuery, LogEntryV1, LogReader, Store, StoreConfig, StoredFact, WitnessRecord } from '../contract.js';
import { decodeLogEntry } from '../entry.js';
import { batchEntry, cidDigest, claimedDigests } from './batch-entry.js';
import { FactRows } from './fact-rows.js';
import { IndexWriter } from './index-writer.js';
import { indexLoggedEntry, type IndexedEntry } from './indexed-entry.js';
import type { MemoryReader } from '../memory.js';
import { MemoryIndexSqlite } from './memory-queries.js';
import { internal, Queries } from './queries.js';
import { SqliteTransients } from './transients.js';
import { SqliteDocuments } from './documents.js';
import { SqliteGeoCache } from './geocache.js';
import { SqliteArtifacts } from './artifacts.js';
import { claimScopeOwner, writeAlone } from './outside-log.js';
import { migrate, unpackAcceptedAt } from './schema.js';
import { readerOf } from '../log-reader.js';

/** Driver options that are not deployment configuration (tests and tools set them). */
export interface SqliteStoreOptions {
  /** Clock for accepted_at (tests step it to exercise transaction-time reads). */
  now?: () => Date;
  /** Receives the one-line open summary and fault reports; default: stderr. */
  logger?: (line: string) => void;
}

const APPLIED_KEY = 'applied_log_size';
const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;
/** Entries per transaction when appends complete together (group commit). */
const DRAIN_MAX = 1024;
/** Entries per transaction while replaying: large enough to amortise commits, small enough to yield. */
const REPLAY_CHUNK = 512;
/** While the disk is full, the index retries its commit this often. */
const FULL_RETRY_MS = 1000;

interface PendingApply {
  entry: IndexedEntry;
  resolve: (inserted: boolean[]) => void;
  reject: (err: unknown) => void;
}

class SqliteStore implements Store {
  readonly driver = 'sqlite' as const;
  readonly log: LogReader;
  /** The agent-memory index (memory-queries.ts), read on the store's connection. */
  readonly memory: MemoryReader;
  private readonly pending = new Map<number, PendingApply>();
  private readonly inflight = new Set<Promise<unknown>>();
  private gapTimer: NodeJS.Timeout | undefined;
  private drainScheduled = false;
  /** Insert results of entries fillGap applied, for an append whose continuation comes late. */
  private readonly appliedFromLog = new Map<number, boolean[]>();
  private broken: SvcError | undefined;
  /** Set while the index cannot commit for want of space: writes are refused meanwhile. */
  private readonly space = new FullState('index');
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private closing = false;
  private statsAt: { applied: number; counts: { facts: number; cells: number; subjects: number; bands: number } } | undefined;
  private readonly rows: FactRows;

  constructor(
    private readonly db: Database.Database,
    private readonly q: Queries,
    private readonly appendLog: AppendOnlyLog,
    /** Log size the index reflects: entries below it are applied, in order. */
    private nextApply: number,
    private readonly now: () => Date,
    private readonly logger: (line: string) => void,
    private readonly scanCellLimit: number,
    readonly transients: SqliteTransients,
    readonly documents: SqliteDocuments,
    readonly geocache: SqliteGeoCache,
    readonly artifacts: SqliteArtifacts,
  ) {
    this.log = readerOf(appendLog);
    this.rows = new FactRows(q, appendLog);
    this.writer = new IndexWriter(db, q, APPLIED_KEY, (err) => this.commitFailed(err));
    const mem = new MemoryIndexSqlite(q);
    const names = ['searchNotes', 'noteCandidates', 'notesAt', 'noteStats', 'noteNeighbours', 'edges', 'aliases', 'derivedBy', 'sharedSlots'] as const;
    // Each read through memoryRead (an open store; database faults typed), same arguments.
    this.memory = Object.fromEntries(names.map((k) => [k, (x: never) => this.memoryRead(k, () => (mem[k] as (a: never) => Promise<unknown>).call(mem, x))])) as unknown as MemoryReader;
  }

  /** A memory read on an open store; a database failure is the contract's internal fault, a bad argument stays what it is. */
  private async memoryRead<T>(what: string, read: () => Promise<T>): Promise<T> {
    this.assertOpen();
    try {
      return await read();
    } catch (err) {
      if (err instanceof SvcError || err instanceof TypeError || err instanceof RangeError) throw err;
      throw internal(`memory.${what}`, err);
    }
  }

  /**
   * A failed commit: on a full disk the writer still holds the applies (refuse writes until a
   * retry commits them); otherwise they are lost until a reopen replays them from the log.
   */
  private commitFailed(err: unknown): SvcError {
    if (isDiskFull(err)) return this.enterFull(err);
    this.broken ??= internal('committing the index failed (the log has every acknowledged entry; reopen the store to replay them)', err);
    this.logger(this.broken.message);
    return this.broken;
  }

  /** Refuse writes with storage_full, fail what waits to be applied, and retry in a while. */
  private enterFull(err: unknown): SvcError {
    const first = this.space.error === undefined;
    const refusal = this.space.fail(err);
    if (first) this.logger(`sqlite store: ${refusal.message} (${(err as Error)?.message ?? String(err)}); retrying every ${FULL_RETRY_MS} ms`);
    // Not acknowledged: their entries are in the log and are applied once space is back.
    for (const [, p] of this.pending) p.reject(refusal);
    this.pending.clear();
    this.retryTimer ??= setTimeout(() => void this.retryFull(), FULL_RETRY_MS).unref();
    return refusal;
  }

  /** Commit what the index holds, apply what the log took meanwhile, then take writes again. */
  private async retryFull(): Promise<void> {
    this.retryTimer = undefined;
    if (this.closed || this.closing || this.broken || !this.space.error) return;
    try {
      // Only when SQLite dropped a transaction the writer could not apply again: replay from the
      // committed watermark (those facts were unreadable meanwhile; see takeLost).
      if (this.writer.takeLost()) this.nextApply = Number(this.q.meta(APPLIED_KEY) ?? '0');
      this.writer.commit();
      const size = await this.appendLog.size();
      if (this.nextApply < size) await this.replay(this.nextApply, size);
      this.space.clear();
      this.logger('sqlite store: the index commits again; taking writes');
    } catch (err) {
      if (isDiskFull(err)) this.enterFull(err);
      else this.fail(this.nextApply, err);
    }
  }

  /** Whether the log or the index is out of space (GET /health). */
  storageHealth(): StorageHealth {
    if (this.space.error) return this.space.health();
    const log = this.appendLog as Partial<{ storageHealth(): StorageHealth }>;
    return typeof log.storageHealth === 'function' ? log.storageHealth() : { status: 'ok' };
  }

  /** Applies entries (trees, facts, watermark) all or nothing; commits are deferred (index-writer.ts). */
  private readonly writer: IndexWriter;

  private applyTxn(items: IndexedEntry[], newSize: number): boolean[][] {
    return this.writer.apply(items, newSize);
  }

  private assertOpen(): void {
    if (this.closed) throw new SvcError('internal', 'sqlite store: closed');
  }

  async publicFactsByAttester(): Promise<Array<{ attester: string; facts: number }>> {
    this.assertOpen();
    try {
      return this.q.publicByAttester.all();
    } catch (err) {
      throw internal('publicFactsByAttester', err);
    }
  }

  async attesterFactsOn(attester: string, day: string): Promise<number> {
    this.assertOpen();
    if (typeof attester !== 'string') throw new TypeError('attester: expected a string');
    if (!DAY_RE.test(day)) throw new RangeError('day: expected YYYY-MM-DD');
    try {
      return this.q.dayFacts.get(attester, Number(day.replace(/-/g, ''))) ?? 0;
    } catch (err) {
      throw internal('attesterFactsOn', err);
    }
  }

  async append(batch: AppendBatch): Promise<AppendResult> {
    if (this.closing) throw new SvcError('internal', 'sqlite store: closing');
    if (this.broken) throw this.broken;
    if (this.space.error) throw this.space.error;
    const p = this.appendInner(batch);
    this.inflight.add(p);
    try {
      return await p;
    } finally {
      this.inflight.delete(p);
    }
  }

  private async appendInner(batch: AppendBatch): Promise<AppendResult> {
    if (!batch || !Array.isArray(batch.facts) || batch.facts.length === 0) {
      throw new SvcError('invalid_argument', 'facts: expected a non-empty array', { field: 'facts' });
    }
    const claimed = claimedDigests(batch);
    // Only a batch of nothing but indexed facts skips the log, so facts are looked up only until
    // one is new. Duplicates otherwise come from the apply, which reports both kinds (already
    // indexed, or repeated earlier in this batch) in fact order, as the lookup did.
    if (claimed.every((d) => d !== null && this.q.factId(d) !== undefined)) {
      const first = this.q.placement.get(this.q.factId(claimed[0]!)!)!;
      const duplicates = [...new Set(batch.facts.map((f) => f.fact_cid))];
      return { log_index: first.log_index, accepted_at: unpackAcceptedAt(first.accepted_at), tree_size: await this.appendLog.size(), duplicates };
    }

    const { entry, encoded, indexed } = batchEntry(batch, claimed, isoSeconds(this.now()));

    const index = await this.appendLog.append(encoded.bytes); // durable from here on
    indexed.logIndex = index;
    // The index stopped taking entries meanwhile: this one is applied from the log once it does.
    if (this.space.error && index >= this.nextApply) throw this.space.error;
    let inserted: boolean[];
    if (index < this.nextApply) {
      // fillGap already applied it from the log (this continuation came late). A fact was new
      // in this entry when its row is the one this entry placed.
      inserted =
        this.appliedFromLog.get(index) ??
        indexed.facts.map((x) => {
          const id = this.q.factId(x.digest);
          const at = id === undefined ? undefined : this.q.placement.get(id);
          return at !== undefined && at.log_index === index && at.position === x.position;
        });
      this.appliedFromLog.delete(index);
    } else {
      inserted = await new Promise<boolean[]>((resolve, reject) => {
        this.pending.set(index, { entry: indexed, resolve, reject });
        this.scheduleDrain();
      });
    }
    const duplicates = new Set<string>();
    inserted.forEach((ok, i) => {
      if (!ok) duplicates.add(batch.facts[i].fact_cid);
    });
    return { log_index: index, accepted_at: entry.accepted_at, tree_size: index + 1, duplicates: [...duplicates] };
  }

  /**
   * Apply pending entries in log order, so supersedes edges are the same as on a replay.
   * Deferred to a macrotask: a group commit resolves many appends at once, and their
   * continuations all land in `pending` first, so they share one SQLite transaction.
   */
  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    while (!this.broken && !this.space.error && this.pending.has(this.nextApply)) {
      const first = this.nextApply;
      const run: PendingApply[] = [];
      for (let p = this.pending.get(first); p !== undefined && run.length < DRAIN_MAX; p = this.pending.get(first + run.length)) run.push(p);
      run.forEach((_, k) => this.pending.delete(first + k));
      try {
        const inserted = this.applyTxn(
          run.map((p) => p.entry),
          first + run.length,
        );
        this.nextApply = first + run.length;
        for (const p of run) this.q.trees.keep(p.entry.logIndex, p.entry.attester, p.entry.tree);
        run.forEach((p, k) => p.resolve(inserted[k]));
      } catch (err) {
        this.fail(first, err);
        for (const p of run) p.reject(this.space.error ?? this.broken);
      }
    }
    if (this.pending.size > 0 && this.gapTimer === undefined && !this.broken && !this.space.error) {
      // An index below a pending one has not come through append() yet. Normally its
      // continuation is a moment away; if it never comes (an entry appended to the log by
      // someone else), read it from the log.
      this.gapTimer = setTimeout(() => {
        this.gapTimer = undefined;
        this.fillGap().catch((err) => this.fail(this.nextApply, err));
      }, 20);
    }
  }

  private async fillGap(): Promise<void> {
    while (this.pending.size > 0 && !this.pending.has(this.nextApply) && !this.broken && !this.space.error && !this.closed) {
      const index = this.nextApply;
      const bytes = await this.appendLog.entry(index);
      if (bytes === null) throw new SvcError('internal', `log entry ${index} is missing below pending entries`);
      if (this.nextApply !== index || this.pending.has(index)) continue; // arrived meanwhile
      const [inserted] = this.applyTxn([indexLoggedEntry(decodeLogEntry(bytes), bytes, index)], index + 1);
      this.nextApply = index + 1;
      this.appliedFromLog.set(index, inserted);
      // Entries appended by someone else are never claimed; keep the map small regardless.
      if (this.appliedFromLog.size > 1024) this.appliedFromLog.delete(this.appliedFromLog.keys().next().value as number);
    }
    this.drain();
  }

  /** The index can no longer follow the log in this process: refuse writes until a reopen replays. */
  private fail(index: number, err: unknown): void {
    if (isDiskFull(err)) {
      this.enterFull(err); // the entry stays in the log; the retry applies it
      return;
    }
    this.broken = internal(`applying log entry ${index} failed (it is durable in the log; reopen the store to replay it)`, err);
    this.logger(this.broken.message);
    try {
      this.writer.commit(); // keep what was applied before the failure
    } catch {
      // Lost until a reopen replays it from the log.
    }
    for (const [, p] of this.pending) p.reject(this.broken);
    this.pending.clear();
  }

  async getFact(cid: string): Promise<StoredFact | null> {
    this.assertOpen();
    if (typeof cid !== 'string') throw new TypeError('cid: expected a string');
    const digest = cidDigest(cid);
    const row = digest === null ? undefined : this.q.getFact(digest);
    return row ? (await this.rows.facts([row], undefined, cid))[0] : null;
  }

  async latest(q: FactQuery): Promise<StoredFact[]> {
    this.assertOpen();
    return this.rows.facts(this.q.latest(q), q.cell);
  }

  async history(q: FactQuery & { tslot_from?: number; tslot_to?: number; limit?: number }): Promise<StoredFact[]> {
    this.assertOpen();
    return this.rows.facts(this.q.history(q), q.cell);
  }

  async bandsAt(cell: string, scope?: FactQuery['scope']): Promise<string[]> {
    this.assertOpen();
    if (typeof cell !== 'string') throw new TypeError('cell: expected a string');
    return this.q.bandsAt(cell, scope);
  }

  async cellsWithPrefix(prefix: string, limit: number, scope?: FactQuery['scope']): Promise<{ cells: string[]; truncated: boolean }> {
    this.assertOpen();
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('limit: expected a non-negative integer');
    // The deployment's scan cap (SVC_SCAN_CELL_LIMIT) bounds every caller's limit.
    return this.q.cellsWithPrefix(prefix, Math.min(limit, this.scanCellLimit), scope);
  }

  async stats(): Promise<CorpusStats> {
    this.assertOpen();
    // Distinct counts scan an index; they only change when entries are applied, so keep the last.
    if (this.statsAt?.applied !== this.nextApply) this.statsAt = { applied: this.nextApply, counts: this.q.counts.get()! };
    const c = this.statsAt.counts;
    return { facts: c.facts, cells: c.cells, subjects: c.subjects, bands: c.bands, log_size: await this.appendLog.size() };
  }

  async addWitness(w: WitnessRecord): Promise<void> {
    this.assertOpen();
    writeAlone(
      () => this.commitPending(),
      () => this.q.insertWitness.run(w),
      'addWitness',
    );
  }

  async claimScope(scope: Scope, claimant: string | null, exclude: string): Promise<string | null> {
    this.assertOpen();
    return claimScopeOwner(this.q, scope, claimant, exclude, isoSeconds(this.now()), () => this.commitPending());
  }

  /** Commit the deferred applies now (before a write kept outside the log). */
  private commitPending(): void {
    try {
      this.writer.commit();
    } catch (err) {
      throw this.commitFailed(err);
    }
  }

  async witnesses(): Promise<WitnessRecord[]> {
    this.assertOpen();
    return this.q.witnesses.all();
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true; // refuse new appends while the in-flight ones drain
    // Drain: an acknowledged append must reach the index before the database closes.
    await Promise.allSettled([...this.inflight]);
    this.closed = true;
    if (this.gapTimer) clearTimeout(this.gapTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    try {
      this.writer.commit();
    } catch (err) {
      this.commitFailed(err); // reopening replays what it held
    }
    this.db.close();
    await Promise.all([this.transients, this.documents, this.geocache, this.artifacts].map((side) => side.close()));
    await this.appendLog.close();
  }

  /** Replay log entries [from, to) into the index (open-time recovery). */
  async replay(from: number, to: number): Promise<{ entries: number; facts: number }> {
    let entries = 0;
    let facts = 0;
    let chunk: IndexedEntry[] = [];
    let next = from;
    const flush = () => {
      if (chunk.length === 0) return;
      const inserted = this.applyTxn(chunk, next);
      this.nextApply = next; // applied (a commit failing on a full disk keeps them; see retryFull)
      this.writer.commit(); // a rebuild commits as it goes, so its WAL stays bounded
      for (const xs of inserted) facts += xs.filter(Boolean).length;
      chunk = [];
    };
    for await (const { index, entry } of this.appendLog.entries(from, to)) {
      if (index !== next) throw new SvcError('internal', `log replay: expected entry ${next}, got ${index}`);
      let e: LogEntryV1;
      try {
        e = decodeLogEntry(entry);
      } catch (err) {
        throw new SvcError('internal', `log entry ${index}: ${(err as Error).message}`, {}, { cause: err });
      }
      chunk.push(indexLoggedEntry(e, entry, index));
      next = index + 1;
      entries++;
      if (chunk.length >= REPLAY_CHUNK) flush();
    }
    flush();
    if (next !== to) throw new SvcError('internal', `log replay: the log yielded entries up to ${next}, expected ${to}`);
    this.nextApply = to;
    return { entries, facts };
  }
}

/** Open (or create) the SQLite index over `log` and bring it up to date with the log. */
export async function createSqliteStore(config: StoreConfig, log: AppendOnlyLog, opts: SqliteStoreOptions = {}): Promise<Store> {
  const logger = opts.logger ?? ((line: string) => process.stderr.write(line + '\n'));
  mkdirSync(config.dataDir, { recursive: true });
  const path = join(config.dataDir, 'index.sqlite');
  const db = new Database(path);
  const sides: Array<{ close(): void | Promise<void> }> = []; // the side files (transients.ts, documents.ts, geocache.ts), closed on a failed open
  try {
    const { upgradedFrom } = migrate(db);
    const q = new Queries(db);
    const applied = Number(q.meta(APPLIED_KEY) ?? '0');
    const size = await log.size();
    if (!Number.isSafeInteger(applied) || applied < 0) throw new SvcError('internal', `index.sqlite: ${APPLIED_KEY} is not a count: ${applied}`);
    if (applied > size) {
      // The index names entries the log no longer has: refuse rather than serve facts without a log record.
      throw new SvcError('internal', `index.sqlite has applied ${applied} log entries but the log holds ${size}; move index.sqlite aside to rebuild it from the log`);
    }
    const scanCellLimit = Number.isSafeInteger(config.scanCellLimit) && config.scanCellLimit > 0 ? config.scanCellLimit : Number.MAX_SAFE_INTEGER;
    const now = opts.now ?? (() => new Date());
    const side = <T extends { close(): void | Promise<void> }>(x: T): T => {
      sides.push(x);
      return x;
    };
    const store = new SqliteStore(
      db,
      q,
      log,
      applied,
      now,
      logger,
      scanCellLimit,
      side(new SqliteTransients(config.dataDir, now)),
      side(new SqliteDocuments(config.dataDir, now)),
      side(new SqliteGeoCache(config.dataDir)),
      side(new SqliteArtifacts(config, now)),
    );
    const t0 = performance.now();
    const r = await store.replay(applied, size);
    const ms = Math.round(performance.now() - t0);
    const upgraded = upgradedFrom === undefined ? '' : ` (schema v${upgradedFrom} index rebuilt from the log)`;
    logger(`store sqlite: ${path}: log size ${size}, index had ${applied}, replayed ${r.entries} entries (${r.facts} facts) in ${ms} ms${upgraded}`);
    return store;
  } catch (err) {
    db.close();
    await Promise.all(sides.map((x) => x.close()));
    throw err;
  }
}
