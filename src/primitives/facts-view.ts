/**
 * Serving stored facts (spec 2.3): each fact goes out as its exact body plus `fact_cid` and a
 * `receipt` binding that one fact with its batch inclusion proof. The per-fact receipt is
 * signed once and kept in the hot cache, so warm reads cost no extra signatures.
 */
import { decodeTrusted, encodeCanonical, type CborValue } from '../protocol/cbor.js';
import type { Receipt } from '../protocol/receipt.js';
import type { StoredFact } from '../store/contract.js';
import { issueReceipt, type ServiceContext } from './context.js';

export type ServedFact = Record<string, unknown> & { fact_cid: string; receipt: Receipt };

const RECEIPT_TTL_S = 7 * 86_400;

// Decoded receipts of recently served facts (immutable once signed).
const memo = new Map<string, Receipt>();
const MEMO_CAP = 20_000;

/** The per-fact receipt (primitive `<prefix>.fact`), from the cache or freshly signed. */
export async function factReceipt(ctx: ServiceContext, f: StoredFact): Promise<Receipt> {
  const key = `rcpt:${ctx.config.prefix}:${ctx.keys.publicKeyB32}:${f.fact_cid}`;
  const m = memo.get(key);
  if (m) return m;
  const hit = await ctx.store.cache.get(key);
  if (hit) {
    try {
      const r = decodeTrusted(hit) as unknown as Receipt;
      keep(key, r);
      return r;
    } catch {
      // fall through: re-sign
    }
  }
  const r = issueReceipt(ctx, 'fact', [f.cell], [f.fact_cid], { merkle_proof: f.proof, scope: f.scope ?? undefined });
  await ctx.store.cache.set(key, encodeCanonical(r as unknown as CborValue), RECEIPT_TTL_S);
  keep(key, r);
  return r;
}

function keep(key: string, r: Receipt): void {
  if (memo.size >= MEMO_CAP) memo.delete(memo.keys().next().value as string);
  memo.set(key, r);
}

/** A stored fact as served: body, fact_cid, receipt. */
export async function serveFact(ctx: ServiceContext, f: StoredFact): Promise<ServedFact> {
  return { ...f.body, fact_cid: f.fact_cid, receipt: await factReceipt(ctx, f) };
}

/** Upstream capture time recorded in a fact's derivation, if any. */
export function capturedAt(f: StoredFact): string | undefined {
  const d = f.body.derivation as Record<string, unknown> | undefined;
  return typeof d?.captured_at === 'string' ? d.captured_at : undefined;
}

/** Upstream product version recorded in a fact's derivation, if any. */
export function sourceVersion(f: StoredFact): [string, string] | undefined {
  const d = f.body.derivation as Record<string, unknown> | undefined;
  const src = typeof f.body.provenance === 'string' ? f.body.provenance : undefined;
  return src && typeof d?.version === 'string' ? [src, d.version] : undefined;
}
