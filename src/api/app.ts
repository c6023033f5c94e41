/**
 * The HTTP application: external plugins, then the service context, then routes, then the one
 * error handler. Process concerns (listen, signals) live in server.ts.
 */
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import type { ServiceContext } from '../primitives/context/context.js';
import { SvcError, invalidArgument } from '../protocol/errors.js';
import { ulid } from '../protocol/ulid.js';
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
import { metricsRoutes } from './routes/metrics.js';
import { lifecycleOf } from './shutdown.js';

export interface AppOptions {
  /** Fastify's logger (pino, one JSON object per line): off, on, or a level (and where lines go; stdout by default). */
  logger?: boolean | { level: string; stream?: { write(line: string): void } };
  /** Embedded datasets to credit at /v1/contributors. */
  attributions?: unknown[];
}

/** An `X-Request-Id` a client or proxy sent that is kept as this request's id: short, no spaces or separators. */
const REQUEST_ID_RE = /^[A-Za-z0-9._:=+/@-]{1,128}$/;

/**
 * The request id (docs/deploy.md, "Logs and request ids"): a well-formed incoming
 * `X-Request-Id` (from a proxy or the client), else a fresh ULID. It names the request's log
 * lines (`reqId`) and is returned as `X-Request-Id`. A repeated header arrives joined with ", "
 * and is replaced.
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : ulid();
}

/**
 * Receipt request_ids of answers, for the request's "request completed" log line: a receipt's
 * request_id is its own ULID (signed inside the receipt), distinct from the HTTP request id.
 */
const receiptIds = new WeakMap<object, string>();

function loggerOptions(logger: AppOptions['logger']) {
  if (!logger) return false;
  const res = (reply: { statusCode: number }) => {
    const receipt = receiptIds.get(reply);
    return receipt === undefined ? { statusCode: reply.statusCode } : { statusCode: reply.statusCode, receipt_request_id: receipt };
  };
  return { ...(logger === true ? {} : logger), serializers: { res } };
}

/** Build the fastify app over a ready service context (routes registered, not listening). */
export async function buildApp(ctx: ServiceContext, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(opts.logger),
    genReqId: requestIdOf,
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
    frameworkErrors: (err, req, reply) => {
      reply.header('x-request-id', req.id);
      return errorHandler(err, req as FastifyRequest, reply as FastifyReply);
    },
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
  // Shutdown (shutdown.ts): a drain or app.close() sets `closing`; a request arriving after that
  // on a kept-alive connection is refused and its connection closed after the answer.
  const life = lifecycleOf(app);
  app.addHook('preClose', (done) => {
    life.closing = true;
    done();
  });
  app.addHook('onRequest', (req, reply, done) => {
    // Set on the raw response so that hijacked answers (MCP, event streams) carry it too.
    reply.raw.setHeader('x-request-id', req.id);
    if (life.closing) {
      reply.raw.setHeader('connection', 'close');
      return done(new SvcError('overloaded', 'the responder is shutting down; retry in a moment', { retry_after: 1 }));
    }
    // RFC 9112 section 3.2: an HTTP/1.1 request without Host is refused (Node's check answers no envelope).
    if (req.raw.httpVersion === '1.1' && req.headers.host === undefined) return done(invalidArgument('host', 'HTTP/1.1 requests need a Host header', 400));
    done();
  });
  const limiter = installRateLimit(app, { rps: ctx.config.rateLimitRps, burst: ctx.config.rateLimitBurst });
  if (ctx.config.metricsEnabled) {
    // Latency per route pattern (never the URL: it may hold a cell, a place or a scope).
    app.addHook('onResponse', (req, reply, done) => {
      ctx.metrics.httpRequest(req.routeOptions.url ?? 'unmatched', req.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  }
  if (opts.logger) {
    app.addHook('preSerialization', (_req, reply, payload, done) => {
      const id = (payload as { receipt?: { request_id?: unknown } } | null)?.receipt?.request_id;
      if (typeof id === 'string') receiptIds.set(reply, id);
      done(null, payload);
    });
  }

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
    streams = await streamRoutes(scope, ctx, life);
    await verifyPageRoutes(scope, ctx.config.prefix);
    await metricsRoutes(scope, ctx);
  });

  app.get(
    '/openapi.json',
    { schema: { hide: true } },
    jsonOnce(() => app.swagger()),
  );
  app.decorate('streams', streams);
  return app;
}
