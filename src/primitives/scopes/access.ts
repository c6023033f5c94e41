/**
 * Who may read a scope: a caller whose bearer (bearer.ts) names exactly that scope, for a key
 * still bound to it and not revoked, the bearer not voided by a later bearer revocation.
 * Refusals are typed and never depend on what the scope holds: an empty scope and a populated
 * one get the same answer.
 */
import { SvcError } from '../../protocol/errors.js';
import type { Scope } from '../../protocol/receipt.js';
import { scopeKey } from '../../store/entry.js';
import type { ServiceContext } from '../context/context.js';
import { isBound, notBound } from '../write/scope-binding.js';
import { checkBearerKey, readBearer } from './bearer.js';

export type Authorization = string | string[] | undefined;

/**
 * Throws unless the caller may read `scope`: `unauthorized` 401 without a valid bearer (REST and
 * MCP alike carry it in the HTTP Authorization header), `unauthorized` 403 for a
 * bearer of another scope or of a key no longer bound to it, `attester_revoked` 403 for a revoked
 * key, `unauthorized` 401 (`reason: bearer_revoked`) for a bearer its key voided.
 */
export async function requireScopeReader(ctx: ServiceContext, authorization: Authorization, scope: Scope): Promise<void> {
  const claims = readBearer(ctx, authorization);
  if (!claims) {
    throw new SvcError(
      'unauthorized',
      'scope: reading a scope needs `Authorization: Bearer <bearer>` for it (POST /v1/scope_bearer), sent as an HTTP header with the REST request or with the MCP request (Streamable HTTP); anonymous reads see public facts only',
      {
        field: 'scope',
        reason: 'scope_bearer_required',
        hint: 'docs/scopes.md',
      },
    );
  }
  if (scopeKey(claims.scope) !== scopeKey(scope)) {
    throw new SvcError('unauthorized', 'scope: the bearer is for another scope (a bearer names one exact four-tuple)', { field: 'scope', reason: 'scope_mismatch' }, { status: 403 });
  }
  // Revocation and voided bearers are read from the store on every use (keys/standing.ts).
  await checkBearerKey(ctx, claims, 'authorization');
  if (!(await isBound(ctx, claims.key, scope, false))) throw notBound('authorization', claims.key);
}

/** True when the caller may read `scope`; never throws for a missing or bad credential (reads by cid answer those as not found). */
export async function mayReadScope(ctx: ServiceContext, authorization: Authorization, scope: Scope): Promise<boolean> {
  try {
    await requireScopeReader(ctx, authorization, scope);
    return true;
  } catch (e) {
    if (e instanceof SvcError && (e.code === 'unauthorized' || e.code === 'attester_revoked')) return false;
    throw e;
  }
}
