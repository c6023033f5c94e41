/**
 * Receipts (docs/protocol-notes.md §5): preimage versions 0, 1 and 2, signing and strict offline
 * verification. Every optional segment is derived from a field the receipt itself carries, so
 * a verifier needs nothing but the receipt and the responder key.
 */
import { b32decode, b32encode } from './base32.js';
import { ByteBuffer, concatBytes, equalBytes, toHex, u32le, utf8 } from './bytes.js';
import { encodeCanonical, type CborValue } from './cbor.js';
import { verifyStrict, type Ed25519Backend, portableEd25519 } from './ed25519.js';
import { blake3 } from './hash.js';
import { batchRootFromProof, proofFromJson, type MerkleProofJson } from './merkle-batch.js';
import { DEFAULT_PREFIX, segment, streamHeader } from './preimage.js';

export const CURRENT_PREIMAGE_VERSION = 2;

export interface Scope {
  user_id?: string;
  agent_id?: string;
  run_id?: string;
  org_id?: string;
}

export interface AsOf {
  valid_tslot?: number;
  transaction_time?: string;
}

export interface FieldBinding {
  aoi_cid: string;
  derivation_cid: string;
}

export interface Cost {
  credits: number;
  latency_p50_ms?: number;
  latency_p99_ms?: number;
  source_freshness_s?: number;
  was_cached: boolean;
}

/** The signed part of a receipt plus the fields its optional segments derive from. */
export interface ReceiptBody {
  request_id: string;
  served_at: string;
  primitive: string;
  cells: string[];
  fact_cids: string[];
  scope?: Scope;
  as_of?: AsOf;
  edge_cids?: string[];
  source_versions?: Record<string, string>;
  field?: FieldBinding;
  merkle_proof?: MerkleProofJson;
}

export interface Receipt extends ReceiptBody {
  schema_cid: string;
  registry_cid: string;
  responder: string;
  responder_pubkey_b32: string;
  responder_key_epoch: number;
  signature: string;
  preimage_version?: number;
  cost?: Cost;
  intent?: string;
}

/** Optional segment values (hex of a BLAKE3 digest), keyed by segment name. */
export interface SegmentHexes {
  scope_hex?: string;
  as_of_hex?: string;
  edges_hex?: string;
  manifest_hex?: string;
  field_hex?: string;
}

const OPTIONAL_TAGS: ReadonlyArray<readonly [number, keyof SegmentHexes]> = [
  [0x03, 'scope_hex'],
  [0x04, 'as_of_hex'],
  [0x05, 'edges_hex'],
  [0x06, 'manifest_hex'],
];

/** The ABSENT marker of the merkle sub-preimage: tag 5, length 0. */
export const MERKLE_ABSENT_MARKER = new Uint8Array([0x05, 0, 0, 0, 0]);

function hexOf(value: unknown): string {
  return toHex(blake3(encodeCanonical(value as CborValue)));
}

