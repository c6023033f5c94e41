/**
 * Builds a responder on a throwaway data directory (and, on PostgreSQL, a throwaway schema) and
 * returns its fastify app for inject(). The driver is the test's choice, or SVC_TEST_DRIVER
 * (`sqlite` default, `postgres`): the test runner runs the route suites once per driver.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openService, type Service } from '../../src/service.js';
import type { Materializer } from '../../src/sources/contract.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { dropSchema, pgUrl, randomSchema } from '../store/support/pg-env.js';

export type TestDriver = 'sqlite' | 'postgres';

/** The driver route suites run on unless a test names one (SVC_TEST_DRIVER, default sqlite). */
export const TEST_DRIVER: TestDriver = process.env.SVC_TEST_DRIVER === 'postgres' ? 'postgres' : 'sqlite';

export interface TestApp {
  app: FastifyInstance;
  service: Service;
  dataDir: string;
  driver: TestDriver;
  close(): Promise<void>;
}

/**
 * The schema of a responder on PostgreSQL: fresh for a throwaway responder; for a data
 * directory the test keeps (a restart over the same data), the same schema every time.
 */
const schemaOfDir = new Map<string, string>();
function schemaFor(dataDir: string): string {
  let s = schemaOfDir.get(dataDir);
  if (!s) {
    s = `tr_${randomSchema().slice(2)}`;
    schemaOfDir.set(dataDir, s);
  }
  return s;
}

export interface BuildOptions {
  materializers?: Materializer[];
  now?: () => Date;
  /** The store driver; default TEST_DRIVER. A test that inspects SQLite files names 'sqlite'. */
  driver?: TestDriver;
}

/** A fresh responder (embedded store) with config overrides; close() removes its data. */
export async function build(overrides: Partial<Config> = {}, env: NodeJS.ProcessEnv = {}, opts: BuildOptions = {}): Promise<TestApp> {
  const dataDir = overrides.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-test-'));
  // A test that sets its own database (or data directory to reopen) keeps it; otherwise the
  // chosen driver gets a fresh schema, dropped on close.
  const driver: TestDriver = overrides.databaseUrl ? 'postgres' : (opts.driver ?? TEST_DRIVER);
  const schema = driver === 'postgres' && !overrides.databaseUrl ? (overrides.databaseSchema ?? schemaFor(dataDir)) : undefined;
  const pg = schema ? { databaseUrl: pgUrl(), databaseSchema: schema } : {};
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
  const config = loadConfig(
    { SVC_LOG_LEVEL: 'silent', ...env },
    {
      // Every answer is checked against its operation's declared response schema.
      dataDir,
      rateLimitRps: 1e6,
      rateLimitBurst: 1e6,
      checkResponses: true,
      ...pg,
      ...overrides,
      upstreams: { ...closed, ...base.upstreams, ...overrides.upstreams },
    },
  );
  const service = await openService(config, { materializers: opts.materializers, now: opts.now });
  const app = await buildApp(service);
  await app.ready();
  return {
    app,
    service,
    dataDir,
    driver,
    async close() {
      await app.close();
      await service.close();
      if (!overrides.dataDir) rmSync(dataDir, { recursive: true, force: true });
      // A responder reopened over a data directory the test keeps keeps its schema too; the
      // test runner drops what such tests leave (route schemas are named tr_*).
      if (schema && !overrides.databaseSchema && !overrides.dataDir) await dropSchema(schema).catch(() => undefined);
    },
  };
}
