/**
 * The operation table: each primitive once, with its input schema, REST path and MCP exposure.
 * The REST adapter registers a route per entry and the MCP adapter a tool per entry, so one
 * schema validates both and generates the OpenAPI document.
 */
import type { ServiceContext } from '../primitives/context/context.js';

export type JsonSchema = Record<string, unknown>;

export interface OperationCall {
  /** Request headers (REST) — e.g. If-None-Match; empty over MCP. */
  headers: Record<string, string | string[] | undefined>;
  /** Absolute deadline (ms since epoch) from the gateway timeout. */
  deadline: number;
  /** The client's address (REST and MCP alike), for per-address quotas; absent in internal calls. */
  ip?: string;
  /** The adapter the call came through (a write an operation allows over REST only checks it). */
  channel?: 'rest' | 'mcp';
}

/** The MCP content blocks a tool result may carry. */
export type McpContentBlock = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

export interface Operation {
  /** Tool suffix: the MCP tool is `<prefix>_<name>`. */
  name: string;
  method: 'GET' | 'POST';
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  /** JSON Schema of the body (POST) or query string (GET). */
  input: JsonSchema;
  /** MCP exposure: in the 18 core tools, only in /mcp/full, or never (writes). */
  mcp: 'core' | 'full' | false;
  /**
   * False for a tool that keeps something on the caller's behalf (an answer step, an entity, a
   * bundle): MCP's readOnlyHint says so. Default true: reads, including the lazy fetch that
   * signs public upstream data into the shared cache.
   */
  readOnly?: boolean;
  run(ctx: ServiceContext, input: any, call: OperationCall): Promise<unknown>;
  /**
   * MCP-only shaping of a result (default: structuredContent = the result, plus its JSON as a
   * text block). For binary answers, which MCP carries natively (an image block) instead of as
   * base64 inside the JSON.
   */
  mcpResult?: (result: any) => { structuredContent: Record<string, unknown>; content: McpContentBlock[] };
  /** REST-only response decoration (headers, 304). Returns true when it sent the reply itself. */
  http?: (result: any, req: { headers: OperationCall['headers'] }, reply: { header(k: string, v: string): unknown; code(n: number): unknown; send(p?: unknown): unknown }) => boolean;
}

export const scopeSchema = {
  type: 'object',
  description: 'multi-tenant binding: reads see only facts written under the same four-tuple; bound into the receipt. A read naming a scope needs `Authorization: Bearer` for it (POST /v1/scope_bearer), sent as the HTTP header of the REST or MCP request (docs/scopes.md)',
  properties: { user_id: { type: 'string', maxLength: 200 }, agent_id: { type: 'string', maxLength: 200 }, run_id: { type: 'string', maxLength: 200 }, org_id: { type: 'string', maxLength: 200 } },
  additionalProperties: false,
} as const;

/** An Ed25519 public key or a fact_cid: 52 lowercase base32 characters. */
export const b32KeySchema = { type: 'string', pattern: '^[a-z2-7]{52}$' } as const;

export const cellSchema = { type: 'string', minLength: 1, maxLength: 200, description: 'cell64 (e.g. defi.zb64a.cike.zfa2f) or a place name' } as const;
export const bandsSchema = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 }, maxItems: 64, description: 'namespaced band keys (see /v1/bands)' } as const;
export const tslotSchema = { type: 'integer', minimum: 0, description: "count of the band's tempo unit since the Unix epoch" } as const;
