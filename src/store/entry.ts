/**
 * Log entry codec (contract.ts `LogEntryV1`): one canonical-CBOR map per accepted batch, and the
 * rule that turns an entry back into StoredFacts. Both drivers index through `factsFromEntry`,
 * so the fact index is always a pure function of the log and can be rebuilt from it alone.
 */
import { BoundedCache } from '../lib/cache.js';
import { b32encode } from '../protocol/base32.js';
import { compareBytes, utf8 } from '../protocol/bytes.js';
import { decodeTrusted, encodeCanonical, type CborValue } from '../protocol/cbor.js';
import { SvcError } from '../protocol/errors.js';
import { blake3 } from '../protocol/hash.js';
import { scopeFieldsSet, type Scope } from '../protocol/receipt.js';
import { BatchTree, buildBatchTree, type BuiltTree } from './batch-tree.js';
import { ownedBatch } from './encoded-body.js';
import { PROVENANCE_CLASSES, type AppendBatch, type FactKind, type LogEntryV1, type ProvenanceClass, type StoredFact } from './contract.js';

const FACT_KINDS: readonly FactKind[] = ['primary', 'absence', 'derivative'];
const SCOPE_KEYS = ['user_id', 'agent_id', 'run_id', 'org_id'] as const;
const ISO_SECONDS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

function bad(field: string, why: string): SvcError {
  return new SvcError('internal', `log entry: ${field}: ${why}`, { field });
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x) && !(x instanceof Uint8Array);
}

function checkString(e: Record<string, unknown>, field: string): void {
  if (typeof e[field] !== 'string' || (e[field] as string).length === 0) throw bad(field, 'expected a non-empty string');
}

/** The scope a fact body was written under, or null when unscoped. */
export function bodyScope(body: Record<string, unknown>): Scope | null {
  return scopeFieldsSet(body.scope as Scope | undefined) ?? null;
}

/**
 * Index key of a scope: '' when unscoped, else the JSON of the set members in the key order
 * user_id, agent_id, run_id, org_id (so equal four-tuples always produce equal keys).
 */
export function scopeKey(scope: Scope | null | undefined): string {
  const m = scopeFieldsSet(scope ?? undefined);
  if (!m) return '';
  const ordered: Record<string, string> = {};
  for (const k of SCOPE_KEYS) if (m[k] !== undefined) ordered[k] = m[k]!;
  return JSON.stringify(ordered);
}

function checkBody(body: unknown, i: number, meta: unknown): void {
  const at = `facts[${i}]`;
  if (!isPlainObject(body)) throw bad(at, 'expected a map');
  if (typeof body.cell !== 'string' || body.cell.length === 0) throw bad(`${at}.cell`, 'expected a non-empty string');
  if (typeof body.band !== 'string' || body.band.length === 0) throw bad(`${at}.band`, 'expected a non-empty string');
  if (!FACT_KINDS.includes(body.kind as FactKind)) throw bad(`${at}.kind`, `expected one of ${FACT_KINDS.join(', ')}`);
  if ('fact_cid' in body || 'receipt' in body) throw bad(at, 'a hashed body carries neither fact_cid nor receipt');
  if (body.scope !== undefined && body.scope !== null) {
    if (!isPlainObject(body.scope)) throw bad(`${at}.scope`, 'expected a map');
    for (const k of SCOPE_KEYS) {
      const v = body.scope[k];
      if (v !== undefined && v !== null && typeof v !== 'string') throw bad(`${at}.scope.${k}`, 'expected a string');
    }
  }
  if (!isPlainObject(meta)) throw bad(`meta[${i}]`, 'expected a map');
  if (!PROVENANCE_CLASSES.includes(meta.provenance_class as ProvenanceClass)) {
    throw bad(`meta[${i}].provenance_class`, `expected one of ${PROVENANCE_CLASSES.join(', ')}`);
  }
  const tslot = meta.tslot;
  if (typeof tslot !== 'number' || !Number.isSafeInteger(tslot) || tslot < 0) throw bad(`meta[${i}].tslot`, 'expected a non-negative integer');
  // A body that states its own tslot must agree with the indexed one, or a rebuild would differ.
  if (body.tslot !== undefined && body.tslot !== tslot) throw bad(`meta[${i}].tslot`, `differs from ${at}.tslot`);
}

