/**
 * The transparency log as stored in PostgreSQL (docs/protocol-notes.md §6): entries in
 * `log_entries`, every perfect-subtree hash in `log_nodes`. Roots and proofs run the protocol's own
 * algorithms (protocol/log-tree.ts) over a NodeSource; since that interface is synchronous, each
 * call first runs the algorithm against a recording source to learn which nodes it needs (the set
 * depends only on the indices, never on hash values), fetches them in one query, then runs it for
 * real. Nodes never change once written, so upper levels are cached.
 */
import type pg from 'pg';
import { b32encode } from '../../protocol/base32.js';
import { SvcError } from '../../protocol/errors.js';
import { consistencyProof, inclusionProof, nodeHash, treeRoot, type NodeSource } from '../../protocol/log-tree.js';
import { isoSeconds } from '../../protocol/receipt.js';
import { sthDigest, type SignedTreeHead } from '../../protocol/tree-head.js';
import type { LogReader, TreeHeadSigner } from '../contract.js';
import { buf, bytes, int, pgFault, rows, type Db } from './pg-db.js';
import type { Tables } from './tables.js';

/** Levels at or above this stay cached in memory once read (about size/128 nodes in all). */
export const CACHE_LEVEL = 8;
const ZERO = new Uint8Array(32);

/** One perfect-subtree hash. */
export interface NodeRow {
  level: number;
  idx: number;
  hash: Uint8Array;
}

const keyOf = (level: number, idx: number): string => `${level}:${idx}`;

/**
 * The nodes that leaf `index` (hash `leaf`) completes: the leaf itself, then while the index is
 * odd, the parent with its left sibling taken from `known` (which must hold the frontier of the
 * tree of `index` leaves). New nodes are added to `known` so later leaves can use them.
 */
export function nodesCompletedBy(index: number, leaf: Uint8Array, known: Map<string, Uint8Array>): NodeRow[] {
  const out: NodeRow[] = [{ level: 0, idx: index, hash: leaf }];
  known.set(keyOf(0, index), leaf);
  let level = 0;
  let idx = index;
  let cur = leaf;
  while (idx % 2 === 1) {
    const left = known.get(keyOf(level, idx - 1));
    if (left === undefined) throw new SvcError('internal', `log_nodes: node (${level}, ${idx - 1}) is missing below leaf ${index}`);
    cur = nodeHash(left, cur);
    level++;
    idx = (idx - 1) / 2;
    known.set(keyOf(level, idx), cur);
    out.push({ level, idx, hash: cur });
  }
  return out;
}

/** Fetch the nodes named by `keys` in one query; the result is keyed by "level:idx". */
export async function fetchNodes(db: Db, t: Tables, keys: ReadonlyArray<readonly [number, number]>): Promise<Map<string, Uint8Array>> {
  const found = new Map<string, Uint8Array>();
  if (keys.length === 0) return found;
  const got = await rows<{ level: number; idx: string; hash: Buffer }>(
    db,
    `SELECT n.level, n.idx, n.hash FROM ${t.nodes} n
       JOIN unnest($1::int[], $2::bigint[]) AS k(level, idx) ON n.level = k.level AND n.idx = k.idx`,
    [keys.map((k) => k[0]), keys.map((k) => k[1])],
  );
  for (const r of got) found.set(keyOf(r.level, int(r.idx)), bytes(r.hash));
  return found;
}

export interface PgLogOptions {
  signer: TreeHeadSigner;
  now: () => Date;
  /** Protocol prefix of the STH domain (default `svc`). */
  prefix?: string;
}

