/**
 * The HTTP application: external plugins, then the service context, then routes, then the one
 * error handler. Process concerns (listen, signals) live in server.ts.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import type { ServiceContext } from '../primitives/context/context.js';
import { SvcError, invalidArgument } from '../protocol/errors.js';
import { capConnectionsPerIp, serverDeadlines } from './connections.js';
import { errorHandler, notFoundHandler } from './errors.js';
import { clientErrorHandler, expectationFailed, refuseConnect } from './socket-errors.js';
import { HTTP_LIMITS } from './limits.js';
import { jsonOnce, toJson } from './json.js';
import { jsonValidator, textValidator } from './validation.js';
import { discoveryRoutes } from './routes/discovery.js';
import { logRoutes } from './routes/log.js';
import { writeRoutes } from './routes/writes.js';
import { operationRoutes } from './routes/operations.js';
import { OPERATIONS } from './ops/index.js';
import { cellRoutes } from './ops/reads-more.js';
import { bundleRoutes } from './ops/tokens.js';
import { stateRoutes } from './ops/ask.js';
import { artifactRoutes } from './ops/rasters.js';
import { eudrRoutes } from './ops/eudr.js';
import { quickLookRoutes } from './routes/quick-look.js';
import { mcpRoutes } from './mcp.js';
import { agentRoutes } from './routes/agents.js';
import { installRateLimit } from './rate-limit.js';
import { streamRoutes, type StreamState } from './routes/stream.js';
import { verifyPageRoutes } from '../web/verify-page.js';

export interface AppOptions {
  logger?: boolean | { level: string };
  /** Embedded datasets to credit at /v1/contributors. */
  attributions?: unknown[];
}

/** Build the fastify app over a ready service context (routes registered, not listening). */
export async function buildApp(ctx: ServiceContext, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: ctx.config.bodyLimitBytes,
    trustProxy: false,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
    // fastify's own 503 while closing is not the envelope; the hook below answers it instead.
    return503OnClosing: false,
    forceCloseConnections: true,
    ...serverDeadlines(),
    routerOptions: { maxParamLength: HTTP_LIMITS.max_path_param_chars },
    // Failures answered before routing (unparseable requests, bad URLs, over-long parameters)
    // go through the same catalogue as everything else.
    clientErrorHandler,
    frameworkErrors: (err, req, reply) => errorHandler(err, req as FastifyRequest, reply as FastifyReply),
  });
  capConnectionsPerIp(app.server, ctx.config.maxConnectionsPerIp);
  app.server.on('checkExpectation', expectationFailed);
  app.server.on('connect', refuseConnect);
  // Bodies are validated strictly (no type coercion) by the validator MCP shares; query strings
  // arrive as text, so numbers there are coerced.
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'querystring' || httpPart === 'params' ? textValidator(schema) : jsonValidator(schema)));
  app.setReplySerializer((payload) => toJson(payload));
  // Response schemas document the answers (OpenAPI) and are checked in tests; encoding stays with
  // toJson, so no schema serializer is compiled per route at start (docs/performance.md).
  app.setSerializerCompiler(() => (data) => toJson(data));
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (req, _reply, done) => {
    if (closing) return done(new SvcError('overloaded', 'the responder is shutting down; retry in a moment', { retry_after: 1 }));
    // RFC 9112 section 3.2: an HTTP/1.1 request without Host is refused (Node's check answers no envelope).
    if (req.raw.httpVersion === '1.1' && req.headers.host === undefined) return done(invalidArgument('host', 'HTTP/1.1 requests need a Host header', 400));
    done();
  });
  const limiter = installRateLimit(app, { rps: ctx.config.rateLimitRps, burst: ctx.config.rateLimitBurst });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: `${ctx.config.prefix} — verifiable geospatial memory`,
        version: '1.1.0',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        description: 'Signed, content-addressed facts at cell × band × tslot. Every read returns an Ed25519 receipt verifiable offline.',
      },
    },
  });

  let streams: StreamState = { active: 0 };
  await app.register(async (scope) => {
    await discoveryRoutes(scope, ctx);
    await logRoutes(scope, ctx);
    await writeRoutes(scope, ctx);
    await operationRoutes(scope, ctx, OPERATIONS);
    await cellRoutes(scope, ctx);
    await bundleRoutes(scope, ctx);
    await stateRoutes(scope, ctx);
    await artifactRoutes(scope, ctx);
    await eudrRoutes(scope, ctx);
    await quickLookRoutes(scope, ctx);
    await mcpRoutes(scope, ctx, OPERATIONS, limiter);
    await agentRoutes(scope, ctx, OPERATIONS, () => opts.attributions ?? []);
    streams = await streamRoutes(scope, ctx);
    await verifyPageRoutes(scope, ctx.config.prefix);
  });

  app.get(
    '/openapi.json',
    { schema: { hide: true } },
    jsonOnce(() => app.swagger()),
  );
  app.decorate('streams', streams);
  return app;
}
