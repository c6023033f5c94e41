/** Discovery and catalogues (docs/reads.md, "Discovery and catalogues"): health, well-known documents, registries, limits, coverage map. */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { errorCatalogueDocument } from '../../protocol/errors.js';
import { CURRENT_PREIMAGE_VERSION } from '../../protocol/receipt.js';
import { verifierSpec } from '../../protocol/verifier-spec.js';
import { SvcError } from '../../protocol/errors.js';
import { SCHEMA_PROFILE } from '../../registry/manifests.js';
import { GRID_INFO_QUERY, gridInfoFor } from '../../geo/grid-info.js';
import type { ServiceContext } from '../../primitives/context/context.js';
import { coverageMap } from '../../primitives/pictures/coverage-map.js';
import { cacheHealth, readiness } from '../readiness.js';
import { BandsAnswer } from '../schemas/bands.js';
import { algorithmsDocument, bandsDocument, limitsDocument, sourcesDocument, topicsDocument } from '../catalogues.js';

export async function discoveryRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  const started = Date.now();
  const spec = verifierSpec(ctx.config.prefix);
  const p = ctx.config.prefix;

  // Still 200 while degraded: the process is alive and serves reads; `status` and `storage` say
  // that writes are refused (storage_full) until space is back.
  app.get('/health', { schema: { summary: 'Liveness; status "degraded" while the store is out of disk space', tags: ['discovery'] } }, async () => {
    const storage = ctx.store.storageHealth?.() ?? { status: 'ok' as const };
    return {
      status: storage.status === 'ok' ? 'ok' : 'degraded',
      uptime_s: Math.round((Date.now() - started) / 1000),
      driver: ctx.store.driver,
      responder: ctx.keys.publicKeyB32,
      storage,
      cache: cacheHealth(ctx.store),
    };
  });

  // Readiness, unlike liveness, fails while a part the responder needs does not answer.
  app.get('/ready', { schema: { summary: 'Readiness: the store and Redis (when configured) answer; 503 overloaded naming the failing part otherwise', tags: ['discovery'] } }, async () =>
    readiness(ctx.store),
  );

  const wellKnown = () => ({
    schema: `${p}.discovery.v1`,
    service: p,
    description: 'Verifiable geospatial memory: signed, content-addressed facts at cell × band × tslot, with offline-verifiable receipts and an append-only Merkle log.',
    responder: { public_key: ctx.keys.publicKeyB32, epoch: ctx.keys.epoch, algorithm: 'ed25519' },
    responder_pubkey_b32: ctx.keys.publicKeyB32,
    responder_key_epoch: ctx.keys.epoch,
    retired_keys: ctx.keys.retired.map((k) => ({ public_key: k.public_key, epoch: k.epoch, retired_at: k.retired_at })),
    preimage_version: CURRENT_PREIMAGE_VERSION,
    prefix: p,
    manifests: ctx.manifests,
    links: {
      verifier_spec: '/v1/verifier_spec',
      openapi: '/openapi.json',
      errors: '/v1/errors',
      manifests: '/v1/manifests',
      grid_info: '/v1/grid_info',
      log_sth: '/v1/log/sth',
      mcp: '/mcp',
      verify_page: '/verify',
    },
  });
  app.get(`/.well-known/${p}.json`, { schema: { summary: 'Protocol discovery, responder key and retired keys', tags: ['discovery'] } }, async () => wellKnown());
  if (p !== 'svc') app.get('/.well-known/svc.json', { schema: { hide: true } }, async () => wellKnown());

  app.get('/v1/grid_info', { schema: { summary: 'Grid description (resolution: optional, must be the served one)', tags: ['discovery'], querystring: GRID_INFO_QUERY } }, async (req) =>
    gridInfoFor(req.query as { resolution?: string }),
  );
  app.get('/v1/verifier_spec', { schema: { summary: 'Machine-readable signing and verification specification', tags: ['discovery'] } }, async () => spec);
  app.get(`/.well-known/${p}-verifier.json`, { schema: { summary: 'Same as /v1/verifier_spec', tags: ['discovery'] } }, async () => spec);
  app.get('/v1/errors', { schema: { summary: 'Error catalogue (svc.errors.v1)', tags: ['discovery'] } }, async () => errorCatalogueDocument());
  app.get('/v1/manifests', { schema: { summary: 'Current manifest CIDs', tags: ['discovery'] } }, async () => ({
    schema: `${p}.manifests.v1`,
    registry: ctx.manifests.registry_cid,
    schema_cid: ctx.manifests.schema_cid,
    bands: ctx.manifests.bands,
    sources: ctx.manifests.sources,
    functions: ctx.manifests.functions,
    algorithms: ctx.manifests.algorithms,
    topics: ctx.manifests.topics,
    registry_cid: ctx.manifests.registry_cid,
    rule: 'each CID = b32(blake3(cbor(manifest))); registry_cid covers the five registry CIDs; schema_cid covers /v1/schema',
  }));
  app.get('/v1/schema', { schema: { summary: 'Active schema profile', tags: ['discovery'] } }, async () => ({ schema_cid: ctx.manifests.schema_cid, profile: SCHEMA_PROFILE }));
  app.get(
    '/v1/bands',
    {
      schema: {
        summary: 'Band registry (tempo, privacy class, unit, source) and the cube layout of POST /v1/state {view: "cube"}',
        tags: ['catalogue'],
        // Documentation only: answers are encoded by the reply serializer (api/json.ts).
        response: { 200: BandsAnswer },
      },
    },
    async () => bandsDocument(ctx),
  );
  app.get('/v1/topics', { schema: { summary: 'The 26 declared topics', tags: ['catalogue'] } }, async () => topicsDocument(ctx));
  app.get('/v1/algorithms', { schema: { summary: 'Algorithm catalogue', tags: ['catalogue'] } }, async () => algorithmsDocument(ctx));
  app.get<{ Params: { key: string } }>(
    '/v1/algorithms/:key',
    {
      schema: { summary: 'One algorithm', tags: ['catalogue'], params: { type: 'object', properties: { key: { type: 'string', maxLength: 200 } }, required: ['key'] } },
    },
    async (req) => {
      const a = ctx.registry.algorithms.get(req.params.key);
      if (!a) throw new SvcError('function_not_in_registry', `key: algorithm ${JSON.stringify(req.params.key)} is not registered (see /v1/algorithms)`, { field: 'key' });
      return { algorithms_cid: ctx.manifests.algorithms, ...a };
    },
  );
  app.get('/v1/functions', { schema: { summary: 'Derivation functions', tags: ['catalogue'] } }, async () => ({ manifest_cid: ctx.manifests.functions, functions: ctx.registry.functionList }));
  app.get('/v1/sources', { schema: { summary: 'Upstream sources', tags: ['catalogue'] } }, async () => sourcesDocument(ctx));
  app.get(
    '/v1/coverage_map.svg',
    {
      schema: {
        summary: 'Plate-carree SVG of corpus density in 1-degree bins over Natural Earth land and borders, with a legend; scales to its container',
        description:
          'One rect per non-empty bin with its cell count in data-count; the root carries data-cells, data-bins and data-truncated (true when the cell scan reached SVC_SCAN_CELL_LIMIT). viewBox 0 0 360 206 (one unit per degree, the legend strip below the map), width and height 100%.',
        tags: ['discovery'],
        produces: ['image/svg+xml'],
        response: { 200: { description: 'SVG document', type: 'string' } },
      },
    },
    async (_req, reply) => {
      const svg = await coverageMap(ctx);
      return reply.type('image/svg+xml; charset=utf-8').header('Cache-Control', 'public, max-age=60').send(svg);
    },
  );
  app.get('/v1/limits', { schema: { summary: 'Limits in force', tags: ['discovery'] } }, async () => limitsDocument(ctx));
}
