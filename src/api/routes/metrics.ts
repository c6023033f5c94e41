/**
 * GET /metrics (docs/deploy.md, "Metrics"): the responder's Prometheus registry in the text
 * exposition format, on the service port. Off with SVC_METRICS=0; with SVC_METRICS_TOKEN set it
 * answers only `Authorization: Bearer <token>`. Not in the OpenAPI document: it is for the
 * operator's scraper, not for clients.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../primitives/context/context.js';
import { SvcError } from '../../protocol/errors.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

export async function metricsRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  if (!ctx.config.metricsEnabled) return;
  const token = ctx.config.metricsToken;
  // Compared as digests: equal lengths for timingSafeEqual, and no early exit on a prefix.
  const expected = token === undefined ? undefined : digest(`Bearer ${token}`);
  app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    if (expected && !timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) {
      reply.header('www-authenticate', 'Bearer realm="metrics"');
      throw new SvcError('unauthorized', 'GET /metrics needs Authorization: Bearer <the SVC_METRICS_TOKEN of this responder>', { reason: 'metrics_token' });
    }
    const { contentType, text } = await ctx.metrics.exposition();
    reply.header('cache-control', 'no-store');
    return reply.type(contentType).send(text);
  });
}
