/**
 * Storage contract (tessera-style): a read interface and an append interface, with drivers in
 * their own folders (sqlite/, postgres/). The transparency log is the source of truth for
 * writes; the fact index is rebuildable from it.
 *
 * Durability: `append` MUST NOT resolve until the batch's log entry is durable (fsync on the
 * embedded driver, COMMIT on PostgreSQL). A resolved append is "acknowledged": after any crash
 * every acknowledged fact is readable and the log verifies. A rejected append MUST leave the
 * log, the index and the cache exactly as they were, with one exception: when the index fails
 * after the entry became durable (the disk filled between the two), the entry stays in the log
 * and is indexed later, so a retried write reports its facts as duplicates.
 *
 * Not found: `getFact` resolves `null`; queries resolve empty lists. Drivers never throw for
 * absence; they throw SvcError('internal') only for real faults.
 */
import type { GeoCache } from '../geo/geocache.js';
import type { StorageHealth } from './disk-full.js';
import type { MemoryReader } from './memory.js';
import type { MerkleProofJson } from '../protocol/merkle-batch.js';
import type { Scope } from '../protocol/receipt.js';
import type { SignedTreeHead } from '../protocol/tree-head.js';
import type { ProvenanceClass } from '../registry/types.js';

export type FactKind = 'primary' | 'absence' | 'derivative';
/**
 * Declared once, by the registry (a band's provenance class); re-exported here because a stored
 * fact carries one and readers of the store's contract import it from this module.
 */
export { PROVENANCE_CLASSES, type ProvenanceClass } from '../registry/types.js';

/** A fact as the store keeps it: its exact body and canonical bytes plus the index columns. */
export interface StoredFact {
  fact_cid: string;
  /** The hashed body (docs/protocol-notes.md §4: the fact as served minus fact_cid and receipt). */
  body: Record<string, unknown>;
  cell: string;
  band: string;
  tslot: number;
  kind: FactKind;
  provenance_class: ProvenanceClass;
  /** b32 key of the attester whose batch carried the fact. */
  attester: string;
  /** Scope four-tuple the fact was written under; null when unscoped. */
  scope: Scope | null;
  /** Transaction time: when this responder acknowledged the fact (ISO, seconds). */
  accepted_at: string;
  /** Per-fact inclusion proof against its batch root. */
  proof: MerkleProofJson;
  /** Index of the log entry (one entry per accepted batch). */
  log_index: number;
  /** fact_cid of the fact this one supersedes (same cell, band, tslot, scope), if any. */
  supersedes: string | null;
}

/** A fact to append: its body, digest-derived cid and the columns the caller computed. */
export interface NewFact {
  fact_cid: string;
  body: Record<string, unknown>;
  cell: string;
  band: string;
  tslot: number;
  kind: FactKind;
  provenance_class: ProvenanceClass;
  scope: Scope | null;
  proof: MerkleProofJson;
}

/** One accepted batch: the log entry's content. */
export interface AppendBatch {
  facts: NewFact[];
  batch_root: Uint8Array;
  attester: string;
  signature: string;
  registry_cid: string;
  schema_cid: string;
}

export interface AppendResult {
  log_index: number;
  accepted_at: string;
  tree_size: number;
  /** fact_cids that were already stored (idempotent re-submission): not re-appended. */
  duplicates: string[];
}

export interface FactQuery {
  cell: string;
  bands?: readonly string[];
  tslot?: number;
  /** Valid-time bound: only facts with tslot ≤ as_of_tslot. */
  as_of_tslot?: number;
  /** Transaction-time bound: only facts accepted at or before this instant (ISO). */
  as_of_signed_at?: string;
  /** Exact scope match; absent/null means unscoped facts only. */
  scope?: Scope | null;
  provenance?: readonly ProvenanceClass[];
}

export interface CorpusStats {
  facts: number;
  /** Grid cells (cell64) holding a public fact. */
  cells: number;
  /** Other public subjects (notes, entities, answer records: `svc:entity:…`), not places. */
  subjects: number;
  bands: number;
  log_size: number;
}

/** Reads: every method is side-effect free. */
export interface FactReader {
  getFact(cid: string): Promise<StoredFact | null>;
  /** Newest fact per band (latest tslot within bounds, then latest accepted_at). */
  latest(q: FactQuery): Promise<StoredFact[]>;
  /** Every version matching the query (all tslots and supersessions), oldest first. */
  history(q: FactQuery & { tslot_from?: number; tslot_to?: number; limit?: number }): Promise<StoredFact[]>;
  /** Bands with at least one fact at the cell visible to the scope. */
  bandsAt(cell: string, scope?: Scope | null): Promise<string[]>;
  /**
   * Distinct cells whose text starts with `prefix`, capped at `limit` rows scanned. With a
   * `scope` argument (null: unscoped), only cells holding at least one fact visible to that scope:
   * a walk on behalf of a reader never reveals where other scopes' facts are.
   */
  cellsWithPrefix(prefix: string, limit: number, scope?: Scope | null): Promise<{ cells: string[]; truncated: boolean }>;
  /**
   * Public corpus counts: facts, distinct cells and bands of unscoped facts only (a reader
   * outside a scope learns nothing of it, not even that it holds something); `log_size` counts
   * every entry, since the log itself is public.
   */
  stats(): Promise<CorpusStats>;
  /**
   * Facts first stored from batches signed by `attester` and accepted on the UTC day `day`
   * (YYYY-MM-DD), counted as they are indexed (re-submitted duplicates add nothing). One
   * indexed lookup: the per-attester daily quota reads it before every write.
   */
  attesterFactsOn(attester: string, day: string): Promise<number>;
  /**
   * Unscoped (public) facts per attester key, most first. Scoped facts are never counted: a
   * reader outside a scope learns nothing of it, not even how much it holds. A full scan: callers
   * cache it per log size.
   */
  publicFactsByAttester(): Promise<Array<{ attester: string; facts: number }>>;
}

