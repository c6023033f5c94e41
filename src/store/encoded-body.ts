/**
 * A batch's bodies encoded once. The write path needs each body's canonical CBOR, its BLAKE3
 * digest and the batch tree over the digests to check the batch root before anything is written,
 * and the log entry and the index are built from the same bytes, digests and tree (entry.ts
 * encodeLogEntryParts, sqlite/indexed-entry.ts). So for bodies the write path owns, an
 * `OwnedBatchEncoder` freezes, encodes and hashes each body once and builds the tree once, and
 * records the result; a driver that finds it (`ownedBatch`) uses it instead of computing it again.
 *
 * Only the encoder computes what is recorded, and it records a batch only when it could freeze
 * every body whole (plain objects, arrays and scalars, as JSON and the CBOR envelope decode to):
 * a frozen body cannot change afterwards, so the record is always exactly encodeCanonical of each
 * body, its BLAKE3 and base32, and buildBatchTree over those digests: what the driver would
 * compute itself. A batch that is not recorded is encoded by the driver as before. One record per
 * batch (a WeakMap entry per body cost about as much as encoding the body).
 */
import { b32encode } from '../protocol/base32.js';
import { encodeCanonical, type CborValue } from '../protocol/cbor.js';
import { blake3 } from '../protocol/hash.js';
import { buildBatchTree, type BuiltTree } from './batch-tree.js';

export interface EncodedBody {
  /** encodeCanonical(body). */
  readonly bytes: Uint8Array;
  /** blake3(bytes): the fact_cid digest and the batch leaf. */
  readonly digest: Uint8Array;
  /** b32encode(digest): the fact_cid. */
  readonly cid: string;
}

export interface OwnedBatch {
  /** The bodies, in batch order (the very objects, frozen). */
  readonly bodies: readonly object[];
  readonly encoded: readonly EncodedBody[];
  /** buildBatchTree over the digests. Read-only. */
  readonly tree: BuiltTree;
}

/** Recorded batches, keyed by their first body. */
const recorded = new WeakMap<object, OwnedBatch>();

/**
 * Freeze a graph of plain JSON-like data in place. False (and the graph only partly frozen) when
 * it holds anything else: typed arrays cannot be frozen, and other objects may carry state.
 */
function freezePlain(x: unknown): boolean {
  if (x === null || typeof x !== 'object') return true;
  if (Array.isArray(x)) {
    Object.freeze(x);
    for (let i = 0; i < x.length; i++) if (!freezePlain(x[i])) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) return false;
  Object.freeze(x);
  for (const k in x) if (!freezePlain((x as Record<string, unknown>)[k])) return false;
  return true;
}

/**
 * Encodes the bodies of one batch its caller owns (no one else holds them or anything in them,
 * as with a freshly parsed request), in batch order, then builds and records the batch tree.
 */
export class OwnedBatchEncoder {
  readonly #bodies: object[] = [];
  readonly #encoded: EncodedBody[] = [];
  #plain = true;
  #done = false;

  /** Freeze `body` and encode it: its canonical CBOR, digest and cid. Throws what encodeCanonical throws. */
  encode(body: Record<string, unknown>): EncodedBody {
    if (!freezePlain(body)) this.#plain = false;
    const bytes = encodeCanonical(body as CborValue);
    const digest = blake3(bytes);
    const out: EncodedBody = Object.freeze({ bytes, digest, cid: b32encode(digest) });
    this.#bodies.push(body);
    this.#encoded.push(out);
    return out;
  }

  /** The batch tree over the digests encoded so far, recorded with the bodies (once: later calls record nothing). */
  finish(): BuiltTree {
    const tree = buildBatchTree(this.#encoded.map((e) => e.digest));
    Object.freeze(tree.leafIndex);
    Object.freeze(tree);
    if (this.#plain && !this.#done && this.#bodies.length > 0) {
      recorded.set(this.#bodies[0], Object.freeze({ bodies: Object.freeze([...this.#bodies]), encoded: Object.freeze([...this.#encoded]), tree }));
    }
    this.#done = true;
    return tree;
  }
}

/** What an OwnedBatchEncoder recorded for exactly these body objects in this order, if anything. */
export function ownedBatch(bodies: readonly object[]): OwnedBatch | undefined {
  if (bodies.length === 0) return undefined;
  const rec = recorded.get(bodies[0]);
  if (rec === undefined || rec.bodies.length !== bodies.length) return undefined;
  for (let i = 1; i < bodies.length; i++) if (rec.bodies[i] !== bodies[i]) return undefined;
  return rec;
}
