/**
 * Receipts re-issued over an unchanged answer. A repeated read of the same facts signs a new
 * receipt every time, but only request_id, served_at, cost and the signature differ between
 * them: the preimage after served_at (optional segment digests, primitive, cells, fact_cids,
 * merkle digest) and the receipt object's fixed fields are prepared once here, so each issue
 * writes two segments, hashes and signs. The result is the receipt `signReceipt` builds for the
 * same fields (same bytes signed, same JSON), which the tests pin.
 */
import { b32encode } from './base32.js';
import { deepFreeze } from './freeze.js';
import { DEFAULT_PREFIX } from './preimage.js';
import { receiptDigestWithTail, receiptObject, receiptPreimageTail, type Cost, type Manifests, type Receipt, type ReceiptBody, type ReceiptSigner } from './receipt.js';

/** A receipt body without its per-response fields. */
export type FixedReceiptBody = Omit<ReceiptBody, 'request_id' | 'served_at'> & { intent?: string };

export class ReceiptTemplate {
  private readonly tail: Uint8Array;
  /** The receipt object with empty per-response fields, with and without cost (copied per issue: same key order). */
  private readonly withCost: Receipt;
  private readonly withoutCost: Receipt;

  /** The body is frozen and kept: its arrays and objects are shared by every issued receipt. */
  constructor(
    body: FixedReceiptBody,
    readonly signer: ReceiptSigner,
    readonly manifests: Manifests,
    readonly prefix: string = DEFAULT_PREFIX,
  ) {
    deepFreeze(body);
    this.tail = receiptPreimageTail(body, prefix);
    this.withCost = receiptObject({ ...body, request_id: '', served_at: '', cost: { credits: 0, was_cached: false } }, signer, manifests);
    this.withoutCost = receiptObject({ ...body, request_id: '', served_at: '' }, signer, manifests);
    // scopeFieldsSet gave each object its own scope: share one frozen copy like the rest of the body.
    if (this.withCost.scope) this.withoutCost.scope = this.withCost.scope = Object.freeze(this.withCost.scope);
  }

  /** Whether this template still signs as `signer` over `manifests` (a rotated key needs a new one). */
  fits(signer: ReceiptSigner, manifests: Manifests): boolean {
    return signer === this.signer && manifests.schema_cid === this.manifests.schema_cid && manifests.registry_cid === this.manifests.registry_cid;
  }

  /** A signed receipt for one response. */
  issue(requestId: string, servedAt: string, cost?: Cost): Receipt {
    // A copy of a prepared object keeps its key order (the JSON order) and its hidden class.
    const receipt: Receipt = cost ? { ...this.withCost } : { ...this.withoutCost };
    receipt.request_id = requestId;
    receipt.served_at = servedAt;
    if (cost) receipt.cost = cost;
    receipt.signature = b32encode(this.signer.sign(receiptDigestWithTail(requestId, servedAt, this.tail, this.prefix)));
    return receipt;
  }
}
