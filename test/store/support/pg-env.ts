/**
 * PostgreSQL test environment: the skip rule (skip only when no connection string is set, and
 * never under SVC_TEST_REQUIRE_SERVICES=1), throwaway schemas, and a store factory for them.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Store, StoreConfig, TreeHeadSigner } from '../../../src/store/contract.js';
import { createPostgresStore, type PostgresStoreOptions } from '../../../src/store/postgres/postgres-store.js';

export const PG_SKIP_REASON = 'SVC_TEST_DATABASE_URL not set: PostgreSQL tests need a server';

/** The test database URL ('' when unset). */
export const PG_URL = process.env.SVC_TEST_DATABASE_URL ?? '';

/** True when CI demands that service-backed tests run (a missing server is then a failure). */
export const PG_REQUIRED = process.env.SVC_TEST_REQUIRE_SERVICES === '1';

/**
 * `skip` option for PostgreSQL suites: the reason when no URL is set and services are optional;
 * false otherwise, so an unreachable server (or a missing URL under REQUIRE) fails the tests.
 */
export const pgSkip: string | false = PG_URL === '' && !PG_REQUIRED ? PG_SKIP_REASON : false;

/** The URL, or a loud failure when services are required but none is configured. */
export function pgUrl(): string {
  if (PG_URL === '') throw new Error('SVC_TEST_REQUIRE_SERVICES=1 but SVC_TEST_DATABASE_URL is not set');
  return PG_URL;
}

/** A fresh schema name nobody else uses. */
export function randomSchema(): string {
  return `t_${randomBytes(8).toString('hex')}`;
}

/** StoreConfig for the test database. */
export function pgConfig(url = pgUrl()): StoreConfig {
  return { dataDir: '/nonexistent-postgres-mode', databaseUrl: url, scanCellLimit: 10_000 };
}

/** Drop `schema` and everything in it. */
export async function dropSchema(schema: string, url = pgUrl()): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await c.end();
  }
}

/** Run one statement against the test database (inspection from tests). */
export async function pgQuery<R extends pg.QueryResultRow>(text: string, values: unknown[] = [], url = pgUrl()): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(text, values)).rows;
  } finally {
    await c.end();
  }
}

/** A store in a fresh schema; cleanup closes it and drops the schema. */
export async function openPgStore(
  signer: TreeHeadSigner,
  opts: PostgresStoreOptions & { config?: Partial<StoreConfig> } = {},
): Promise<{ store: Store; schema: string; cleanup: () => Promise<void> }> {
  const schema = opts.schema ?? randomSchema();
  const store = await createPostgresStore({ ...pgConfig(), ...opts.config }, signer, { logger: () => undefined, ...opts, schema });
  return {
    store,
    schema,
    cleanup: async () => {
      await store.close();
      await dropSchema(schema);
    },
  };
}
