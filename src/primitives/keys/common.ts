/**
 * What the key operations share (devices.ts, bearers.ts): reading the keys and signatures of a
 * signed statement, its expiry, and minting and serving the responder's records about a key.
 */
import { b32decode } from '../../protocol/base32.js';
import { admitPublicKey, verifyStrict } from '../../protocol/ed25519.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { recordSubject } from '../../protocol/memory-records.js';
import type { StoredFact } from '../../store/contract.js';
import { mintedBody, mintFacts } from '../write/attest.js';
import type { ServiceContext } from '../context/context.js';

/** Longest a signed key statement may stay good: its exp lies at most this far ahead. */
export const STATEMENT_TTL_SECS = 900;

const KEY_RE = /^[a-z2-7]{52}$/;

/** A b32 Ed25519 public key from a request field, admitted (canonical, on the curve, not small order). */
export function publicKeyOf(field: string, v: unknown): Uint8Array {
  if (typeof v !== 'string' || !KEY_RE.test(v)) throw invalidArgument(field, 'expected an Ed25519 public key (52 base32 characters)');
  const pub = b32decode(v, 32, field);
  const verdict = admitPublicKey(pub);
  if (!verdict.ok) throw new SvcError('bad_signature', `${field}: key refused (${verdict.reason})`, { field, reason: verdict.reason });
  return pub;
}

/** A 64-byte b32 signature from a request field (missing → 401 unauthorized). */
export function signatureOf(field: string, v: unknown): Uint8Array {
  if (typeof v !== 'string' || v === '') throw new SvcError('unauthorized', `${field}: missing signature`, { field });
  try {
    return b32decode(v, 64, field);
  } catch (e) {
    throw new SvcError('bad_signature', `${field}: ${(e as Error).message}`, { field });
  }
}

/** Throws `bad_signature` (401) naming `field` unless `sig` verifies over `digest` under `pub`. */
export function requireSignature(ctx: ServiceContext, field: string, sig: Uint8Array, digest: Uint8Array, pub: Uint8Array, statement: string): void {
  if (!verifyStrict(sig, digest, pub, ctx.ed25519)) {
    throw new SvcError('bad_signature', `${field}: does not verify over the ${statement} statement (docs/devices.md)`, { field, statement });
  }
}

/** Unix seconds now, at the responder. */
export function nowUnix(ctx: ServiceContext): number {
  return Math.floor(ctx.now().getTime() / 1000);
}

/** A statement's expiry: after now and at most STATEMENT_TTL_SECS ahead (422 invalid_argument otherwise). */
export function checkExp(ctx: ServiceContext, v: unknown, field = 'exp'): number {
  const now = nowUnix(ctx);
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw invalidArgument(field, 'expected Unix seconds (an integer)');
  if (v <= now) {
    throw new SvcError('invalid_argument', `${field}: the statement expired ${now - v} s ago; sign a fresh one`, { field, reason: 'expired', now });
  }
  if (v > now + STATEMENT_TTL_SECS) {
    throw new SvcError('invalid_argument', `${field}: at most ${STATEMENT_TTL_SECS} s ahead (got ${v - now} s)`, { field, reason: 'too_far_ahead', now, max_ahead_s: STATEMENT_TTL_SECS });
  }
  return v;
}

/** Mint one responder-signed record about a key (or a trace) and read it back as stored. */
export async function mintRecord(ctx: ServiceContext, band: string, value: Record<string, unknown>, primitive: string): Promise<StoredFact> {
  const body = mintedBody(ctx, {
    kind: 'primary',
    cell: recordSubject(band, value),
    band,
    tslot: 0,
    value,
    unit: 'record',
    provenance: `${ctx.config.prefix}.keys`,
    derivation: { fn: 'attested@1', sources: [primitive] },
  });
  const res = await mintFacts(ctx, [body], primitive);
  const f = await ctx.store.getFact(res.fact_cids[0]);
  if (!f) throw new SvcError('internal', `${primitive}: the record ${res.fact_cids[0]} was accepted but cannot be read back`);
  return f;
}
