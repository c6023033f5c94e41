/**
 * MCP adapter (spec 4.2): JSON-RPC 2.0 over Streamable HTTP with the official SDK, stateless,
 * JSON responses. Every tool is an entry of the operation table: the same schema validates
 * the arguments and the same function runs. `/mcp` lists the core tools, `/mcp/full` all of
 * them; writes are never tools. Errors carry the part-7 MCP code and the envelope as data.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { Ajv, type ValidateFunction } from 'ajv';
import { ERROR_CATALOGUE, ERROR_SCHEMA } from '../protocol/errors.js';
import type { ServiceContext } from '../primitives/context.js';
import { toSvcError, validationError, type AjvErrorLike } from './errors.js';
import { toJson } from './json.js';
import type { Operation } from './operations.js';
import { runOperation } from './routes/operations.js';

export const MCP_CORE_TOOL_COUNT = 18;

export function toolName(ctx: ServiceContext, op: Operation): string {
  return `${ctx.config.prefix}_${op.name}`;
}

/** The tools of a tier: core (tools/list on /mcp) or full (/mcp/full). */
export function toolsOf(ops: readonly Operation[], tier: 'core' | 'full'): Operation[] {
  return ops.filter((o) => (tier === 'core' ? o.mcp === 'core' : o.mcp !== false));
}

function mcpErrorOf(err: unknown, tool: string): McpError {
  const se = toSvcError(err);
  const code = ERROR_CATALOGUE[se.code].mcp ?? ErrorCode.InternalError;
  return new McpError(code, `${se.code}: ${se.message}`, { ...se.toEnvelope(`/mcp:${tool}`), http_status: se.httpStatus });
}

export async function mcpRoutes(app: FastifyInstance, ctx: ServiceContext, ops: readonly Operation[]): Promise<void> {
  const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });
  const validators = new Map<string, ValidateFunction>();
  const byName = new Map<string, Operation>();
  for (const op of toolsOf(ops, 'full')) {
    byName.set(toolName(ctx, op), op);
    validators.set(op.name, ajv.compile(op.input));
  }

  // A server is built per request (stateless transport); without this shared validator each one
  // would build its own Ajv instance with every meta-schema, most of an MCP call's CPU time.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();

  function makeServer(tier: 'core' | 'full'): Server {
    const server = new Server({ name: `${ctx.config.prefix}-responder`, version: '1.1.0' }, { capabilities: { tools: {} }, jsonSchemaValidator });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: toolsOf(ops, tier).map((op) => ({
        name: toolName(ctx, op),
        description: `${op.summary}${op.description ? ` — ${op.description}` : ''} (REST: ${op.method} ${op.path})`,
        inputSchema: op.input as { type: 'object'; properties?: Record<string, unknown> },
        annotations: { readOnlyHint: true, openWorldHint: true },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (req) => {
      const name = req.params.name;
      // Any tool is callable by name on either endpoint; the tiers only shape tools/list.
      const op = byName.get(name);
      if (!op) throw new McpError(ErrorCode.MethodNotFound, `unknown tool ${name} (see tools/list on /mcp/full)`);
      const args = req.params.arguments ?? {};
      const validate = validators.get(op.name)!;
      if (!validate(args)) throw mcpErrorOf(validationError(validate.errors?.[0] as AjvErrorLike, 'arguments'), name);
      try {
        const result = await runOperation(ctx, op, args, {}, 'mcp');
        if (op.mcpResult) return op.mcpResult(result);
        return {
          // The REST serializer: served facts' JSON is kept once, not encoded again per call.
          content: [{ type: 'text', text: toJson(result) }],
          structuredContent: result as Record<string, unknown>,
        };
      } catch (err) {
        throw mcpErrorOf(err, name);
      }
    });
    return server;
  }

  const handle = (tier: 'core' | 'full') => async (req: FastifyRequest, reply: FastifyReply) => {
    const server = makeServer(tier);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } catch (err) {
      req.log.error({ err }, 'mcp transport failure');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: ErrorCode.InternalError, message: 'internal', data: { code: 'internal', schema: ERROR_SCHEMA } }, id: null }));
      }
    }
  };

  const describe = (tier: 'core' | 'full') => ({
    summary: tier === 'core' ? `MCP (JSON-RPC 2.0, Streamable HTTP, stateless): tools/list gives the ${MCP_CORE_TOOL_COUNT} core tools` : 'MCP: tools/list gives every tool',
    tags: ['mcp'],
  });
  app.post('/mcp', { schema: describe('core') }, handle('core'));
  app.post('/mcp/full', { schema: describe('full') }, handle('full'));
  // Stateless server: no server-initiated stream; GET describes the endpoint instead of failing.
  for (const path of ['/mcp', '/mcp/full']) {
    app.get(path, { schema: { summary: 'MCP endpoint description (POST JSON-RPC here)', tags: ['mcp'] } }, async () => ({
      protocol: 'mcp',
      transport: 'streamable-http',
      stateless: true,
      post: path,
      tools: toolsOf(ops, path === '/mcp' ? 'core' : 'full').map((o) => toolName(ctx, o)),
      note: 'POST JSON-RPC 2.0 (initialize, tools/list, tools/call) with Accept: application/json, text/event-stream.',
    }));
  }
}
