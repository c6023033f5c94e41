/** Process concerns only: open the service, listen, and shut down cleanly on signals. */
import type { FastifyInstance } from 'fastify';
import { buildApp } from './api/app.js';
import type { Config } from './config.js';
import { openService, type Service } from './service.js';

export interface RunningServer {
  app: FastifyInstance;
  service: Service;
  url: string;
  close(): Promise<void>;
}

/** Start a responder on config.host:config.port. */
export async function startServer(config: Config): Promise<RunningServer> {
  const service = await openService(config);
  const app = await buildApp(service, { logger: config.logLevel === 'silent' ? false : { level: config.logLevel } });
  const url = await app.listen({ port: config.port, host: config.host });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await app.close();
      await service.close();
    })());
  return { app, service, url, close };
}

/** Install SIGINT/SIGTERM handlers that drain and close (acknowledged writes are already durable). */
export function closeOnSignals(server: RunningServer): void {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      server.app.log.info({ signal: sig }, 'shutting down');
      server.close().then(
        () => process.exit(0),
        (err) => {
          console.error(err);
          process.exit(1);
        },
      );
    });
  }
}
