/**
 * Serving stored facts (docs/protocol-notes.md §4 and "Receipts"): each fact goes out as its exact
 * body plus `fact_cid` and a `receipt` binding that one fact with its batch inclusion proof. The
 * per-fact receipt is signed once and kept in the hot cache, so warm reads cost no extra
 * signatures.
 */
import { BoundedCache } from '../../lib/cache.js';
import { decodeTrusted, encodeCanonical, type CborValue } from '../../protocol/cbor.js';
import type { Receipt } from '../../protocol/receipt.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { deepFreeze } from '../../protocol/freeze.js';
import { factMetaOf, recordFactMeta } from './fact-meta.js';

export type ServedFact = Record<string, unknown> & { fact_cid: string; receipt: Receipt };

const RECEIPT_TTL_S = 7 * 86_400;

// Recently served facts, each with its decoded receipt. Served facts are frozen and shared by
// every response that carries them (the serializer keeps their JSON once, see api/json.ts).
const MEMO_CAP = 20_000;
const memo = new BoundedCache<string, ServedFact>('served_facts', { max: MEMO_CAP });

function memoKey(ctx: ServiceContext, f: StoredFact): string {
  return `rcpt:${ctx.config.prefix}:${ctx.keys.publicKeyB32}:${f.fact_cid}`;
}

/** The per-fact receipt (primitive `<prefix>.fact`), from the shared cache or freshly signed. */
async function loadOrSign(ctx: ServiceContext, f: StoredFact, key: string): Promise<Receipt> {
  const hit = await ctx.store.cache.get(key);
  if (hit) {
    try {
      return decodeTrusted(hit) as unknown as Receipt;
    } catch {
      // fall through: re-sign
    }
  }
  const r = issueReceipt(ctx, 'fact', [f.cell], [f.fact_cid], { merkle_proof: f.proof, scope: f.scope ?? undefined });
  await ctx.store.cache.set(key, encodeCanonical(r as unknown as CborValue), RECEIPT_TTL_S);
  return r;
}

/** A stored fact as served: body, fact_cid, receipt (frozen: shared between responses). */
export async function serveFact(ctx: ServiceContext, f: StoredFact): Promise<ServedFact> {
  const key = memoKey(ctx, f);
  const m = memo.get(key);
  if (m) return m;
  const served = deepFreeze({ ...f.body, fact_cid: f.fact_cid, receipt: await loadOrSign(ctx, f, key) }) as ServedFact;
  recordFactMeta(served, factMetaOf(ctx, f));
  memo.set(key, served);
  return served;
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
