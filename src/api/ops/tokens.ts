/**
 * Memory token and bundle operations (docs/memory.md, "Tokens and bundles"). Resolving a bundle is
 * GET /v1/memory_bundle/<token> over REST (a path parameter, hence `bundleRoutes`) and the
 * `memory_bundle_resolve` tool over MCP; both run the same operation.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../primitives/context/context.js';
import { MAX_BUNDLE_FACTS, MAX_BUNDLE_LABEL, mintBundle, resolveBundle } from '../../primitives/tokens/bundles.js';
import { mintMemoryToken, resolveToken } from '../../primitives/tokens/tokens.js';
import { defineOperation, type Operation } from '../operations.js';
import { Closed, ServedFact, Signed } from '../schemas/responses.js';
import { checkAnswer, runOperation } from '../routes/operations.js';

// Loose on purpose: the primitive answers a malformed fact_cid or token with its own message.
const FactCid = Type.String({ minLength: 1, maxLength: 100, description: 'fact_cid (52 lowercase base32 characters)' });
const Token = Type.String({ minLength: 1, maxLength: 400 });
const tokenInput = Type.Object({ token: Token }, { additionalProperties: false });

const bundleTokens = {
  token: Type.String({ description: 'svc:bundle:<bundle_cid>' }),
  legacy_token: Type.String({ description: 'memb:<bundle_cid>' }),
  bundle_cid: Type.String(),
  label: Type.Optional(Type.String()),
};

/** A bundle resolved: its facts as served now, and the fact_cids that no longer resolve here. */
const bundleFields = {
  ...bundleTokens,
  facts: Type.Array(ServedFact),
  missing: Type.Array(Type.String(), { description: 'fact_cids of the definition that no longer resolve here (never silently dropped)' }),
};
const BundleResolution = Signed(bundleFields, 'a bundle resolved to its facts');

const resolvedKind = { legacy: Type.Boolean({ description: 'the token used a legacy prefix (memt:, memb:, meme:)' }) };

/** What memory_token_resolve answers, by the kind of token. */
const TokenResolution = Type.Union([
  Signed(
    {
      kind: Type.Literal('fact'),
      form: Type.Union([Type.Literal('cell'), Type.Literal('readable')]),
      ...resolvedKind,
      token: Type.String(),
      fact: ServedFact,
      fact_cid: Type.String(),
      provenance_class: Type.String(),
      checks: Closed({ cell: Type.Boolean(), band: Type.Optional(Type.Boolean()), date: Type.Optional(Type.Boolean()) }, 'each claim of the token, checked against the signed body'),
      caution: Type.Optional(Type.String({ description: 'model_output and human_curated facts: the signature does not prove the value' })),
    },
    'a fact token: the fact it names, every claim checked',
  ),
  Signed({ kind: Type.Literal('bundle'), ...resolvedKind, ...bundleFields }, 'a bundle token: as memory_bundle_resolve'),
  Signed(
    {
      kind: Type.Literal('entity'),
      ...resolvedKind,
      phrase: Type.Null(),
      token: Type.String(),
      candidates: Type.Array(Type.Unknown(), { description: 'the entity record and its evidence, as POST /v1/entity/resolve answers' }),
    },
    'an entity token: as POST /v1/entity/resolve with that token',
  ),
  Signed(
    {
      kind: Type.Literal('cell'),
      legacy: Type.Literal(false),
      token: Type.String(),
      cell: Type.String(),
      lat: Type.Number(),
      lng: Type.Number(),
      address_only: Type.Literal(true),
      note: Type.String(),
      next: Closed({ method: Type.String(), path: Type.String(), body: Closed({ cell: Type.String() }) }, 'where the facts at the cell are read'),
    },
    'a cell token: an address only, no facts',
  ),
]);

