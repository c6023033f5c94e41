/**
 * The PostgreSQL sequencer: group commit inside a process, one writer at a time across
 * processes. Concurrent `submit` calls queue; the queue is written in one transaction that
 * first takes `pg_advisory_xact_lock(<schema key>)` (a writer in another process waits there:
 * "forward or wait"), reads the log size, then gives each batch with new facts its own log
 * entry at the next index, the perfect-subtree nodes that entry completes, its fact rows,
 * supersedes edges, shared slots and memory-index rows (memory-index.ts). Every batch of the
 * group resolves only after COMMIT (acknowledged = committed); a failed transaction leaves
 * nothing behind, and no index is consumed.
 * How long a writer may hold the lock is bounded (writer-bounds.ts): a transaction cut short
 * by a bound fails its whole group with a typed, retryable `overloaded` error.
 */
import type pg from 'pg';
import { fromHex } from '../../protocol/bytes.js';
import { isoSeconds } from '../../protocol/receipt.js';
import type { AppendResult } from '../contract.js';
import type { BuiltTree } from '../batch-tree.js';
import type { ExpandedFact } from '../entry.js';
import { SvcError } from '../../protocol/errors.js';
import { MemoryIndexer, mayProject } from './memory-index.js';
import { buf, int, pgFault, rows } from './pg-db.js';
import { encodeAt, type PendingBatch } from './pending-batch.js';
import { nodesCompletedBy, type PgLog } from './pg-log.js';
import { insertRows, Rows } from './sequencer-rows.js';
import type { Tables } from './tables.js';
import { beginLockedSql, CLIENT_SLACK_MS, isLostTransaction, LOCK_WAIT_MS, TCP_SETTINGS_SQL, watchLockWait, withDeadline, WRITER_STATEMENT_MS } from './writer-bounds.js';

interface Queued extends PendingBatch {
  resolve: (r: AppendResult) => void;
  reject: (err: unknown) => void;
}

export interface SequencerOptions {
  now: () => Date;
  /** Tests: while it returns true, the transaction rolls back where it would commit. */
  failCommit?: () => boolean;
  /** Given each committed entry's batch tree (the read side keeps the newest). */
  keepTree?: (logIndex: number, tree: BuiltTree) => void;
  /** Observer called after each COMMIT (metrics, benches). */
  onCommit?: (info: CommitInfo) => void;
  /** Rare operational lines (a stalled lock holder terminated); default: stderr. */
  logger?: (line: string) => void;
}

/** Where a writer's transaction was when it failed. */
type Phase = 'lock' | 'write' | 'commit';

/** Client-side deadline of each statement under the lock: the server's bound plus slack. */
const STATEMENT_DEADLINE_MS = WRITER_STATEMENT_MS + CLIENT_SLACK_MS;
const bounded = <T>(q: Promise<T>): Promise<T> => withDeadline(q, STATEMENT_DEADLINE_MS, 'writing the log');

/** Connections whose TCP settings were applied (once per connection). */
const tuned = new WeakSet<pg.PoolClient>();

/**
 * The typed failure of a group whose transaction was cut short (a bound fired, the connection
 * was lost). Before COMMIT was sent nothing was written; during COMMIT the outcome is unknown,
 * and a retry is still safe: facts already in the log come back as duplicates.
 */
function lostTransaction(err: unknown, phase: Phase): SvcError {
  const why = (err as Error)?.message ?? String(err);
  const written = phase === 'commit' ? 'unknown' : false;
  const message =
    phase === 'lock'
      ? `the log writer could not take the log lock within its bound (${why}); nothing was written, retry`
      : phase === 'write'
        ? `the log writer's transaction was aborted (${why}); nothing was written, retry`
        : `the log writer lost its connection while committing (${why}); the batch may or may not be in the log: retry (facts already stored come back as duplicates)`;
  return new SvcError('overloaded', message, { retry_after: 1, reason: 'log_writer_bound', phase, written }, { cause: err });
}

