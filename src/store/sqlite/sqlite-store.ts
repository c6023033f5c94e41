/**
 * Embedded driver: the transparency log (an `AppendOnlyLog`) is the durable record, and a
 * better-sqlite3 database at `${dataDir}/index.sqlite` indexes it. Life of a fact: append
 * validates the batch, writes one LogEntryV1 to the log (resolves after fsync), then applies
 * the entry to the index in one transaction, in log order. On open, every log entry the index
 * has not applied is replayed, so a crash between fsync and commit, or a deleted index, heals.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { b32encode } from '../../protocol/base32.js';
import { SvcError } from '../../protocol/errors.js';
import { isoSeconds } from '../../protocol/receipt.js';
import type {
  AppendBatch, AppendOnlyLog, AppendResult, CorpusStats, FactQuery, LogEntryV1, LogReader, Store, StoreConfig, StoredFact, WitnessRecord,
} from '../contract.js';
import { decodeLogEntry, encodeLogEntry, expandEntry, scopeKey, type ExpandedFact } from '../entry.js';
import { internal, Queries, rowToFact } from './queries.js';
import { migrate } from './schema.js';

/** Driver options that are not deployment configuration (tests and tools set them). */
export interface SqliteStoreOptions {
  /** Clock for accepted_at (tests step it to exercise transaction-time reads). */
  now?: () => Date;
  /** Receives the one-line open summary and fault reports; default: stderr. */
  logger?: (line: string) => void;
}

const APPLIED_KEY = 'applied_log_size';
/** Entries per transaction when appends complete together (group commit). */
const DRAIN_MAX = 1024;
/** Entries per transaction while replaying: large enough to amortise commits, small enough to yield. */
const REPLAY_CHUNK = 512;

interface PendingApply {
  expanded: ExpandedFact[];
  resolve: (inserted: boolean[]) => void;
  reject: (err: unknown) => void;
}

/** A LogReader view of the log, so callers of `store.log` cannot append behind the index. */
function readerOf(log: AppendOnlyLog): LogReader {
  return {
    size: () => log.size(),
    root: (size) => log.root(size),
    entry: (i) => log.entry(i),
    leafIndexOf: (h) => log.leafIndexOf(h),
    inclusionProof: (i, n) => log.inclusionProof(i, n),
    consistencyProof: (a, b) => log.consistencyProof(a, b),
    latestTreeHead: () => log.latestTreeHead(),
  };
}

function sameScope(a: unknown, b: unknown): boolean {
  return scopeKey(a as never) === scopeKey(b as never);
}

/** Cross-check what the caller computed against what the entry will say (the entry wins on replay). */
function checkAgainstEntry(batch: AppendBatch, expanded: ExpandedFact[]): void {
  expanded.forEach((x, i) => {
    const f = batch.facts[i];
    const at = `facts[${i}]`;
    if (f.fact_cid !== x.fact.fact_cid) throw new SvcError('invalid_argument', `${at}.fact_cid: does not match the canonical CBOR of the body`, { field: `${at}.fact_cid` });
    if (f.cell !== x.fact.cell) throw new SvcError('invalid_argument', `${at}.cell: differs from body.cell`, { field: `${at}.cell` });
    if (f.band !== x.fact.band) throw new SvcError('invalid_argument', `${at}.band: differs from body.band`, { field: `${at}.band` });
    if (f.kind !== x.fact.kind) throw new SvcError('invalid_argument', `${at}.kind: differs from body.kind`, { field: `${at}.kind` });
    // The log keeps only the body, so a scope outside it would vanish on rebuild.
    if (!sameScope(f.scope, x.fact.scope)) throw new SvcError('invalid_argument', `${at}.scope: differs from body.scope`, { field: `${at}.scope` });
  });
  const root = expanded[0].fact.proof.root;
  if (root !== b32encode(batch.batch_root)) {
    throw new SvcError('bad_merkle_proof', 'batch_root: merkle root mismatch: the facts do not hash into batch_root', { field: 'batch_root' });
  }
}

