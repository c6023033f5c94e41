/**
 * An in-memory AppendOnlyLog for store tests: RFC 6962 tree over the entries (protocol/log-tree),
 * signed tree heads, and a shared state object so a test can "reopen" the same log.
 */
import { b32encode } from '../../../src/protocol/base32.js';
import { equalBytes } from '../../../src/protocol/bytes.js';
import { blake3 } from '../../../src/protocol/hash.js';
import { consistencyProof, inclusionProof, leafHash, memoryNodeSource, treeRoot, type NodeSource } from '../../../src/protocol/log-tree.js';
import { isoSeconds } from '../../../src/protocol/receipt.js';
import { sthDigest, type SignedTreeHead } from '../../../src/protocol/tree-head.js';
import type { AppendOnlyLog, TreeHeadSigner } from '../../../src/store/contract.js';

/** The entries of one memory log; survives `close()` so a test can reopen it. */
export interface MemoryLogState {
  entries: Uint8Array[];
  leaves: Uint8Array[];
  nodes: NodeSource;
}

/** A fresh, empty log state. */
export function memoryLogState(): MemoryLogState {
  const leaves: Uint8Array[] = [];
  return { entries: [], leaves, nodes: memoryNodeSource(leaves) };
}

export interface MemoryLogOptions {
  signer: TreeHeadSigner;
  state?: MemoryLogState;
  now?: () => Date;
  prefix?: string;
  /** When it returns true, the next append throws before storing anything. */
  failAppend?: () => boolean;
}

/** Open an in-memory AppendOnlyLog over `opts.state` (a new one when absent). */
export function createInMemoryLog(opts: MemoryLogOptions): AppendOnlyLog & { readonly state: MemoryLogState } {
  const state = opts.state ?? memoryLogState();
  const now = opts.now ?? (() => new Date());
  let closed = false;
  const open = () => {
    if (closed) throw new Error('memory log: closed');
  };
  const checkSize = (size: number) => {
    if (!Number.isSafeInteger(size) || size < 0 || size > state.entries.length) throw new RangeError(`size: ${size} is not within [0, ${state.entries.length}]`);
  };
  return {
    state,
    async append(entry) {
      open();
      if (opts.failAppend?.()) throw new Error('memory log: injected append failure');
      state.entries.push(entry.slice());
      state.leaves.push(leafHash(entry));
      return state.entries.length - 1;
    },
    async *entries(from, to) {
      open();
      for (let i = from; i < Math.min(to, state.entries.length); i++) yield { index: i, entry: state.entries[i] };
    },
    async size() {
      open();
      return state.entries.length;
    },
    async root(size = state.entries.length) {
      open();
      checkSize(size);
      return treeRoot(state.nodes, size);
    },
    async entry(index) {
      open();
      return state.entries[index] ?? null;
    },
    async leafIndexOf(hash) {
      open();
      // Accept the RFC 6962 leaf hash or the record hash H(entry).
      const i = state.leaves.findIndex((l, k) => equalBytes(l, hash) || equalBytes(blake3(state.entries[k]), hash));
      return i < 0 ? null : i;
    },
    async inclusionProof(index, size) {
      open();
      checkSize(size);
      return inclusionProof(state.nodes, index, size);
    },
    async consistencyProof(first, second) {
      open();
      checkSize(second);
      return consistencyProof(state.nodes, first, second);
    },
    async latestTreeHead(): Promise<SignedTreeHead> {
      open();
      const size = state.entries.length;
      const root = treeRoot(state.nodes, size);
      const signedAt = isoSeconds(now());
      const sig = opts.signer.sign(sthDigest(size, root, signedAt, opts.signer.publicKey, opts.prefix));
      return {
        tree_size: size,
        root: b32encode(root),
        signed_at: signedAt,
        responder: b32encode(opts.signer.publicKey),
        responder_key_epoch: opts.signer.epoch,
        signature: b32encode(sig),
      };
    },
    async close() {
      closed = true;
    },
  };
}
