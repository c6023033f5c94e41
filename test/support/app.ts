/** Builds a responder on a throwaway data directory and returns its fastify app for inject(). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openService, type Service } from '../../src/service.js';
import type { Materializer } from '../../src/sources/contract.js';
import { loadRegistry } from '../../src/registry/registry.js';

export interface TestApp {
  app: FastifyInstance;
  service: Service;
  dataDir: string;
  close(): Promise<void>;
}

/** A fresh responder (embedded store) with config overrides; close() removes its data. */
export async function build(overrides: Partial<Config> = {}, env: NodeJS.ProcessEnv = {}, opts: { materializers?: Materializer[]; now?: () => Date } = {}): Promise<TestApp> {
  const dataDir = overrides.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-test-'));
  // Tests send bursts from one address: the rate limit is lifted unless a test sets it.
  // Tests never call an outside host: every upstream not set by the test points at a closed
  // loopback port (a fetch fails at once, locally), and the network geocoders are off.
  const closed: Record<string, string> = { PHOTON: 'off', NOMINATIM: 'off' };
  for (const s of loadRegistry().sourceList) {
    const key = s.env.replace(/^SVC_UPSTREAM_/, '').replace(/_URL$/, '');
    closed[key] = 'http://127.0.0.1:9';
    closed[`${key}_ASSETS`] = 'http://127.0.0.1:9';
  }
  const base = loadConfig({ SVC_LOG_LEVEL: 'silent', ...env }, {});
  const config = loadConfig({ SVC_LOG_LEVEL: 'silent', ...env }, {
    // Every answer is checked against its operation's declared response schema.
    dataDir, rateLimitRps: 1e6, rateLimitBurst: 1e6, checkResponses: true, ...overrides,
    upstreams: { ...closed, ...base.upstreams, ...overrides.upstreams },
  });
  const service = await openService(config, opts);
  const app = await buildApp(service);
  await app.ready();
  return {
    app,
    service,
    dataDir,
    async close() {
      await app.close();
      await service.close();
      if (!overrides.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
