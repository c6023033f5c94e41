/**
 * A log entry as the SQLite index applies it: per fact the row columns, computed from the
 * entry's canonical encoding so that each body is encoded and hashed exactly once (the same
 * bytes give the fact_cid, the batch leaf and, through their offset, the log-backed body).
 */
import { equalBytes } from '../../protocol/bytes.js';
import { b32encode } from '../../protocol/base32.js';
import { blake3 } from '../../protocol/hash.js';
import type { LogEntryV1 } from '../contract.js';
import { bodyScope, encodeLogEntryParts, scopeKey, type EncodedLogEntry } from '../entry.js';
import { projectMemory, type MemoryRows } from '../memory.js';
import { buildBatchTree, type BuiltTree } from '../batch-tree.js';
import { KIND_CODES, packAcceptedAt, PROVENANCE_CODES } from './schema.js';

export interface IndexedFact {
  /** Raw digest: fact_cid is its b32, and it is this fact's leaf in the batch tree. */
  digest: Uint8Array;
  cell: string;
  band: string;
  tslot: number;
  kind: number;
  provenance: number;
  scopeKey: string;
  /** Index of the fact within its entry (ties in `latest` break on (log_index, position)). */
  position: number;
  /** Proof index: rank of the digest among the batch's sorted leaves. */
  leaf: number;
  bodyAt: number;
  bodyLen: number;
  /** The body, when the logged entry does not hold its canonical bytes at bodyAt. */
  inline: Uint8Array | null;
  /** Rows the fact adds to the memory index if it is new (memory.ts projectMemory), else null. */
  memory: MemoryRows | null;
}

export interface IndexedEntry {
  /** -1 until the log has placed it. */
  logIndex: number;
  acceptedAt: number;
  attester: string;
  tree: BuiltTree;
  facts: IndexedFact[];
}

/**
 * projectMemory, which never throws on a body it cannot read; should it throw regardless, the
 * fact projects nothing rather than leaving an entry the index can never apply (replay included).
 */
function projectOrNothing(body: Record<string, unknown>, digest: Uint8Array): MemoryRows | null {
  try {
    return projectMemory(body, b32encode(digest));
  } catch {
    return null;
  }
}

/**
 * Row columns of every fact of `entry`. `enc` is the entry's canonical encoding; `verbatim`
 * says whether the log holds exactly those bytes (true when this process wrote the entry; on
 * replay, whether the logged bytes equal them). checkLogEntry has run (encodeLogEntryParts),
 * so bodies carry neither fact_cid nor receipt and their bytes are exactly what is hashed.
 * `knownDigests`, when given, are the BLAKE3 of `enc.bodies`, computed with them, and `knownTree`
 * the batch tree over them (encoded-body.ts).
 */
export function indexEntry(entry: LogEntryV1, enc: EncodedLogEntry, verbatim: boolean, logIndex: number, knownDigests?: readonly Uint8Array[], knownTree?: BuiltTree): IndexedEntry {
  const digests = knownDigests ?? enc.bodies.map((b) => blake3(b));
  const tree = knownTree ?? buildBatchTree(digests);
  const facts = entry.facts.map((body, i): IndexedFact => {
    const meta = entry.meta[i];
    const band = body.band as string;
    // Only memory records and derivatives can project anything: other facts are not looked at.
    const memory = body.kind === 'derivative' || band.startsWith('memory.') ? projectOrNothing(body, digests[i]) : null;
    return {
      digest: digests[i],
      cell: body.cell as string,
      band,
      tslot: meta.tslot,
      kind: KIND_CODES.indexOf(body.kind as never),
      provenance: PROVENANCE_CODES.indexOf(meta.provenance_class),
      scopeKey: scopeKey(bodyScope(body)),
      position: i,
      leaf: tree.leafIndex[i],
      bodyAt: enc.bodyAt[i],
      bodyLen: enc.bodies[i].length,
      inline: verbatim ? null : enc.bodies[i],
      memory,
    };
  });
  return { logIndex, acceptedAt: packAcceptedAt(entry.accepted_at), attester: entry.attester, tree, facts };
}

/** An entry read back from the log (replay, or one appended by someone else). */
export function indexLoggedEntry(entry: LogEntryV1, bytes: Uint8Array, logIndex: number): IndexedEntry {
  const enc = encodeLogEntryParts(entry);
  return indexEntry(entry, enc, equalBytes(enc.bytes, bytes), logIndex);
}