/** Appends: durable before resolve; all-or-nothing per batch. */
export interface FactAppender {
  append(batch: AppendBatch): Promise<AppendResult>;
}

/** The transparency log as readers see it. */
export interface LogReader {
  size(): Promise<number>;
  root(size?: number): Promise<Uint8Array>;
  entry(index: number): Promise<Uint8Array | null>;
  leafIndexOf(entryHash: Uint8Array): Promise<number | null>;
  inclusionProof(index: number, size: number): Promise<Uint8Array[]>;
  consistencyProof(first: number, second: number): Promise<Uint8Array[]>;
  latestTreeHead(): Promise<SignedTreeHead>;
}

export interface WitnessRecord {
  tree_size: number;
  root: string;
  witness: string;
  signature: string;
  operator: string;
  received_at: string;
}

export interface WitnessStore {
  addWitness(w: WitnessRecord): Promise<void>;
  witnesses(): Promise<WitnessRecord[]>;
}

/**
 * Short-lived state kept beside the log, never in it (docs/security.md): which signed
 * statements were already used, and answer steps kept for a retention window. Entries expire at
 * `expiresAtMs` and are then as if never written; they are not derived from the log and a
 * rebuild keeps them. Every method is atomic across all processes sharing the store.
 */
export interface TransientStore {
  /**
   * Record `key` in namespace `ns` until `expiresAtMs`. Resolves true for the first use (no live
   * entry existed), false when a live entry already holds the key: the caller refuses a replay.
   */
  claimOnce(ns: string, key: string, expiresAtMs: number): Promise<boolean>;
  /** Keep `value` under (ns, key) until `expiresAtMs`, replacing any earlier value. */
  put(ns: string, key: string, value: string, expiresAtMs: number): Promise<void>;
  /** The live value under (ns, key), or null (never written, or expired). */
  get(ns: string, key: string): Promise<string | null>;
}

/**
 * Small durable documents beside the log, never in it, named by a hash of their content (a
 * memory bundle's definition, under kind `bundle`): what one responder stores, every responder
 * of the deployment reads. `putOnce` resolves only once the document is durable (a synchronous
 * SQLite commit; a PostgreSQL COMMIT). A cid is content-derived, so a second put under a taken
 * (kind, cid) changes nothing: the first text stays. Documents are never updated or deleted, are
 * not derived from the log, and a rebuild of the index keeps them. Arguments: `kind` a short
 * lowercase name, `cid` at most 128 characters of [A-Za-z0-9_.:-], `text` at most
 * MAX_DOCUMENT_BYTES of UTF-8 (documents.ts); anything else is a TypeError or RangeError.
 */
export interface DocumentStore {
  /** Keep `text` under (kind, cid): 'stored' when this call wrote it, 'existing' when a document was already there. */
  putOnce(kind: string, cid: string, text: string): Promise<'stored' | 'existing'>;
  /** The text under (kind, cid), or null when none was stored. */
  get(kind: string, cid: string): Promise<string | null>;
}

/** What the artifact store holds about one artifact (contract.ts, ArtifactStore). */
export interface ArtifactInfo {
  cid: string;
  media_type: string;
  size: number;
  /** How to make the bytes again (for a grid: the svc:raster: token whose resolve rebuilds it); null: not rebuildable. */
  rebuild: string | null;
  stored_at: string;
  /** `stored`: the bytes are here; `evicted`: dropped to keep the size bound (only this description stays). */
  state: 'stored' | 'evicted';
  evicted_at: string | null;
}

/** Bytes of a stored artifact, whole or the asked range. */
export interface ArtifactBytes {
  media_type: string;
  /** Size of the whole artifact. */
  size: number;
  bytes: Uint8Array;
}

/**
 * Content-addressed binary artifacts beside the log, never in it (grids made by band_raster;
 * docs/rasters.md): `cid = b32(H(bytes))`, computed by the store. Every responder of a deployment
 * reads what one stored. Bounded in bytes (SVC_ARTIFACT_MAX_BYTES): a put that passes the bound
 * evicts the least recently read artifacts first (never the one being put); an evicted artifact
 * keeps its description (media type, size, rebuild hint) so a reader learns how to rebuild it.
 * Artifacts are derived data: each can be made again from its signed derivation record, so
 * losing one is a rebuild, never a loss of evidence. Arguments outside the rules of artifacts.ts
 * are a TypeError or RangeError.
 */
