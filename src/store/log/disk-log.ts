/**
 * The embedded, on-disk append-only transparency log (docs/protocol-notes.md §6).
 *
 * Layout of a log directory:
 *   seg-NNNNNN.log   entry records and, once full, a trailer (format: segment-format.ts)
 *   nodes/level-LL.bin  perfect-subtree hashes per tree level (node-store.ts)
 *   checkpoint       a synced (size, root) open may trust without re-hashing (checkpoint.ts)
 *
 * Durability: `append` resolves only after its record is fsynced. Appends queue and one writer
 * loop commits everything queued with a single write and a single fdatasync (group commit), so
 * throughput grows with concurrency while no append is acknowledged before its sync. Node files
 * and the in-memory indexes are derived and rebuilt from the segments on open, so a process
 * killed at any instant loses at most appends that were never acknowledged.
 *
 * A full disk (ENOSPC, EDQUOT) fails only the batch being written: it is refused with the typed
 * `storage_full`, the bytes past the last published record are cut away, and the next append
 * tries again, so writes resume by themselves once space is back. Node files and checkpoints are
 * derived and may lag meanwhile (node-store.ts keeps unwritten nodes in memory). Any other write
 * failure still stops the log until a reopen, as before: its cause is unknown.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { b32encode } from '../../protocol/base32.js';
import { SvcError } from '../../protocol/errors.js';
import { blake3 } from '../../protocol/hash.js';
import { consistencyProof, inclusionProof, leafHash, treeRoot } from '../../protocol/log-tree.js';
import { DEFAULT_PREFIX } from '../../protocol/preimage.js';
import { isoSeconds } from '../../protocol/receipt.js';
import { sthDigest, type SignedTreeHead } from '../../protocol/tree-head.js';
import type { AppendOnlyLog, TreeHeadSigner } from '../contract.js';
import { FullState, isDiskFull, type StorageHealth } from '../disk-full.js';
import { fsyncDir, writeCheckpoint } from './checkpoint.js';
import type { LeafIndex, OffsetTable } from './memory-index.js';
import type { NodeStore } from './node-store.js';
import { recoverLog, type RecoveryReport } from './recovery.js';
import { encodeTrailer, logFault, MAX_ENTRY_BYTES, putRecord, readFully, RECORD_OVERHEAD, segmentName, segmentPath, TRAILER_BYTES, type SegmentInfo } from './segment-format.js';
import { checkRecord, createSegmentFile, SegmentReadFds, writeAt } from './segment-io.js';

export type { RecoveryReport } from './recovery.js';
export { verifyLogDir, type LogVerification } from './verify.js';

export interface DiskLogOptions {
  dir: string;
  signer: TreeHeadSigner;
  /** Segment cap including its trailer; default 1 GiB. */
  segmentMaxBytes?: number;
  /** Domain prefix of signed tree heads; default 'svc'. */
  prefix?: string;
  /** Open hash-checks every record when the segments total less than this; default 32 MiB. */
  fullVerifyBelowBytes?: number;
  /** Write a checkpoint after this many new entries; default 131072. */
  checkpointEvery?: number;
}

const GIB = 1 << 30;
const DEFAULT_FULL_VERIFY_BYTES = 32 << 20;
const DEFAULT_CHECKPOINT_EVERY = 1 << 17;
/** Bytes read per positional read while iterating entries. */
const READ_SPAN = 1 << 20;

interface Pending {
  entries: Uint8Array[];
  resolve: (firstIndex: number) => void;
  reject: (err: unknown) => void;
}

/** Open (creating or recovering) the log in `opts.dir`. */
export async function openDiskLog(opts: DiskLogOptions): Promise<DiskLog & { recovery: RecoveryReport }> {
  const state = recoverLog({ dir: opts.dir, fullVerifyBelowBytes: opts.fullVerifyBelowBytes ?? DEFAULT_FULL_VERIFY_BYTES });
  const last = state.segments[state.segments.length - 1];
  let handle: FileHandle | null = null;
  try {
    if (last && !last.sealed) handle = await open(segmentPath(opts.dir, last.num), 'r+');
  } catch (err) {
    state.nodes.close();
    throw err;
  }
  return new DiskLog(opts, state.segments, state.offsets, state.nodes, state.leafIndex, state.size, handle, state.report);
}

