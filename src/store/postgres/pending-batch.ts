/**
 * What happens to a batch before it reaches the sequencer: validation against its own bodies,
 * expansion (canonical bytes, digests, the batch tree) and a provisional encoding of its log
 * entry. Separate from sequencer.ts because none of it needs the database or the schema's
 * lock: it runs in the caller's turn, so little CPU work happens while the lock is held.
 */
import { equalBytes } from '../../protocol/bytes.js';
import { blake3 } from '../../protocol/hash.js';
import { leafHash } from '../../protocol/log-tree.js';
import { SvcError } from '../../protocol/errors.js';
import type { AppendBatch, LogEntryV1 } from '../contract.js';
import type { BuiltTree } from '../batch-tree.js';
import { batchLogEntry, encodeLogEntryParts, expandEntry, scopeKey, type ExpandedEntry, type ExpandedFact } from '../entry.js';

/** A log entry's bytes under one accepted_at stamp, with the hashes its row needs. */
export interface EncodedEntry {
  at: string;
  bytes: Uint8Array;
  /** RFC 6962 leaf hash H(0x00 ‖ entry). */
  leaf: Uint8Array;
  /** Record hash H(entry). */
  hash: Uint8Array;
}

/**
 * Encode `entry` stamped with `at` (validates it first; throws SvcError('internal') when invalid).
 * `bodies`, when given, are the canonical CBOR of each body, already computed.
 */
export function encodeAt(entry: Omit<LogEntryV1, 'accepted_at'>, at: string, bodies?: readonly Uint8Array[]): EncodedEntry {
  const bytes = encodeLogEntryParts({ ...entry, accepted_at: at }, bodies).bytes;
  return { at, bytes, leaf: leafHash(bytes), hash: blake3(bytes) };
}

/** A validated batch waiting for the sequencer. */
export interface PendingBatch {
  /** The entry without its accepted_at, which is stamped under the lock. */
  entry: Omit<LogEntryV1, 'accepted_at'>;
  /** Facts of the entry, expanded once outside the lock (bytes, digests, leaves of the tree). */
  expanded: ExpandedFact[];
  /** The batch tree the facts hash into, stored once with the entry. */
  tree: BuiltTree;
  /**
   * The entry encoded outside the lock with the clock's second at submit time: the sequencer
   * reuses it when it stamps the same second (the common case) and re-encodes otherwise, so
   * little CPU work happens while the lock is held.
   */
  encoded: EncodedEntry;
}

/** Cross-check what the caller computed against what the entry will say (the entry is the record). */
function checkAgainstEntry(batch: AppendBatch, expanded: ExpandedFact[], tree: BuiltTree): void {
  expanded.forEach((x, i) => {
    const f = batch.facts[i];
    const at = `facts[${i}]`;
    if (f.fact_cid !== x.fact.fact_cid) throw new SvcError('invalid_argument', `${at}.fact_cid: does not match the canonical CBOR of the body`, { field: `${at}.fact_cid` });
    if (f.cell !== x.fact.cell) throw new SvcError('invalid_argument', `${at}.cell: differs from body.cell`, { field: `${at}.cell` });
    if (f.band !== x.fact.band) throw new SvcError('invalid_argument', `${at}.band: differs from body.band`, { field: `${at}.band` });
    if (f.kind !== x.fact.kind) throw new SvcError('invalid_argument', `${at}.kind: differs from body.kind`, { field: `${at}.kind` });
    // The log keeps only the body, so a scope outside it would vanish on a rebuild.
    if (scopeKey(f.scope) !== scopeKey(x.fact.scope)) throw new SvcError('invalid_argument', `${at}.scope: differs from body.scope`, { field: `${at}.scope` });
  });
  if (!(batch.batch_root instanceof Uint8Array) || !equalBytes(tree.root, batch.batch_root)) {
    throw new SvcError('bad_merkle_proof', 'batch_root: merkle root mismatch: the facts do not hash into batch_root', { field: 'batch_root' });
  }
}

/**
 * Validate, expand and provisionally encode a batch (stamped with `at`); throws
 * invalid_argument / bad_merkle_proof before anything is written.
 */
export function prepare(batch: AppendBatch, at: string): PendingBatch {
  if (!batch || !Array.isArray(batch.facts) || batch.facts.length === 0) {
    throw new SvcError('invalid_argument', 'facts: expected a non-empty array', { field: 'facts' });
  }
  // accepted_at is stamped under the lock (encodeAt); the rest is the batch as signed.
  const { accepted_at: _unstamped, ...entry } = batchLogEntry(batch, at);
  let expanded: ExpandedEntry;
  try {
    expanded = expandEntry({ ...entry, accepted_at: at }, -1);
  } catch (err) {
    // A batch the entry codec refuses is the caller's fault, and nothing was written.
    if (err instanceof SvcError) throw new SvcError('invalid_argument', err.message.replace(/^log entry: /, ''), err.details, { cause: err });
    throw err;
  }
  checkAgainstEntry(batch, expanded.facts, expanded.tree);
  // expandEntry validated the entry, so encoding it cannot fail on the caller's input.
  return {
    entry,
    expanded: expanded.facts,
    tree: expanded.tree,
    encoded: encodeAt(
      entry,
      at,
      expanded.facts.map((x) => x.bodyBytes),
    ),
  };
}
