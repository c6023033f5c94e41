/**
 * Scope read bearers (docs/scopes.md). A key bound to a scope signs a short statement {scope,
 * key, exp, responder} (src/protocol/scope-bearer.ts); the responder checks it and returns a
 * bearer it signs itself with its own key: `sb1.<payload>.<signature>` (base64url), the payload
 * being {v, scope, key, exp, iat}. Nothing is stored for a bearer: it is checked by its signature
 * and expiry, and on every use its key must still be bound to the scope and not revoked, and the
 * bearer must not be older than the key's latest bearer revocation (`memory.bearer_revocation`,
 * read from the store on each use). So revoking the key (SVC_REVOKED_KEYS or a revocation
 * record), voiding its bearers, or rebinding the scope ends a bearer without waiting for expiry.
 * POST /v1/memory/bearer issues the same bearer as POST /v1/scope_bearer.
 */
import { b32decode } from '../../protocol/base32.js';
import { fromUtf8, utf8 } from '../../protocol/bytes.js';
import { admitPublicKey, verifyStrict } from '../../protocol/ed25519.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { domainDigest, segment } from '../../protocol/preimage.js';
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import { scopeBearerRequestDigest } from '../../protocol/scope-bearer.js';
import { requestScope } from './request.js';
import type { ServiceContext } from '../context/context.js';
import { keyStatus, refuseRevoked, revokedError, type KeyRecords } from '../write/standing.js';
import { useStatementOnce } from '../keys/single-use.js';
import { configuredKeys, isBound, notBound } from '../write/scope-binding.js';

const VERSION = 'sb1';

/** What a valid bearer says. */
export interface BearerClaims {
  scope: Scope;
  key: string;
  exp: number;
  /** Issued at (Unix s); bearers issued before iat was added carry none. */
  iat?: number;
}

/** A bearer request, as the operation's schema admits it (scope shape, key and signature forms checked). */
export interface BearerRequest {
  scope: Record<string, string | undefined>;
  key: string;
  exp: number;
  signature: string;
}

function payloadDigest(ctx: ServiceContext, payload: Uint8Array): Uint8Array {
  return domainDigest('scope_bearer', [segment(1, payload)], ctx.config.prefix);
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** The key's standing before any binding: revoked keys get nothing (config or revocation record). */
export { refuseRevoked };

/**
 * Throws unless the bearer's key is unrevoked (`attester_revoked`, 403) and the bearer is not
 * older than the key's latest bearer revocation (`unauthorized`, 401, reason `bearer_revoked`:
 * issued before its not_before, or carrying no iat at all).
 */
export async function checkBearerKey(ctx: ServiceContext, claims: BearerClaims, field = 'authorization'): Promise<void> {
  const records: KeyRecords | null = await refuseRevoked(ctx, claims.key, field);
  const notBefore = records?.bearersNotBefore ?? null;
  if (notBefore !== null && !(typeof claims.iat === 'number' && claims.iat >= notBefore)) {
    throw new SvcError(
      'unauthorized',
      `${field}: the bearer was voided: key ${claims.key} revoked its bearers issued before ${isoSeconds(notBefore * 1000)} (record ${records!.bearerRevocation!.fact_cid})`,
      {
        field,
        reason: 'bearer_revoked',
        not_before: notBefore,
        revocation: records!.bearerRevocation!.fact_cid,
        hint: 'Obtain a new bearer with POST /v1/memory/bearer (or /v1/scope_bearer).',
      },
    );
  }
}

/** Check a signed bearer request and issue the bearer (POST /v1/scope_bearer). */
export async function issueScopeBearer(ctx: ServiceContext, req: BearerRequest) {
  const scope = requestScope(req.scope);
  if (!scope) throw invalidArgument('scope', 'expected at least one of user_id, agent_id, run_id, org_id');
  const pub = b32decode(req.key, 32, 'key');
  const verdict = admitPublicKey(pub);
  if (!verdict.ok) throw new SvcError('bad_signature', `key: refused (${verdict.reason})`, { field: 'key', reason: verdict.reason });
  const nowS = Math.floor(ctx.now().getTime() / 1000);
  const ttl = ctx.config.scopeBearerTtlSecs;
  const exp = req.exp;
  if (exp <= nowS || exp > nowS + ttl) {
    throw invalidArgument('exp', `expected Unix seconds after now and at most ${ttl} s ahead (SVC_SCOPE_BEARER_TTL_SECS)`);
  }
  const sig = b32decode(req.signature, 64, 'signature');
  const digest = scopeBearerRequestDigest(scope, pub, exp, ctx.keys.signer.publicKey, ctx.config.prefix);
  if (!verifyStrict(sig, digest, pub, ctx.ed25519)) {
    throw new SvcError('bad_signature', 'signature: does not verify over the scope_bearer_request statement (scope, key, exp, responder key)', { field: 'signature' });
  }
  const status = await keyStatus(ctx, req.key);
  if (status.standing === 'revoked') throw revokedError(req.key, 'key', status);
  // Only a key that may write here (listed, or an enrolled device) can claim an unconfigured
  // scope; configured scopes name their keys.
  const configured = configuredKeys(ctx, scope);
  const writer = status.standing === 'device' || status.standing === 'operator';
  if (!configured && !writer) throw notBound('key', req.key);
  if (!(await isBound(ctx, req.key, scope, true))) throw notBound('key', req.key);
  // Good once: a statement replayed later (after the bearers it gave were voided) gives nothing.
  await useStatementOnce(ctx, 'scope_bearer_request', digest, exp);
  const payload = utf8(JSON.stringify({ v: 1, scope, key: req.key, exp, iat: nowS }));
  const signature = ctx.keys.signer.sign(payloadDigest(ctx, payload));
  return {
    token_type: 'Bearer',
    bearer: `${VERSION}.${b64(payload)}.${b64(signature)}`,
    scope,
    key: req.key,
    expires_at: isoSeconds(exp * 1000),
    issued_at: isoSeconds(nowS * 1000),
    binding: configured ? 'configured' : 'claimed',
    usage: 'Send as the HTTP header `Authorization: Bearer <bearer>` with any read that names this scope, on a REST request or on the MCP (Streamable HTTP) request.',
  };
}

function unauthorized(message: string): SvcError {
  return new SvcError('unauthorized', `authorization: ${message}`, { field: 'authorization', hint: 'Obtain a bearer with POST /v1/scope_bearer or /v1/memory/bearer (docs/scopes.md).' });
}

/**
 * The claims of the bearer in an Authorization header; null when there is none. Throws
 * `unauthorized` (401) for a header that is not a valid, unexpired bearer of this responder.
 */
export function readBearer(ctx: ServiceContext, authorization: string | string[] | undefined): BearerClaims | null {
  if (authorization === undefined || authorization === '') return null;
  const m = /^Bearer +(\S+)$/i.exec(Array.isArray(authorization) ? (authorization[0] ?? '') : authorization);
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