/** The on-disk AppendOnlyLog; construct it with `openDiskLog`. */
export class DiskLog implements AppendOnlyLog {
  /** fsync/fdatasync calls made on segment files (group-commit accounting). */
  fsyncCount = 0;
  readonly recovery: RecoveryReport;
  private readonly dir: string;
  private readonly signer: TreeHeadSigner;
  private readonly prefix: string;
  private readonly segmentMaxBytes: number;
  private readonly checkpointEvery: number;
  private n: number;
  private checkpointSize: number;
  private nextCheckpointAt: number;
  private rootCache: { size: number; root: Uint8Array } | null = null;
  private sthCache: SignedTreeHead | null = null;
  private queue: Pending[] = [];
  private writing = false;
  private drained: (() => void)[] = [];
  private closed = false;
  private closing: Promise<void> | null = null;
  private broken: SvcError | null = null;
  /** Set while the last batch met a full disk; cleared by the next batch that commits. */
  private readonly space = new FullState('log');
  /** True when bytes past the last published record could not be cut after a failure. */
  private tailDirty = false;
  private readonly readFds: SegmentReadFds;

  /** @internal use openDiskLog. */
  constructor(
    opts: DiskLogOptions,
    private readonly segments: SegmentInfo[],
    private readonly offsets: OffsetTable,
    private readonly nodes: NodeStore,
    private readonly leafIndex: LeafIndex,
    size: number,
    private active: FileHandle | null,
    report: RecoveryReport,
  ) {
    this.dir = opts.dir;
    this.readFds = new SegmentReadFds(opts.dir);
    this.signer = opts.signer;
    this.prefix = opts.prefix ?? DEFAULT_PREFIX;
    this.segmentMaxBytes = opts.segmentMaxBytes ?? GIB;
    this.checkpointEvery = opts.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
    this.n = size;
    this.checkpointSize = size;
    this.nextCheckpointAt = size + this.checkpointEvery;
    this.recovery = report;
  }

  // ---- reads -------------------------------------------------------------------------------

  /** Acknowledged entries. */
  async size(): Promise<number> {
    return this.n;
  }

  /** RFC 6962 root of the first `size` entries (default: all). */
  async root(size?: number): Promise<Uint8Array> {
    const s = size ?? this.n;
    this.checkSize('size', s);
    return this.rootAt(s).slice();
  }

  private rootAt(s: number): Uint8Array {
    if (this.rootCache?.size === s) return this.rootCache.root;
    const root = treeRoot(this.nodes, s);
    if (s === this.n) this.rootCache = { size: s, root };
    return root;
  }

  /** Entry bytes at `index`, or null past the end. */
  async entry(index: number): Promise<Uint8Array | null> {
    if (!Number.isSafeInteger(index) || index < 0 || index >= this.n) return null;
    const span = this.recordSpan(index);
    const buf = new Uint8Array(span.end - span.offset);
    readFully(this.readFds.get(span.seg), buf, 0, buf.length, span.offset);
    return checkRecord(this.dir, span.seg, span.offset, buf).slice();
  }

