/**
 * Offline verification of a log directory (`npx svc log verify`): re-hash every record of every
 * segment, check each trailer against its segment, recompute the tree from the entries alone,
 * and check the checkpoint and the node files it vouches for. Read-only: it never repairs.
 */
import { closeSync, existsSync, fstatSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { equalBytes, toHex } from '../../protocol/bytes.js';
import { emptyRoot, leafHash, nodeHash } from '../../protocol/log-tree.js';
import { readCheckpoint } from './checkpoint.js';
import { ChunkReader, listSegments, scanSegment, segmentName, segmentPath, TRAILER_BYTES } from './segment-format.js';

/** Outcome of `verifyLogDir`. */
export interface LogVerification {
  /** True when no problem was found (warnings do not count). */
  ok: boolean;
  /** Entries in the verified prefix of the log. */
  entries: number;
  segments: number;
  /** Hex RFC 6962 root over those entries. */
  root_hex: string;
  /** Integrity failures: damaged records or trailers, history that disagrees with the checkpoint. */
  problems: string[];
  /** Repairable states the next open fixes: a torn tail, missing node files. */
  warnings: string[];
}

/**
 * RFC 6962 tree built leaf by leaf with O(log n) memory: a stack of perfect subtrees, folded
 * from the right for the root. `onNode` sees every perfect node as (level, index, hash).
 */
export class StreamingTree {
  private readonly stack: { level: number; hash: Uint8Array }[] = [];
  count = 0;

  constructor(private readonly onNode?: (level: number, index: number, hash: Uint8Array) => void) {}

  /** Add the next leaf hash. */
  push(leaf: Uint8Array): void {
    let idx = this.count++;
    let level = 0;
    let h = leaf;
    this.onNode?.(0, idx, h);
    while (this.stack.length > 0 && this.stack[this.stack.length - 1].level === level) {
      h = nodeHash(this.stack.pop()!.hash, h);
      level++;
      idx = Math.floor(idx / 2);
      this.onNode?.(level, idx, h);
    }
    this.stack.push({ level, hash: h });
  }

  /** MTH of the leaves pushed so far. */
  root(): Uint8Array {
    if (this.stack.length === 0) return emptyRoot();
    let r = this.stack[this.stack.length - 1].hash;
    for (let i = this.stack.length - 2; i >= 0; i--) r = nodeHash(this.stack[i].hash, r);
    return r;
  }
}

/** Compares recomputed nodes with the node files, level by level, sequentially. */
class NodeFileCheck {
  private readonly readers = new Map<number, ChunkReader | null>();
  private readonly fds: number[] = [];
  private readonly reported = new Set<number>();

  constructor(
    private readonly dir: string,
    private readonly upTo: number,
    private readonly problems: string[],
    private readonly warnings: string[],
  ) {}

  check(level: number, index: number, hash: Uint8Array): void {
    if ((index + 1) * 2 ** level > this.upTo || this.reported.has(level)) return;
    let rd = this.readers.get(level);
    if (rd === undefined) {
      const path = join(this.dir, `level-${String(level).padStart(2, '0')}.bin`);
      rd = null;
      if (existsSync(path)) {
        const fd = openSync(path, 'r');
        this.fds.push(fd);
        rd = new ChunkReader(fd, fstatSync(fd).size, 1 << 20);
      }
      this.readers.set(level, rd);
    }
    const stored = rd?.read(index * 32, 32);
    if (!stored) {
      this.reported.add(level);
      this.warnings.push(`nodes: level ${level} holds fewer nodes than the checkpoint needs (open rebuilds them)`);
    } else if (!equalBytes(stored, hash)) {
      this.reported.add(level);
      this.problems.push(`nodes: level ${level} node ${index} differs from the hash recomputed from the segments`);
    }
  }

  close(): void {
    for (const fd of this.fds) closeSync(fd);
  }
}

/** Verify every record, trailer and tree hash under `dir` without modifying anything. */
export async function verifyLogDir(dir: string): Promise<LogVerification> {
  const problems: string[] = [];
  const warnings: string[] = [];
  let nums: number[] = [];
  try {
    nums = listSegments(dir, readdirSync(dir));
  } catch (err) {
    problems.push((err as Error).message);
    return { ok: false, entries: 0, segments: 0, root_hex: toHex(emptyRoot()), problems, warnings };
  }
  const ck = readCheckpoint(dir);
  if (ck === 'invalid') warnings.push('checkpoint file is malformed (open recomputes every node)');
  const ckSize = ck && ck !== 'invalid' ? ck.size : 0;
  const nodeCheck = new NodeFileCheck(join(dir, 'nodes'), ckSize, problems, warnings);
  const tree = new StreamingTree((level, index, hash) => nodeCheck.check(level, index, hash));
  let ckChecked = ckSize === 0;
  // After the first break in the chain the tree stops growing; later segments are still checked.
  let intact = true;
  try {
    for (const num of nums) {
      const name = segmentName(num);
      const isLast = num === nums.length - 1;
      const first = tree.count;
      const fd = openSync(segmentPath(dir, num), 'r');
      let res;
      try {
        res = scanSegment(
          fd,
          () => true,
          (_offset, _len, entry) => {
            if (!intact) return;
            tree.push(leafHash(entry!));
            if (!ckChecked && tree.count === ckSize && ck && ck !== 'invalid') {
              ckChecked = true;
              if (!equalBytes(tree.root(), ck.root)) problems.push(`checkpoint: root at size ${ckSize} differs from the root recomputed from the segments`);
            }
          },
        );
      } finally {
        closeSync(fd);
      }
      const end = res.end;
      if (end.kind === 'eof') {
        if (!isLast) {
          problems.push(`${name}: no trailer, but a later segment exists (offset ${res.dataEnd})`);
          intact = false;
        }
      } else if (end.kind === 'sealed') {
        const t = end.trailer;
        if (t.count !== res.records || (intact && t.first !== first)) {
          problems.push(`${name}: trailer at offset ${end.offset} says ${t.count} entries from ${t.first}, segment holds ${res.records} from ${first}`);
          intact = false;
        } else if (intact && !equalBytes(t.root, tree.root())) {
          problems.push(`${name}: trailer at offset ${end.offset} does not match the log's root after this segment`);
          intact = false;
        }
        if (end.extra > 0) {
          if (isLast) warnings.push(`${name}: ${end.extra} bytes after the trailer at offset ${end.offset + TRAILER_BYTES} (open cuts them)`);
          else problems.push(`${name}: ${end.extra} bytes after the trailer at offset ${end.offset + TRAILER_BYTES}`);
        }
      } else if (isLast && (end.kind === 'torn' || end.atTail)) {
        warnings.push(`${name}: torn tail at offset ${end.offset} (${end.reason}); never acknowledged, open cuts it`);
      } else {
        problems.push(`${name}: ${end.kind === 'torn' ? `incomplete record (${end.reason})` : end.reason} at offset ${end.offset}`);
        intact = false;
      }
    }
  } finally {
    nodeCheck.close();
  }
  if (!ckChecked) problems.push(`checkpoint: records ${ckSize} durable entries but the segments hold only ${tree.count}`);
  return { ok: problems.length === 0, entries: tree.count, segments: nums.length, root_hex: toHex(tree.root()), problems, warnings };
}
