/**
 * WAL checkpoints off the request path. By default SQLite checkpoints inside the commit that
 * pushes the WAL past 1 000 pages, and that commit then writes the pages back and syncs the
 * database file: a request that happened to commit waited 10–20 ms (docs/performance.md, "Ask").
 * A database whose connections turn automatic checkpoints off (`wal_autocheckpoint = 0`) gets a
 * thread of its own instead, with its own connection, running a PASSIVE checkpoint (it never
 * blocks a writer or a reader) every `everyMs`.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// Plain CommonJS run by the thread (`eval`), so it needs no TypeScript loader.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 1000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or gone: the next tick tries again */ }
}, workerData.everyMs);
parentPort.once('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

export interface Checkpointer {
  /** Stop the thread (its connection closes first). */
  stop(): Promise<void>;
}

/** Checkpoint the database at `path` every `everyMs` from a thread of its own. */
export function startCheckpointer(path: string, everyMs = 1000): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { path, everyMs, driver } });
  // A checkpoint thread never keeps the process alive, and its faults are not the caller's.
  worker.unref();
  worker.on('error', () => undefined);
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    stop() {
      // Held while it stops: whoever awaits this must not see the process end first.
      worker.ref();
      worker.postMessage('stop');
      return exited;
    },
  };
}
