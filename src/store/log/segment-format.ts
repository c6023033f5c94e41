/**
 * On-disk segment format of the embedded transparency log (docs/protocol-notes.md §6, "Log
 * segments").
 *
 * A log directory holds `seg-000000.log`, `seg-000001.log`, … (six digits, more once past
 * 999999). A segment has no file header; it is a plain concatenation of records:
 *
 *   entry record   = u32-LE len ‖ entry[len] ‖ BLAKE3(entry)[32]          (len < 0xFFFFFFFF)
 *   trailer record = u32-LE 0xFFFFFFFF ‖ u64-LE count ‖ u64-LE first ‖ root[32] ‖ check[32]
 *                    (84 bytes)
 *
 * `count` is the number of entry records in the segment, `first` the log index of its first
 * entry, `root` the log's RFC 6962 tree root (BLAKE3, docs/protocol-notes.md §6) over entries
 * [0, first+count), i.e. the tree head as of the end of this segment, and `check` = BLAKE3 of
 * the trailer's first 52 bytes.
 *
 * Why a tree root rather than a hash of every record byte: each record already carries the
 * BLAKE3 of its entry (so every byte is covered); the root at the segment's end costs O(log n)
 * aligned node reads to produce or check (a hash over the segment alone would mean re-reading
 * up to 1 GiB when sealing, and a Merkle hash over an unaligned range is O(count) too), and it
 * chains every segment to the whole history before it. `check` lets recovery tell a torn trailer
 * (crash while sealing: repairable) from a complete trailer that disagrees with the records
 * (corruption: never repaired).
 *
 * A trailer ends a segment ("sealed"); only the last segment may lack one. A segment holds at
 * most `segmentMaxBytes` including its trailer, except that a segment's first record is always
 * accepted (an entry larger than the cap gets a segment of its own).
 */
import { fstatSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { blake3 } from '../../protocol/hash.js';
import { SvcError } from '../../protocol/errors.js';

export const RECORD_OVERHEAD = 4 + 32;
export const TRAILER_MARKER = 0xffffffff;
export const TRAILER_BYTES = 4 + 8 + 8 + 32 + 32;
/** Largest entry a record can frame (the marker value is reserved). */
export const MAX_ENTRY_BYTES = 0xfffffffe;

const SEGMENT_RE = /^seg-(\d{6,})\.log$/;

/** File name of segment `num`. */
export function segmentName(num: number): string {
  return `seg-${String(num).padStart(6, '0')}.log`;
}

/** Segment numbers present in `dir`, ascending; throws `internal` on a gap in the numbering. */
export function listSegments(dir: string, names: readonly string[]): number[] {
  const nums: number[] = [];
  for (const name of names) {
    const m = SEGMENT_RE.exec(name);
    if (m) nums.push(Number(m[1]));
  }
  nums.sort((a, b) => a - b);
  nums.forEach((num, k) => {
    if (num !== k) throw logFault(`log ${dir}: ${segmentName(k)} is missing (found ${segmentName(num)})`, { segment: segmentName(k) });
  });
  return nums;
}

/** Where a log segment lives. */
export function segmentPath(dir: string, num: number): string {
  return join(dir, segmentName(num));
}

/** An `internal` SvcError for on-disk faults (the message names the file and offset). */
export function logFault(message: string, details: Record<string, unknown> = {}): SvcError {
  return new SvcError('internal', message, details);
}

/** What the log keeps in memory about one segment. */
export interface SegmentInfo {
  num: number;
  /** Log index of the segment's first entry. */
  first: number;
  count: number;
  /** End of the last entry record (where the next record or the trailer goes). */
  dataEnd: number;
  sealed: boolean;
}

/** Write one entry record into `out` at `at`; returns the offset after it. */
export function putRecord(out: Uint8Array, at: number, entry: Uint8Array, digest: Uint8Array): number {
  new DataView(out.buffer, out.byteOffset, out.byteLength).setUint32(at, entry.length, true);
  out.set(entry, at + 4);
  out.set(digest, at + 4 + entry.length);
  return at + RECORD_OVERHEAD + entry.length;
}

/** A decoded trailer. */
export interface Trailer {
  count: number;
  first: number;
  /** Tree root over entries [0, first+count). */
  root: Uint8Array;
}

/** The 84 trailer bytes sealing a segment. */
export function encodeTrailer(t: Trailer): Uint8Array {
  const out = new Uint8Array(TRAILER_BYTES);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, TRAILER_MARKER, true);
  dv.setBigUint64(4, BigInt(t.count), true);
  dv.setBigUint64(12, BigInt(t.first), true);
  out.set(t.root, 20);
  out.set(blake3(out.subarray(0, 52)), 52);
  return out;
}

/** Parse 84 trailer bytes; null when the self-check fails (a torn or damaged trailer). */
export function decodeTrailer(bytes: Uint8Array): Trailer | null {
  if (bytes.length !== TRAILER_BYTES) return null;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dv.getUint32(0, true) !== TRAILER_MARKER) return null;
  const check = blake3(bytes.subarray(0, 52));
  for (let i = 0; i < 32; i++) if (check[i] !== bytes[52 + i]) return null;
  const count = dv.getBigUint64(4, true);
  const first = dv.getBigUint64(12, true);
  if (count > BigInt(Number.MAX_SAFE_INTEGER) || first > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return { count: Number(count), first: Number(first), root: bytes.slice(20, 52) };
}

