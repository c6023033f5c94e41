/**
 * verify_receipt (docs/verification.md): check a receipt — or a whole saved response, every fact
 * recomputed and bound (protocol/verify-response.ts) — the way an offline verifier would. An
 * invalid signature or a changed fact is an answer (valid:false), not an error.
 */
import { b32encode } from '../../protocol/base32.js';
import { toHex } from '../../protocol/bytes.js';
import { verifyReceipt } from '../../protocol/receipt.js';
import { looksLikeReceipt, verifyResponse, type ResponseVerdict } from '../../protocol/verify-response.js';
import type { ServiceContext } from '../context/context.js';

function base64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** A hint that does not change `valid`: the signature says nothing about manifests (docs/verification.md, "What is not signed"). */
export interface Advisory {
  advisory: true;
  code: 'registry_cid_unknown' | 'schema_cid_unknown';
  message: string;
}

export interface VerifyReceiptResult {
  valid: boolean;
  signer: string | null;
  signer_is_this_responder: boolean;
  signer_epoch: number | null;
  preimage_version: number | null;
  preimage_b64: string | null;
  preimage_blake3_hex: string | null;
  field_bound: boolean;
  failures: string[];
  errors: string[];
  advisories: Advisory[];
  /** Present when a whole response was given: per-receipt, per-fact and per-reference checks. */
  response?: Pick<ResponseVerdict, 'valid' | 'receipts' | 'facts' | 'references' | 'failures' | 'unsigned'>;
}

/** A whole response (facts and receipts), as opposed to a receipt or `{receipt}`. */
function isResponse(body: unknown): body is Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || looksLikeReceipt(body)) return false;
  const keys = Object.keys(body);
  return !(keys.length === 1 && keys[0] === 'receipt');
}

/** The root receipt of a request body: the body itself, or its `receipt`. */
export function receiptOf(body: unknown): unknown {
  if (body && typeof body === 'object' && !('signature' in body) && (body as { receipt?: unknown }).receipt && typeof (body as { receipt?: unknown }).receipt === 'object') {
    return (body as { receipt: unknown }).receipt;
  }
  return body;
}

function advisories(ctx: ServiceContext, receipt: unknown, ours: boolean): Advisory[] {
  const out: Advisory[] = [];
  if (!ours || typeof receipt !== 'object' || receipt === null) return out;
  const r = receipt as { registry_cid?: unknown; schema_cid?: unknown };
  const known = ctx.publishedManifests ?? { registry_cids: [ctx.manifests.registry_cid], schema_cids: [ctx.manifests.schema_cid] };
  if (typeof r.registry_cid === 'string' && !known.registry_cids.includes(r.registry_cid)) {
    out.push({ advisory: true, code: 'registry_cid_unknown', message: `registry_cid ${r.registry_cid} was never published by this responder (the field is not signed; see /v1/manifests)` });
  }
  if (typeof r.schema_cid === 'string' && !known.schema_cids.includes(r.schema_cid)) {
    out.push({ advisory: true, code: 'schema_cid_unknown', message: `schema_cid ${r.schema_cid} was never published by this responder (the field is not signed; see /v1/manifests)` });
  }
  return out;
}

/**
 * `{response: …}` (a saved answer wrapped by the caller, as agents often send it) is the response
 * itself: without unwrapping, its root has no receipt and the answer would read as tampered.
 */
function unwrapped(body: unknown): unknown {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const keys = Object.keys(body);
    const inner = (body as { response?: unknown }).response;
    if (keys.length === 1 && keys[0] === 'response' && inner && typeof inner === 'object' && !Array.isArray(inner)) return inner;
  }
  return body;
}

export function verifyReceiptPrimitive(ctx: ServiceContext, given: unknown): VerifyReceiptResult {
  const body = unwrapped(given);
  const receipt = receiptOf(body);
  const opts = { prefix: ctx.config.prefix, backend: ctx.ed25519 };
  const v = verifyReceipt(receipt, opts);
  const current = b32encode(ctx.keys.signer.publicKey);
  const retired = ctx.keys.retired.find((k) => k.public_key === v.signer);
  const ours = v.signer === current || retired !== undefined;
  const out: VerifyReceiptResult = {
    valid: v.valid,
    signer: v.signer,
    signer_is_this_responder: ours,
    signer_epoch: v.signer === current ? ctx.keys.epoch : (retired?.epoch ?? null),
    preimage_version: v.preimage_version,
    preimage_b64: v.preimage ? base64(v.preimage) : null,
    preimage_blake3_hex: v.digest ? toHex(v.digest) : null,
    field_bound: v.field_bound,
    failures: v.failures,
    errors: v.errors,
    advisories: advisories(ctx, receipt, ours),
  };
  if (isResponse(body)) {
    const rv = verifyResponse(body, opts);
    out.response = { valid: rv.valid, receipts: rv.receipts, facts: rv.facts, references: rv.references, failures: rv.failures, unsigned: rv.unsigned };
    // The answer is about everything given: a changed fact makes the whole response invalid.
    out.valid = v.valid && rv.valid;
    for (const f of rv.failures) if (!out.failures.includes(f)) out.failures.push(f);
    for (const e of rv.errors) if (!out.errors.includes(e)) out.errors.push(e);
  }
  return out;
}
