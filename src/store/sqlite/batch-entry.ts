/**
 * Turning a signed batch into the log entry that records it, and checking that entry against
 * what the caller claimed (fact_cids, cells, bands, kinds, scopes, batch_root). Separate from
 * sqlite-store.ts because it is pure: it reads neither the log nor the index, so a refusal here
 * writes nothing, and the store keeps only the ordering and durability of appends.
 */
import { b32decode } from '../../protocol/base32.js';
import { equalBytes } from '../../protocol/bytes.js';
import { SvcError } from '../../protocol/errors.js';
import type { AppendBatch, LogEntryV1 } from '../contract.js';
import { ownedBatch } from '../encoded-body.js';
import { batchLogEntry, encodeLogEntryParts, scopeKey, type EncodedLogEntry } from '../entry.js';
import { indexEntry, type IndexedEntry } from './indexed-entry.js';
import { KIND_CODES } from './schema.js';

/** The raw digest a fact_cid names, or null when it is not the b32 of 32 bytes. */
export function cidDigest(cid: unknown): Uint8Array | null {
  try {
    return b32decode(cid as string, 32);
  } catch {
    return null;
  }
}

/**
 * The digests the batch's fact_cids name (null: not a cid). A fact_cid that is the text of its
 * body's recorded digest (encoded-body.ts) names that digest: b32 is one text per digest.
 */
export function claimedDigests(batch: AppendBatch): (Uint8Array | null)[] {
  const known = ownedBatch(batch.facts.map((f) => f.body));
  return batch.facts.map((f, i) => {
    const e = known?.encoded[i];
    return e !== undefined && e.cid === f.fact_cid ? e.digest : cidDigest(f.fact_cid);
  });
}

/**
 * Cross-check what the caller computed against what the entry will say (the entry wins on
 * replay). `claimed` holds the digests the batch's fact_cids name (null: not a cid at all).
 */
function checkAgainstEntry(batch: AppendBatch, claimed: (Uint8Array | null)[], x: IndexedEntry): void {
  x.facts.forEach((fx, i) => {
    const f = batch.facts[i];
    const at = `facts[${i}]`;
    // b32decode is strict (one text per digest), so equal digests mean equal cid text.
    const cid = claimed[i];
    if (cid === null || !equalBytes(cid, fx.digest)) throw new SvcError('invalid_argument', `${at}.fact_cid: does not match the canonical CBOR of the body`, { field: `${at}.fact_cid` });
    if (f.cell !== fx.cell) throw new SvcError('invalid_argument', `${at}.cell: differs from body.cell`, { field: `${at}.cell` });
    if (f.band !== fx.band) throw new SvcError('invalid_argument', `${at}.band: differs from body.band`, { field: `${at}.band` });
    if (f.kind !== KIND_CODES[fx.kind]) throw new SvcError('invalid_argument', `${at}.kind: differs from body.kind`, { field: `${at}.kind` });
    // The log keeps only the body, so a scope outside it would vanish on rebuild.
    if (scopeKey(f.scope) !== fx.scopeKey) throw new SvcError('invalid_argument', `${at}.scope: differs from body.scope`, { field: `${at}.scope` });
  });
  if (!equalBytes(x.tree.root, batch.batch_root)) {
    throw new SvcError('bad_merkle_proof', 'batch_root: merkle root mismatch: the facts do not hash into batch_root', { field: 'batch_root' });
  }
}

/**
 * The entry for `batch` accepted at `acceptedAt`, its encoding and what the index makes of it,
 * after checking it against `claimed` (the digests the batch's fact_cids name, null: not a cid).
 */
export function batchEntry(batch: AppendBatch, claimed: (Uint8Array | null)[], acceptedAt: string): { entry: LogEntryV1; encoded: EncodedLogEntry; indexed: IndexedEntry } {
  // Facts already indexed keep their first placement; the entry is the batch as signed.
  const entry = batchLogEntry(batch, acceptedAt);
  // The write path's encodings of these very bodies, when it recorded them (encoded-body.ts).
  const known = ownedBatch(entry.facts);
  let encoded: EncodedLogEntry;
  try {
    encoded = encodeLogEntryParts(
      entry,
      known?.encoded.map((e) => e.bytes),
    );
  } catch (err) {
    // A batch the entry codec refuses is the caller's fault, and nothing was written.
    if (err instanceof SvcError) throw new SvcError('invalid_argument', err.message.replace(/^log entry: /, ''), err.details, { cause: err });
    throw err;
  }
  // Each body was encoded once above; those bytes are in the entry verbatim.
  const indexed = indexEntry(
    entry,
    encoded,
    true,
    -1,
    known?.encoded.map((e) => e.digest),
    known?.tree,
  );
  checkAgainstEntry(batch, claimed, indexed);
  return { entry, encoded, indexed };
}
