/**
 * PostgreSQL driver: the transparency log and the fact index live in one database schema, so
 * several responder processes share one log. Life of a fact: `append` validates the batch and
 * expands it (canonical bytes, digests, per-fact proofs) outside any lock (pending-batch.ts),
 * then queues it for the sequencer (sequencer.ts), which writes the log entry, its tree nodes,
 * the fact rows and supersedes edges (and, for memory records, the memory index:
 * memory-index.ts) in one transaction under the schema's advisory lock and resolves after
 * COMMIT. Reads go straight to the tables (queries.ts, memory-queries.ts, pg-log.ts); there is
 * nothing to replay, since entry and index rows commit together.
 */
import pg from 'pg';
import { SvcError } from '../../protocol/errors.js';
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import type { GeoCache } from '../../geo/geocache.js';
import type {
  AppendBatch,
  AppendResult,
  ArtifactStore,
  CorpusStats,
  DocumentStore,
  FactQuery,
  LogReader,
  Store,
  StoreConfig,
  StoredFact,
  TransientStore,
  TreeHeadSigner,
  WitnessRecord,
} from '../contract.js';
import { scopeKey } from '../entry.js';
import type { MemoryReader } from '../memory.js';
import { MemoryQueries } from './memory-queries.js';
import { PgTransients } from './transients.js';
import { PgDocuments } from './documents.js';
import { PgGeoCache } from './geocache.js';
import { PgArtifacts } from './artifacts.js';
import { ARTIFACT_MAX_BYTES_DEFAULT } from '../artifacts.js';
import { PgBatchTrees } from './batch-trees.js';
import { pgFault } from './pg-db.js';
import { PgLog } from './pg-log.js';
import { Queries, type HistoryQuery } from './queries.js';
import { DEFAULT_SCHEMA, migrate, sequencerLockKey } from './schema.js';
import { checkSchemaName, tablesOf } from './tables.js';
import { prepare } from './pending-batch.js';
import { Sequencer, type CommitInfo } from './sequencer.js';
import { readerOf } from '../log-reader.js';

/** Driver options that are not deployment configuration (tests and tools set them). */
export interface PostgresStoreOptions {
  /** Clock for accepted_at and STH signed_at. */
  now?: () => Date;
  /** PostgreSQL schema holding the tables (default `svc`; tests use a random one and drop it). */
  schema?: string;
  /** Pool size (default 8). */
  poolMax?: number;
  /** Receives the one-line open summary; default: stderr. */
  logger?: (line: string) => void;
  /** Tests: while it returns true, append transactions roll back where they would commit. */
  failCommit?: () => boolean;
  /** Observer called after each append transaction commits (metrics, benches). */
  onCommit?: (info: CommitInfo) => void;
}

const POOL_MAX = 8;