/** LogReader over the log tables; shared by every process that opens the schema. */
export class PgLog implements LogReader {
  /** Largest size this process has seen: sizes never shrink, so checks below it need no query. */
  private knownSize = 0;
  private readonly upper = new Map<string, Uint8Array>();
  private sth: SignedTreeHead | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
    private readonly opts: PgLogOptions,
  ) {}

  async size(): Promise<number> {
    try {
      const [r] = await rows<{ n: string }>(this.pool, `SELECT coalesce(max(idx) + 1, 0) AS n FROM ${this.t.entries}`);
      const n = int(r.n);
      if (n > this.knownSize) this.knownSize = n;
      return n;
    } catch (err) {
      throw pgFault('log size', err);
    }
  }

  /** Keep what this process just committed (the sequencer calls it after COMMIT). */
  noteCommitted(size: number, nodes: readonly NodeRow[]): void {
    if (size > this.knownSize) this.knownSize = size;
    for (const n of nodes) if (n.level >= CACHE_LEVEL) this.upper.set(keyOf(n.level, n.idx), n.hash);
  }

  private async checkSize(size: number): Promise<void> {
    if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`size: ${size} is not a non-negative integer`);
    if (size <= this.knownSize) return;
    const cur = await this.size();
    if (size > cur) throw new RangeError(`size: ${size} is not within [0, ${cur}]`);
  }

  /** Run `compute` over the stored nodes: one dry run to collect keys, one query, one real run. */
  private async withNodes<T>(compute: (src: NodeSource) => T): Promise<T> {
    const need = new Map<string, [number, number]>();
    compute({
      node: (level, idx) => {
        const k = keyOf(level, idx);
        if (!this.upper.has(k)) need.set(k, [level, idx]);
        return ZERO;
      },
    });
    let found = new Map<string, Uint8Array>();
    if (need.size > 0) {
      try {
        found = await fetchNodes(this.pool, this.t, [...need.values()]);
      } catch (err) {
        throw pgFault('reading log_nodes', err);
      }
      for (const [k, [level, idx]] of need) {
        const h = found.get(k);
        if (h === undefined) throw new SvcError('internal', `log_nodes: node (${level}, ${idx}) is missing`);
        if (level >= CACHE_LEVEL) this.upper.set(k, h);
      }
    }
    return compute({ node: (level, idx) => this.upper.get(keyOf(level, idx)) ?? found.get(keyOf(level, idx))! });
  }

  async root(size?: number): Promise<Uint8Array> {
    const n = size ?? (await this.size());
    await this.checkSize(n);
    return this.withNodes((src) => treeRoot(src, n));
  }

  async entry(index: number): Promise<Uint8Array | null> {
    if (!Number.isSafeInteger(index) || index < 0) return null;
    try {
      const [r] = await rows<{ entry: Buffer }>(this.pool, `SELECT entry FROM ${this.t.entries} WHERE idx = $1`, [index]);
      return r ? bytes(r.entry) : null;
    } catch (err) {
      throw pgFault(`reading log entry ${index}`, err);
    }
  }

  /** Lowest index whose RFC 6962 leaf hash, or record hash H(entry), is `entryHash`. */
  async leafIndexOf(entryHash: Uint8Array): Promise<number | null> {
    if (!(entryHash instanceof Uint8Array)) throw new TypeError(`entryHash: expected Uint8Array, got ${typeof entryHash}`);
    if (entryHash.length !== 32) return null;
    try {
      const [r] = await rows<{ idx: string }>(this.pool, `SELECT idx FROM ${this.t.entries} WHERE leaf_hash = $1 OR entry_hash = $1 ORDER BY idx LIMIT 1`, [buf(entryHash)]);
      return r ? int(r.idx) : null;
    } catch (err) {
      throw pgFault('looking up a leaf hash', err);
    }
  }

  async inclusionProof(index: number, size: number): Promise<Uint8Array[]> {
    await this.checkSize(size);
    return this.withNodes((src) => inclusionProof(src, index, size));
  }

  async consistencyProof(first: number, second: number): Promise<Uint8Array[]> {
    await this.checkSize(second);
    return this.withNodes((src) => consistencyProof(src, first, second));
  }

  /** STH over the current size; re-signed only when the size moved (cached per size). */
  async latestTreeHead(): Promise<SignedTreeHead> {
    const size = await this.size();
    if (this.sth !== undefined && this.sth.tree_size === size) return { ...this.sth };
    const root = await this.root(size);
    const { signer } = this.opts;
    const signedAt = isoSeconds(this.opts.now());
    const sig = signer.sign(sthDigest(size, root, signedAt, signer.publicKey, this.opts.prefix));
    const sth: SignedTreeHead = {
      tree_size: size,
      root: b32encode(root),
      signed_at: signedAt,
      responder: b32encode(signer.publicKey),
      responder_key_epoch: signer.epoch,
      signature: b32encode(sig),
    };
    // Another caller may have signed a larger head meanwhile: keep the larger one.
    if (this.sth === undefined || this.sth.tree_size <= size) this.sth = sth;
    return { ...sth };
  }
}