/** Read exactly `length` bytes at `position` (short reads looped; EOF is an error). */
export function readFully(fd: number, into: Uint8Array, offset: number, length: number, position: number): void {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, into, offset + done, length - done, position + done);
    if (n === 0) throw logFault(`log read: unexpected end of file at offset ${position + done}`);
    done += n;
  }
}

/**
 * Sequential reader over a file that serves byte ranges from a large window, so a scan over
 * millions of small records costs a few big reads instead of a syscall per record.
 */
export class ChunkReader {
  private buf: Uint8Array = new Uint8Array(0);
  private start = 0;
  private len = 0;

  constructor(
    private readonly fd: number,
    readonly size: number,
    private readonly chunk = 4 << 20,
  ) {}

  /** Bytes [offset, offset+length), or null past EOF. The view is valid until the next call. */
  read(offset: number, length: number): Uint8Array | null {
    if (offset + length > this.size) return null;
    if (offset >= this.start && offset + length <= this.start + this.len) {
      return this.buf.subarray(offset - this.start, offset - this.start + length);
    }
    const want = Math.min(Math.max(this.chunk, length), this.size - offset);
    if (this.buf.length < want) this.buf = new Uint8Array(Math.max(want, this.chunk));
    readFully(this.fd, this.buf, 0, want, offset);
    this.start = offset;
    this.len = want;
    return this.buf.subarray(0, length);
  }

  /** The u32-LE at `offset`, or -1 past EOF (no view allocated: the hot path of a scan). */
  u32At(offset: number): number {
    if (offset + 4 > this.size) return -1;
    if (offset < this.start || offset + 4 > this.start + this.len) this.read(offset, 4);
    const b = this.buf;
    const i = offset - this.start;
    return (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16)) + b[i + 3] * 0x1000000;
  }

  /** True when every byte from `offset` to EOF is zero (a file extended but never written). */
  zeroFrom(offset: number): boolean {
    for (let at = offset; at < this.size; ) {
      const n = Math.min(this.chunk, this.size - at);
      const view = this.read(at, n)!;
      for (let i = 0; i < n; i++) if (view[i] !== 0) return false;
      at += n;
    }
    return true;
  }
}

/** How a segment scan ended. */
export type ScanEnd =
  | { kind: 'eof' }
  | { kind: 'sealed'; offset: number; trailer: Trailer; extra: number }
  | { kind: 'torn'; offset: number; reason: string }
  | { kind: 'bad'; offset: number; reason: string; atTail: boolean };

export interface ScanResult {
  records: number;
  /** End of the last good entry record. */
  dataEnd: number;
  end: ScanEnd;
}

/**
 * Walk a segment's records. `verify(k)` says whether record k (0-based within the segment)
 * gets its BLAKE3 checked; `onRecord` receives the entry bytes for verified records (a view,
 * valid only during the call) and null for the others. Stops at the first record that is
 * incomplete (`torn`), fails its check (`bad`), or at a trailer (`sealed`).
 */
export function scanSegment(fd: number, verify: (k: number) => boolean, onRecord: (offset: number, length: number, entry: Uint8Array | null) => void): ScanResult {
  const size = fstatSync(fd).size;
  const rd = new ChunkReader(fd, size);
  let at = 0;
  let k = 0;
  const done = (end: ScanEnd): ScanResult => ({ records: k, dataEnd: at, end });
  while (at < size) {
    const len = rd.u32At(at);
    if (len < 0) return done({ kind: 'torn', offset: at, reason: 'short length field' });
    if (len === TRAILER_MARKER) {
      const raw = rd.read(at, TRAILER_BYTES);
      if (!raw) return done({ kind: 'torn', offset: at, reason: 'short trailer' });
      const trailer = decodeTrailer(raw);
      const extra = size - at - TRAILER_BYTES;
      if (!trailer) {
        if (extra === 0) return done({ kind: 'torn', offset: at, reason: 'trailer fails its self-check' });
        return done({ kind: 'bad', offset: at, reason: 'trailer fails its self-check', atTail: rd.zeroFrom(at + TRAILER_BYTES) });
      }
      return done({ kind: 'sealed', offset: at, trailer, extra });
    }
    const end = at + RECORD_OVERHEAD + len;
    if (end > size) return done({ kind: 'torn', offset: at, reason: `record of ${len} bytes runs past end of file` });
    if (verify(k)) {
      const rec = rd.read(at + 4, len + 32)!;
      const entry = rec.subarray(0, len);
      const digest = blake3(entry);
      let same = true;
      for (let i = 0; i < 32; i++) if (digest[i] !== rec[len + i]) same = false;
      if (!same) return done({ kind: 'bad', offset: at, reason: 'record fails its BLAKE3 check', atTail: end === size || rd.zeroFrom(at) });
      onRecord(at, len, entry);
    } else {
      onRecord(at, len, null);
    }
    at = end;
    k++;
  }
  return done({ kind: 'eof' });
}
