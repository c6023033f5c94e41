/**
 * Socket hygiene (issue 13, item 6): the server's deadlines and a per-address cap on open
 * connections. The deadlines bound how long one socket can be held; the cap bounds how many one
 * address can hold meanwhile, so a single client cannot exhaust descriptors or memory.
 */
import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import { HTTP_LIMITS } from './limits.js';

/** Deadlines for fastify's constructor (fastify forwards `http` to http.createServer). */
export function serverDeadlines(): { requestTimeout: number; keepAliveTimeout: number; http: ServerOptions } {
  return {
    requestTimeout: HTTP_LIMITS.request_timeout_s * 1000,
    keepAliveTimeout: HTTP_LIMITS.keep_alive_timeout_s * 1000,
    http: {
      headersTimeout: HTTP_LIMITS.headers_timeout_s * 1000,
      connectionsCheckingInterval: HTTP_LIMITS.timeout_check_interval_ms,
      maxHeaderSize: HTTP_LIMITS.max_header_bytes,
      // Node would answer a missing Host with an empty 400; app.ts refuses it in the envelope.
      requireHostHeader: false,
    },
  };
}

export interface ConnectionCap {
  /** Addresses with at least one open connection. */
  readonly addresses: number;
  /** Connections refused since start. */
  readonly refused: number;
}

/**
 * Closes a new connection at once when its address already holds `max`. Prepended to Node's own
 * 'connection' listener so a refused socket is destroyed before an HTTP parser is attached or a
 * byte is read: refusing costs no more than accepting. The client sees the connection reset.
 */
export function capConnectionsPerIp(server: Server, max: number): ConnectionCap {
  const open = new Map<string, number>();
  let refused = 0;
  server.prependListener('connection', (socket: Socket) => {
    const ip = socket.remoteAddress ?? '';
    const n = open.get(ip) ?? 0;
    if (n >= max) {
      refused++;
      socket.destroy();
      return;
    }
    open.set(ip, n + 1);
    socket.once('close', () => {
      const left = (open.get(ip) ?? 1) - 1;
      if (left > 0) open.set(ip, left);
      else open.delete(ip);
    });
  });
  return {
    get addresses() {
      return open.size;
    },
    get refused() {
      return refused;
    },
  };
}