class PostgresStore implements Store {
  readonly driver = 'postgres' as const;
  readonly log: LogReader;
  readonly memory: MemoryReader;
  readonly transients: TransientStore;
  readonly documents: DocumentStore;
  readonly geocache: GeoCache;
  readonly artifacts: ArtifactStore;
  private closed = false;
  private readonly inflight = new Set<Promise<unknown>>();
  private statsAt: { size: number; counts: Omit<CorpusStats, 'log_size'> } | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly scanCellLimit: number,
    private readonly pgLog: PgLog,
    private readonly q: Queries,
    private readonly seq: Sequencer,
    private readonly now: () => Date,
    mem: MemoryQueries,
    transients: PgTransients,
    documents: PgDocuments,
    geocache: PgGeoCache,
    artifacts: PgArtifacts,
  ) {
    this.log = readerOf(pgLog);
    this.transients = {
      claimOnce: (ns, key, exp) => this.read('transients.claimOnce', () => transients.claimOnce(ns, key, exp)),
      put: (ns, key, value, exp) => this.read('transients.put', () => transients.put(ns, key, value, exp)),
      get: (ns, key) => this.read('transients.get', () => transients.get(ns, key)),
    };
    this.documents = {
      putOnce: (kind, cid, text) => this.read('documents.putOnce', () => documents.putOnce(kind, cid, text)),
      get: (kind, cid) => this.read('documents.get', () => documents.get(kind, cid)),
    };
    this.geocache = {
      driver: 'postgres',
      get: (key, now) => this.read('geocache.get', () => geocache.get(key, now)),
      put: (key, answer, ttlMs) => this.read('geocache.put', () => geocache.put(key, answer, ttlMs)),
    };
    this.artifacts = {
      maxBytes: artifacts.maxBytes,
      put: (type, bytes, rebuild) => this.read('artifacts.put', () => artifacts.put(type, bytes, rebuild)),
      read: (cid, range) => this.read('artifacts.read', () => artifacts.read(cid, range)),
      info: (cid) => this.read('artifacts.info', () => artifacts.info(cid)),
      evict: (cid) => this.read('artifacts.evict', () => artifacts.evict(cid)),
      usage: () => this.read('artifacts.usage', () => artifacts.usage()),
    };
    // The same fault mapping and closed check as every other read.
    this.memory = {
      searchNotes: (q) => this.read('memory.searchNotes', () => mem.searchNotes(q)),
      noteCandidates: (q) => this.read('memory.noteCandidates', () => mem.noteCandidates(q)),
      notesAt: (q) => this.read('memory.notesAt', () => mem.notesAt(q)),
      noteStats: (q) => this.read('memory.noteStats', () => mem.noteStats(q)),
      noteNeighbours: (q) => this.read('memory.noteNeighbours', () => mem.noteNeighbours(q)),
      edges: (q) => this.read('memory.edges', () => mem.edges(q)),
      aliases: (q) => this.read('memory.aliases', () => mem.aliases(q)),
      derivedBy: (q) => this.read('memory.derivedBy', () => mem.derivedBy(q)),
      sharedSlots: (q) => this.read('memory.sharedSlots', () => mem.sharedSlots(q)),
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new SvcError('internal', 'postgres store: closed');
  }

  /** Run a read, mapping database failures to the contract's fault error. */
  private async read<T>(what: string, fn: () => Promise<T>): Promise<T> {
    this.assertOpen();
    try {
      return await fn();
    } catch (err) {
      throw pgFault(what, err);
    }
  }

  async append(batch: AppendBatch): Promise<AppendResult> {
    this.assertOpen();
    const p = this.seq.submit(prepare(batch, isoSeconds(this.now())));
    this.inflight.add(p);
    try {
      return await p;
    } finally {
      this.inflight.delete(p);
    }
  }

  getFact(cid: string): Promise<StoredFact | null> {
    if (typeof cid !== 'string') return Promise.reject(new TypeError('cid: expected a string'));
    return this.read('getFact', () => this.q.getFact(cid));
  }

  latest(q: FactQuery): Promise<StoredFact[]> {
    return this.read('latest', () => this.q.latest(q));
  }

  history(q: HistoryQuery): Promise<StoredFact[]> {
    return this.read('history', () => this.q.history(q));
  }

  bandsAt(cell: string, scope?: FactQuery['scope']): Promise<string[]> {
    if (typeof cell !== 'string') return Promise.reject(new TypeError('cell: expected a string'));
    return this.read('bandsAt', () => this.q.bandsAt(cell, scope));
  }

  cellsWithPrefix(prefix: string, limit: number, scope?: FactQuery['scope']): Promise<{ cells: string[]; truncated: boolean }> {
    if (!Number.isSafeInteger(limit) || limit < 0) return Promise.reject(new RangeError('limit: expected a non-negative integer'));
    // The deployment's scan cap (SVC_SCAN_CELL_LIMIT) bounds every caller's limit.
    return this.read('cellsWithPrefix', () => this.q.cellsWithPrefix(prefix, Math.min(limit, this.scanCellLimit), scope));
  }

  stats(): Promise<CorpusStats> {
    return this.read('stats', async () => {
      // Fact rows change only together with log entries (one transaction), so counts taken at
      // a log size stay exact until the size moves; distinct counts scan, so keep the last.
      const size = await this.pgLog.size();
      if (this.statsAt?.size === size) return { ...this.statsAt.counts, log_size: size };
      const counts = await this.q.counts();
      // Cache only when the log did not move while counting (then the counts are of `size`).
      const after = await this.pgLog.size();
      if (after === size) this.statsAt = { size, counts };
      return { ...counts, log_size: after };
    });
  }

  publicFactsByAttester(): Promise<Array<{ attester: string; facts: number }>> {
    return this.read('publicFactsByAttester', () => this.q.publicFactsByAttester());
  }

  attesterFactsOn(attester: string, day: string): Promise<number> {
    if (typeof attester !== 'string') return Promise.reject(new TypeError('attester: expected a string'));
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return Promise.reject(new RangeError('day: expected YYYY-MM-DD'));
    return this.read('attesterFactsOn', () => this.q.attesterFactsOn(attester, day));
  }

  claimScope(scope: Scope, claimant: string | null, exclude: string): Promise<string | null> {
    const key = scopeKey(scope);
    if (key === '') return Promise.reject(new TypeError('scope: expected at least one member set'));
    return this.read('claimScope', () => this.q.claimScope(key, claimant, exclude, isoSeconds(this.now())));
  }

  addWitness(w: WitnessRecord): Promise<void> {
    return this.read('addWitness', () => this.q.addWitness(w));
  }

  witnesses(): Promise<WitnessRecord[]> {
    return this.read('witnesses', () => this.q.witnesses());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Drain: every queued append commits (or fails) before the pool goes away.
    await Promise.allSettled([...this.inflight]);
    await this.seq.drained();
    await this.pool.end();
  }
}

