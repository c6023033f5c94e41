/**
 * Scopes over the API (docs/scopes.md): the bearer a scope's key obtains, and the check every
 * operation taking a `scope` runs before its primitive. The check sits on the operation table
 * rather than in each primitive, so an operation added later cannot forget it.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { revokeBearers } from '../../primitives/keys/bearers.js';
import { issueScopeBearer } from '../../primitives/scopes/bearer.js';
import { requireScopeReader } from '../../primitives/scopes/access.js';
import { requestScope } from '../../primitives/scopes/request.js';
import { defineOperation, type Operation } from '../operations.js';
import { B32Key, B32Signature, OneOf, Scope } from '../schemas/inputs.js';
import { Closed, ServedFact, Signed } from '../schemas/responses.js';

const bearerInput = Type.Object(
  {
    scope: Scope,
    key: B32Key,
    exp: Type.Integer({ minimum: 0, description: 'expiry, Unix seconds' }),
    signature: B32Signature,
  },
  { additionalProperties: false },
);

/** The bearer issued (no receipt: the bearer is signed by the responder itself). */
const bearerOutput = Closed({
  token_type: Type.Literal('Bearer'),
  bearer: Type.String({ description: 'sb1.<payload>.<signature> (base64url); payload {v, scope, key, exp, iat}' }),
  scope: Closed(
    { user_id: Type.Optional(Type.String()), agent_id: Type.Optional(Type.String()), run_id: Type.Optional(Type.String()), org_id: Type.Optional(Type.String()) },
    'the scope the bearer reads (its members set)',
  ),
  key: Type.String(),
  expires_at: Type.String({ description: 'RFC 3339' }),
  issued_at: Type.String({ description: 'RFC 3339' }),
  binding: OneOf(['configured', 'claimed'] as const, { description: 'configured (SVC_SCOPE_KEYS) or claimed by this key' }),
  usage: Type.String(),
});

const BEARER_DESCRIPTION =
  'signature: ed25519 (base32) by `key` over H(stream("scope_bearer_request") ‖ seg(1, H(cbor(scope))) ‖ seg(2, key) ‖ seg(3, u64be(exp)) ‖ seg(4, responder key)). exp: Unix seconds, at most SVC_SCOPE_BEARER_TTL_SECS ahead. The key must be bound to the scope (SVC_SCOPE_KEYS, or first claim: an unconfigured scope is claimed by the first listed or enrolled key that writes it or asks here). Returns {token_type, bearer: "sb1.<payload>.<signature>" (payload {v, scope, key, exp, iat}), scope, key, expires_at, issued_at, binding}. 403 unauthorized for a key not bound; attester_revoked for a revoked key. A bearer dies at exp, when its key is revoked, or when its key voids the bearers issued before a time (POST /v1/memory/bearer/revoke).';

export const scopeBearerOp = defineOperation({
  name: 'scope_bearer',
  method: 'POST',
  path: '/v1/scope_bearer',
  summary: 'Obtain a short-lived bearer for reading one scope, by signing {scope, key, exp, responder} with a key bound to it',
  description: BEARER_DESCRIPTION,
  tags: ['scopes'],
  input: bearerInput,
  output: bearerOutput,
  // A credential for REST reads: MCP calls carry no HTTP headers here, so it would serve nothing there.
  mcp: false,
  run: (ctx, input) => issueScopeBearer(ctx, input),
});

/** The same issuance under the memory routes' prefix (docs/scopes.md, "Memory bearers"). */
export const memoryBearerOp = defineOperation({
  name: 'memory_bearer',
  method: 'POST',
  path: '/v1/memory/bearer',
  summary: 'Obtain a bearer for /v1/memory/* reads of one scope (same statement and answer as /v1/scope_bearer)',
  description: `The agent key signs a server-bound challenge statement; the bearer it gets reads /v1/memory/* (and every other read) for exactly that scope. ${BEARER_DESCRIPTION}`,
  tags: ['scopes', 'memory'],
  input: bearerInput,
  output: bearerOutput,
  mcp: false,
  run: (ctx, input) => issueScopeBearer(ctx, input),
});

export const memoryBearerRevokeOp = defineOperation({
  name: 'memory_bearer_revoke',
  method: 'POST',
  path: '/v1/memory/bearer/revoke',
  summary: 'Void every bearer of a key issued before not_before (signed by that key); mints a memory.bearer_revocation record',
  description:
    'signature: ed25519 (base32) by `key` over H(stream("bearer_revocation") ‖ seg(1, key) ‖ seg(2, u64be(not_before)) ‖ seg(3, u64be(exp)) ‖ seg(4, responder key)) (src/protocol/device-statements.ts). not_before: Unix seconds, not in the future; omitted, it is the second the statement was signed at (found within the last 60 s). exp: at most 900 s ahead. From then on every bearer of the key with iat < not_before (or without iat) is refused 401 unauthorized (reason bearer_revoked) on every responder sharing the store; bearers issued at or after not_before keep working. Returns {key, not_before, not_before_at, requested_not_before, already_covered, revocation (fact_cid), subject, fact, receipt}; a request no later than the current not_before mints nothing (already_covered).',
  tags: ['scopes', 'memory'],
  input: Type.Object(
    {
      key: B32Key,
      // No schema default: the default is found from the signature (the second it was signed at).
      not_before: Type.Optional(Type.Integer({ minimum: 0, description: 'Unix seconds; default: the second the statement was signed at' })),
      exp: Type.Integer({ minimum: 0, description: 'expiry of the statement, Unix seconds (at most 900 s ahead)' }),
      signature: B32Signature,
    },
    { additionalProperties: false },
  ),
  output: Signed({
    key: Type.String(),
    not_before: Type.Integer({ description: 'Unix seconds: bearers of the key issued before it are void' }),
    not_before_at: Type.String({ description: 'not_before as RFC 3339' }),
    requested_not_before: Type.Integer({ description: 'the not_before this request asked for (or found from its signature)' }),
    already_covered: Type.Boolean({ description: 'an earlier revocation already voids everything this one would: nothing is minted' }),
    revocation: Type.String({ description: 'fact_cid of the memory.bearer_revocation record in force' }),
    subject: Type.String({ description: 'the svc:entity: subject the record is filed under' }),
    fact: ServedFact,
  }),
  mcp: false,
  run: (ctx, input) => revokeBearers(ctx, input),
});

/**
 * `op` with the scope check in front when its input takes a `scope`: a read naming a scope runs
 * only for a bearer of that exact scope (REST `Authorization` header); a read naming none runs
 * as before and sees public facts only.
 */
export function guardScopedRead<I extends TSchema>(op: Operation<I>): Operation<I> {
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