/** What one committed transaction wrote. */
export interface CommitInfo {
  /** Batches resolved by this commit (all-duplicate ones included). */
  batches: number;
  /** Log entries appended. */
  entries: number;
  /** Fact rows inserted. */
  facts: number;
  /** Wall time from checkout to COMMIT returning. */
  ms: number;
}

/** Caps per transaction: bounded lock hold time and statement size. */
const MAX_GROUP_BATCHES = 512;
const MAX_GROUP_FACTS = 8192;

/** Where a fact already sits (first placement wins). */
interface Placement {
  log_index: number;
  accepted_at: string;
}

/** The newest version under one supersession key, in version order (accepted_at, log_index, position). */
interface Newest {
  fact_cid: string;
  /** Its batch's attester: a new version from another attester makes the key a shared slot. */
  attester: string;
  accepted_at: string;
  log_index: number;
  position: number;
}

function newer(a: Newest, b: Newest): boolean {
  if (a.accepted_at !== b.accepted_at) return a.accepted_at > b.accepted_at;
  if (a.log_index !== b.log_index) return a.log_index > b.log_index;
  return a.position > b.position;
}

/** Supersession key: same cell, scope, tslot and band. */
const keyOf = (x: ExpandedFact): string => JSON.stringify([x.fact.cell, x.scopeKey, x.fact.tslot, x.fact.band]);

