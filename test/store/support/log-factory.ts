/** Logs for store tests: the real DiskLog (src/store/log/disk-log.ts), opened by directory. */
import type { AppendOnlyLog, TreeHeadSigner } from '../../../src/store/contract.js';
import { openDiskLog } from '../../../src/store/log/disk-log.js';
import { readerOf } from '../../../src/store/log-reader.js';

export type OpenLog = (dir: string) => Promise<AppendOnlyLog>;

/** A log opener by directory (reopening a directory finds the same entries). */
export async function logOpener(signer: TreeHeadSigner, opts: { segmentMaxBytes?: number } = {}): Promise<{ kind: 'disk'; open: OpenLog }> {
  return { kind: 'disk', open: (dir) => openDiskLog({ dir, signer, segmentMaxBytes: opts.segmentMaxBytes }) };
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