/**
 * The log entry of a batch, stamped `acceptedAt`. It records the batch exactly as signed
 * (duplicates included), so the attester's signature and every per-fact proof stay checkable
 * against batch_root from the log alone. Both drivers write exactly this.
 */
export function batchLogEntry(batch: AppendBatch, acceptedAt: string): LogEntryV1 {
  return {
    v: 1,
    type: 'batch',
    accepted_at: acceptedAt,
    attester: batch.attester,
    signature: batch.signature,
    batch_root: batch.batch_root,
    registry_cid: batch.registry_cid,
    schema_cid: batch.schema_cid,
    facts: batch.facts.map((f) => f.body),
    meta: batch.facts.map((f) => ({ provenance_class: f.provenance_class, tslot: f.tslot })),
  };
}

/** Throws SvcError('internal') naming the first field of `e` that is not a valid LogEntryV1. */
export function checkLogEntry(e: unknown): asserts e is LogEntryV1 {
  if (!isPlainObject(e)) throw bad('entry', 'expected a map');
  if (e.v !== 1) throw bad('v', 'expected 1');
  if (e.type !== 'batch') throw bad('type', 'expected "batch"');
  checkString(e, 'accepted_at');
  if (!ISO_SECONDS_RE.test(e.accepted_at as string)) throw bad('accepted_at', 'expected YYYY-MM-DDTHH:MM:SSZ');
  for (const f of ['attester', 'signature', 'registry_cid', 'schema_cid']) checkString(e, f);
  if (!(e.batch_root instanceof Uint8Array) || e.batch_root.length !== 32) throw bad('batch_root', 'expected 32 bytes');
  if (!Array.isArray(e.facts) || e.facts.length === 0) throw bad('facts', 'expected a non-empty array');
  if (!Array.isArray(e.meta) || e.meta.length !== e.facts.length) throw bad('meta', 'expected one entry per fact');
  e.facts.forEach((body, i) => checkBody(body, i, (e.meta as unknown[])[i]));
  const keys = Object.keys(e);
  const known = ['v', 'type', 'accepted_at', 'attester', 'signature', 'batch_root', 'registry_cid', 'schema_cid', 'facts', 'meta'];
  const extra = keys.find((k) => !known.includes(k));
  if (extra !== undefined) throw bad(extra, 'unknown member (a new layout needs a new version)');
}

/** A log entry's canonical CBOR together with where each fact body sits inside it. */
export interface EncodedLogEntry {
  bytes: Uint8Array;
  /** Canonical CBOR of each body: exactly bytes[bodyAt[i], bodyAt[i] + bodies[i].length). */
  bodies: Uint8Array[];
  bodyAt: number[];
}

