/**
 * MCP adapter (docs/reads.md, "MCP"): JSON-RPC 2.0 over Streamable HTTP with the official SDK,
 * stateless, JSON responses. Every tool is an entry of the operation table: the same schema
 * validates the arguments and the same function runs. `/mcp` lists the core tools, `/mcp/full` all
 * of them; writes are never tools. A failed call is an isError tool result carrying the error
 * envelope (docs/errors.md); unknown tools and malformed requests are JSON-RPC errors (see
 * mcp-errors.ts). Each message of a JSON-RPC batch counts against the per-IP rate limit like a
 * request of its own. Both endpoints also serve the catalogues as resources (mcp-resources.ts)
 * and a few prompts (mcp-prompts.ts).
 *
 * Progress: a tools/call whose `_meta` carries a progressToken is answered as an SSE stream
 * instead of one JSON body, so the notifications/progress a long operation reports (hunt,
 * recall_many, recall_polygon: OperationCall.progress) reach the client before the result. In
 * JSON-response mode the SDK drops notifications sent during a request, so every other request
 * keeps the plain JSON answer.
 */
import { applyCellAlias, cellAliasOf } from './cell-alias.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, ErrorCode, isJSONRPCErrorResponse, isJSONRPCRequest, type ProgressToken } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { jsonValidator } from './validation.js';
import type { ServiceContext } from '../primitives/context/context.js';
import { ERROR_CATALOGUE, SvcError } from '../protocol/errors.js';
import { errorHandler, toSvcError, validationError, type AjvErrorLike } from './errors.js';
import { toJson } from './json.js';
import { emptyBatch, malformedToolCall, rpcErrorBody, toolErrorResult, unknownTool, unprefixed } from './mcp-errors.js';
import { mcpInstructions } from './mcp-instructions.js';
import { registerPrompts } from './mcp-prompts.js';
import { registerResources } from './mcp-resources.js';
import type { Operation, OperationCall } from './operations.js';
import type { RateLimiter } from './rate-limit.js';
import { checkAnswer, runOperation } from './routes/operations.js';

export const MCP_CORE_TOOL_COUNT = 18;

type Tier = 'core' | 'full';
const ENDPOINT: Record<Tier, string> = { core: '/mcp', full: '/mcp/full' };

export function toolName(ctx: ServiceContext, op: Operation): string {
  return `${ctx.config.prefix}_${op.name}`;
}

/** The tools of a tier: core (tools/list on /mcp) or full (/mcp/full). */
export function toolsOf(ops: readonly Operation[], tier: Tier): Operation[] {
  return ops.filter((o) => (tier === 'core' ? o.mcp === 'core' : o.mcp !== false));
}

/**
 * Counts every message of a batch after the first against the caller's bucket (the HTTP request
 * already paid for the first), so packing calls into one request buys no extra rate. A refused
 * request is answered rate_limited in its slot of the batch answer without running; a refused
 * notification is dropped, as JSON-RPC gives notifications no answer.
 */
function meterBatch(transport: StreamableHTTPServerTransport, limiter: RateLimiter, ip: string, path: string): void {
  const dispatch = transport.onmessage;
  if (!dispatch) return;
  let prepaid = true;
  transport.onmessage = (msg, extra) => {
    if (prepaid || limiter.take(ip)) {
      prepaid = false;
      return dispatch(msg, extra);
    }
    if (isJSONRPCRequest(msg)) void transport.send({ ...rpcErrorBody(limiter.refusal(), ERROR_CATALOGUE.rate_limited.mcp, path), id: msg.id });
  };
}

/** Least time between two progress notifications of one call (the first and the last always go). */
const PROGRESS_INTERVAL_MS = 100;

/** The JSON-RPC message(s) of a body: does a tools/call among them ask for progress? */
function asksForProgress(body: unknown): boolean {
  const msgs = Array.isArray(body) ? body : [body];
  return msgs.some((m) => {
    if (m === null || typeof m !== 'object') return false;
    const msg = m as { method?: unknown; params?: { _meta?: { progressToken?: unknown } | null } | null };
    const meta = msg.params?._meta;
    return msg.method === 'tools/call' && meta !== null && typeof meta === 'object' && meta.progressToken !== undefined;
  });
}