class SqliteStore implements Store {
  readonly driver = 'sqlite' as const;
  readonly log: LogReader;
  private readonly pending = new Map<number, PendingApply>();
  private readonly inflight = new Set<Promise<unknown>>();
  private gapTimer: NodeJS.Timeout | undefined;
  private drainScheduled = false;
  /** Insert results of entries fillGap applied, for an append whose continuation comes late. */
  private readonly appliedFromLog = new Map<number, boolean[]>();
  private broken: SvcError | undefined;
  private closed = false;
  private closing = false;
  private statsAt: { applied: number; counts: { facts: number; cells: number; bands: number } } | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly q: Queries,
    private readonly appendLog: AppendOnlyLog,
    /** Log size the index reflects: entries below it are applied, in order. */
    private nextApply: number,
    private readonly now: () => Date,
    private readonly logger: (line: string) => void,
    private readonly scanCellLimit: number,
  ) {
    this.log = readerOf(appendLog);
    this.applyTxn = db.transaction((items: ExpandedFact[][], newSize: number) => {
      const inserted = items.map((xs) => xs.map((x) => q.insertExpanded(x)));
      q.setMeta.run(APPLIED_KEY, String(newSize));
      return inserted;
    });
  }

  /** One transaction: the entries' facts, their edges and the applied watermark. */
  private readonly applyTxn: (items: ExpandedFact[][], newSize: number) => boolean[][];

  private assertOpen(): void {
    if (this.closed) throw new SvcError('internal', 'sqlite store: closed');
  }

  async append(batch: AppendBatch): Promise<AppendResult> {
    if (this.closing) throw new SvcError('internal', 'sqlite store: closing');
    if (this.broken) throw this.broken;
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
    // Duplicates: already indexed, or repeated earlier in this batch.
    const duplicates = new Set<string>();
    const seen = new Set<string>();
    let firstStored: { log_index: number; accepted_at: string } | undefined;
    let allStored = true;
    batch.facts.forEach((f, i) => {
      const placed = this.q.placement.get(f.fact_cid);
      if (i === 0) firstStored = placed;
      if (placed === undefined) allStored = false;
      if (placed !== undefined || seen.has(f.fact_cid)) duplicates.add(f.fact_cid);
      seen.add(f.fact_cid);
    });
    if (allStored && firstStored) {
      return { log_index: firstStored.log_index, accepted_at: firstStored.accepted_at, tree_size: await this.appendLog.size(), duplicates: [...duplicates] };
    }

    // The entry records the batch exactly as signed (duplicates included) so the attester's
    // signature and every per-fact proof stay checkable against batch_root from the log alone;
    // facts already indexed keep their first placement (INSERT OR IGNORE).
    const entry: LogEntryV1 = {
      v: 1,
      type: 'batch',
      accepted_at: isoSeconds(this.now()),
      attester: batch.attester,
      signature: batch.signature,
      batch_root: batch.batch_root,
      registry_cid: batch.registry_cid,
      schema_cid: batch.schema_cid,
      facts: batch.facts.map((f) => f.body),
      meta: batch.facts.map((f) => ({ provenance_class: f.provenance_class, tslot: f.tslot })),
    };
    let bytes: Uint8Array;
    let expanded: ExpandedFact[];
    try {
      bytes = encodeLogEntry(entry);
      expanded = expandEntry(entry, -1);
    } catch (err) {
      // A batch the entry codec refuses is the caller's fault, and nothing was written.
      if (err instanceof SvcError) throw new SvcError('invalid_argument', err.message.replace(/^log entry: /, ''), err.details, { cause: err });
      throw err;
    }
    checkAgainstEntry(batch, expanded);

    const index = await this.appendLog.append(bytes); // durable from here on
    for (const x of expanded) x.fact.log_index = index;
    let inserted: boolean[];
    if (index < this.nextApply) {
      // fillGap already applied it from the log (this continuation came late).
      inserted = this.appliedFromLog.get(index) ?? expanded.map(() => true);
      this.appliedFromLog.delete(index);
    } else {
      inserted = await new Promise<boolean[]>((resolve, reject) => {
        this.pending.set(index, { expanded, resolve, reject });
        this.scheduleDrain();
      });
    }
    // Lost a race with a concurrent append of the same fact: report it as the duplicate it is.
    inserted.forEach((ok, i) => {
      if (!ok) duplicates.add(expanded[i].fact.fact_cid);
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
    while (!this.broken && this.pending.has(this.nextApply)) {
      const first = this.nextApply;
      const run: PendingApply[] = [];
      for (let p = this.pending.get(first); p !== undefined && run.length < DRAIN_MAX; p = this.pending.get(first + run.length)) run.push(p);
      run.forEach((_, k) => this.pending.delete(first + k));
      try {
        const inserted = this.applyTxn(run.map((p) => p.expanded), first + run.length);
        this.nextApply = first + run.length;
        run.forEach((p, k) => p.resolve(inserted[k]));
      } catch (err) {
        this.fail(first, err);
        for (const p of run) p.reject(this.broken);
      }
    }
    if (this.pending.size > 0 && this.gapTimer === undefined && !this.broken) {
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
    while (this.pending.size > 0 && !this.pending.has(this.nextApply) && !this.broken && !this.closed) {
      const index = this.nextApply;
      const bytes = await this.appendLog.entry(index);
      if (bytes === null) throw new SvcError('internal', `log entry ${index} is missing below pending entries`);
      if (this.nextApply !== index || this.pending.has(index)) continue; // arrived meanwhile
      const [inserted] = this.applyTxn([expandEntry(decodeLogEntry(bytes), index)], index + 1);
      this.nextApply = index + 1;
      this.appliedFromLog.set(index, inserted);
      // Entries appended by someone else are never claimed; keep the map small regardless.
      if (this.appliedFromLog.size > 1024) this.appliedFromLog.delete(this.appliedFromLog.keys().next().value as number);
    }
    this.drain();
  }

  /** The index can no longer follow the log in this process: refuse writes until a reopen replays. */
  private fail(index: number, err: unknown): void {
    this.broken = internal(`applying log entry ${index} failed (it is durable in the log; reopen the store to replay it)`, err);
    this.logger(this.broken.message);
    for (const [, p] of this.pending) p.reject(this.broken);
    this.pending.clear();
  }

  async getFact(cid: string): Promise<StoredFact | null> {
    this.assertOpen();
    if (typeof cid !== 'string') throw new TypeError('cid: expected a string');
    const row = this.q.getFact.get(cid);
    return row ? rowToFact(row) : null;
  }

  async latest(q: FactQuery): Promise<StoredFact[]> {
    this.assertOpen();
    return this.q.latest(q);
  }

  async history(q: FactQuery & { tslot_from?: number; tslot_to?: number; limit?: number }): Promise<StoredFact[]> {
    this.assertOpen();
    return this.q.history(q);
  }

  async bandsAt(cell: string, scope?: FactQuery['scope']): Promise<string[]> {
    this.assertOpen();
    if (typeof cell !== 'string') throw new TypeError('cell: expected a string');
    return this.q.bandsAt.all(cell, scopeKey(scope)).map((r) => r.band);
  }

  async cellsWithPrefix(prefix: string, limit: number): Promise<{ cells: string[]; truncated: boolean }> {
    this.assertOpen();
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('limit: expected a non-negative integer');
    // The deployment's scan cap (SVC_SCAN_CELL_LIMIT) bounds every caller's limit.
    return this.q.cellsWithPrefix(prefix, Math.min(limit, this.scanCellLimit));
  }

  async stats(): Promise<CorpusStats> {
    this.assertOpen();
    // Distinct counts scan an index; they only change when entries are applied, so keep the last.
    if (this.statsAt?.applied !== this.nextApply) this.statsAt = { applied: this.nextApply, counts: this.q.counts.get()! };
    const c = this.statsAt.counts;
    return { facts: c.facts, cells: c.cells, bands: c.bands, log_size: await this.appendLog.size() };
  }

  async addWitness(w: WitnessRecord): Promise<void> {
    this.assertOpen();
    this.q.insertWitness.run(w);
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
    this.db.close();
    await this.appendLog.close();
  }

  /** Replay log entries [from, to) into the index (open-time recovery). */
  async replay(from: number, to: number): Promise<{ entries: number; facts: number }> {
    let entries = 0;
    let facts = 0;
    let chunk: ExpandedFact[][] = [];
    let next = from;
    const flush = () => {
      if (chunk.length === 0) return;
      const inserted = this.applyTxn(chunk, next);
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
      chunk.push(expandEntry(e, index));
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
  try {
    migrate(db);
    const q = new Queries(db);
    const applied = Number(q.meta(APPLIED_KEY) ?? '0');
    const size = await log.size();
    if (!Number.isSafeInteger(applied) || applied < 0) throw new SvcError('internal', `index.sqlite: ${APPLIED_KEY} is not a count: ${applied}`);
    if (applied > size) {
      // The index names entries the log no longer has: refuse rather than serve facts without a log record.
      throw new SvcError('internal', `index.sqlite has applied ${applied} log entries but the log holds ${size}; move index.sqlite aside to rebuild it from the log`);
    }
    const scanCellLimit = Number.isSafeInteger(config.scanCellLimit) && config.scanCellLimit > 0 ? config.scanCellLimit : Number.MAX_SAFE_INTEGER;
    const store = new SqliteStore(db, q, log, applied, opts.now ?? (() => new Date()), logger, scanCellLimit);
    const t0 = performance.now();
    const r = await store.replay(applied, size);
    const ms = Math.round(performance.now() - t0);
    logger(`store sqlite: ${path}: log size ${size}, index had ${applied}, replayed ${r.entries} entries (${r.facts} facts) in ${ms} ms`);
    return store;
  } catch (err) {
    db.close();
    throw err;
  }
}
