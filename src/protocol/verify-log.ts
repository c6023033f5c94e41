/**
 * A fact's place in the transparency log (docs/protocol-notes.md §6; docs/verification.md,
 * "Who signed a fact, and where it sits"): the fact's batch proof takes its
 * fact_cid to a batch root; the log entry at `log_index` records that batch root (and the
 * attester who signed it); an RFC 9162 inclusion proof takes the entry's leaf hash to the root
 * of a signed tree head. Evidence is plain JSON (what /v1/log/sth, /v1/log/entries/:i and
 * /v1/log/inclusion answer), so it can be fetched once and checked offline later.
 */
import { b32decode } from './base32.js';
import { equalBytes, fromHex } from './bytes.js';
import { decodeCanonical } from './cbor.js';
import { verifyStrict, portableEd25519, type Ed25519Backend } from './ed25519.js';
import { leafHash, verifyInclusion } from './log-tree.js';
import { sthDigest, type SignedTreeHead } from './tree-head.js';

/** What a verifier needs to place facts in the log, keyed by log index. */
export interface LogEvidence {
  sth: SignedTreeHead;
  /** An entry holding scoped facts is `private`: its bytes go only to a bearer for its scope. */
  entries: Record<string, { cbor_hex?: string; private?: boolean }>;
  inclusions: Record<string, { tree_size: number; path: string[] }>;
}

export interface LogPlacement {
  fact_cid: string;
  log_index: number;
  ok: boolean;
  errors: string[];
}

export interface TreeHeadVerdict {
  ok: boolean;
  errors: string[];
}

/** Check a signed tree head's signature under the responder key it names (or a pinned one). */
export function verifyTreeHead(sth: SignedTreeHead, opts: { publicKey?: string; prefix?: string; backend?: Ed25519Backend } = {}): TreeHeadVerdict {
  const errors: string[] = [];
  try {
    if (opts.publicKey && opts.publicKey !== sth.responder) errors.push(`sth: signed by ${sth.responder}, not by the pinned key`);
    const key = b32decode(sth.responder, 32, 'sth.responder');
    const digest = sthDigest(sth.tree_size, b32decode(sth.root, 32, 'sth.root'), sth.signed_at, key, opts.prefix);
    if (!verifyStrict(b32decode(sth.signature, 64, 'sth.signature'), digest, key, opts.backend ?? portableEd25519)) {
      errors.push('sth: the tree head signature does not verify');
    }
  } catch (e) {
    errors.push(`sth: ${(e as Error).message}`);
  }
  return { ok: errors.length === 0, errors };
}

/**
 * Place one fact in the log: `batchRoot` is the root its receipt's merkle proof reaches (b32);
 * `attester`, when known, must be the key the entry records.
 */
export function verifyFactInLog(fact: { fact_cid: string; batch_root?: string; attester?: string }, logIndex: number, evidence: LogEvidence): LogPlacement {
  const out: LogPlacement = { fact_cid: fact.fact_cid, log_index: logIndex, ok: false, errors: [] };
  const entryJson = evidence.entries[String(logIndex)];
  const incl = evidence.inclusions[String(logIndex)];
  if (!entryJson || !incl) {
    out.errors.push(`log: no entry or inclusion proof for index ${logIndex} in the evidence`);
    return out;
  }
  if (entryJson.private === true || typeof entryJson.cbor_hex !== 'string') {
    out.errors.push(`log: entry ${logIndex} is private (it holds scoped facts; its bytes go only to a bearer for its scope)`);
    return out;
  }
  try {
    const bytes = fromHex(entryJson.cbor_hex);
    if (incl.tree_size !== evidence.sth.tree_size) out.errors.push(`log: the inclusion proof is for tree_size ${incl.tree_size}, the tree head has ${evidence.sth.tree_size}`);
    const path = incl.path.map((p, i) => b32decode(p, 32, `path[${i}]`));
    if (!verifyInclusion(logIndex, evidence.sth.tree_size, leafHash(bytes), path, b32decode(evidence.sth.root, 32, 'sth.root'))) {
      out.errors.push(`log: entry ${logIndex} is not included in the signed tree head (size ${evidence.sth.tree_size})`);
    }
    const entry = decodeCanonical(bytes) as Record<string, unknown>;
    const root = entry.batch_root;
    if (!(root instanceof Uint8Array)) {
      out.errors.push(`log: entry ${logIndex} records no batch root`);
    } else if (fact.batch_root !== undefined && !equalBytes(root, b32decode(fact.batch_root, 32, 'batch_root'))) {
      out.errors.push(`log: entry ${logIndex} records another batch than the one this fact's proof reaches`);
    } else if (fact.batch_root === undefined) {
      out.errors.push('log: the fact carries no batch proof to tie it to the entry');
    }
    if (fact.attester !== undefined && entry.attester !== fact.attester) {
      out.errors.push(`log: entry ${logIndex} was signed by ${String(entry.attester)}, not by the attester shown (${fact.attester})`);
    }
  } catch (e) {
    out.errors.push(`log: ${(e as Error).message}`);
  }
  out.ok = out.errors.length === 0;
  return out;
}
