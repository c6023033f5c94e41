/** The read-only view of a log, so holders of `store.log` cannot append behind the index. */
import type { LogReader } from './contract.js';

/** A LogReader exposing only the reader methods of `log` (any log implementation). */
export function readerOf(log: LogReader): LogReader {
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
