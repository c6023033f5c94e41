/**
 * How the MCP adapter reports failures. A failed tool call (bad arguments or a failing
 * operation) is a tool result with isError, so a model reads the code and the hint and can fix
 * its call; only protocol failures (unknown tool, malformed request) are JSON-RPC errors. Both
 * carry the error envelope (docs/errors.md) built by SvcError.toEnvelope.
 */
import { CallToolRequestSchema, ErrorCode, type CallToolResult, type JSONRPCErrorResponse, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { editDistance } from '../geo/normalize.js';
import { ERROR_CATALOGUE, SvcError } from '../protocol/errors.js';
import { toSvcError } from './errors.js';

/**
 * A JSON-RPC error the SDK sends as is. The SDK's McpError writes "MCP error <code>: " into its
 * own message and SDK clients add that text again on receipt, hence this type and not McpError.
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** Drops the code text the SDK's own McpErrors put into their messages (the client adds it back). */
export function unprefixed(message: string): string {
  return message.replace(/^(MCP error -?\d+: )+/, '');
}

/** The envelope plus what a caller needs to recover: a hint (specific where the error has one) and the HTTP status REST would answer. */
function errorData(se: SvcError, path: string) {
  const hint = typeof se.details.hint === 'string' ? se.details.hint : ERROR_CATALOGUE[se.code].recover;
  return { ...se.toEnvelope(path), hint, http_status: se.httpStatus };
}

/** A failed tool call as a tool result: structured envelope plus one line of text for a model. */
export function toolErrorResult(err: unknown, tool: string, path: string): CallToolResult & { structuredContent: ReturnType<typeof errorData> } {
  const se = toSvcError(err);
  const data = { ...errorData(se, path), tool, mcp_error_code: ERROR_CATALOGUE[se.code].mcp };
  const text = `${se.code}: ${se.message} (hint: ${data.hint})`.replace(/\s+/g, ' ');
  return { isError: true, structuredContent: data, content: [{ type: 'text', text }] };
}

/**
 * The closest tool to a name that is not one: the bare name (`locate`), a doubled prefix, a
 * different case or a typo of up to two edits.
 */
export function suggestTool(name: string, tools: readonly string[], prefix: string): string | undefined {
  let bare = name.toLowerCase();
  while (bare.startsWith(`${prefix}_`)) bare = bare.slice(prefix.length + 1);
  const wanted = `${prefix}_${bare}`;
  let best: string | undefined;
  let bestD = 3;
  for (const t of tools) {
    const d = editDistance(wanted, t, 2);
    if (d < bestD) [best, bestD] = [t, d];
  }
  return best;
}

/** Unknown tool: the catalogue's not_found (-32601), naming the tool that was probably meant. */
export function unknownTool(name: string, tools: readonly string[], prefix: string, path: string): RpcError {
  const guess = suggestTool(name, tools, prefix);
  const message = guess ? `unknown tool ${name}; did you mean ${guess}?` : `unknown tool ${name}`;
  const hint = guess ? `Call ${guess}.` : 'Call a name from tools/list; /mcp/full lists every tool, signed writes are REST only.';
  const se = new SvcError('not_found', message, { tool: name, did_you_mean: guess ?? null, hint });
  return new RpcError(ERROR_CATALOGUE.not_found.mcp, message, errorData(se, path));
}

/** MCP's code for a resource URI the server does not have (spec: resources, "Error Handling"). */
export const RESOURCE_NOT_FOUND = -32002;

/** resources/read of a URI not in resources/list: -32002 with the envelope and the URIs there are. */
export function unknownResource(uri: string, uris: readonly string[], path: string): RpcError {
  const se = new SvcError('not_found', `unknown resource ${uri}`, { uri, resources: [...uris], hint: `Read a URI from resources/list: ${uris.join(', ')}.` });
  return new RpcError(RESOURCE_NOT_FOUND, se.message, errorData(se, path));
}

/** prompts/get of a name not in prompts/list, or without a required argument: -32602 (invalid params). */
export function badPrompt(message: string, field: string, hint: string, path: string): RpcError {
  const se = new SvcError('invalid_argument', message, { field, hint });
  return new RpcError(ErrorCode.InvalidParams, se.message, errorData(se, path));
}

/**
 * A tools/call whose params are not `{name: string, arguments?: object}`. The SDK would answer
 * it with -32603 (internal) and a multi-line schema dump; this answers -32602 naming the field.
 */
export function malformedToolCall(body: unknown, path: string): JSONRPCErrorResponse | undefined {
  const msg = body as { method?: unknown; id?: RequestId } | null;
  if (!msg || typeof msg !== 'object' || Array.isArray(msg) || msg.method !== 'tools/call' || msg.id === undefined) return undefined;
  const parsed = CallToolRequestSchema.safeParse(msg);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  const field = issue.path.join('.') || 'params';
  const se = new SvcError('invalid_argument', `${field}: ${issue.message.replace(/\s+/g, ' ')}`, { field, hint: 'Send params {name, arguments}: tools/list gives each name and its input schema.' });
  return { jsonrpc: '2.0', id: msg.id, error: { code: ErrorCode.InvalidParams, message: se.message, data: errorData(se, path) } };
}

/** A request fastify refused before the SDK saw it, or a transport failure, as a JSON-RPC error. */
export function rpcErrorBody(err: unknown, rpcCode: number, path: string) {
  const se = toSvcError(err);
  // id null: JSON-RPC's answer when the request's id could not be read.
  return { jsonrpc: '2.0' as const, id: null, error: { code: rpcCode, message: se.message, data: errorData(se, path) } };
}

/** JSON-RPC 2.0 section 6: an empty batch is answered by a single Invalid Request, not by nothing. */
export function emptyBatch(path: string) {
  const se = new SvcError('invalid_argument', 'body: an empty JSON-RPC batch', { field: 'body', hint: 'Send one JSON-RPC request object (or a non-empty array of them).' }, { status: 400 });
  return rpcErrorBody(se, ErrorCode.InvalidRequest, path);
}
