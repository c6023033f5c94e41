/**
 * The `svc mcp` bridge (cli-mcp.ts parses its command line): the MCP host speaks over this
 * process's stdin and stdout (the SDK's StdioServerTransport); each request is forwarded to a
 * running responder's Streamable HTTP endpoint through the SDK's Client and
 * StreamableHTTPClientTransport, and its answer comes back unchanged: tools, resources, prompts,
 * tool errors and progress notifications alike.
 *
 * A proxy, not a second responder: the store, the signing key and the rate limits stay with the
 * server, and the bridge holds no key; it only forwards an optional bearer (scoped reads,
 * docs/scopes.md) as the Authorization header of every request. stdout carries protocol messages
 * only; anything else goes to stderr. The bridge ends when stdin closes (the host went away) or
 * on SIGINT/SIGTERM, with status 0.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { ERROR_CATALOGUE, type ErrorCode as SvcCode } from './protocol/errors.js';

const VERSION = '1.1.0';
/** How long one forwarded request may take (a hunt reports progress, which restarts the clock). */
const REQUEST_TIMEOUT_MS = 300_000;
/** How long the first connection to the responder may take before the bridge serves without it. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Least time between the last progress notification of a call and its result (see tools/call). */
const PROGRESS_GAP_MS = 25;

const log = (msg: string) => process.stderr.write(`svc mcp: ${msg}\n`);

/** A JSON-RPC error to throw from a handler: the SDK answers {code, message, data} as given. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** An error envelope (docs/errors.md) with the hint a model acts on. */
interface Envelope {
  schema?: string;
  code: string;
  message: string;
  hint?: string;
  [k: string]: unknown;
}

/**
 * What a failed forward means to the host: the responder's JSON-RPC error, passed on as it came;
 * or an error envelope (the responder refused the HTTP request itself, e.g. rate_limited, or did
 * not answer at all).
 */
function classify(err: unknown, endpoint: URL): { rpc: RpcError } | { envelope: Envelope } {
  const e = err as { code?: unknown; message?: unknown; data?: unknown; cause?: { code?: unknown; message?: unknown } } | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  // An McpError: the responder's own JSON-RPC error (its message carries the SDK's "MCP error <code>: ").
  if (e && typeof e.code === 'number' && /^MCP error -?\d+: /.test(message)) {
    return { rpc: new RpcError(e.code, message.replace(/^(MCP error -?\d+: )+/, ''), e.data) };
  }
  // An HTTP refusal: its body is a JSON-RPC error or the REST error envelope.
  const brace = message.indexOf('{');
  if (brace >= 0) {
    try {
      const body = JSON.parse(message.slice(brace)) as { error?: { code?: unknown; message?: unknown; data?: unknown }; code?: unknown; message?: unknown };
      if (body.error && typeof body.error.code === 'number') return { rpc: new RpcError(body.error.code, String(body.error.message), body.error.data) };
      if (typeof body.code === 'string' && typeof body.message === 'string') {
        const known = Object.hasOwn(ERROR_CATALOGUE, body.code) ? ERROR_CATALOGUE[body.code as SvcCode] : undefined;
        return { envelope: { ...(body as Envelope), hint: (body as Envelope).hint ?? known?.recover } };
      }
    } catch {
      // not JSON: a transport failure, below
    }
  }
  const cause = e?.cause && typeof e.cause.code === 'string' ? e.cause.code : e?.cause?.message ? String(e.cause.message) : message;
  return {
    envelope: {
      schema: 'svc.error.v1',
      code: 'source_fetch_failed',
      message: `svc mcp: the responder at ${endpoint.href} did not answer (${cause})`,
      hint: 'Start the responder (npx svc serve) or give the bridge its address with --url; the bridge tries again on the next request.',
      endpoint: endpoint.href,
    },
  };
}

/** The JSON-RPC error of an envelope (a request other than tools/call failed before the responder answered it). */
function envelopeError(env: Envelope): RpcError {
  const known = Object.hasOwn(ERROR_CATALOGUE, env.code) ? ERROR_CATALOGUE[env.code as SvcCode].mcp : null;
  return new RpcError(known ?? ErrorCode.ConnectionClosed, env.message, env);
}

/** The responder, connected on first use (and again after a failed first attempt). */
class Upstream {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  /** Called when a connection succeeds after an attempt failed (the host's lists are stale). */
  onRecovered?: () => void;
  private failedOnce = false;

  constructor(
    readonly endpoint: URL,
    private readonly headers: Record<string, string>,
  ) {}

  get connected(): Client | undefined {
    return this.client;
  }

  get(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<Client> {
    const client = new Client({ name: 'svc-mcp-bridge', version: VERSION });
    client.onerror = (err) => log(`responder connection: ${err instanceof Error ? err.message : String(err)}`);
    const transport = new StreamableHTTPClientTransport(this.endpoint, { requestInit: { headers: this.headers } });
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    } catch (err) {
      this.failedOnce = true;
      await client.close().catch(() => undefined);
      throw err;
    }
    this.client = client;
    if (this.failedOnce) {
      this.failedOnce = false;
      this.onRecovered?.();
    }
    return client;
  }

