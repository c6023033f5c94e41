/**
 * Persistent perfect-subtree hashes of the log tree ("interior nodes"), so roots and proofs
 * cost O(log n) node reads instead of a rebuild.
 *
 * Node files: `nodes/level-LL.bin` (LL = two-digit level), one per tree level, holding node
 * (level, i) = hash of leaves [i·2^level, (i+1)·2^level) as 32 raw bytes at offset 32·i.
 * Level 0 holds the leaf hashes H(0x00 ‖ entry). A level file holds exactly
 * floor(size / 2^level) nodes once flushed. The files are derived data: they are written
 * without fsync and trusted on open only up to the checkpoint, which is written after they
 * are synced (see checkpoint.ts); everything past it is recomputed from the segments.
 *
 * Levels ≥ MEMORY_LEVEL stay wholly in memory (about size/4 bytes in all), which serves most
 * of a proof's reads; lower levels keep only nodes not yet written out and are otherwise read
 * with positional reads.
 *
 * Appending a leaf never fails on a disk error: it runs after the entry is durable, while the log
 * publishes it, and a throw there would leave the tree out of step with the log. A level file is
 * created at its first flush, and a flush that fails (a full disk) keeps the nodes in memory and
 * is tried again FLUSH_AT nodes later; only `sync` (before a checkpoint) reports the failure.
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, constants as fsc, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { nodeHash, type NodeSource } from '../../protocol/log-tree.js';
import { logFault, readFully } from './segment-format.js';
import { fsyncDir } from './checkpoint.js';
import { diskFaults } from '../disk-full.js';

export const MEMORY_LEVEL = 8;
/** Nodes buffered per level before they are written to the level file. */
const FLUSH_AT = 8192;
const LEVEL_RE = /^level-(\d{2})\.bin$/;

interface Level {
  /** The level file, or -1 until the first flush creates it. */
  fd: number;
  /** Nodes that exist at this level. */
  count: number;
  /** Nodes written to the file (not necessarily synced). */
  flushed: number;
  /** Index of the node at buf[0]. Always 0 for memory levels. */
  bufStart: number;
  buf: Uint8Array;
  /** Unflushed nodes at which the next flush is tried (grows after a failed one). */
  flushAt: number;
}

function levelName(level: number): string {
  return `level-${String(level).padStart(2, '0')}.bin`;
}

/** Tree-node storage over the `nodes/` directory; implements the protocol's NodeSource. */
export class NodeStore implements NodeSource {
  private readonly levels: Level[] = [];
  private leaves = 0;
  private dirty = false;

  private constructor(private readonly dir: string) {}

  /** Open (creating) the node directory; call `adopt` before use. */
  static open(dir: string): NodeStore {
    mkdirSync(dir, { recursive: true });
    const store = new NodeStore(dir);
    for (const name of readdirSync(dir)) {
      const m = LEVEL_RE.exec(name);
      if (m) store.fileOf(Number(m[1]));
    }
    return store;
  }

  /** Leaves in the tree. */
  get size(): number {
    return this.leaves;
  }

  private level(l: number): Level {
    while (this.levels.length <= l) {
      const k = this.levels.length;
      this.levels.push({ fd: -1, count: 0, flushed: 0, bufStart: 0, buf: new Uint8Array(k >= MEMORY_LEVEL ? 1024 : 32 * 64), flushAt: FLUSH_AT });
    }
    return this.levels[l];
  }

  /** The level's file descriptor, creating the file when it does not exist yet. */
  private fileOf(l: number): number {
    const L = this.level(l);
    if (L.fd < 0) {
      L.fd = openSync(join(this.dir, levelName(l)), fsc.O_RDWR | fsc.O_CREAT, 0o644);
      this.dirty = true;
    }
    return L.fd;
  }

  /** Bytes in the level's file (0 while it has none). */
  private fileBytes(l: number): number {
    const L = this.level(l);
    return L.fd < 0 ? 0 : fstatSync(L.fd).size;
  }

  /**
   * Take the files' first `size` leaves as given: cut every level file to floor(size/2^l)
   * nodes and load the memory levels. False (and an empty tree) when a file is too short.
   */
  adopt(size: number): boolean {
    for (let l = 0; l < this.levels.length || Math.floor(size / 2 ** l) > 0; l++) {
      const need = Math.floor(size / 2 ** l);
      if (need > 0 && Math.floor(this.fileBytes(l) / 32) < need) {
        this.adopt(0);
        return false;
      }
    }
    for (let l = 0; l < this.levels.length; l++) {
      const L = this.levels[l];
      const need = Math.floor(size / 2 ** l);
      if (L.fd >= 0) ftruncateSync(L.fd, need * 32);
      L.count = L.flushed = need;
      if (l >= MEMORY_LEVEL) {
        L.bufStart = 0;
        L.buf = new Uint8Array(Math.max(1024, need * 64));
        if (need > 0) readFully(L.fd, L.buf, 0, need * 32, 0);
      } else {
        L.bufStart = need;
      }
    }
    this.leaves = size;
    return true;
  }