  /**
   * Bytes [start, end) of entry `index`, read without its record check (one positional read of
   * just those bytes), or null when the entry or the range does not exist. For an index that
   * keeps where a fact body sits in its entry: the caller checks the bytes against a digest it
   * already holds (a fact body against its cid), which covers them as the record hash would.
   */
  entryRange(index: number, start: number, end: number): Uint8Array | null {
    if (!Number.isSafeInteger(index) || index < 0 || index >= this.n) return null;
    const span = this.recordSpan(index);
    const len = span.end - span.offset - RECORD_OVERHEAD;
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end > len) return null;
    const buf = new Uint8Array(end - start);
    readFully(this.readFds.get(span.seg), buf, 0, buf.length, span.offset + 4 + start);
    return buf;
  }

  /** Entries [from, to) in order, read in spans of about a megabyte. */
  async *entries(from: number, to: number): AsyncIterable<{ index: number; entry: Uint8Array }> {
    let i = Math.max(0, Math.floor(from));
    const stop = Math.min(to, this.n);
    while (i < stop) {
      const first = this.recordSpan(i);
      let j = i + 1;
      let end = first.end;
      while (j < stop) {
        const next = this.recordSpan(j);
        if (next.seg !== first.seg || next.end - first.offset > READ_SPAN) break;
        end = next.end;
        j++;
      }
      const buf = new Uint8Array(end - first.offset);
      readFully(this.readFds.get(first.seg), buf, 0, buf.length, first.offset);
      for (let k = i; k < j; k++) {
        const span = this.recordSpan(k);
        const entry = checkRecord(this.dir, span.seg, span.offset, buf.subarray(span.offset - first.offset, span.end - first.offset));
        yield { index: k, entry: entry.slice() };
      }
      i = j;
    }
  }

  /** Leaf index whose leaf hash is `entryHash`, or null. */
  async leafIndexOf(entryHash: Uint8Array): Promise<number | null> {
    return entryHash instanceof Uint8Array ? this.leafIndex.find(entryHash) : null;
  }

  /** Audit path for leaf `index` in the tree of `size` entries. */
  async inclusionProof(index: number, size: number): Promise<Uint8Array[]> {
    this.checkSize('size', size);
    if (!Number.isSafeInteger(index) || index < 0 || index >= size) {
      throw new SvcError('invalid_argument', `index: ${index} is not below tree size ${size}`, { field: 'index' });
    }
    return inclusionProof(this.nodes, index, size);
  }

  /** Proof that the tree of `second` entries extends the tree of `first`. */
  async consistencyProof(first: number, second: number): Promise<Uint8Array[]> {
    this.checkSize('second', second);
    if (!Number.isSafeInteger(first) || first < 0 || first > second) {
      throw new SvcError('invalid_argument', `first: ${first} must be within [0, ${second}]`, { field: 'first' });
    }
    return consistencyProof(this.nodes, first, second);
  }

  /** The signed head of the current tree (signed once per tree size). */
  async latestTreeHead(): Promise<SignedTreeHead> {
    const size = this.n;
    if (this.sthCache?.tree_size === size) return { ...this.sthCache };
    const root = this.rootAt(size);
    const signedAt = isoSeconds(new Date());
    const signature = this.signer.sign(sthDigest(size, root, signedAt, this.signer.publicKey, this.prefix));
    this.sthCache = {
      tree_size: size,
      root: b32encode(root),
      signed_at: signedAt,
      responder: b32encode(this.signer.publicKey),
      responder_key_epoch: this.signer.epoch,
      signature: b32encode(signature),
    };
    return { ...this.sthCache };
  }

  private checkSize(field: string, s: number): void {
    if (!Number.isSafeInteger(s) || s < 0 || s > this.n) {
      throw new SvcError('invalid_argument', `${field}: ${s} is not within the tree size ${this.n}`, { field });
    }
  }

  /** Where record `i` lives: its segment and byte range [offset, end). */
  private recordSpan(i: number): { seg: number; offset: number; end: number } {
    const seg = this.offsets.segment(i);
    const offset = this.offsets.offset(i);
    // Records are contiguous, so the next record's start (or the segment's data end) bounds this one.
    const end = i + 1 < this.n && this.offsets.segment(i + 1) === seg ? this.offsets.offset(i + 1) : this.segments[seg].dataEnd;
    return { seg, offset, end };
  }

  // ---- writes ------------------------------------------------------------------------------

  /** Append one entry; resolves with its index once it is fsynced. */
  append(entry: Uint8Array): Promise<number> {
    return this.enqueue([entry]);
  }

  /**
   * @internal Bulk import (benchmarks, replays): all `entries` in one queued batch, so one write
   * and one fsync per segment touched. Resolves with the first entry's index.
   */
  bulkAppend(entries: Uint8Array[]): Promise<number> {
    return this.enqueue(entries);
  }

  private enqueue(entries: Uint8Array[]): Promise<number> {
    if (this.closed) return Promise.reject(new SvcError('internal', `log ${this.dir} is closed`));
    if (this.broken) return Promise.reject(this.broken);
    for (const e of entries) {
      if (!(e instanceof Uint8Array)) return Promise.reject(new SvcError('invalid_argument', 'entry: expected bytes', { field: 'entry' }));
      if (e.length > MAX_ENTRY_BYTES) return Promise.reject(new SvcError('invalid_argument', `entry: ${e.length} bytes is too large`, { field: 'entry' }));
    }
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ entries, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        void this.writerLoop();
      }
    });
  }

  private async writerLoop(): Promise<void> {
    await null; // let callers in the same tick join the first batch
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      if (this.broken) {
        for (const p of batch) p.reject(this.broken);
        continue;
      }
      const base = this.n;
      const firsts: number[] = [];
      let count = 0;
      for (const p of batch) {
        firsts.push(base + count);
        count += p.entries.length;
      }
      try {
        await this.commit(batch.flatMap((p) => p.entries));
        this.space.clear();
        batch.forEach((p, k) => p.resolve(firsts[k]));
      } catch (err) {
        // Out of space is transient: refuse this batch only. Anything else stops the log.
        const failure = isDiskFull(err)
          ? this.space.fail(err)
          : (this.broken = err instanceof SvcError ? err : new SvcError('internal', `log ${this.dir}: write failed: ${(err as Error).message}`, {}, { cause: err }));
        // Entries already fsynced and published stay (they are in the log); their appends resolve.
        batch.forEach((p, k) => (firsts[k] + p.entries.length <= this.n ? p.resolve(firsts[k]) : p.reject(failure)));
        await this.discardUnpublished();
      }
      if (!this.broken && this.n >= this.nextCheckpointAt) {
        this.nextCheckpointAt = this.n + this.checkpointEvery;
        try {
          this.checkpoint();
        } catch {
          // Derived data only: the entries are durable; the next checkpoint (or close) retries.
        }
      }
    }
    this.writing = false;
    for (const done of this.drained.splice(0)) done();
  }

  /** Write, fsync and publish `entries` (indices from the current size, in order). */
  private async commit(entries: Uint8Array[]): Promise<void> {
    // A failed batch may have left bytes past the last published record; never write behind them.
    if (this.tailDirty) await this.trimTail();
    const digests = entries.map((e) => blake3(e));
    const leaves = entries.map((e) => leafHash(e));
    let k = 0;
    while (k < entries.length) {
      let seg = this.segments[this.segments.length - 1];
      if (!seg || seg.sealed || !this.active) seg = await this.startSegment();
      let bytes = 0;
      let j = k;
      while (j < entries.length) {
        const rec = entries[j].length + RECORD_OVERHEAD;
        const fits = seg.dataEnd + bytes + rec + TRAILER_BYTES <= this.segmentMaxBytes;
        if (!fits && (seg.count > 0 || j > k)) break;
        bytes += rec;
        j++;
      }
      if (j === k) {
        await this.seal(seg);
        continue;
      }
      const buf = new Uint8Array(bytes);
      let at = 0;
      for (let i = k; i < j; i++) at = putRecord(buf, at, entries[i], digests[i]);
      await writeAt(this.active!, buf, seg.dataEnd);
      await this.active!.datasync();
      this.fsyncCount++;
      // Durable from here: publish the records to readers.
      // Tree first: if it throws, dataEnd still marks the last published record, which is
      // where discardUnpublished cuts the segment back to.
      for (let i = k; i < j; i++) {
        this.nodes.appendLeaf(leaves[i]);
        this.leafIndex.add(this.n, leaves[i]);
        this.offsets.push(seg.num, seg.dataEnd);
        seg.dataEnd += entries[i].length + RECORD_OVERHEAD;
        seg.count++;
        this.n++;
      }
      this.rootCache = null;
      k = j;
      if (k < entries.length) await this.seal(seg);
    }
  }

  /**
   * After a failed write: cut bytes past the last published record (a partial batch or trailer).
   * When even that fails, the next commit retries it first (reopen also would cut them).
   */
  private async discardUnpublished(): Promise<void> {
    try {
      await this.trimTail();
    } catch {
      this.tailDirty = true;
    }
  }

  private async trimTail(): Promise<void> {
    const seg = this.segments[this.segments.length - 1];
    if (this.active && seg && !seg.sealed) {
      await this.active.truncate(seg.dataEnd);
      await this.active.sync();
    }
    this.tailDirty = false;
  }

  /** Append the trailer to the active segment, fsync it and close it for writing. */
  private async seal(seg: SegmentInfo): Promise<void> {
    const trailer = encodeTrailer({ count: seg.count, first: seg.first, root: treeRoot(this.nodes, seg.first + seg.count) });
    await writeAt(this.active!, trailer, seg.dataEnd);
    await this.active!.sync();
    this.fsyncCount++;
    seg.sealed = true;
    await this.active!.close();
    this.active = null;
  }

  /** Create the next segment file and make its directory entry durable. */
  private async startSegment(): Promise<SegmentInfo> {
    const prev = this.segments[this.segments.length - 1];
    if (prev && !prev.sealed) throw logFault(`log ${this.dir}: ${segmentName(prev.num)} is open but has no write handle`);
    const num = prev ? prev.num + 1 : 0;
    const path = segmentPath(this.dir, num);
    const fh = await createSegmentFile(path);
    try {
      fsyncDir(this.dir);
    } catch (err) {
      await fh.close(); // the empty file stays; the next attempt reuses it
      throw err;
    }
    this.active = fh;
    const seg: SegmentInfo = { num, first: this.n, count: 0, dataEnd: 0, sealed: false };
    this.segments.push(seg);
    return seg;
  }

  /** Sync the node files and name the current size in the checkpoint. */
  private checkpoint(): void {
    this.nodes.sync();
    writeCheckpoint(this.dir, { size: this.n, root: this.rootAt(this.n) });
    this.checkpointSize = this.n;
  }

  /** Whether the last append met a full disk (GET /health). */
  storageHealth(): StorageHealth {
    return this.space.health();
  }

  /** Wait for queued appends, checkpoint, and close every file. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    if (this.writing) await new Promise<void>((resolve) => this.drained.push(resolve));
    try {
      if (!this.broken && this.checkpointSize !== this.n) this.checkpoint();
    } catch (err) {
      // Derived data: with the disk full the next open re-hashes from the last checkpoint instead.
      if (!isDiskFull(err)) throw err;
    } finally {
      await this.active?.close();
      this.active = null;
      this.nodes.close();
      this.readFds.closeAll();
    }
  }
}