/** Canonical CBOR head: major type `major`, argument n (a safe non-negative integer), shortest form. */
function cborHead(major: number, n: number): Uint8Array {
  const m = major << 5;
  if (n < 24) return Uint8Array.of(m | n);
  if (n < 0x100) return Uint8Array.of(m | 24, n);
  if (n < 0x10000) return Uint8Array.of(m | 25, n >>> 8, n & 0xff);
  if (n < 0x100000000) return Uint8Array.of(m | 26, n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
  const hi = Math.floor(n / 0x100000000);
  const lo = n >>> 0;
  return Uint8Array.of(m | 27, hi >>> 24, (hi >>> 16) & 0xff, (hi >>> 8) & 0xff, hi & 0xff, lo >>> 24, (lo >>> 16) & 0xff, (lo >>> 8) & 0xff, lo & 0xff);
}

/**
 * Encoded text strings of entry members: attester, registry and schema cids (and accepted_at
 * within a second) repeat from batch to batch, and small-string UTF-8 encoding is what their
 * encoding costs. Bounded; the least recently used go first.
 */
const textMemo = new BoundedCache<string, Uint8Array>('log_entry_text', { max: 1024 });

function cborText(s: string): Uint8Array {
  let out = textMemo.get(s);
  if (out === undefined) {
    const b = utf8(s);
    const head = cborHead(3, b.length);
    out = new Uint8Array(head.length + b.length);
    out.set(head);
    out.set(b, head.length);
    textMemo.set(s, out);
  }
  return out;
}

const byKey = (a: { encoded: Uint8Array }, b: { encoded: Uint8Array }) => compareBytes(a.encoded, b.encoded);
type EntryKey = keyof LogEntryV1;
/** LogEntryV1 members in canonical key order (bytewise order of their encoded keys). */
const ENTRY_KEYS = (['v', 'type', 'accepted_at', 'attester', 'signature', 'batch_root', 'registry_cid', 'schema_cid', 'facts', 'meta'] as EntryKey[])
  .map((key) => ({ key, encoded: encodeCanonical(key) }))
  .sort(byKey);
const META_KEYS = (['provenance_class', 'tslot'] as const).map((key) => ({ key, encoded: encodeCanonical(key) })).sort(byKey);
const META_HEAD = cborHead(5, META_KEYS.length);

/**
 * Canonical CBOR of one validated member of an entry other than `facts`. checkLogEntry fixed
 * their shapes (non-empty strings, 32 bytes, maps of a provenance class and a safe tslot), and
 * the canonical form of those shapes is only heads and bytes, so they are written directly.
 */
function memberParts(e: LogEntryV1, key: Exclude<EntryKey, 'facts'>, out: Uint8Array[]): void {
  switch (key) {
    case 'v':
      out.push(cborHead(0, e.v));
      return;
    case 'batch_root':
      out.push(cborHead(2, e.batch_root.length), e.batch_root);
      return;
    case 'meta':
      out.push(cborHead(4, e.meta.length));
      for (const m of e.meta) {
        out.push(META_HEAD);
        for (const k of META_KEYS) out.push(k.encoded, k.key === 'tslot' ? cborHead(0, m.tslot) : cborText(m.provenance_class));
      }
      return;
    default:
      out.push(cborText(e[key]));
  }
}

/**
 * Canonical CBOR bytes of a log entry (validated first, so a bad entry never reaches the log),
 * built around each body's own canonical encoding: a body is encoded once, and the same bytes
 * serve its fact_cid, the entry and (through `bodyAt`) whoever later reads the body back out of
 * the logged entry. Byte for byte what encodeCanonical of the whole entry gives (the entry
 * tests compare the two). `encodedBodies`, when given, are encodeCanonical of each body, computed
 * once elsewhere (encoded-body.ts): they are used as they are.
 */
export function encodeLogEntryParts(e: LogEntryV1, encodedBodies?: readonly Uint8Array[]): EncodedLogEntry {
  checkLogEntry(e);
  const bodies = encodedBodies === undefined ? e.facts.map((b) => encodeCanonical(b as CborValue)) : [...encodedBodies];
  const parts: Uint8Array[] = [cborHead(5, ENTRY_KEYS.length)];
  let firstBody = -1;
  for (const { key, encoded } of ENTRY_KEYS) {
    parts.push(encoded);
    if (key === 'facts') {
      parts.push(cborHead(4, bodies.length));
      firstBody = parts.length;
      parts.push(...bodies);
    } else {
      memberParts(e, key, parts);
    }
  }
  let total = 0;
  for (const p of parts) total += p.length;
  const bytes = new Uint8Array(total);
  const bodyAt: number[] = [];
  let at = 0;
  for (let k = 0; k < parts.length; k++) {
    if (k >= firstBody && k < firstBody + bodies.length) bodyAt.push(at);
    bytes.set(parts[k], at);
    at += parts[k].length;
  }
  return { bytes, bodies, bodyAt };
}

/** Canonical CBOR bytes of a log entry (validated first, so a bad entry never reaches the log). */
export function encodeLogEntry(e: LogEntryV1): Uint8Array {
  return encodeLogEntryParts(e).bytes;
}

/** Decode and validate log entry bytes this responder wrote (throws SvcError('internal')). */
export function decodeLogEntry(bytes: Uint8Array): LogEntryV1 {
  let value: unknown;
  try {
    value = decodeTrusted(bytes);
  } catch (err) {
    throw new SvcError('internal', `log entry: not decodable CBOR (${(err as Error).message})`, {}, { cause: err });
  }
  checkLogEntry(value);
  return value;
}

/** A fact of an entry with the columns an index row needs (its proof is its leaf in the entry's tree). */
export interface ExpandedFact {
  fact: Omit<StoredFact, 'proof'>;
  /** Index of the fact within its entry (ties in `latest` break on (log_index, position)). */
  position: number;
  /** Canonical CBOR of the body: its BLAKE3 is the fact_cid. */
  bodyBytes: Uint8Array;
  /** Raw 32-byte digest (the batch Merkle leaf). */
  digest: Uint8Array;
  /** Proof index of the fact in its entry's batch tree (batch-tree.ts). */
  leaf: number;
  scopeKey: string;
  signedAt: string | null;
}

/** An entry's facts and the batch tree they hash into (kept once per entry instead of a proof per fact). */
export interface ExpandedEntry {
  facts: ExpandedFact[];
  tree: BuiltTree;
}

/**
 * Every fact of an entry with the columns an index row needs. `supersedes` is left null: it
 * depends on what the index already holds, so the driver fills it in while applying in log order.
 * The write path's encodings of these very bodies (encoded-body.ts) are used when it recorded
 * them, so a body is encoded and hashed once per request.
 */
export function expandEntry(entry: LogEntryV1, logIndex: number): ExpandedEntry {
  checkLogEntry(entry);
  const known = ownedBatch(entry.facts);
  // checkLogEntry refused fact_cid/receipt members, so the body bytes are exactly what is hashed.
  const bodyBytes = known ? known.encoded.map((e) => e.bytes) : entry.facts.map((b) => encodeCanonical(b as CborValue));
  const digests = known ? known.encoded.map((e) => e.digest) : bodyBytes.map((b) => blake3(b));
  const tree = known ? known.tree : buildBatchTree(digests);
  const facts = entry.facts.map((body, i): ExpandedFact => {
    const scope = bodyScope(body);
    return {
      fact: {
        fact_cid: known ? known.encoded[i].cid : b32encode(digests[i]),
        body,
        cell: body.cell as string,
        band: body.band as string,
        tslot: entry.meta[i].tslot,
        kind: body.kind as FactKind,
        provenance_class: entry.meta[i].provenance_class,
        attester: entry.attester,
        scope,
        accepted_at: entry.accepted_at,
        log_index: logIndex,
        supersedes: null,
      },
      position: i,
      bodyBytes: bodyBytes[i],
      digest: digests[i],
      leaf: tree.leafIndex[i],
      scopeKey: scopeKey(scope),
      signedAt: typeof body.signed_at === 'string' ? body.signed_at : null,
    };
  });
  return { facts, tree };
}

/** The StoredFacts an entry at `logIndex` holds, rebuilt from the entry alone (supersedes: null). */
export function factsFromEntry(entry: LogEntryV1, logIndex: number): StoredFact[] {
  const { facts, tree } = expandEntry(entry, logIndex);
  const proofs = new BatchTree(tree.count, tree.blob);
  return facts.map((x) => ({ ...x.fact, proof: proofs.proof(x.leaf) }));
}