export interface ArtifactStore {
  /** The configured bound on stored bytes. */
  readonly maxBytes: number;
  /** Keep `bytes`; resolves once written, with the cid, whether this call wrote them, and the cids it evicted. */
  put(mediaType: string, bytes: Uint8Array, rebuild?: string | null): Promise<{ cid: string; stored: boolean; evicted: string[] }>;
  /** The bytes under `cid` (inclusive byte range `range` when given, clipped to the end), or null when not held; counts as a use. */
  read(cid: string, range?: { start: number; end: number }): Promise<ArtifactBytes | null>;
  /** The description of `cid` (stored or evicted), or null when it was never stored here; not a use. */
  info(cid: string): Promise<ArtifactInfo | null>;
  /** Drop the bytes of `cid` now, keeping its description: true when bytes were dropped. */
  evict(cid: string): Promise<boolean>;
  /** Stored artifacts and their bytes, against the bound. */
  usage(): Promise<{ artifacts: number; bytes: number; max_bytes: number }>;
}

/** Everything the service needs from one storage deployment. */
export interface Store extends FactReader, FactAppender, WitnessStore {
  readonly driver: 'sqlite' | 'postgres';
  readonly log: LogReader;
  /** Short-lived state beside the log: single-use statements, kept answer steps. */
  readonly transients: TransientStore;
  /** Content-addressed documents beside the log (bundle definitions), shared by every responder. */
  readonly documents: DocumentStore;
  /** Content-addressed binary artifacts (grids), size-bounded with eviction, shared by every responder. */
  readonly artifacts: ArtifactStore;
  /**
   * The persistent cache of network geocoder answers (geo/geocache.ts), shared by every responder
   * of the deployment; owned by the store (close() closes it). Not derived from the log.
   */
  readonly geocache: GeoCache;
  /** The agent-memory index (memory.ts): notes, edges, aliases, derivations, shared slots. */
  readonly memory: MemoryReader;
  close(): Promise<void>;
  /** Whether the store is out of disk space (GET /health); absent: it does not track it. */
  storageHealth?(): StorageHealth;
  /**
   * First claim on a scope (docs/scopes.md): the key owning `scope`, recording `claimant` as its
   * owner when it has none (null: only look). One atomic step across every process sharing the
   * store, and a recorded owner never changes. A scope that holds facts but no recorded claim
   * (written before claims were recorded, or an index rebuilt from the log) is owned by the first
   * key other than `exclude` (the responder, which writes into a scope only for its readers) that
   * wrote into it, and by nobody when only `exclude` did: such a scope cannot be claimed.
   */
  claimScope(scope: Scope, claimant: string | null, exclude: string): Promise<string | null>;
}

/** The append-only log as its owner (a store driver) uses it. */
export interface AppendOnlyLog extends LogReader {
  /**
   * Append one entry (canonical CBOR bytes). MUST resolve only after the entry is durable;
   * concurrent calls share one fsync (group commit). Resolves with the entry's leaf index;
   * indices are dense and in resolve order per caller.
   */
  append(entry: Uint8Array): Promise<number>;
  /** Entries [from, to) in order (recovery and replay). */
  entries(from: number, to: number): AsyncIterable<{ index: number; entry: Uint8Array }>;
  close(): Promise<void>;
}

/** Signs tree heads (the responder key). */
export interface TreeHeadSigner {
  readonly publicKey: Uint8Array;
  readonly epoch: number;
  sign(digest: Uint8Array): Uint8Array;
}

/** Storage configuration (from SVC_DATA, SVC_DATABASE_URL, SVC_REDIS_URL, SVC_SCAN_CELL_LIMIT). */
export interface StoreConfig {
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  scanCellLimit: number;
  /** PostgreSQL schema holding log and index (default `svc`; SVC_DATABASE_SCHEMA). */
  databaseSchema?: string;
  /** Log segment cap in bytes (default 1 GiB; tests use small values). */
  segmentMaxBytes?: number;
  prefix?: string;
  /** Bound on the bytes of stored artifacts (SVC_ARTIFACT_MAX_BYTES; default ARTIFACT_MAX_BYTES_DEFAULT of artifacts.ts). */
  artifactMaxBytes?: number;
}

/**
 * Log entry layout shared by both drivers (canonical CBOR map), so the index can be rebuilt
 * from the log alone: one entry per accepted batch.
 */
export interface LogEntryV1 {
  v: 1;
  type: 'batch';
  accepted_at: string;
  attester: string;
  signature: string;
  batch_root: Uint8Array;
  registry_cid: string;
  schema_cid: string;
  /** Fact bodies exactly as hashed (fact_cid = b32(H(cbor(body)))). */
  facts: Record<string, unknown>[];
  /**
   * Per fact, in the same order: columns not derivable from the body alone (the tslot is
   * resolved by the write path when an attested body carries none).
   */
  meta: { provenance_class: ProvenanceClass; tslot: number }[];
}