/** The one writer of a store: queues appends and commits them in groups under the schema's lock. */
export class Sequencer {
  private queue: Queued[] = [];
  private running = false;
  private scheduled = false;
  private idle: Array<() => void> = [];

  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
    private readonly lockKey: string,
    private readonly log: PgLog,
    private readonly opts: SequencerOptions,
  ) {}

  /** Queue a batch; resolves after the transaction that wrote it committed. */
  submit(p: PendingBatch): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ ...p, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once the queue is empty and no transaction is running. */
  drained(): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    // One macrotask of slack: appends issued in the same tick join the same group.
    setImmediate(() => {
      this.scheduled = false;
      void this.pump();
    });
  }

  private takeGroup(): Queued[] {
    let facts = 0;
    let n = 0;
    while (n < this.queue.length && n < MAX_GROUP_BATCHES) {
      facts += this.queue[n].expanded.length;
      if (n > 0 && facts > MAX_GROUP_FACTS) break;
      n++;
    }
    return this.queue.splice(0, n);
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const group = this.takeGroup();
        try {
          const results = await this.write(group);
          group.forEach((q, i) => q.resolve(results[i]));
        } catch (err) {
          // A bound fired or the connection died: the whole group shares the fate (no retry
          // alone, which would wait out the same bound once per batch).
          if (err instanceof SvcError && err.details.reason === 'log_writer_bound') {
            for (const q of group) q.reject(err);
            continue;
          }
          if (group.length === 1) {
            group[0].reject(pgFault('append', err));
            continue;
          }
          // Isolate the fault: each batch alone, so one bad batch cannot fail its neighbours.
          for (const q of group) {
            try {
              q.resolve((await this.write([q]))[0]);
            } catch (e) {
              q.reject(pgFault('append', e));
            }
          }
        }
      }
    } finally {
      this.running = false;
      for (const f of this.idle.splice(0)) f();
    }
  }

  /** One transaction over `group`; resolves each batch's result once COMMIT returned. */
  private async write(group: Queued[]): Promise<AppendResult[]> {
    const t0 = performance.now();
    const client = await this.pool.connect();
    // The server may end this session while we hold it (a bound, a fence); pg then emits
    // 'error' on the client, which without a listener would crash the process. The failure
    // itself reaches us through the pending or next query.
    const onClientError = () => undefined;
    client.on('error', onClientError);
    // True once the connection is known to be outside any transaction again.
    let clean = false;
    let phase: Phase = 'lock';
    try {
      await this.tune(client);
      const stopWatch = watchLockWait(this.pool, this.lockKey, this.log_);
      try {
        await withDeadline(client.query(beginLockedSql(this.lockKey)), LOCK_WAIT_MS + CLIENT_SLACK_MS, 'waiting for the log lock');
      } finally {
        stopWatch();
      }
      phase = 'write';
      let out: Awaited<ReturnType<Sequencer['writeLocked']>>;
      try {
        out = await this.writeLocked(client, group);
        if (this.opts.failCommit?.()) throw new Error('test: injected commit failure');
        phase = 'commit';
        await bounded(client.query('COMMIT'));
        clean = true;
      } catch (err) {
        // After a lost connection or an unanswered statement, a ROLLBACK could only queue
        // behind it: the connection is discarded instead, which ends the transaction too.
        if (!clean && !isLostTransaction(err))
          await bounded(client.query('ROLLBACK')).then(
            () => (clean = true),
            () => undefined,
          );
        throw err;
      }
      // Committed: nothing below may turn an acknowledged write into a rejection.
      this.log.noteCommitted(out.size, out.nodes);
      for (const { logIndex, tree } of out.trees) this.opts.keepTree?.(logIndex, tree);
      try {
        this.opts.onCommit?.({ batches: group.length, entries: out.entries, facts: out.facts, ms: performance.now() - t0 });
      } catch {
        // an observer's fault is not the write's
      }
      return out.results;
    } catch (err) {
      throw isLostTransaction(err) ? lostTransaction(err, phase) : err;
    } finally {
      // A connection left in an unknown transaction state must not serve another caller.
      if (clean) client.off('error', onClientError);
      client.release(clean ? undefined : new Error('postgres store: connection left in an unknown transaction state'));
    }
  }

  /** Apply the writer's TCP settings once per connection (best effort: they only speed up detection). */
  private async tune(client: pg.PoolClient): Promise<void> {
    if (tuned.has(client)) return;
    tuned.add(client);
    await withDeadline(client.query(TCP_SETTINGS_SQL), STATEMENT_DEADLINE_MS, 'configuring the connection').catch((err) => {
      if (isLostTransaction(err)) throw err;
      this.log_(`store postgres: writer TCP settings not applied: ${(err as Error).message}`);
    });
  }

  private readonly log_ = (line: string): void => (this.opts.logger ?? ((l: string) => process.stderr.write(l + '\n')))(line);

  private async writeLocked(client: pg.PoolClient, group: Queued[]) {
    const all = group.flatMap((q) => q.expanded);
    // Memory records (and derivatives) of the group, projected before the state read so that
    // what their closures need from the index comes back with it; null for ordinary ingest.
    const mem = MemoryIndexer.plan(all.filter((x) => mayProject(x.fact.kind, x.fact.band)).map((x) => ({ cid: x.fact.fact_cid, body: x.fact.body, scopeKey: x.scopeKey })));
    const state = await this.readState(client, all, mem);
    let size = state.size;
    // Transaction time never runs backwards along the log, even across processes whose clocks
    // differ by a second, so an as_of_signed_at bound always selects a prefix of the log.
    const clock = isoSeconds(this.opts.now());
    const acceptedAt = state.lastAcceptedAt > clock ? state.lastAcceptedAt : clock;
    const { known, placements, newest } = state;

    const out = new Rows();
    const results: AppendResult[] = [];
    const allDup: number[] = [];
    for (const q of group) {
      const duplicates: string[] = [];
      const seen = new Set<string>();
      let allStored = true;
      for (const x of q.expanded) {
        const cid = x.fact.fact_cid;
        const placed = placements.has(cid);
        if (!placed) allStored = false;
        if ((placed || seen.has(cid)) && !duplicates.includes(cid)) duplicates.push(cid);
        seen.add(cid);
      }
      if (allStored) {
        // Nothing new: no log entry; answer with the first fact's placement.
        const first = placements.get(q.expanded[0].fact.fact_cid)!;
        allDup.push(results.length);
        results.push({ log_index: first.log_index, accepted_at: first.accepted_at, tree_size: -1, duplicates });
        continue;
      }
      const index = size++;
      const enc =
        q.encoded.at === acceptedAt
          ? q.encoded
          : encodeAt(
              q.entry,
              acceptedAt,
              q.expanded.map((x) => x.bodyBytes),
            );
      out.entries.idx.push(index);
      out.entries.leaf.push(buf(enc.leaf));
      out.entries.hash.push(buf(enc.hash));
      out.entries.entry.push(buf(enc.bytes));
      out.entries.at.push(acceptedAt);
      out.entries.leaves.push(q.tree.count);
      out.entries.tree.push(buf(q.tree.blob));
      out.trees.push({ logIndex: index, tree: q.tree });
      out.nodes.push(...nodesCompletedBy(index, enc.leaf, known));
      for (const x of q.expanded) {
        const f = x.fact;
        // Placed already (stored before, or earlier in this batch or group): first placement wins.
        if (placements.has(f.fact_cid)) continue;
        const key = keyOf(x);
        const prev = newest.get(key);
        const supersedes = prev?.fact_cid ?? null;
        f.log_index = index;
        f.accepted_at = acceptedAt;
        f.supersedes = supersedes;
        const fc = out.facts;
        fc.cid.push(f.fact_cid);
        fc.cell.push(f.cell);
        fc.band.push(f.band);
        fc.tslot.push(f.tslot);
        fc.signed_at.push(x.signedAt);
        fc.accepted_at.push(acceptedAt);
        fc.kind.push(f.kind);
        fc.pclass.push(f.provenance_class);
        fc.attester.push(f.attester);
        fc.scope_key.push(x.scopeKey);
        fc.scope_json.push(x.scopeKey === '' ? null : x.scopeKey);
        fc.body.push(buf(x.bodyBytes));
        fc.leaf.push(x.leaf);
        fc.log_index.push(index);
        fc.position.push(x.position);
        fc.supersedes.push(supersedes);
        if (supersedes !== null) {
          out.edges.from.push(f.fact_cid);
          out.edges.to.push(supersedes);
          out.edges.at.push(acceptedAt);
          // A key whose newest version came from another attester becomes a shared slot. The
          // newest alone decides: while a key holds one attester's facts the newest is theirs,
          // and once it holds two the slot was recorded when the second arrived.
          const sl = out.slots;
          if (prev!.attester !== f.attester && !sl.seen.has(key)) {
            sl.seen.add(key);
            sl.scope_key.push(x.scopeKey);
            sl.cell.push(f.cell);
            sl.band.push(f.band);
            sl.tslot.push(f.tslot);
          }
        }
        if (mem?.has(f.fact_cid)) {
          mem.add({ cid: f.fact_cid, attester: f.attester, scopeKey: x.scopeKey, acceptedAt, logIndex: index, position: x.position });
        }
        placements.set(f.fact_cid, { log_index: index, accepted_at: acceptedAt });
        const mine: Newest = { fact_cid: f.fact_cid, attester: f.attester, accepted_at: acceptedAt, log_index: index, position: x.position };
        if (prev === undefined || newer(mine, prev)) newest.set(key, mine);
      }
      results.push({ log_index: index, accepted_at: acceptedAt, tree_size: index + 1, duplicates });
    }
    for (const i of allDup) results[i].tree_size = size;
    await insertRows(client, this.t, out, mem?.hasRows() ? mem : null, bounded);
    return { results, size, nodes: out.nodes, trees: out.trees, entries: out.entries.idx.length, facts: out.facts.cid.length };
  }

  /**
   * Everything the group needs to know, in one statement (round trips dominate on a busy
   * host): the log head, the frontier nodes of the current tree (computed in SQL from its
   * size), where the group's facts are already placed, and the newest stored version under
   * each of the group's supersession keys; with memory records, also what their closures and
   * derivation numbers need (MemoryIndexer.lookupSql), which `mem` takes in.
   */
  private async readState(client: pg.PoolClient, facts: ExpandedFact[], mem: MemoryIndexer | null) {
    const t = this.t;
    const keys = new Map<string, ExpandedFact>();
    for (const x of facts) keys.set(keyOf(x), x);
    const list = [...keys.values()];
    const [r] = await rows<{
      idx: string | null;
      accepted_at: string | null;
      frontier: [number, number, string][];
      placed: [string, number, string][];
      newest: [number, string, string, number, number, string][];
      mem_edges?: Parameters<MemoryIndexer['load']>[0];
      mem_seq?: string;
    }>(
      client,
      `WITH head AS (SELECT idx, accepted_at FROM ${t.entries} ORDER BY idx DESC LIMIT 1)
       SELECT (SELECT idx FROM head) AS idx, (SELECT accepted_at FROM head) AS accepted_at,
         (SELECT coalesce(json_agg(json_build_array(k.level, k.idx, encode(n.hash, 'hex'))), '[]')
            FROM (SELECT l.level, ((h.idx + 1) >> l.level) - 1 AS idx FROM head h CROSS JOIN generate_series(0, 62) AS l(level)
                   WHERE ((h.idx + 1) >> l.level) & 1 = 1) k
            -- OFFSET 0 keeps this a per-key probe on (level, idx); flattened, the planner probes
            -- by level alone and filters the whole level, which grows with the log.
            CROSS JOIN LATERAL (SELECT hash FROM ${t.nodes} WHERE level = k.level AND idx = k.idx OFFSET 0) n) AS frontier,
         (SELECT coalesce(json_agg(json_build_array(fact_cid, log_index, accepted_at)), '[]')
            FROM ${t.facts} WHERE fact_cid = ANY($1::text[])) AS placed,
         (SELECT coalesce(json_agg(json_build_array(k.i, f.fact_cid, f.accepted_at, f.log_index, f.position, f.attester)), '[]')
            FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[]) WITH ORDINALITY AS k(cell, scope_key, tslot, band, i)
            CROSS JOIN LATERAL (
              SELECT fact_cid, accepted_at, log_index, position, attester FROM ${t.facts}
               WHERE cell = k.cell AND scope_key = k.scope_key AND band = k.band AND tslot = k.tslot
               ORDER BY accepted_at DESC, log_index DESC, position DESC LIMIT 1) f) AS newest${
                 mem
                   ? `,
         ${MemoryIndexer.lookupSql(t, 6)}`
                   : ''
               }`,
      [
        [...new Set(facts.map((x) => x.fact.fact_cid))],
        list.map((x) => x.fact.cell),
        list.map((x) => x.scopeKey),
        list.map((x) => x.fact.tslot),
        list.map((x) => x.fact.band),
        ...(mem ? mem.lookupParams() : []),
      ],
      bounded,
    );
    if (mem) mem.load(r.mem_edges!, r.mem_seq!);
    const size = r.idx === null ? 0 : int(r.idx) + 1;
    const known = new Map<string, Uint8Array>();
    for (const [level, idx, hex] of r.frontier) known.set(`${level}:${idx}`, fromHex(hex));
    const placements = new Map<string, Placement>();
    for (const [cid, logIndex, at] of r.placed) placements.set(cid, { log_index: logIndex, accepted_at: at });
    const newest = new Map<string, Newest>();
    for (const [i, cid, at, logIndex, position, attester] of r.newest) {
      newest.set(keyOf(list[i - 1]), { fact_cid: cid, attester, accepted_at: at, log_index: logIndex, position });
    }
    return { size, lastAcceptedAt: r.accepted_at ?? '', known, placements, newest };
  }
}
