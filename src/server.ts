/** Process concerns only: open the service, listen, and shut down cleanly on signals. */
import type { FastifyInstance } from 'fastify';
import { buildApp } from './api/app.js';
import { drain } from './api/shutdown.js';
import type { Config } from './config.js';
import { openService, type OpenServiceOptions, type Service } from './service.js';

export interface RunningServer {
  app: FastifyInstance;
  service: Service;
  url: string;
  /** Drain (stop accepting, finish what is in flight, at most `drainGraceMs`), then close the store. */
  close(): Promise<void>;
}

/**
 * How long a shutdown waits for requests in flight: the gateway timeout bounds every operation,
 * plus a little for its answer to be written. Connections still open then are cut.
 */
export function drainGraceMs(config: Config): number {
  return config.timeoutSecs * 1000 + 2000;
}

/** Start a responder on config.host:config.port. */
export async function startServer(config: Config, opts: OpenServiceOptions = {}): Promise<RunningServer> {
  const service = await openService(config, opts);
  const app = await buildApp(service, { logger: config.logLevel === 'silent' ? false : { level: config.logLevel } });
  const url = await app.listen({ port: config.port, host: config.host });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const { forced } = await drain(app, drainGraceMs(config));
      app.log.info({ forced }, forced ? 'connections still busy after the grace period were cut' : 'every connection finished');
      await app.close();
      // The store waits for appends in flight before it closes: an acknowledged write is durable.
      await service.close();
    })());
  return { app, service, url, close };
}

/**
 * Install SIGINT/SIGTERM handlers that drain and close (acknowledged writes are already durable),
 * then exit 0. A second signal while draining is not caught: it ends the process at once.
 */
export function closeOnSignals(server: RunningServer): void {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      const closed = server.close();
      // Logged once the listening socket is closed (close() starts the drain synchronously).
      server.app.log.info({ signal: sig }, 'shutting down: no new connections, draining those open');
      closed.then(
        () => process.exit(0),
        (err) => {
          console.error(err);
          process.exit(1);
        },
      );
    });
  }
}
