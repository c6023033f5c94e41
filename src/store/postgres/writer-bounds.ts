/**
 * How long one writer may hold the log (issue 13, item 3). The sequencer's transaction holds
 * the schema's advisory lock, and every responder of the deployment writes through that lock:
 * a writer frozen inside it (SIGSTOP, a long GC or VM pause, a partition that keeps its TCP
 * connection open) would stall every write of the deployment for as long as it stays frozen.
 *
 * Three independent bounds, each enough alone for the common case:
 * 1. Server side, set by the writer on its own transaction: a session idle inside the
 *    transaction for WRITER_IDLE_MS is terminated by PostgreSQL (which rolls back and frees
 *    the lock), and each statement under the lock is cancelled after WRITER_STATEMENT_MS.
 * 2. Waiter side: a writer that has waited FENCE_AFTER_MS for the lock looks at the holder,
 *    and terminates it if it has been waiting on its client for FENCE_STALLED_MS — the case
 *    the first bound misses (a holder stopped halfway through sending a large statement is
 *    "active", not idle) and a holder of an older build that set no timeouts.
 * 3. Client side: every statement of the writer has a deadline, so a writer whose server went
 *    silent (a partition) gives up instead of waiting for TCP, and a lock wait is bounded by
 *    LOCK_WAIT_MS (`lock_timeout`).
 * A transaction cut short never commits, so its batches are never acknowledged; the writer
 * reports them with a typed `overloaded` error (retry_after 1) and carries on.
 */
import type pg from 'pg';

/** A writer's session idle inside its transaction longer than this is terminated by the server. */
export const WRITER_IDLE_MS = 2_000;
/** Each statement of the writer under the lock is cancelled after this. */
export const WRITER_STATEMENT_MS = 5_000;
/** Longest wait for the log lock before a batch is refused (typed, retryable). */
export const LOCK_WAIT_MS = 15_000;
/** A waiter checks the holder after this long, then every FENCE_EVERY_MS. */
export const FENCE_AFTER_MS = 2_500;
export const FENCE_EVERY_MS = 1_000;
/** A holder waiting on its own client this long is terminated by a waiter. */
export const FENCE_STALLED_MS = 3_000;
/** Client-side slack over the server-side bounds before the writer stops waiting for an answer. */
export const CLIENT_SLACK_MS = 3_000;

/**
 * The statement that opens a writer's transaction and takes the log lock, in one round trip
 * (simple protocol; the key is our own decimal integer). READ COMMITTED: every statement after
 * the lock sees the previous holder's commit. The statement timeout is set after the lock so
 * that it does not cut the lock wait, which `lock_timeout` bounds instead.
 */
export function beginLockedSql(lockKey: string): string {
  return [
    'BEGIN ISOLATION LEVEL READ COMMITTED',
    `SET LOCAL lock_timeout = ${LOCK_WAIT_MS}`,
    `SET LOCAL idle_in_transaction_session_timeout = ${WRITER_IDLE_MS}`,
    `SELECT pg_advisory_xact_lock(${lockKey}::bigint)`,
    `SET LOCAL statement_timeout = ${WRITER_STATEMENT_MS}`,
  ].join('; ');
}

/**
 * Session TCP settings of a writer's connection, applied once per connection: the server
 * probes an idle peer after 5 s (3 probes 1 s apart) and drops a peer that has not
 * acknowledged sent data for 5 s, so a vanished writer's backend does not linger.
 */
export const TCP_SETTINGS_SQL = 'SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 3; SET tcp_user_timeout = 5000';

/** pg_locks coordinates of a bigint advisory lock: (classid, objid) = (high, low) 32 bits, objsubid 1. */
export function advisoryLockIds(lockKey: string): [string, string] {
  const u = BigInt.asUintN(64, BigInt(lockKey));
  return [(u >> 32n).toString(), (u & 0xffff_ffffn).toString()];
}

/**
 * Terminate the holder of the log lock if it has been waiting on its client for longer than
 * FENCE_STALLED_MS (other holders are left alone: a slow statement is the statement timeout's
 * business). Returns what was terminated. Needs the same role as the holder (or
 * pg_signal_backend), which the responders of one deployment have.
 */