/** The set members of a scope (undefined / null members are not set). */
export function scopeFieldsSet(scope: Scope | undefined): Scope | undefined {
  if (!scope) return undefined;
  const out: Scope = {};
  for (const k of ['user_id', 'agent_id', 'run_id', 'org_id'] as const) {
    const v = scope[k];
    if (v !== undefined && v !== null) out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Normalise an RFC 3339 time to `YYYY-MM-DDTHH:MM:SSZ` (as_of transaction time, served_at). */
export function isoSeconds(date: Date | string | number): string {
  const d = date instanceof Date ? date : new Date(date);
  const ms = d.getTime();
  if (!Number.isFinite(ms)) throw new RangeError(`time: ${String(date)} is not a valid timestamp`);
  // Every receipt of a second carries the same text: format it once per second.
  const second = Math.floor(ms / 1000);
  if (second === lastIsoSecond) return lastIso;
  const text = d.toISOString().slice(0, 19) + 'Z';
  lastIsoSecond = second;
  lastIso = text;
  return text;
}
let lastIsoSecond = NaN;
let lastIso = '';

/** field_hex = hex(H(stream("field") ‖ seg(1, aoi_cid) ‖ seg(2, derivation_cid))). */
export function fieldHex(field: FieldBinding, prefix = DEFAULT_PREFIX): string {
  return toHex(blake3(concatBytes(streamHeader('field', prefix), segment(0x01, field.aoi_cid), segment(0x02, field.derivation_cid))));
}

/** merkle_hex: H(stream("merkle") ‖ body); body is the ABSENT marker when there is no proof. */
const absentMerkleHex = new Map<string, string>();
// Served facts repeat their proofs on every read: keep the digest of recent ones.
const proofMerkleHex = new Map<string, string>();
const frozenProofHex = new WeakMap<object, { prefix: string; hex: string }>();

export function merkleHex(proof: MerkleProofJson | undefined, prefix = DEFAULT_PREFIX): string {
  if (!proof) {
    // The ABSENT segment is the same for every receipt of a deployment: compute it once.
    let h = absentMerkleHex.get(prefix);
    if (h === undefined) {
      h = toHex(blake3(concatBytes(streamHeader('merkle', prefix), MERKLE_ABSENT_MARKER)));
      absentMerkleHex.set(prefix, h);
    }
    return h;
  }
  // Frozen proofs (served facts share theirs) are immutable: keep their digest by identity.
  const frozen = Object.isFrozen(proof);
  const byPrefix = frozen ? frozenProofHex.get(proof) : undefined;
  if (byPrefix?.prefix === prefix) return byPrefix.hex;
  const memoKey = `${prefix}|${JSON.stringify(proof)}`;
  const memo = proofMerkleHex.get(memoKey);
  if (memo !== undefined) {
    if (frozen) frozenProofHex.set(proof, { prefix, hex: memo });
    return memo;
  }
  let body: Uint8Array = MERKLE_ABSENT_MARKER;
  if (proof) {
    const p = proofFromJson(proof);
    const rule = proof.rule_version ?? 0;
    if (!Number.isInteger(rule) || rule < 0 || rule > 255) throw new RangeError('merkle_proof.rule_version: expected 0..255');
    body = concatBytes(segment(0x01, p.root), segment(0x02, u32le(p.index)), segment(0x03, concatBytes(...p.siblings)), segment(0x04, new Uint8Array([rule])));
  }
  const hex = toHex(blake3(concatBytes(streamHeader('merkle', prefix), body)));
  if (proofMerkleHex.size >= 4096) proofMerkleHex.clear();
  proofMerkleHex.set(memoKey, hex);
  if (frozen) frozenProofHex.set(proof, { prefix, hex });
  return hex;
}

/** Optional segment values derived from the receipt's own fields (present when non-empty). */
export function segmentHexes(r: ReceiptBody, prefix = DEFAULT_PREFIX): SegmentHexes {
  const h: SegmentHexes = {};
  const scope = scopeFieldsSet(r.scope);
  if (scope) h.scope_hex = hexOf(scope);
  if (r.as_of && Object.keys(r.as_of).length > 0) h.as_of_hex = hexOf(r.as_of);
  if (r.edge_cids && r.edge_cids.length > 0) h.edges_hex = hexOf([...r.edge_cids].sort());
  if (r.source_versions && Object.keys(r.source_versions).length > 0) h.manifest_hex = hexOf(r.source_versions);
  if (r.field) h.field_hex = fieldHex(r.field, prefix);
  return h;
}

/**
 * The preimage bytes of a receipt under its own `preimage_version` (absent → 0).
 * v0 is the legacy pipe text; it lists scope, as_of, edges and manifest hexes (not field).
 */
export function receiptPreimage(r: ReceiptBody & { preimage_version?: number }, prefix = DEFAULT_PREFIX): Uint8Array {
  const version = r.preimage_version ?? 0;
  if (version === 0) {
    const hexes = segmentHexes(r, prefix);
    const parts = [r.request_id, r.served_at];
    for (const [, name] of OPTIONAL_TAGS) if (hexes[name]) parts.push(hexes[name]!);
    const text = parts.join('|') + '|' + r.primitive + '|' + r.cells.map((c) => c + ',').join('') + '|' + r.fact_cids.map((c) => c + ',').join('');
    return utf8(text);
  }
  if (version !== 1 && version !== 2) throw new RangeError(`preimage_version: ${version} is not 0, 1 or 2`);
  // One pass into one buffer: receipts are built on every read, so small allocations add up.
  return writePreimage(r, version, prefix).result();
}

// Receipts are built synchronously one at a time: one writer serves them all.
let sharedWriter: SegmentWriter | undefined;

function writePreimage(r: ReceiptBody, version: 1 | 2, prefix: string): SegmentWriter {
  const w = (sharedWriter ??= new SegmentWriter());
  writeHead(w, r.request_id, r.served_at, prefix);
  writeTail(w, r, version, prefix);
  return w;
}

/** The segments every response writes afresh: header, request_id, served_at. */
function writeHead(w: SegmentWriter, requestId: string, servedAt: string, prefix: string): void {
  w.reset(streamHeader('receipt', prefix));
  w.scalar(0x01, requestId);
  w.scalar(0x02, servedAt);
}

/** The segments after served_at: fixed for a given answer (what a receipt template keeps). */
function writeTail(w: SegmentWriter, r: Omit<ReceiptBody, 'request_id' | 'served_at'>, version: 1 | 2, prefix: string): void {
  const hexes = segmentHexes(r as ReceiptBody, prefix);
  for (const [tag, name] of OPTIONAL_TAGS) if (hexes[name]) w.scalar(tag, hexes[name]!);
  w.scalar(0x07, r.primitive);
  w.list(0x08, r.cells);
  w.list(0x09, r.fact_cids);
  if (hexes.field_hex) w.scalar(0x0a, hexes.field_hex);
  if (version === 2) w.scalar(0x0b, merkleHex(r.merkle_proof, prefix));
}

/** The v2 preimage bytes after the served_at segment (a copy). */
export function receiptPreimageTail(r: Omit<ReceiptBody, 'request_id' | 'served_at'>, prefix = DEFAULT_PREFIX): Uint8Array {
  const w = new SegmentWriter();
  w.reset(new Uint8Array(0));
  writeTail(w, r, 2, prefix);
  return w.view().slice();
}

/** The v2 digest of a receipt whose segments after served_at are `tail` (see receiptPreimageTail). */
export function receiptDigestWithTail(requestId: string, servedAt: string, tail: Uint8Array, prefix = DEFAULT_PREFIX): Uint8Array {
  const w = (sharedWriter ??= new SegmentWriter());
  writeHead(w, requestId, servedAt, prefix);
  w.bytes(tail);
  return blake3(w.view());
}

/** Appends tagged segments (the layout of docs/protocol-notes.md §5) to a growing buffer. */
class SegmentWriter extends ByteBuffer {
  private static enc = new TextEncoder();

  constructor() {
    super(1024);
  }

  /** Start a new preimage with `header`. */
  reset(header: Uint8Array): void {
    this.len = 0;
    this.bytes(header);
  }

  /** The bytes written so far, without copying (valid until the next reset). */
  view(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }

  private u32(x: number): void {
    this.ensure(4);
    this.buf[this.len++] = x & 0xff;
    this.buf[this.len++] = (x >>> 8) & 0xff;
    this.buf[this.len++] = (x >>> 16) & 0xff;
    this.buf[this.len++] = (x >>> 24) & 0xff;
  }

  /** Text as UTF-8 with its u32le length in front. */
  private text(t: string): void {
    // Worst case 3 bytes per UTF-16 unit; write in place, then back-fill the length.
    this.ensure(4 + t.length * 3);
    const at = this.len;
    this.len += 4;
    // Ids, cells and timestamps are ASCII: copy code units directly, fall back on the first non-ASCII.
    let written = 0;
    const n = t.length;
    const buf = this.buf;
    let o = this.len;
    for (; written < n; written++) {
      const c = t.charCodeAt(written);
      if (c >= 0x80) break;
      buf[o++] = c;
    }
    if (written < n) written = SegmentWriter.enc.encodeInto(t, buf.subarray(this.len)).written!;
    this.len += written;
    this.buf[at] = written & 0xff;
    this.buf[at + 1] = (written >>> 8) & 0xff;
    this.buf[at + 2] = (written >>> 16) & 0xff;
    this.buf[at + 3] = (written >>> 24) & 0xff;
  }

  scalar(tag: number, value: string): void {
    this.ensure(1);
    this.buf[this.len++] = tag;
    this.text(value);
  }

  list(tag: number, items: readonly string[]): void {
    this.ensure(1);
    this.buf[this.len++] = tag;
    this.u32(items.length);
    for (const it of items) this.text(it);
  }
}

/** The 32-byte digest that the responder signs. */
export function receiptDigest(r: ReceiptBody & { preimage_version?: number }, prefix = DEFAULT_PREFIX): Uint8Array {
  const version = r.preimage_version ?? 0;
  if (version === 1 || version === 2) return blake3(writePreimage(r, version, prefix).view());
  return blake3(receiptPreimage(r, prefix));
}

/** What signs receipts: the responder key and its rotation epoch. */
export interface ReceiptSigner {
  readonly publicKey: Uint8Array;
  readonly epoch: number;
  sign(digest: Uint8Array): Uint8Array;
}

export interface Manifests {
  schema_cid: string;
  registry_cid: string;
}

// The responder key's text, once per key object (it is written into every receipt).
const keyTexts = new WeakMap<Uint8Array, string>();
function keyText(publicKey: Uint8Array): string {
  let t = keyTexts.get(publicKey);
  if (t === undefined) {
    t = b32encode(publicKey);
    keyTexts.set(publicKey, t);
  }
  return t;
}

/**
 * A current (v2) receipt object for `body`, signature still empty. The key order here is the
 * JSON order of every receipt; receipt templates copy an object built here, so theirs match.
 */
export function receiptObject(body: ReceiptBody & { cost?: Cost; intent?: string }, signer: ReceiptSigner, manifests: Manifests): Receipt {
  const r: Receipt = {
    request_id: body.request_id,
    served_at: body.served_at,
    primitive: body.primitive,
    cells: body.cells,
    fact_cids: body.fact_cids,
    schema_cid: manifests.schema_cid,
    registry_cid: manifests.registry_cid,
    responder: keyText(signer.publicKey),
    responder_pubkey_b32: keyText(signer.publicKey),
    responder_key_epoch: signer.epoch,
    signature: '',
    preimage_version: CURRENT_PREIMAGE_VERSION,
  };
  const scope = scopeFieldsSet(body.scope);
  if (scope) r.scope = scope;
  if (body.as_of && Object.keys(body.as_of).length > 0) r.as_of = body.as_of;
  if (body.edge_cids && body.edge_cids.length > 0) r.edge_cids = body.edge_cids;
  if (body.source_versions && Object.keys(body.source_versions).length > 0) r.source_versions = body.source_versions;
  if (body.field) r.field = body.field;
  if (body.merkle_proof) r.merkle_proof = body.merkle_proof;
  if (body.cost) r.cost = body.cost;
  if (body.intent) r.intent = body.intent;
  return r;
}

/** Build and sign a current (v2) receipt. Optional fields are dropped when empty. */
export function signReceipt(body: ReceiptBody & { cost?: Cost; intent?: string }, signer: ReceiptSigner, manifests: Manifests, prefix = DEFAULT_PREFIX): Receipt {
  const r = receiptObject(body, signer, manifests);
  r.signature = b32encode(signer.sign(receiptDigest(r, prefix)));
  return r;
}

/** Closed set of reasons a well-formed receipt fails (verify_receipt's `errors[]` carries them with text; docs/verification.md). */
export type ReceiptFailure = 'malformed' | 'signature' | 'merkle_inclusion' | 'untrusted_key';

export interface ReceiptVerdict {
  /** Signature verifies under the signer key and every carried proof holds. */
  valid: boolean;
  /** The key the receipt claims (b32), or null when unreadable. */
  signer: string | null;
  /** True when `valid` and the signer is the key the caller trusts (or no key was pinned). */
  trusted: boolean;
  failures: ReceiptFailure[];
  errors: string[];
  preimage_version: number | null;
  preimage?: Uint8Array;
  digest?: Uint8Array;
  field_bound: boolean;
}

export interface VerifyOptions {
  /** Pin the responder key (b32 or raw); a receipt signed by another key is `untrusted_key`. */
  publicKey?: string | Uint8Array;
  /** Also trust these keys (retired keys of the same responder). */
  trustedKeys?: readonly string[];
  prefix?: string;
  backend?: Ed25519Backend;
}

function isStringArray(x: unknown): x is string[] {
  return Array.isArray(x) && x.every((s) => typeof s === 'string');
}

/** Shape check; returns the problems, naming each field. */
export function receiptShapeErrors(r: unknown): string[] {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return ['receipt: expected a JSON object'];
  const o = r as Record<string, unknown>;
  const errs: string[] = [];
  for (const f of ['request_id', 'served_at', 'primitive', 'signature'] as const) {
    if (typeof o[f] !== 'string') errs.push(`${f}: expected a string`);
  }
  if (typeof o.responder_pubkey_b32 !== 'string' && typeof o.responder !== 'string') errs.push('responder_pubkey_b32: expected a string');
  for (const f of ['cells', 'fact_cids'] as const) if (!isStringArray(o[f])) errs.push(`${f}: expected an array of strings`);
  if (o.preimage_version !== undefined && o.preimage_version !== null && ![0, 1, 2].includes(o.preimage_version as number)) {
    errs.push('preimage_version: expected 0, 1 or 2');
  }
  if (o.edge_cids !== undefined && !isStringArray(o.edge_cids)) errs.push('edge_cids: expected an array of strings');
  if (o.field !== undefined) {
    const f = o.field as Record<string, unknown> | null;
    if (!f || typeof f.aoi_cid !== 'string' || typeof f.derivation_cid !== 'string') errs.push('field: expected {aoi_cid, derivation_cid}');
  }
  return errs;
}

/**
 * Verify a receipt offline. Malformed input is reported (never thrown) as `malformed`; a bad
 * signature as `signature`; a carried merkle proof that does not take fact_cids[0] to its root
 * as `merkle_inclusion`; a valid receipt from a key the caller did not pin as `untrusted_key`.
 */
export function verifyReceipt(input: unknown, opts: VerifyOptions = {}): ReceiptVerdict {
  const prefix = opts.prefix ?? DEFAULT_PREFIX;
  const verdict: ReceiptVerdict = { valid: false, signer: null, trusted: false, failures: [], errors: [], preimage_version: null, field_bound: false };
  const shape = receiptShapeErrors(input);
  if (shape.length > 0) {
    verdict.failures.push('malformed');
    verdict.errors.push(...shape.map((e) => `malformed: ${e}`));
    return verdict;
  }
  const r = input as Receipt;
  const signerText = r.responder_pubkey_b32 ?? r.responder;
  verdict.signer = signerText;
  verdict.preimage_version = r.preimage_version ?? 0;
  if (r.responder !== undefined && r.responder_pubkey_b32 !== undefined && r.responder !== r.responder_pubkey_b32) {
    verdict.failures.push('malformed');
    verdict.errors.push('malformed: responder and responder_pubkey_b32 differ');
    return verdict;
  }
  let pub: Uint8Array;
  let sig: Uint8Array;
  try {
    pub = b32decode(signerText, 32, 'responder_pubkey_b32');
    sig = b32decode(r.signature, 64, 'signature');
    verdict.preimage = receiptPreimage(r, prefix);
  } catch (e) {
    verdict.failures.push('malformed');
    verdict.errors.push(`malformed: ${(e as Error).message}`);
    return verdict;
  }
  verdict.digest = blake3(verdict.preimage);
  const sigOk = verifyStrict(sig, verdict.digest, pub, opts.backend ?? portableEd25519);
  if (!sigOk) {
    verdict.failures.push('signature');
    verdict.errors.push(`signature: ed25519 verification failed over the v${verdict.preimage_version} preimage`);
  }
  if (r.merkle_proof) {
    let ok = false;
    try {
      const p = proofFromJson(r.merkle_proof);
      const leaf = b32decode(r.fact_cids[0] ?? '', 32, 'fact_cids[0]');
      ok = p.index < 2 ** p.siblings.length && equalBytes(batchRootFromProof(leaf, p.index, p.siblings), p.root);
    } catch (e) {
      verdict.errors.push(`merkle_inclusion: ${(e as Error).message}`);
    }
    if (!ok) {
      verdict.failures.push('merkle_inclusion');
      verdict.errors.push('merkle_inclusion: merkle_proof does not take fact_cids[0] to its root');
    }
  }
  verdict.valid = verdict.failures.length === 0;
  verdict.field_bound = verdict.valid && r.field !== undefined && verdict.preimage_version >= 1;
  if (verdict.valid) {
    const pinned = opts.publicKey === undefined ? undefined : typeof opts.publicKey === 'string' ? opts.publicKey : b32encode(opts.publicKey);
    const trusted = pinned === undefined || pinned === signerText || (opts.trustedKeys ?? []).includes(signerText);
    verdict.trusted = trusted;
    if (!trusted) {
      verdict.failures.push('untrusted_key');
      verdict.errors.push(`untrusted_key: signed by ${signerText}, not by the pinned key`);
    }
  }
  return verdict;
}
