/**
 * Scopes over the API (docs/scopes.md): the bearer a scope's key obtains, and the check every
 * operation taking a `scope` runs before its primitive. The check sits on the operation table
 * rather than in each primitive, so an operation added later cannot forget it.
 */
import { issueScopeBearer } from '../../primitives/scopes/bearer.js';
import { requireScopeReader } from '../../primitives/scopes/access.js';
import { requestScope } from '../../primitives/reads/common.js';
import { scopeSchema, type Operation } from '../operations.js';

const b32Key = { type: 'string', pattern: '^[a-z2-7]{52}$' } as const;

export const scopeBearerOp: Operation = {
  name: 'scope_bearer',
  method: 'POST',
  path: '/v1/scope_bearer',
  summary: 'Obtain a short-lived bearer for reading one scope, by signing {scope, key, exp, responder} with a key bound to it',
  description: 'signature: ed25519 (base32) by `key` over H(stream("scope_bearer_request") ‖ seg(1, H(cbor(scope))) ‖ seg(2, key) ‖ seg(3, u64be(exp)) ‖ seg(4, responder key)). exp: Unix seconds, at most SVC_SCOPE_BEARER_TTL_SECS ahead. The key must be bound to the scope (SVC_SCOPE_KEYS, or first claim: an unconfigured scope is claimed by the first listed key that writes it or asks here). 403 unauthorized for a key not bound; attester_revoked for a revoked key.',
  tags: ['scopes'],
  input: {
    type: 'object',
    required: ['scope', 'key', 'exp', 'signature'],
    additionalProperties: false,
    properties: {
      scope: scopeSchema,
      key: b32Key,
      exp: { type: 'integer', minimum: 0, description: 'expiry, Unix seconds' },
      signature: { type: 'string', pattern: '^[a-z2-7]{103}$' },
    },
  },
  // A credential for REST reads: MCP calls carry no HTTP headers here, so it would serve nothing there.
  mcp: false,
  run: (ctx, input) => issueScopeBearer(ctx, input),
};

/**
 * `op` with the scope check in front when its input takes a `scope`: a read naming a scope runs
 * only for a bearer of that exact scope (REST `Authorization` header); a read naming none runs
 * as before and sees public facts only.
 */
export function guardScopedRead(op: Operation): Operation {
  const props = (op.input as { properties?: Record<string, unknown> }).properties;
  if (!props || !('scope' in props)) return op;
  const run = op.run;
  return {
    ...op,
    async run(ctx, input, call) {
      const scope = requestScope((input as { scope?: unknown } | undefined)?.scope);
      if (scope) await requireScopeReader(ctx, call.headers.authorization, scope);
      return run(ctx, input, call);
    },
  };
}