export const memoryTokenOp = defineOperation({
  name: 'memory_token',
  method: 'POST',
  path: '/v1/memory_token',
  summary: 'Mint a fact token: svc:fact:<cell64>:<fact_cid>, or the readable form with band and observed_on',
  description:
    'With band and observed_on (YYYY-MM-DD): svc:fact:<lat>,<lng>@<date>@<band>:<fact_cid>, lat/lng the cell centre at 6 decimals. Claims are checked against the signed body before minting (409 on mismatch).',
  tags: ['tokens'],
  input: Type.Object(
    {
      fact_cid: FactCid,
      cell: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "optional: must equal the fact's cell" })),
      band: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      observed_on: Type.Optional(Type.String({ minLength: 10, maxLength: 10, description: 'YYYY-MM-DD, a capture date of the fact' })),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    token: Type.String(),
    form: Type.Union([Type.Literal('cell'), Type.Literal('readable')]),
    legacy_token: Type.String({ description: 'the same token under the legacy memt: prefix' }),
    fact_cid: Type.String(),
    cell: Type.String(),
    band: Type.String(),
    tslot: Type.Integer(),
  }),
  mcp: 'full',
  run: (ctx, input) => mintMemoryToken(ctx, input),
});

export const memoryTokenResolveOp = defineOperation({
  name: 'memory_token_resolve',
  method: 'POST',
  path: '/v1/memory_token/resolve',
  summary: 'Resolve a token to the signed fact it names, after checking its place, band and date claims',
  description:
    'Returns the fact (body, fact_cid, receipt) and its provenance class; model_output and human_curated facts carry a caution. A claim that does not match the signed body → 409 token_claim_mismatch; coordinates with fewer than 5 decimals → 400. Legacy memt:/memb:/meme: prefixes resolve. A svc:cell:<cell64> token (minted by locate) resolves to its cell only: an address, no facts (read them with recall, which takes the token as cell). Entity tokens (svc:entity:<id>, legacy meme:<id>) resolve to the public entity record, as POST /v1/entity/resolve with that token (404 cid_not_found when none is stored here).',
  tags: ['tokens'],
  input: tokenInput,
  output: TokenResolution,
  mcp: 'core',
  run: (ctx, input) => resolveToken(ctx, input),
});

export const memoryBundleOp = defineOperation({
  name: 'memory_bundle',
  method: 'POST',
  path: '/v1/memory_bundle',
  summary: 'Mint a bundle token svc:bundle:<bundle_cid> over 1..256 stored facts (content-derived id)',
  tags: ['tokens'],
  input: Type.Object(
    {
      fact_cids: Type.Array(FactCid, { minItems: 1, maxItems: MAX_BUNDLE_FACTS }),
      label: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_BUNDLE_LABEL })),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    ...bundleTokens,
    fact_cids: Type.Array(Type.String(), { description: "the bundle's facts, sorted, each once" }),
    n_facts: Type.Integer({ minimum: 1 }),
  }),
  mcp: 'full',
  // It stores what it mints (an entity record in the log; a bundle definition): not a pure read.
  readOnly: false,
  run: (ctx, input, call) => mintBundle(ctx, input, call),
});

export const memoryBundleResolveOp = defineOperation({
  name: 'memory_bundle_resolve',
  method: 'POST',
  path: '/v1/memory_bundle/resolve',
  summary: 'Resolve a bundle token to its facts (also GET /v1/memory_bundle/<token>)',
  tags: ['tokens'],
  input: tokenInput,
  output: BundleResolution,
  mcp: 'full',
  run: (ctx, input) => resolveBundle(ctx, input.token),
});

/** Every operation of this file, in table order. */
export const TOKEN_OPS: readonly Operation[] = [memoryTokenOp, memoryTokenResolveOp, memoryBundleOp, memoryBundleResolveOp];

/** REST route with a path parameter: GET /v1/memory_bundle/:token. Register with `await bundleRoutes(app, ctx)`. */
export async function bundleRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get(
    '/v1/memory_bundle/:token',
    {
      schema: {
        summary: memoryBundleResolveOp.summary,
        tags: memoryBundleResolveOp.tags,
        params: tokenInput,
        response: { 200: BundleResolution },
      },
    },
    async (req) => {
      const result = await runOperation(ctx, memoryBundleResolveOp, { token: (req.params as { token: string }).token }, req.headers, 'rest');
      if (ctx.config.checkResponses) checkAnswer(memoryBundleResolveOp, result, req.log);
      return result;
    },
  );
}
