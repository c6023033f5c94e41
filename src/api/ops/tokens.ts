/**
 * Memory token and bundle operations (docs/memory.md, "Tokens and bundles"). Resolving a bundle is
 * GET /v1/memory_bundle/<token> over REST (a path parameter, hence `bundleRoutes`) and the
 * `memory_bundle_resolve` tool over MCP; both run the same operation.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../primitives/context/context.js';
import { MAX_BUNDLE_FACTS, mintBundle, resolveBundle } from '../../primitives/tokens/bundles.js';
import { mintMemoryToken, resolveToken } from '../../primitives/tokens/tokens.js';
import type { Operation } from '../operations.js';
import { runOperation } from '../routes/operations.js';

const factCidSchema = { type: 'string', minLength: 1, maxLength: 100, description: 'fact_cid (52 lowercase base32 characters)' } as const;
const tokenSchema = { type: 'string', minLength: 1, maxLength: 400 } as const;

export const memoryTokenOp: Operation = {
  name: 'memory_token',
  method: 'POST',
  path: '/v1/memory_token',
  summary: 'Mint a fact token: svc:fact:<cell64>:<fact_cid>, or the readable form with band and observed_on',
  description: 'With band and observed_on (YYYY-MM-DD): svc:fact:<lat>,<lng>@<date>@<band>:<fact_cid>, lat/lng the cell centre at 6 decimals. Claims are checked against the signed body before minting (409 on mismatch).',
  tags: ['tokens'],
  input: {
    type: 'object',
    required: ['fact_cid'],
    additionalProperties: false,
    properties: {
      fact_cid: factCidSchema,
      cell: { type: 'string', minLength: 1, maxLength: 64, description: 'optional: must equal the fact\'s cell' },
      band: { type: 'string', minLength: 1, maxLength: 100 },
      observed_on: { type: 'string', minLength: 10, maxLength: 10, description: 'YYYY-MM-DD, a capture date of the fact' },
    },
  },
  mcp: 'full',
  run: (ctx, input) => mintMemoryToken(ctx, input),
};

export const memoryTokenResolveOp: Operation = {
  name: 'memory_token_resolve',
  method: 'POST',
  path: '/v1/memory_token/resolve',
  summary: 'Resolve a token to the signed fact it names, after checking its place, band and date claims',
  description: 'Returns the fact (body, fact_cid, receipt) and its provenance class; model_output and human_curated facts carry a caution. A claim that does not match the signed body → 409 token_claim_mismatch; coordinates with fewer than 5 decimals → 400. Legacy memt:/memb:/meme: prefixes resolve. A svc:cell:<cell64> token (minted by locate) resolves to its cell only: an address, no facts (read them with recall, which takes the token as cell). Entity tokens (svc:entity:<id>, legacy meme:<id>) resolve to the public entity record, as POST /v1/entity/resolve with that token (404 cid_not_found when none is stored here).',
  tags: ['tokens'],
  input: { type: 'object', required: ['token'], additionalProperties: false, properties: { token: tokenSchema } },
  mcp: 'core',
  run: (ctx, input) => resolveToken(ctx, input),
};

export const memoryBundleOp: Operation = {
  name: 'memory_bundle',
  method: 'POST',
  path: '/v1/memory_bundle',
  summary: 'Mint a bundle token svc:bundle:<bundle_cid> over 1..256 stored facts (content-derived id)',
  tags: ['tokens'],
  input: {
    type: 'object',
    required: ['fact_cids'],
    additionalProperties: false,
    properties: {
      fact_cids: { type: 'array', minItems: 1, maxItems: MAX_BUNDLE_FACTS, items: factCidSchema },
      label: { type: 'string', minLength: 1, maxLength: 200 },
    },
  },
  mcp: 'full',
  // It stores what it mints (an entity record in the log; a bundle definition): not a pure read.
  readOnly: false,
  run: (ctx, input, call) => mintBundle(ctx, input, call),
};

export const memoryBundleResolveOp: Operation = {
  name: 'memory_bundle_resolve',
  method: 'POST',
  path: '/v1/memory_bundle/resolve',
  summary: 'Resolve a bundle token to its facts (also GET /v1/memory_bundle/<token>)',
  tags: ['tokens'],
  input: { type: 'object', required: ['token'], additionalProperties: false, properties: { token: tokenSchema } },
  mcp: 'full',
  run: (ctx, input) => resolveBundle(ctx, input.token),
};

/** Every operation of this file, in table order. */
export const TOKEN_OPS: readonly Operation[] = [memoryTokenOp, memoryTokenResolveOp, memoryBundleOp, memoryBundleResolveOp];

/** REST route with a path parameter: GET /v1/memory_bundle/:token. Register with `await bundleRoutes(app, ctx)`. */
export async function bundleRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get('/v1/memory_bundle/:token', {
    schema: {
      summary: memoryBundleResolveOp.summary,
      tags: memoryBundleResolveOp.tags,
      params: { type: 'object', required: ['token'], properties: { token: tokenSchema } },
    },
  }, async (req) => runOperation(ctx, memoryBundleResolveOp, { token: (req.params as { token: string }).token }, req.headers, 'rest'));
}
