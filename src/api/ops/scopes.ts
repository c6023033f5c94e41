/**
 * Scopes over the API (docs/scopes.md): the bearer a scope's key obtains, and the check every
 * operation taking a `scope` runs before its primitive. The check sits on the operation table
 * rather than in each primitive, so an operation added later cannot forget it.
 */
import { revokeBearers } from '../../primitives/keys/bearers.js';
import { issueScopeBearer } from '../../primitives/scopes/bearer.js';
import { requireScopeReader } from '../../primitives/scopes/access.js';
import { requestScope } from '../../primitives/scopes/request.js';
import { b32KeySchema, scopeSchema, type Operation } from '../operations.js';


const bearerInput = {
  type: 'object',
  required: ['scope', 'key', 'exp', 'signature'],
  additionalProperties: false,
  properties: {
    scope: scopeSchema,
    key: b32KeySchema,
    exp: { type: 'integer', minimum: 0, description: 'expiry, Unix seconds' },
    signature: { type: 'string', pattern: '^[a-z2-7]{103}$' },
  },
} as const;

const BEARER_DESCRIPTION = 'signature: ed25519 (base32) by `key` over H(stream("scope_bearer_request") ‖ seg(1, H(cbor(scope))) ‖ seg(2, key) ‖ seg(3, u64be(exp)) ‖ seg(4, responder key)). exp: Unix seconds, at most SVC_SCOPE_BEARER_TTL_SECS ahead. The key must be bound to the scope (SVC_SCOPE_KEYS, or first claim: an unconfigured scope is claimed by the first listed or enrolled key that writes it or asks here). Returns {token_type, bearer: "sb1.<payload>.<signature>" (payload {v, scope, key, exp, iat}), scope, key, expires_at, issued_at, binding}. 403 unauthorized for a key not bound; attester_revoked for a revoked key. A bearer dies at exp, when its key is revoked, or when its key voids the bearers issued before a time (POST /v1/memory/bearer/revoke).';

export const scopeBearerOp: Operation = {
  name: 'scope_bearer',
  method: 'POST',
  path: '/v1/scope_bearer',
  summary: 'Obtain a short-lived bearer for reading one scope, by signing {scope, key, exp, responder} with a key bound to it',
  description: BEARER_DESCRIPTION,
  tags: ['scopes'],
  input: bearerInput,
  // A credential for REST reads: MCP calls carry no HTTP headers here, so it would serve nothing there.
  mcp: false,
  run: (ctx, input) => issueScopeBearer(ctx, input),
};

/** The same issuance under the memory routes' prefix (docs/scopes.md, "Memory bearers"). */
export const memoryBearerOp: Operation = {
  name: 'memory_bearer',
  method: 'POST',
  path: '/v1/memory/bearer',
  summary: 'Obtain a bearer for /v1/memory/* reads of one scope (same statement and answer as /v1/scope_bearer)',
  description: `The agent key signs a server-bound challenge statement; the bearer it gets reads /v1/memory/* (and every other read) for exactly that scope. ${BEARER_DESCRIPTION}`,
  tags: ['scopes', 'memory'],
  input: bearerInput,
  mcp: false,
  run: (ctx, input) => issueScopeBearer(ctx, input),
};

export const memoryBearerRevokeOp: Operation = {
  name: 'memory_bearer_revoke',
  method: 'POST',
  path: '/v1/memory/bearer/revoke',
  summary: 'Void every bearer of a key issued before not_before (signed by that key); mints a memory.bearer_revocation record',
  description: 'signature: ed25519 (base32) by `key` over H(stream("bearer_revocation") ‖ seg(1, key) ‖ seg(2, u64be(not_before)) ‖ seg(3, u64be(exp)) ‖ seg(4, responder key)) (src/protocol/device-statements.ts). not_before: Unix seconds, not in the future; omitted, it is the second the statement was signed at (found within the last 60 s). exp: at most 900 s ahead. From then on every bearer of the key with iat < not_before (or without iat) is refused 401 unauthorized (reason bearer_revoked) on every responder sharing the store; bearers issued at or after not_before keep working. Returns {key, not_before, not_before_at, requested_not_before, already_covered, revocation (fact_cid), subject, fact, receipt}; a request no later than the current not_before mints nothing (already_covered).',
  tags: ['scopes', 'memory'],
  input: {
    type: 'object',
    required: ['key', 'exp', 'signature'],
    additionalProperties: false,
    properties: {
      key: b32KeySchema,
      not_before: { type: 'integer', minimum: 0, description: 'Unix seconds; default: the second the statement was signed at' },
      exp: { type: 'integer', minimum: 0, description: 'expiry of the statement, Unix seconds (at most 900 s ahead)' },
      signature: { type: 'string', pattern: '^[a-z2-7]{103}$' },
    },
  },
  mcp: false,
  run: (ctx, input) => revokeBearers(ctx, input),
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
