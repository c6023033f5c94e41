/**
 * The operation table: each primitive once, with its input schema, REST path and MCP exposure.
 * The REST adapter registers a route per entry and the MCP adapter a tool per entry, so one
 * schema validates both and generates the OpenAPI document.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { ServiceContext } from '../primitives/context/context.js';
import type { ProgressFn } from '../primitives/reads/common.js';

export interface OperationCall {
  /** Request headers (REST) — e.g. If-None-Match; empty over MCP. */
  headers: Record<string, string | string[] | undefined>;
  /** Absolute deadline (ms since epoch) from the gateway timeout. */
  deadline: number;
  /** The client's address (REST and MCP alike), for per-address quotas; absent in internal calls. */
  ip?: string;
  /** The adapter the call came through (a write an operation allows over REST only checks it). */
  channel?: 'rest' | 'mcp';
  /**
   * Where a long operation (hunt, recall_many, recall_polygon) reports how far it got: set over
   * MCP when the request carries a progressToken (notifications/progress), absent over REST.
   */
  progress?: ProgressFn;
}

/** The MCP content blocks a tool result may carry. */
export type McpContentBlock = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

export interface Operation<I extends TSchema = TSchema> {
  /** Tool suffix: the MCP tool is `<prefix>_<name>`. */
  name: string;
  method: 'GET' | 'POST';
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  /**
   * TypeBox schema of the body (POST) or query string (GET): validated (defaults filled in) by
   * the one validator REST and MCP share (api/validation.ts); `run` receives its static type.
   */
  input: I;
  /** TypeBox schema of a successful answer: OpenAPI's 200, checked when SVC_CHECK_RESPONSES=1. */
  output: TSchema;
  /** MCP exposure: in the 18 core tools, only in /mcp/full, or never (writes). */
  mcp: 'core' | 'full' | false;
  /**
   * False for a tool that keeps something on the caller's behalf (an answer step, an entity, a
   * bundle): MCP's readOnlyHint says so. Default true: reads, including the lazy fetch that
   * signs public upstream data into the shared cache.
   */
  readOnly?: boolean;
  run(ctx: ServiceContext, input: Static<I>, call: OperationCall): Promise<unknown>;
  /**
   * MCP-only shaping of a result (default: structuredContent = the result, plus its JSON as a
   * text block). For binary answers, which MCP carries natively (an image block) instead of as
   * base64 inside the JSON.
   */
  mcpResult?: (result: any) => { structuredContent: Record<string, unknown>; content: McpContentBlock[] };
  /** REST-only response decoration (headers, 304). Returns true when it sent the reply itself. */
  http?: (result: any, req: { headers: OperationCall['headers'] }, reply: { header(k: string, v: string): unknown; code(n: number): unknown; send(p?: unknown): unknown }) => boolean;
}

/** Declares an operation; the input schema's type flows into `run` (no annotations needed). */
export function defineOperation<I extends TSchema>(op: Operation<I>): Operation<I> {
  return op;
}
