/**
 * Scope read bearers (docs/scopes.md). A key bound to a scope signs a short statement {scope,
 * key, exp, responder} (src/protocol/scope-bearer.ts); the responder checks it and returns a
 * bearer it signs itself with its own key: `sb1.<payload>.<signature>` (base64url), the payload
 * being {v, scope, key, exp}. Nothing is stored: a bearer is checked by its signature and expiry,
 * and on every use its key must still be bound to the scope and not revoked, so revoking the
 * key (SVC_REVOKED_KEYS) or rebinding the scope ends it without waiting for it to expire.
 */
import { b32decode } from '../../protocol/base32.js';
import { fromUtf8, utf8 } from '../../protocol/bytes.js';
import { admitPublicKey, verifyStrict } from '../../protocol/ed25519.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { domainDigest, segment } from '../../protocol/preimage.js';
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import { scopeBearerRequestDigest } from '../../protocol/scope-bearer.js';
import { requestScope } from '../reads/common.js';
import type { ServiceContext } from '../context.js';
import { configuredKeys, isBound, notBound } from './binding.js';

const VERSION = 'sb1';

/** What a valid bearer says. */
export interface BearerClaims {
  scope: Scope;
  key: string;
  exp: number;
}

export interface BearerRequest {
  scope?: unknown;
  key?: unknown;
  exp?: unknown;
  signature?: unknown;
}

function payloadDigest(ctx: ServiceContext, payload: Uint8Array): Uint8Array {
  return domainDigest('scope_bearer', [segment(1, payload)], ctx.config.prefix);
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** The key's standing before any binding: revoked keys get nothing. */
export function refuseRevoked(ctx: ServiceContext, key: string, field: string): void {
  if (ctx.config.revokedKeys.includes(key)) throw new SvcError('attester_revoked', `${field}: key ${key} is revoked`, { field });
}

/** Check a signed bearer request and issue the bearer (POST /v1/scope_bearer). */
export async function issueScopeBearer(ctx: ServiceContext, req: BearerRequest) {
  const scope = requestScope(req.scope);
  if (!scope) throw invalidArgument('scope', 'expected at least one of user_id, agent_id, run_id, org_id');
  if (typeof req.key !== 'string') throw invalidArgument('key', 'expected a b32 public key');
  const pub = b32decode(req.key, 32, 'key');
  const verdict = admitPublicKey(pub);
  if (!verdict.ok) throw new SvcError('bad_signature', `key: refused (${verdict.reason})`, { field: 'key', reason: verdict.reason });
  const nowS = Math.floor(ctx.now().getTime() / 1000);
  const ttl = ctx.config.scopeBearerTtlSecs;
  if (!Number.isSafeInteger(req.exp) || (req.exp as number) <= nowS || (req.exp as number) > nowS + ttl) {
    throw invalidArgument('exp', `expected Unix seconds after now and at most ${ttl} s ahead (SVC_SCOPE_BEARER_TTL_SECS)`);
  }
  const exp = req.exp as number;
  if (typeof req.signature !== 'string') throw new SvcError('unauthorized', 'signature: missing', { field: 'signature' });
  const sig = b32decode(req.signature, 64, 'signature');
  const digest = scopeBearerRequestDigest(scope, pub, exp, ctx.keys.signer.publicKey, ctx.config.prefix);
  if (!verifyStrict(sig, digest, pub, ctx.ed25519)) {
    throw new SvcError('bad_signature', 'signature: does not verify over the scope_bearer_request statement (scope, key, exp, responder key)', { field: 'signature' });
  }
  refuseRevoked(ctx, req.key, 'key');
  // Only a key that may write here can claim an unconfigured scope; configured scopes name their keys.
  const configured = configuredKeys(ctx, scope);
  const writer = ctx.config.attesterKeys.includes(req.key) || ctx.config.deviceKeys.includes(req.key);
  if (!configured && !writer) throw notBound('key', req.key);
  if (!(await isBound(ctx, req.key, scope, true))) throw notBound('key', req.key);
  const payload = utf8(JSON.stringify({ v: 1, scope, key: req.key, exp }));
  const signature = ctx.keys.signer.sign(payloadDigest(ctx, payload));
  return {
    token_type: 'Bearer',
    bearer: `${VERSION}.${b64(payload)}.${b64(signature)}`,
    scope,
    key: req.key,
    expires_at: isoSeconds(exp * 1000),
    binding: configured ? 'configured' : 'claimed',
    usage: 'Send as `Authorization: Bearer <bearer>` with any read that names this scope (REST).',
  };
}

function unauthorized(message: string): SvcError {
  return new SvcError('unauthorized', `authorization: ${message}`, { field: 'authorization', hint: 'Obtain a bearer with POST /v1/scope_bearer (docs/scopes.md).' });
}

/**
 * The claims of the bearer in an Authorization header; null when there is none. Throws
 * `unauthorized` (401) for a header that is not a valid, unexpired bearer of this responder.
 */
export function readBearer(ctx: ServiceContext, authorization: string | string[] | undefined): BearerClaims | null {
  if (authorization === undefined || authorization === '') return null;
  const m = /^Bearer +(\S+)$/i.exec(Array.isArray(authorization) ? authorization[0] ?? '' : authorization);
  const parts = m?.[1].split('.');
  if (!parts || parts.length !== 3 || parts[0] !== VERSION) throw unauthorized(`expected Bearer ${VERSION}.<payload>.<signature>`);
  const payload = Buffer.from(parts[1], 'base64url');
  const sig = Buffer.from(parts[2], 'base64url');
  if (sig.length !== 64 || !verifyStrict(sig, payloadDigest(ctx, payload), ctx.keys.signer.publicKey, ctx.ed25519)) {
    throw unauthorized('the bearer was not issued by this responder (or by its current key)');
  }
  const claims = JSON.parse(fromUtf8(payload)) as BearerClaims;
  if (!(claims.exp > Math.floor(ctx.now().getTime() / 1000))) throw unauthorized(`the bearer expired at ${isoSeconds(claims.exp * 1000)}`);
  return claims;
}
