/**
 * Who signed each served fact and where it sits (`fact_meta`): the attester key and its role, the
 * log entry, and for minted facts the source and function. This is serving metadata, kept beside
 * the signed bodies and never inside them (docs/protocol-notes.md §4: a fact's hashed body is the
 * served object minus fact_cid and receipt), so it cannot change a fact_cid. A verifier checks it
 * against the log (`svc verify --log`).
 */
import type { FactMeta } from '../../protocol/verify-response.js';
import type { StoredFact } from '../../store/contract.js';
import type { ServiceContext } from '../context/context.js';
import { recordStanding } from '../write/standing.js';

export type { FactMeta };

/** How a writer key stands with this responder today. */
export function attesterRole(ctx: ServiceContext, key: string): 'responder' | 'device' | 'operator' | 'revoked' | 'unlisted' {
  if (key === ctx.keys.publicKeyB32 || ctx.keys.retired.some((k) => k.public_key === key)) return 'responder';
  if (ctx.config.revokedKeys.includes(key)) return 'revoked';
  // Enrollment and revocation records, as this process last read them (keys/standing.ts).
  const byRecord = recordStanding(key);
  if (byRecord) return byRecord;
  if (ctx.config.deviceKeys.includes(key)) return 'device';
  if (ctx.config.attesterKeys.includes(key)) return 'operator';
  return 'unlisted';
}

/** The metadata of one stored fact. */
export function factMetaOf(ctx: ServiceContext, f: StoredFact): FactMeta {
  const m: FactMeta = {
    attester: f.attester,
    attester_role: attesterRole(ctx, f.attester),
    log_index: f.log_index,
    accepted_at: f.accepted_at,
    provenance_class: f.provenance_class,
  };
  const d = f.body.derivation as Record<string, unknown> | undefined;
  if (typeof f.body.provenance === 'string') m.source = f.body.provenance;
  if (d && typeof d.fn === 'string') m.function = d.fn;
  // An attested body may omit its unit (it is stored as signed); readers get the declared one here.
  if (f.body.unit === undefined) {
    const unit = ctx.registry.bands.get(f.band)?.unit;
    if (unit !== undefined) m.declared_unit = unit;
  }
  return m;
}

// Served facts are frozen objects shared between responses: their metadata is keyed by identity.
const metaOfServed = new WeakMap<object, FactMeta>();

/** Record the metadata of a served fact object (called where facts are served). */
export function recordFactMeta(served: object, meta: FactMeta): void {
  metaOfServed.set(served, meta);
}

/**
 * The response with a root `fact_meta` map (fact_cid → metadata) for every served fact it
 * carries, however deeply nested; a response without served facts, or with a `fact_meta` of its
 * own, is returned untouched.
 */
export function withFactMeta<T>(result: T): T {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
  // A result that set its own map (a trimmed /v1/ask reply: size.ts) keeps it.
  if ((result as { fact_meta?: unknown }).fact_meta !== undefined) return result;
  const found: Record<string, FactMeta> = {};
  let n = 0;
  const visit = (x: unknown, depth: number): void => {
    if (typeof x !== 'object' || x === null || depth > 8) return;
    const meta = metaOfServed.get(x);
    if (meta) {
      found[(x as { fact_cid: string }).fact_cid] = meta;
      n++;
      return;
    }
    if (Array.isArray(x)) {
      for (const e of x) visit(e, depth + 1);
      return;
    }
    if (x instanceof Uint8Array) return;
    for (const k in x) if (k !== 'receipt' && k !== 'fact_meta') visit((x as Record<string, unknown>)[k], depth + 1);
  };
  visit(result, 0);
  if (n === 0) return result;
  // Results are built per response, and adapters key response metadata (recall's ETag) by the
  // object itself: add the map in place; only a shared frozen result is copied.
  if (Object.isFrozen(result)) return { ...result, fact_meta: found };
  (result as Record<string, unknown>).fact_meta = found;
  return result;
}
