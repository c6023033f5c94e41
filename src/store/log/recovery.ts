/**
 * Open-time recovery of a log directory: scan the segments, cut a torn tail off the last
 * unsealed segment, refuse (SvcError 'internal') anything else that is damaged, recompute the
 * tree nodes the checkpoint does not vouch for, and rebuild the in-memory indexes.
 *
 * Trust model. Entries are durable once their segment is fsynced; node files and the offset /
 * leaf indexes are derived. The checkpoint names a size C whose entries and nodes were synced
 * before it was written, so records before C are only walked for framing (unless the log is
 * small enough to hash-check everything quickly), while every record from C on is hash-checked
 * and its nodes recomputed. `verifyLogDir` always checks everything.
 */
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { equalBytes } from '../../protocol/bytes.js';
import { leafHash, treeRoot } from '../../protocol/log-tree.js';
import { CHECKPOINT_FILE, fsyncDir, readCheckpoint, writeCheckpoint } from './checkpoint.js';
import { LeafIndex, OffsetTable } from './memory-index.js';
import { NodeStore } from './node-store.js';
import { listSegments, logFault, scanSegment, segmentName, segmentPath, TRAILER_BYTES, type SegmentInfo, type Trailer } from './segment-format.js';

/** What open found and repaired. */
export interface RecoveryReport {
  /** Bytes cut from the tail of the last segment (a torn, never-acknowledged write). */
  truncated_bytes: number;
  /** Tree nodes (leaves included) recomputed from the segments. */
  rebuilt_nodes: number;
  segments: number;
  entries: number;
  /** Repairs and oddities worth a log line; open throws instead for anything unrepairable. */
  problems: string[];
}

/** Everything the log needs in memory after open. */
export interface RecoveredLog {
  segments: SegmentInfo[];
  offsets: OffsetTable;
  nodes: NodeStore;
  leafIndex: LeafIndex;
  size: number;
  report: RecoveryReport;
}

export interface RecoverOptions {
  dir: string;
  /** Hash-check every record when the segments total fewer bytes than this. */
  fullVerifyBelowBytes: number;
}

/** Leaf hashes read per chunk while rebuilding the leaf index. */
const LEAF_CHUNK = 1 << 16;

/** Scan, repair and index the log in `opts.dir` (created when missing). */
export function recoverLog(opts: RecoverOptions): RecoveredLog {
  const { dir } = opts;
  mkdirSync(dir, { recursive: true });
  const nums = listSegments(dir, readdirSync(dir));
  const problems: string[] = [];
  const nodes = NodeStore.open(join(dir, 'nodes'));
  try {
    return recoverWith(opts, nums, nodes, problems);
  } catch (err) {
    nodes.close();
    throw err;
  }
}

/** The checkpointed size whose nodes are usable (0 when none), after adopting them. */
function trustedPrefix(dir: string, nodes: NodeStore, problems: string[]): number {
  const ck = readCheckpoint(dir);
  if (ck === 'invalid') problems.push('checkpoint file is malformed; recomputing every tree node');
  if (ck === null || ck === 'invalid') {
    if (ck === 'invalid') dropCheckpoint(dir);
    nodes.adopt(0);
    return 0;
  }
  if (!nodes.adopt(ck.size)) {
    problems.push(`node files hold fewer than the checkpoint's ${ck.size} entries; recomputing every tree node`);
  } else if (!equalBytes(treeRoot(nodes, ck.size), ck.root)) {
    problems.push(`node files disagree with the checkpoint root at size ${ck.size}; recomputing every tree node`);
    nodes.adopt(0);
  } else {
    return ck.size;
  }
  dropCheckpoint(dir);
  return 0;
}