/**
 * OperationCall.progress for a call that sent `token`: each report becomes notifications/progress
 * on the request's stream, at most one per PROGRESS_INTERVAL_MS besides the first and the last,
 * never after the call has answered (`stop`), and never failing the call.
 */
function progressSender(
  send: (n: { method: 'notifications/progress'; params: { progressToken: ProgressToken; progress: number; total?: number; message?: string } }) => Promise<void>,
  token: ProgressToken,
) {
  let last = -1;
  let lastAt = 0;
  let open = true;
  const report: NonNullable<OperationCall['progress']> = (p) => {
    if (!open || p.progress <= last) return;
    const now = performance.now();
    const final = p.total !== undefined && p.progress >= p.total;
    if (!final && last >= 0 && now - lastAt < PROGRESS_INTERVAL_MS) return;
    last = p.progress;
    lastAt = now;
    send({ method: 'notifications/progress', params: { progressToken: token, ...p } }).catch(() => undefined);
  };
  return {
    report,
    stop: () => {
      open = false;
    },
  };
}

export async function mcpRoutes(app: FastifyInstance, ctx: ServiceContext, ops: readonly Operation[], limiter?: RateLimiter): Promise<void> {
  const byName = new Map<string, Operation>();
  for (const op of toolsOf(ops, 'full')) byName.set(toolName(ctx, op), op);
  const names = [...byName.keys()];
  const prefix = ctx.config.prefix;
  const instructions = mcpInstructions(prefix, toolsOf(ops, 'core').length, names.length);

  // A server is built per request (stateless transport); without this shared validator each one
  // would build its own Ajv instance with every meta-schema, most of an MCP call's CPU time.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();

  /** `ip` is the caller's address: per-address quotas (bundles) meter MCP calls as REST ones. */
  function makeServer(tier: Tier, log: FastifyRequest['log'], ip: string, authorization: string | undefined): Server {
    const path = ENDPOINT[tier];
    const server = new Server({ name: `${prefix}-responder`, version: '1.1.0' }, { capabilities: { tools: {}, resources: {}, prompts: {} }, instructions, jsonSchemaValidator });
    registerResources(server, ctx, { prefix, instructions, path });
    registerPrompts(server, prefix, path);
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: toolsOf(ops, tier).map((op) => ({
        name: toolName(ctx, op),
        description: `${op.summary}${op.description ? ` — ${op.description}` : ''} (REST: ${op.method} ${op.path})`,
        inputSchema: op.input as unknown as { type: 'object'; properties?: Record<string, unknown> },
        annotations: op.readOnly === false ? { readOnlyHint: false, destructiveHint: false, openWorldHint: true } : { readOnlyHint: true, openWorldHint: true },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const started = performance.now();
      const name = req.params.name;
      // Any tool is callable by name on either endpoint; the tiers only shape tools/list.
      const op = byName.get(name);
      if (!op) {
        // A name the caller made up never becomes a label (/metrics): one `unknown` series.
        ctx.metrics.mcpToolCall('unknown', 'unknown_tool', (performance.now() - started) / 1000);
        throw unknownTool(name, names, prefix, path);
      }
      const args = req.params.arguments ?? {};
      applyCellAlias(cellAliasOf(op.input), args);
      // The REST body's validator: same compiled schema, same defaults filled in.
      const validate = jsonValidator(op.input);
      const token = req.params._meta?.progressToken;
      const progress = token === undefined ? undefined : progressSender(extra.sendNotification, token);
      try {
        // Bad arguments are a failed call like any other: the model reads the field and fixes it.
        if (!validate(args)) throw validationError(validate.errors?.[0] as AjvErrorLike, 'arguments');
        // The transport's Authorization header travels with every call of the request, so a
        // scoped read over MCP runs under the same bearer check as over REST (docs/scopes.md).
        const result = await runOperation(ctx, op, args, authorization === undefined ? {} : { authorization }, 'mcp', ip, progress?.report);
        if (ctx.config.checkResponses) checkAnswer(op, result, log);
        const out = op.mcpResult
          ? op.mcpResult(result)
          : {
              // The REST serializer: served facts' JSON is kept once, not encoded again per call.
              content: [{ type: 'text' as const, text: toJson(result) }],
              structuredContent: result as Record<string, unknown>,
            };
        ctx.metrics.mcpToolCall(name, 'ok', (performance.now() - started) / 1000);
        return out;
      } catch (err) {
        const out = toolErrorResult(err, name, path);
        ctx.metrics.mcpToolCall(name, out.structuredContent.code, (performance.now() - started) / 1000);
        if (out.structuredContent.code === 'internal') log.error({ err, tool: name }, 'internal error');
        return out;
      } finally {
        progress?.stop();
      }
    });
    return server;
  }

  const handle = (tier: Tier) => async (req: FastifyRequest, reply: FastifyReply) => {
    if (Array.isArray(req.body) && req.body.length === 0) return reply.status(400).send(emptyBatch(ENDPOINT[tier]));
    const malformed = malformedToolCall(req.body, ENDPOINT[tier]);
    if (malformed) return reply.send(malformed);
    const server = makeServer(tier, req.log, req.ip, req.headers.authorization);
    // JSON answers, except for a call that asked for progress: its notifications need a stream.
    const stream = asksForProgress(req.body) && String(req.headers.accept ?? '').includes('text/event-stream');
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !stream });
    // Errors the SDK raises itself are McpErrors, whose message already holds "MCP error <code>: ";
    // SDK clients prefix it again, so it is dropped on the way out.
    const send = transport.send.bind(transport);
    transport.send = (msg, opts) => send(isJSONRPCErrorResponse(msg) ? { ...msg, error: { ...msg.error, message: unprefixed(msg.error.message) } } : msg, opts);
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      if (limiter && Array.isArray(req.body)) meterBatch(transport, limiter, req.ip, ENDPOINT[tier]);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } catch (err) {
      req.log.error({ err }, 'mcp transport failure');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify(rpcErrorBody(err, ErrorCode.InternalError, ENDPOINT[tier])));
      }
    }
  };

  /**
   * fastify parses the body before the SDK sees it: a body that is not JSON gets the JSON-RPC
   * parse error (-32700) the SDK would give, not the REST envelope. Anything else refused
   * before the handler (rate limit, size cap) keeps the REST answer and its headers.
   */
  const onError = (tier: Tier) => (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const se = toSvcError(err);
    if (se.code !== 'invalid_argument' || se.details.field !== 'body') return errorHandler(err, req, reply);
    const parse = new SvcError(se.code, se.message, { ...se.details, hint: 'Send one JSON-RPC 2.0 request as a JSON body.' }, { status: se.httpStatus });
    void reply.status(se.httpStatus).send(rpcErrorBody(parse, ErrorCode.ParseError, ENDPOINT[tier]));
  };

  const describe = (tier: Tier) => ({
    summary: tier === 'core' ? `MCP (JSON-RPC 2.0, Streamable HTTP, stateless): tools/list gives the ${MCP_CORE_TOOL_COUNT} core tools` : 'MCP: tools/list gives every tool',
    tags: ['mcp'],
  });
  for (const tier of ['core', 'full'] as const) {
    app.post(ENDPOINT[tier], { schema: describe(tier), errorHandler: onError(tier) }, handle(tier));
    // Stateless server: no server-initiated stream. A GET asking for one (an MCP client opening
    // its listening stream) gets 405, as the transport spec says; an SDK client otherwise reads
    // the description as an empty stream and reopens it every second. Any other GET describes
    // the endpoint instead of failing.
    app.get(ENDPOINT[tier], { schema: { summary: 'MCP endpoint description (POST JSON-RPC here); 405 to a GET asking for an event stream', tags: ['mcp'] } }, async (req, reply) => {
      const description = {
        protocol: 'mcp',
        transport: 'streamable-http',
        stateless: true,
        post: ENDPOINT[tier],
        tools: toolsOf(ops, tier).map((o) => toolName(ctx, o)),
        note: 'POST JSON-RPC 2.0 (initialize, tools/list, tools/call, resources/list, resources/read, prompts/list, prompts/get) with Accept: application/json, text/event-stream.',
      };
      if (String(req.headers.accept ?? '').includes('text/event-stream')) return reply.code(405).header('allow', 'POST').send(description);
      return description;
    });
  }
}
