/**
 * `svc mcp`: a stdio bridge for MCP hosts that only start local processes (README "MCP",
 * docs/reads.md "MCP"). This file parses the command line; the bridge itself (cli-mcp-bridge.ts)
 * is loaded only when the command runs, so the SDK's client and stdio transports cost the other
 * commands nothing.
 */
import { parseCommand, usageError, type CommandSpec } from './cli-args.js';

export const MCP_SPEC: CommandSpec = {
  name: 'mcp',
  usage: `usage: svc mcp [--url <base>] [--full] [--bearer <token>]

Bridges an MCP host that speaks stdio (a desktop app's "command" server) to a running responder:
every request read on stdin is forwarded to <base>/mcp (the core tools), or <base>/mcp/full with
--full (every read tool), over Streamable HTTP, and the answer is written to stdout. Tools,
resources, prompts and progress notifications pass through; the signing key and the store stay
with the responder. Logs go to stderr. Ends when stdin closes.

options:
  --url <base>      the responder (default http://127.0.0.1:8080); a URL ending in /mcp or
                    /mcp/full is taken as that endpoint
  --full            bridge /mcp/full instead of /mcp
  --bearer <token>  send "Authorization: Bearer <token>" with every request (reads of a private
                    scope, docs/scopes.md); the environment variable SVC_MCP_BEARER does the same
                    without showing the token in process listings`,
  options: {
    url: { type: 'string' },
    full: { type: 'boolean' },
    bearer: { type: 'string' },
  },
};

const DEFAULT_URL = 'http://127.0.0.1:8080';

/** The endpoint the bridge forwards to: <base>/mcp or <base>/mcp/full. */
export function bridgeEndpoint(url: string, full: boolean): URL {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${url}`);
  const m = u.pathname.match(/^(.*?)\/mcp(\/full)?\/?$/);
  const root = (m ? m[1] : u.pathname).replace(/\/+$/, '');
  u.pathname = `${root}/mcp${full || m?.[2] ? '/full' : ''}`;
  return u;
}

/** `svc mcp`: resolves with the exit status once stdin has closed (or on SIGINT/SIGTERM). */
export async function mcpCommand(args: string[]): Promise<number> {
  const p = parseCommand(MCP_SPEC, args);
  if (!p.run) return p.code;
  let endpoint: URL;
  try {
    endpoint = bridgeEndpoint(typeof p.values.url === 'string' ? p.values.url : DEFAULT_URL, p.values.full === true);
  } catch (e) {
    return usageError(MCP_SPEC, `--url: ${(e as Error).message}`);
  }
  const bearer = (typeof p.values.bearer === 'string' ? p.values.bearer : process.env.SVC_MCP_BEARER)?.trim().replace(/^Bearer\s+/i, '');
  const { runBridge } = await import('./cli-mcp-bridge.js');
  return await runBridge(endpoint, bearer ? { authorization: `Bearer ${bearer}` } : {});
}
