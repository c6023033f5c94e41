/**
 * Logs for store tests: the real DiskLog (src/store/log/disk-log.ts) when it is present, else the
 * in-memory log with per-directory state so "reopening" a directory finds the same entries.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AppendOnlyLog, TreeHeadSigner } from '../../../src/store/contract.js';
import { createInMemoryLog, memoryLogState, type MemoryLogState } from './memory-log.js';
import { readerOf } from '../../../src/store/log-reader.js';

export type OpenLog = (dir: string) => Promise<AppendOnlyLog>;

type DiskLogModule = {
  openDiskLog(opts: { dir: string; signer: TreeHeadSigner; segmentMaxBytes?: number; prefix?: string }): Promise<AppendOnlyLog>;
};

const DISK_LOG_URL = new URL('../../../src/store/log/disk-log.ts', import.meta.url);

/** The DiskLog module, or null while it does not exist yet. */
export async function loadDiskLog(): Promise<DiskLogModule | null> {
  if (!existsSync(fileURLToPath(DISK_LOG_URL))) return null;
  return (await import(DISK_LOG_URL.href)) as DiskLogModule;
}

/** A log opener by directory, and the name of the log kind it opens. */
export async function logOpener(signer: TreeHeadSigner, opts: { forceInMemory?: boolean; segmentMaxBytes?: number } = {}): Promise<{ kind: 'disk' | 'memory'; open: OpenLog }> {
  const disk = opts.forceInMemory ? null : await loadDiskLog();
  if (disk) return { kind: 'disk', open: (dir) => disk.openDiskLog({ dir, signer, segmentMaxBytes: opts.segmentMaxBytes }) };
  const states = new Map<string, MemoryLogState>();
  return {
    kind: 'memory',
    open: async (dir) => {
      let state = states.get(dir);
      if (!state) states.set(dir, (state = memoryLogState()));
      return createInMemoryLog({ signer, state });
    },
  };
}

/** `log` with an append that throws (before writing) while `fail()` is true. */
export function withFailingAppend(log: AppendOnlyLog, fail: () => boolean): AppendOnlyLog {
  return {
    append: (entry) => (fail() ? Promise.reject(new Error('test: injected log append failure')) : log.append(entry)),
    entries: (from, to) => log.entries(from, to),
    ...readerOf(log),
    close: () => log.close(),
  };
}
