/**
 * File-level I/O on the log's segment files: read descriptors kept open per segment, reading a
 * record back with its BLAKE3 check, writing a buffer fully at a position, and creating the
 * next segment file. Kept apart from disk-log.ts so the log there deals only in indexes,
 * queueing and publication, while the handle details (and the fault-injection hook on writes)
 * sit in one place.
 */
import { closeSync, openSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { blake3 } from '../../protocol/hash.js';
import { diskFaults } from '../disk-full.js';
import { logFault, RECORD_OVERHEAD, segmentName, segmentPath } from './segment-format.js';

/** Read-only descriptors of a log directory's segments, opened on first use and kept. */
export class SegmentReadFds {
  private readonly fds = new Map<number, number>();

  constructor(private readonly dir: string) {}

  /** The read descriptor of segment `seg`. */
  get(seg: number): number {
    let fd = this.fds.get(seg);
    if (fd === undefined) {
      fd = openSync(segmentPath(this.dir, seg), 'r');
      this.fds.set(seg, fd);
    }
    return fd;
  }

  /** Close every descriptor opened so far. */
  closeAll(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}

/** The entry inside a record's bytes (segment `seg` of `dir`, at `offset`), after checking its framing and BLAKE3. */
export function checkRecord(dir: string, seg: number, offset: number, rec: Uint8Array): Uint8Array {
  const len = (rec[0] | (rec[1] << 8) | (rec[2] << 16)) + rec[3] * 0x1000000;
  const entry = rec.subarray(4, 4 + len);
  const digest = blake3(entry);
  let ok = len + RECORD_OVERHEAD === rec.length;
  for (let i = 0; ok && i < 32; i++) ok = digest[i] === rec[4 + len + i];
  if (!ok) {
    throw logFault(`log ${dir}: ${segmentName(seg)}: record at offset ${offset} fails its BLAKE3 check`, { segment: segmentName(seg), offset });
  }
  return entry;
}

/** Write all of `buf` at `position` (short writes continue where they stopped). */
export async function writeAt(fh: FileHandle, buf: Uint8Array, position: number): Promise<void> {
  diskFaults.hook?.('log.write');
  for (let done = 0; done < buf.length; ) {
    const { bytesWritten } = await fh.write(buf, done, buf.length - done, position + done);
    done += bytesWritten;
  }
}

/**
 * A new segment file. One left empty by an attempt that failed (a full disk while syncing the
 * directory) is taken over; one holding bytes is never overwritten.
 */
export async function createSegmentFile(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || (await stat(path)).size !== 0) throw err;
    return open(path, 'r+');
  }
}
