/**
 * A full disk is an operating condition, not a bug: the embedded store answers it with the typed
 * `storage_full` (503, Retry-After) instead of `internal`, keeps serving reads, reports it in
 * `/health`, and takes writes again by itself once space is back (docs/reliability.md, "Full
 * disk"). This module names the condition once for the log (disk-log.ts) and the index
 * (sqlite-store.ts, index-writer.ts), and holds the test seam that lets a test fill the disk
 * without a small filesystem.
 */
import { SvcError } from '../protocol/errors.js';
import { isoSeconds } from '../protocol/receipt.js';

/** Seconds a refused writer is told to wait (the index retries its commit every second meanwhile). */
export const STORAGE_FULL_RETRY_AFTER_S = 5;

/** Which part of the data directory met the full disk. */
export type StorageComponent = 'log' | 'index' | 'documents' | 'transients' | 'artifacts';
const COMPONENT_NAMES: Record<StorageComponent, string> = {
  log: 'transparency log',
  index: 'fact index',
  documents: 'document store',
  transients: 'short-lived state store',
  artifacts: 'artifact store',
};

/** ENOSPC from the file system, EDQUOT from a quota, SQLITE_FULL from SQLite writing its WAL. */
const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

/** True when `err` says the device (or the user's quota) has no room left. */
export function isDiskFull(err: unknown): boolean {
  if (err instanceof SvcError) return err.code === 'storage_full';
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && FULL_CODES.has(code);
}

/** The typed refusal: nothing of the refused write was acknowledged. */
export function storageFull(component: StorageComponent, cause?: unknown): SvcError {
  if (cause instanceof SvcError && cause.code === 'storage_full') return cause;
  return new SvcError(
    'storage_full',
    `the ${COMPONENT_NAMES[component]} cannot write: no space left on the storage device; nothing of this write was acknowledged, retry after ${STORAGE_FULL_RETRY_AFTER_S} s`,
    { component, retry_after: STORAGE_FULL_RETRY_AFTER_S },
    { cause },
  );
}

/** What `/health` shows of a store's storage. */
export interface StorageHealth {
  status: 'ok' | 'full';
  /** Present while full: which part, since when, and the last error. */
  component?: StorageComponent;
  since?: string;
  message?: string;
  retry_after?: number;
}

/** Whether a component is currently out of space, and since when. */
export class FullState {
  private err: SvcError | undefined;
  private since: Date | undefined;

  constructor(private readonly component: StorageComponent) {}

  /** The refusal to give while full, else undefined. */
  get error(): SvcError | undefined {
    return this.err;
  }

  /** Record a disk-full failure; returns the typed refusal. */
  fail(cause: unknown): SvcError {
    this.err = storageFull(this.component, cause);
    this.since ??= new Date();
    return this.err;
  }

  clear(): void {
    this.err = undefined;
    this.since = undefined;
  }

  health(): StorageHealth {
    if (!this.err) return { status: 'ok' };
    const cause = (this.err.cause as Error | undefined)?.message;
    return { status: 'full', component: this.component, since: isoSeconds(this.since!), message: cause ?? this.err.message, retry_after: STORAGE_FULL_RETRY_AFTER_S };
  }
}

/** Where the store writes, for the seam below. */
export type DiskFaultSite = 'log.write' | 'log.nodes' | 'log.checkpoint' | 'index.commit';

/**
 * Test seam: when a test sets `hook`, every write site of the embedded store calls it first,
 * and an error it throws stands for the write's own failure (`handle` is the SQLite database at
 * 'index.commit', so a hook can act as SQLite does on SQLITE_FULL). Production never sets it;
 * the cost is one property read per write.
 */
export const diskFaults: { hook?: (site: DiskFaultSite, handle?: unknown) => void } = {};

/** An ENOSPC error as node:fs raises it (for hooks). */
export function enospc(syscall = 'write'): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device, ${syscall}`), { code: 'ENOSPC', errno: -28, syscall });
}