  /** Drop every node past the first `size` leaves (after recovery cut entries away). */
  truncate(size: number): void {
    if (size > this.leaves) throw logFault(`node store: cannot truncate ${this.leaves} leaves to ${size}`);
    for (let l = 0; l < this.levels.length; l++) {
      const L = this.levels[l];
      const need = Math.floor(size / 2 ** l);
      if (need >= L.count) continue;
      L.count = need;
      if (L.flushed > need) {
        L.flushed = need;
        ftruncateSync(this.fileOf(l), need * 32);
      }
      if (L.bufStart > need) L.bufStart = need; // disk levels only: their buffer is then empty
    }
    this.leaves = size;
  }

  /** NodeSource: hash of the perfect subtree (level, index); it must exist. */
  node(level: number, index: number): Uint8Array {
    const L = this.levels[level];
    if (!L || index < 0 || index >= L.count) throw logFault(`log tree: node (${level}, ${index}) is not stored`);
    if (index >= L.bufStart) {
      const at = (index - L.bufStart) * 32;
      return L.buf.slice(at, at + 32);
    }
    const out = new Uint8Array(32);
    readFully(L.fd, out, 0, 32, index * 32);
    return out;
  }

  /** Nodes [from, to) of `level` as consecutive 32-byte hashes (bulk scans). */
  range(level: number, from: number, to: number): Uint8Array {
    const L = this.levels[level];
    if (!L || from < 0 || to > L.count || from > to) throw logFault(`log tree: nodes ${from}..${to} of level ${level} are not stored`);
    const out = new Uint8Array((to - from) * 32);
    const fileEnd = Math.min(to, L.bufStart);
    if (from < fileEnd) readFully(L.fd, out, 0, (fileEnd - from) * 32, from * 32);
    const memFrom = Math.max(from, L.bufStart);
    if (memFrom < to) out.set(L.buf.subarray((memFrom - L.bufStart) * 32, (to - L.bufStart) * 32), (memFrom - from) * 32);
    return out;
  }

  private push(l: number, hash: Uint8Array): void {
    const L = this.level(l);
    const used = (L.count - L.bufStart) * 32;
    if (used + 32 > L.buf.length) {
      const grown = new Uint8Array(L.buf.length * 2);
      grown.set(L.buf.subarray(0, used));
      L.buf = grown;
    }
    L.buf.set(hash, used);
    L.count++;
    if (L.count - L.flushed >= L.flushAt) {
      try {
        this.flushLevel(l);
        L.flushAt = FLUSH_AT;
      } catch {
        L.flushAt = L.count - L.flushed + FLUSH_AT; // kept in memory; `sync` reports the failure
      }
    }
  }

  /** Add the next leaf hash and every parent it completes; returns the nodes written. */
  appendLeaf(leaf: Uint8Array): number {
    let idx = this.leaves;
    this.push(0, leaf);
    this.leaves++;
    let written = 1;
    let h = leaf;
    for (let l = 0; idx % 2 === 1; l++) {
      h = nodeHash(this.node(l, idx - 1), h);
      this.push(l + 1, h);
      written++;
      idx = (idx - 1) / 2;
    }
    return written;
  }

  private flushLevel(l: number): void {
    const L = this.levels[l];
    if (L.flushed === L.count) return;
    const from = (L.flushed - L.bufStart) * 32;
    const bytes = L.buf.subarray(from, (L.count - L.bufStart) * 32);
    diskFaults.hook?.('log.nodes');
    const fd = this.fileOf(l);
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, L.flushed * 32 + done);
    L.flushed = L.count;
    if (l < MEMORY_LEVEL) L.bufStart = L.count; // disk levels drop what is now in the file
    this.dirty = true;
  }

  /** Write every buffered node to its file (no fsync). */
  flush(): void {
    for (let l = 0; l < this.levels.length; l++) this.flushLevel(l);
  }

  /** Flush and fsync every level file (before a checkpoint may name this size). */
  sync(): void {
    this.flush();
    if (!this.dirty) return;
    for (const L of this.levels) if (L.fd >= 0) fsyncSync(L.fd);
    fsyncDir(this.dir);
    this.dirty = false;
  }

  /** Close the level files (buffered nodes are flushed if the disk takes them, not synced). */
  close(): void {
    try {
      this.flush();
    } catch {
      // Derived data: the next open recomputes what the checkpoint does not vouch for.
    } finally {
      for (const L of this.levels) if (L.fd >= 0) closeSync(L.fd);
      this.levels.length = 0;
    }
  }
}
