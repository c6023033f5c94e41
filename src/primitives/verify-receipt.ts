/** verify_receipt (spec 4.8): check any receipt offline-style; an invalid signature is an answer, not an error. */
import { b32encode } from '../protocol/base32.js';
import { toHex } from '../protocol/bytes.js';
import { verifyReceipt } from '../protocol/receipt.js';
import type { ServiceContext } from './context.js';

function base64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
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
}

export function verifyReceiptPrimitive(ctx: ServiceContext, receipt: unknown): VerifyReceiptResult {
  const v = verifyReceipt(receipt, { prefix: ctx.config.prefix, backend: ctx.ed25519 });
  const current = b32encode(ctx.keys.signer.publicKey);
  const retired = ctx.keys.retired.find((k) => k.public_key === v.signer);
  const ours = v.signer === current || retired !== undefined;
  return {
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
  };
}
