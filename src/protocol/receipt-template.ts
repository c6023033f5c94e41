/**
 * Receipts re-issued over an unchanged answer. A repeated read of the same facts signs a new
 * receipt every time, but only request_id, served_at, cost and the signature differ between
 * them: the preimage after served_at and the JSON text around those four fields are prepared once
 * here, so each issue writes two segments, hashes, signs and joins a few strings. The result is
 * the same receipt `signReceipt` builds (same bytes signed, same JSON), which the tests pin.
 */
import { b32encode } from './base32.js';
import { attachJson } from './json-text.js';
import { DEFAULT_PREFIX } from './preimage.js';
import {
  receiptDigestWithTail, receiptObject, receiptPreimageTail,
  type Cost, type Manifests, type Receipt, type ReceiptBody, type ReceiptSigner,
} from './receipt.js';

/** A receipt body without its per-response fields. */
export type FixedReceiptBody = Omit<ReceiptBody, 'request_id' | 'served_at'> & { intent?: string };

type Slot = 'request_id' | 'served_at' | 'signature' | 'cost';
const SLOTS: ReadonlySet<string> = new Set<Slot>(['request_id', 'served_at', 'signature', 'cost']);

function freezeDeep(x: unknown): void {
  if (x !== null && typeof x === 'object' && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const v of Object.values(x)) freezeDeep(v);
  }
}

export class ReceiptTemplate {
  private readonly tail: Uint8Array;
  /** JSON text between the slots: texts[i] precedes slots[i]; the last text closes the object. */
  private readonly texts: string[] = [];
  private readonly slots: Slot[] = [];
  /** The receipt object with placeholders, with and without cost: each issue copies one (same key order). */
  private readonly withCost: Receipt;
  private readonly withoutCost: Receipt;

  /** The body is frozen and kept: its arrays and objects are shared by every issued receipt. */
  constructor(
    body: FixedReceiptBody,
    readonly signer: ReceiptSigner,
    readonly manifests: Manifests,
    readonly prefix: string = DEFAULT_PREFIX,
  ) {
    freezeDeep(body);
    this.tail = receiptPreimageTail(body, prefix);
    // A sample with every slot filled gives the key order; a placeholder cost marks its place.
    const sample = receiptObject({ ...body, request_id: '', served_at: '', cost: { credits: 0, was_cached: false } }, signer, manifests);
    let text = '{';
    let first = true;
    for (const key of Object.keys(sample)) {
      const value = (sample as unknown as Record<string, unknown>)[key];
      if (value === undefined) continue;
      const head = (first ? '' : ',') + JSON.stringify(key) + ':';
      first = false;
      if (!SLOTS.has(key)) {
        text += head + JSON.stringify(value);
        continue;
      }
      // The cost slot writes its own key and comma: a receipt without cost has neither.
      this.texts.push(key === 'cost' ? text : text + head);
      this.slots.push(key as Slot);
      text = '';
    }
    this.texts.push(text + '}');
    this.withCost = sample;
    this.withoutCost = receiptObject({ ...body, request_id: '', served_at: '' }, signer, manifests);
    if (sample.scope) Object.freeze(sample.scope);
    if (this.withoutCost.scope) Object.freeze(this.withoutCost.scope);
  }

  /** Whether this template still signs as `signer` over `manifests` (a rotated key needs a new one). */
  fits(signer: ReceiptSigner, manifests: Manifests): boolean {
    return signer === this.signer && manifests.schema_cid === this.manifests.schema_cid && manifests.registry_cid === this.manifests.registry_cid;
  }

  /** A signed receipt for one response; frozen, with its JSON text attached. */
  issue(requestId: string, servedAt: string, cost?: Cost): Receipt {
    // A copy of a prepared object keeps its key order (the JSON order) and its hidden class.
    const receipt: Receipt = cost ? { ...this.withCost } : { ...this.withoutCost };
    receipt.request_id = requestId;
    receipt.served_at = servedAt;
    if (cost) receipt.cost = cost;
    receipt.signature = b32encode(this.signer.sign(receiptDigestWithTail(requestId, servedAt, this.tail, this.prefix)));
    let json = '';
    for (let i = 0; i < this.slots.length; i++) {
      json += this.texts[i];
      switch (this.slots[i]) {
        case 'request_id': json += JSON.stringify(requestId); break;
        case 'served_at': json += JSON.stringify(servedAt); break;
        case 'signature': json += JSON.stringify(receipt.signature); break;
        case 'cost': if (cost) json += ',"cost":' + JSON.stringify(cost); break;
      }
    }
    json += this.texts[this.slots.length];
    if (cost) Object.freeze(cost);
    return attachJson(Object.freeze(receipt), json);
  }
}