function recoverWith(opts: RecoverOptions, nums: number[], nodes: NodeStore, problems: string[]): RecoveredLog {
  const { dir } = opts;
  let trusted = trustedPrefix(dir, nodes, problems);
  const checkpointed = trusted;
  let totalBytes = 0;
  for (const num of nums) totalBytes += statSync(segmentPath(dir, num)).size;
  const verifyAll = totalBytes < opts.fullVerifyBelowBytes;

  const offsets = new OffsetTable();
  offsets.reserve(trusted);
  const segments: SegmentInfo[] = [];
  const trailers: { seg: SegmentInfo; offset: number; trailer: Trailer }[] = [];
  let n = 0;
  let rebuilt = 0;
  let truncated = 0;

  for (const num of nums) {
    const name = segmentName(num);
    const path = segmentPath(dir, num);
    const isLast = num === nums.length - 1;
    const first = n;
    const fd = openSync(path, isLast ? 'r+' : 'r'); // only the last segment may need cutting
    try {
      const res = scanSegment(
        fd,
        (k) => verifyAll || first + k >= trusted,
        (offset, _len, entry) => {
          offsets.push(num, offset);
          if (n >= trusted) rebuilt += nodes.appendLeaf(leafHash(entry!));
          n++;
        },
      );
      const seg: SegmentInfo = { num, first, count: res.records, dataEnd: res.dataEnd, sealed: false };
      const end = res.end;
      const cut = (at: number, why: string) => {
        const size = fstatSync(fd).size;
        ftruncateSync(fd, at);
        fsyncSync(fd);
        truncated += size - at;
        problems.push(`${name}: cut ${size - at} bytes at offset ${at} (${why})`);
      };
      if (end.kind === 'eof') {
        if (!isLast) throw logFault(`log ${dir}: ${name} has no trailer but is followed by another segment`, { segment: name, offset: res.dataEnd });
      } else if (end.kind === 'sealed') {
        seg.sealed = true;
        if (end.extra > 0) {
          if (!isLast) throw logFault(`log ${dir}: ${name}: ${end.extra} bytes follow the trailer at offset ${end.offset}`, { segment: name, offset: end.offset });
          cut(end.offset + TRAILER_BYTES, 'bytes after the trailer');
        }
        if (end.trailer.count !== res.records || end.trailer.first !== first) {
          throw logFault(`log ${dir}: ${name}: trailer at offset ${end.offset} says ${end.trailer.count} entries from ${end.trailer.first}, segment holds ${res.records} from ${first}`, {
            segment: name,
            offset: end.offset,
          });
        }
        trailers.push({ seg, offset: end.offset, trailer: end.trailer });
      } else if (isLast && (end.kind === 'torn' || end.atTail)) {
        cut(end.offset, end.reason);
      } else {
        throw logFault(`log ${dir}: ${name}: ${end.kind === 'torn' ? `incomplete record (${end.reason})` : end.reason} at offset ${end.offset}`, {
          segment: name,
          offset: end.offset,
        });
      }
      segments.push(seg);
    } finally {
      closeSync(fd);
    }
  }

  if (n < trusted) {
    problems.push(`segments hold ${n} entries but the checkpoint recorded ${trusted} as durable: entries ${n}..${trusted - 1} were lost`);
    nodes.truncate(n);
    trusted = n;
  }
  for (const { seg, offset, trailer } of trailers) {
    if (!equalBytes(treeRoot(nodes, seg.first + seg.count), trailer.root)) {
      const name = segmentName(seg.num);
      throw logFault(`log ${dir}: ${name}: trailer at offset ${offset} does not match the log's root after this segment`, { segment: name, offset });
    }
  }

  nodes.flush();
  const leafIndex = new LeafIndex((i) => nodes.node(0, i));
  for (let from = 0; from < n; from += LEAF_CHUNK) leafIndex.appendTags(nodes.range(0, from, Math.min(n, from + LEAF_CHUNK)));
  leafIndex.rebuild();

  // Name the recovered size in a fresh checkpoint, so a later crash never trusts nodes that a
  // cut tail or a rebuild has since rewritten.
  if (checkpointed !== n || rebuilt > 0 || !existsSync(join(dir, CHECKPOINT_FILE))) {
    nodes.sync();
    writeCheckpoint(dir, { size: n, root: treeRoot(nodes, n) });
  }
  return {
    segments,
    offsets,
    nodes,
    leafIndex,
    size: n,
    report: { truncated_bytes: truncated, rebuilt_nodes: rebuilt, segments: segments.length, entries: n, problems },
  };
}

/**
 * Remove a checkpoint whose nodes cannot be trusted before rebuilding them: a crash part-way
 * through the rebuild must not leave a checkpoint that vouches for half-rewritten files.
 */
function dropCheckpoint(dir: string): void {
  const p = join(dir, CHECKPOINT_FILE);
  if (existsSync(p)) {
    unlinkSync(p);
    fsyncDir(dir);
  }
}
