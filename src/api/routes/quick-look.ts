/**
 * GET /v1/artifacts/<cid>.png (HEAD too; docs/rasters.md, "Quick-look PNG"): a grid artifact
 * drawn in the viridis ramp with a legend strip, cached like the artifact itself (immutable;
 * the ETag names the cid and the renderer version).
 */
import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../../primitives/context/context.js';
import { storedArtifact } from '../../primitives/rasters/artifacts.js';
import { GRID_MEDIA_TYPE } from '../../primitives/rasters/grid-format.js';
import { artifactQuickLook, quickLookEtag, QUICK_LOOK_VERSION, requireGrid } from '../../primitives/pictures/quick-look.js';
import { ARTIFACT_CACHE_CONTROL } from '../ops/rasters.js';

/** Whether an If-None-Match value names `etag` (weak or strong) or is `*`. */
function etagMatches(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const list = (Array.isArray(header) ? header.join(',') : header).split(',').map((s) => s.trim().replace(/^W\//, ''));
  return list.includes(etag) || list.includes('*');
}

export async function quickLookRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get(
    '/v1/artifacts/:cid.png',
    {
      schema: {
        summary: 'A grid artifact as a quick-look PNG: viridis, p2–p98 stretch, no data transparent, legend strip (ramp, end values, unit, data range)',
        description:
          `Only for ${GRID_MEDIA_TYPE} artifacts (another media type: 422 invalid_argument). For the eye, not for measuring: the grid itself is GET /v1/artifacts/<cid>. ` +
          `Cache-Control ${ARTIFACT_CACHE_CONTROL}; ETag "<cid>.png-v${QUICK_LOOK_VERSION}" (If-None-Match: 304). Unknown or evicted artifact: 404 artifact_not_found with its rebuild call, as for the grid.`,
        tags: ['read'],
        params: { type: 'object', required: ['cid'], properties: { cid: { type: 'string', minLength: 1, maxLength: 64 } } },
        produces: ['image/png'],
        response: { 200: { description: 'the PNG', type: 'string' } },
      },
    },
    async (req: FastifyRequest, reply: FastifyReply) => {
      const cid = (req.params as { cid: string }).cid;
      const info = await storedArtifact(ctx, cid);
      requireGrid(info);
      const etag = quickLookEtag(cid);
      reply.header('ETag', etag).header('Cache-Control', ARTIFACT_CACHE_CONTROL);
      if (etagMatches(req.headers['if-none-match'], etag)) return reply.code(304).send();
      const png = await artifactQuickLook(ctx, info);
      return reply.type('image/png').header('X-Content-Type-Options', 'nosniff').send(png);
    },
  );
}
