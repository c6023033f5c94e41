/**
 * Graceful shutdown of the HTTP side (docs/deploy.md, "Stopping a responder"). On a signal the
 * responder stops accepting connections, lets the requests in flight finish, answers any new
 * request on a kept-alive connection `503 overloaded` with `Connection: close`, ends its event
 * streams, and closes each connection as soon as it is idle; connections still busy after the
 * grace period are cut. Only then is the store closed (server.ts), and the store itself drains
 * its in-flight appends first: an acknowledged write is durable whatever happens here.
 */
import type { FastifyInstance } from 'fastify';

export interface Lifecycle {
  /** True from the start of a drain (or of app.close()): new requests are refused. */
  closing: boolean;
  /** Called once when a drain starts (open event streams end themselves). */
  readonly onDrain: Set<() => void>;
}

const lifecycles = new WeakMap<FastifyInstance, Lifecycle>();

/** The lifecycle of `app`, created on first use (buildApp makes it). */
export function lifecycleOf(app: FastifyInstance): Lifecycle {
  let l = lifecycles.get(app);
  if (!l) {
    l = { closing: false, onDrain: new Set() };
    lifecycles.set(app, l);
  }
  return l;
}

/** How often connections that went idle during a drain are closed. */
const IDLE_SWEEP_MS = 50;

/**
 * Stop accepting connections and wait for those open to finish their requests, at most
 * `graceMs`; then cut what is left. Resolves once no connection is open; `forced` says whether
 * any had to be cut.
 */
export async function drain(app: FastifyInstance, graceMs: number): Promise<{ forced: boolean }> {
  const life = lifecycleOf(app);
  life.closing = true;
  for (const end of life.onDrain) {
    try {
      end();
    } catch {
      // A stream whose socket is already gone has nothing left to end.
    }
  }
  const server = app.server;
  // close() stops the listening socket at once (new connections are refused by the kernel) and
  // calls back once every open connection has closed; it also closes those idle right now.
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // A connection whose request finishes during the drain goes idle (the client may keep it
  // alive): close it then, rather than at the keep-alive timeout.
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<true>((resolve) => {
    timer = setTimeout(() => resolve(true), graceMs);
  });
  try {
    const forced = await Promise.race([closed.then(() => false as const), late]);
    if (forced) {
      server.closeAllConnections();
      await closed;
    }
    return { forced };
  } finally {
    clearInterval(sweep);
    clearTimeout(timer);
  }
}