/**
 * Open the PostgreSQL store at `config.databaseUrl`: create the schema when missing (tables,
 * indexes) and return a Store whose log is shared with every other process on that schema.
 */
export async function createPostgresStore(config: StoreConfig, signer: TreeHeadSigner, opts: PostgresStoreOptions = {}): Promise<Store> {
  if (!config.databaseUrl) throw new SvcError('internal', 'postgres store: databaseUrl is not set');
  const schema = checkSchemaName(opts.schema ?? DEFAULT_SCHEMA);
  const logger = opts.logger ?? ((line: string) => process.stderr.write(line + '\n'));
  const now = opts.now ?? (() => new Date());
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: opts.poolMax ?? POOL_MAX });
  // An idle client's connection can drop at any time; without a listener that would crash the process.
  pool.on('error', (err) => logger(`store postgres: idle connection error: ${err.message}`));
  try {
    const client = await pool.connect();
    try {
      await migrate(client, schema);
    } finally {
      client.release();
    }
    const t = tablesOf(schema);
    const log = new PgLog(pool, t, { signer, now, prefix: config.prefix });
    const trees = new PgBatchTrees(pool, t);
    const seq = new Sequencer(pool, t, sequencerLockKey(schema), log, {
      now,
      logger,
      failCommit: opts.failCommit,
      onCommit: opts.onCommit,
      keepTree: (logIndex, tree) => trees.keep(logIndex, tree),
    });
    const store = new PostgresStore(
      pool,
      config.scanCellLimit,
      log,
      new Queries(pool, t, trees),
      seq,
      now,
      new MemoryQueries(pool, t),
      new PgTransients(pool, t, now),
      new PgDocuments(pool, t, now),
      new PgGeoCache(pool, t),
      new PgArtifacts(pool, t, now, config.artifactMaxBytes ?? ARTIFACT_MAX_BYTES_DEFAULT),
    );
    logger(`store postgres: schema ${schema}: log size ${await log.size()}`);
    return store;
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw pgFault(`opening schema ${schema}`, err);
  }
}