  async close(): Promise<void> {
    await this.client?.close().catch(() => undefined);
    this.client = undefined;
  }
}

/** Forward one request; a failure becomes the JSON-RPC error the host should see. */
async function forward<T>(up: Upstream, run: (c: Client) => Promise<T>): Promise<T> {
  try {
    return await run(await up.get());
  } catch (err) {
    const f = classify(err, up.endpoint);
    throw 'rpc' in f ? f.rpc : envelopeError(f.envelope);
  }
}

/** The bridge's MCP server: every handler forwards to the responder. */
function bridgeServer(up: Upstream, instructions: string): Server {
  const server = new Server(
    { name: 'svc-mcp-bridge', version: VERSION },
    { capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true } }, instructions },
  );
  const opts = (signal: AbortSignal): RequestOptions => ({ signal, timeout: REQUEST_TIMEOUT_MS, resetTimeoutOnProgress: true });
  server.setRequestHandler(ListToolsRequestSchema, (req, extra) => forward(up, (c) => c.listTools(req.params, opts(extra.signal))));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const token = req.params._meta?.progressToken;
    const options: RequestOptions = opts(extra.signal);
    let lastProgress = 0;
    // The host's progressToken goes with the call; the responder's progress comes back under it.
    if (token !== undefined) {
      options.onprogress = (p) => {
        lastProgress = performance.now();
        extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } }).catch(() => undefined);
      };
    }
    try {
      const result = (await (await up.get()).callTool(req.params, undefined, options)) as CallToolResult;
      // SDK clients handle a response as soon as they read it but a notification one microtask
      // later: a progress notification read in the same chunk as the result would find its call
      // finished and be dropped. A short gap after the last one lets the host read it first.
      const wait = lastProgress + PROGRESS_GAP_MS - performance.now();
      if (lastProgress > 0 && wait > 0) await new Promise((r) => setTimeout(r, wait));
      return result;
    } catch (err) {
      const f = classify(err, up.endpoint);
      if ('rpc' in f) throw f.rpc;
      // A refusal before the responder ran the tool (rate limit, unreachable): a failed call the
      // model reads, shaped as the responder's own failed calls are (isError + envelope + hint).
      const env = { ...f.envelope, tool: req.params.name };
      return { isError: true, structuredContent: env, content: [{ type: 'text', text: `${env.code}: ${env.message} (hint: ${env.hint ?? 'retry later'})` }] } satisfies CallToolResult;
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, (req, extra) => forward(up, (c) => c.listResources(req.params, opts(extra.signal))));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (req, extra) => forward(up, (c) => c.listResourceTemplates(req.params, opts(extra.signal))));
  server.setRequestHandler(ReadResourceRequestSchema, (req, extra) => forward(up, (c) => c.readResource(req.params, opts(extra.signal))));
  server.setRequestHandler(ListPromptsRequestSchema, (req, extra) => forward(up, (c) => c.listPrompts(req.params, opts(extra.signal))));
  server.setRequestHandler(GetPromptRequestSchema, (req, extra) => forward(up, (c) => c.getPrompt(req.params, opts(extra.signal))));
  return server;
}

/** Serve the bridge on stdin/stdout until stdin closes; the exit status. */
export async function runBridge(endpoint: URL, headers: Record<string, string>): Promise<number> {
  // stdout belongs to the protocol: anything logged by mistake goes to stderr.
  const { log: consoleLog, info: consoleInfo } = console;
  console.log = console.error;
  console.info = console.error;

  const up = new Upstream(endpoint, headers);
  let instructions: string;
  try {
    instructions = (await up.get()).getInstructions() ?? '';
    log(`bridging stdio to ${endpoint.href}`);
  } catch (err) {
    const f = classify(err, endpoint);
    log(`${'rpc' in f ? f.rpc.message : f.envelope.message}; serving anyway, and connecting on the next request`);
    instructions = `The svc responder at ${endpoint.href} did not answer when this bridge started: tools, resources and prompts appear once it does (the bridge connects on the next request and then announces its lists).`;
  }
  const server = bridgeServer(up, instructions);
  up.onRecovered = () => {
    log(`connected to ${endpoint.href}`);
    for (const announce of [() => server.sendToolListChanged(), () => server.sendResourceListChanged(), () => server.sendPromptListChanged()]) announce().catch(() => undefined);
  };

  return await new Promise<number>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      void Promise.all([server.close().catch(() => undefined), up.close()]).then(() => {
        Object.assign(console, { log: consoleLog, info: consoleInfo });
        resolve(0);
      });
    };
    process.stdin.once('end', finish);
    process.stdin.once('close', finish);
    process.stdout.once('error', finish);
    process.once('SIGINT', finish);
    process.once('SIGTERM', finish);
    server.connect(new StdioServerTransport()).catch((err) => {
      log(`stdio: ${(err as Error).message}`);
      finish();
    });
  });
}