export async function fenceStalledHolder(pool: pg.Pool, lockKey: string): Promise<Array<{ pid: number; stalled_s: number }>> {
  const [hi, lo] = advisoryLockIds(lockKey);
  const res = await pool.query<{ pid: number; stalled_s: number; terminated: boolean }>(
    `SELECT a.pid, extract(epoch FROM clock_timestamp() - a.state_change)::float8 AS stalled_s, pg_terminate_backend(a.pid) AS terminated
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid = $1::oid AND l.objid = $2::oid
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND a.pid <> pg_backend_pid() AND a.wait_event = 'ClientRead'
        AND a.state_change < clock_timestamp() - make_interval(secs => $3::float8 / 1000)`,
    [hi, lo, FENCE_STALLED_MS],
  );
  return res.rows.filter((r) => r.terminated).map((r) => ({ pid: r.pid, stalled_s: Number(r.stalled_s) }));
}

/**
 * While a writer waits for the lock: after FENCE_AFTER_MS, and every FENCE_EVERY_MS after,
 * fence a stalled holder. Returns the stop function (call it once the wait ended).
 */
export function watchLockWait(pool: pg.Pool, lockKey: string, log: (line: string) => void): () => void {
  let busy = false;
  let stopped = false;
  let deniedLogged = false;
  const check = async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      for (const t of await fenceStalledHolder(pool, lockKey)) {
        log(`store postgres: terminated log writer pid ${t.pid}: it held the log lock while its client was silent for ${t.stalled_s.toFixed(1)} s`);
      }
    } catch (err) {
      // Typically a role without the right to signal the holder: then only the holder's own
      // timeouts bound the wait. Said once per wait, not once per check.
      if (!deniedLogged) log(`store postgres: cannot check the log lock holder: ${(err as Error).message}`);
      deniedLogged = true;
    } finally {
      busy = false;
    }
  };
  let interval: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    void check();
    interval = setInterval(() => void check(), FENCE_EVERY_MS);
  }, FENCE_AFTER_MS);
  return () => {
    stopped = true;
    clearTimeout(first);
    clearInterval(interval);
  };
}

/** PostgreSQL error codes that mean the writer's transaction was cut short by a bound or lost. */
const LOST_CODES = new Set([
  '25P03', // idle_in_transaction_session_timeout
  '57014', // query_canceled: statement_timeout
  '55P03', // lock_not_available: lock_timeout
  '57P01', // admin_shutdown: pg_terminate_backend (a fence) or a server shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
]);

/** True when `err` means the transaction (or its connection) is gone, rather than a bad statement. */
export function isLostTransaction(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== 'object') return false;
  if (err instanceof WriterDeadline) return true;
  if (typeof e.code === 'string' && (LOST_CODES.has(e.code) || e.code.startsWith('08') || ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED'].includes(e.code))) return true;
  return typeof e.message === 'string' && /^(Connection terminated|Client has encountered a connection error|Client was closed)/.test(e.message);
}

/** The writer stopped waiting for its server's answer (client-side deadline). */
export class WriterDeadline extends Error {
  constructor(what: string, ms: number) {
    super(`no answer from PostgreSQL within ${ms} ms while ${what}`);
    this.name = 'WriterDeadline';
  }
}

/** When a deadline timer fires this much later than due, the process itself was frozen. */
const FROZEN_LATE_MS = 250;
const FROZEN_GRACE_MS = 200;

/**
 * `p`, or a WriterDeadline after `ms`. A timer that fires late means this process was frozen
 * (SIGSTOP, a long GC, a VM pause) and the answer may already sit unread in the socket, so the
 * deadline is extended once per freeze to give I/O a turn: a frozen writer whose COMMIT did
 * succeed then learns so, instead of reporting a committed batch as failed.
 */
export function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let due = performance.now() + ms;
    let timer: NodeJS.Timeout;
    const fire = () => {
      const now = performance.now();
      if (now - due > FROZEN_LATE_MS) {
        due = now + FROZEN_GRACE_MS;
        timer = setTimeout(fire, FROZEN_GRACE_MS);
        return;
      }
      reject(new WriterDeadline(what, ms));
    };
    timer = setTimeout(fire, ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
