/**
 * Short-lived state beside the log (contract.ts, TransientStore) on both drivers: a claim is
 * good once until it expires, even across a reopen and between two stores sharing PostgreSQL;
 * kept values expire; nothing of it enters the log.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../../src/store/contract.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { logOpener } from './support/log-factory.js';
import { dropSchema, pgConfig, pgSkip, randomSchema } from './support/pg-env.js';
import { testSigner } from './support/facts.js';

const signer = testSigner();
let clockMs = Date.parse('2026-11-26T12:00:00Z');
const now = () => new Date(clockMs);
const quiet = () => undefined;

function suite(driver: 'sqlite' | 'postgres') {
  describe(`transient state (${driver})`, { skip: driver === 'postgres' ? pgSkip : false }, () => {
    let open: () => Promise<Store>;
    let a: Store;
    let b: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      if (driver === 'sqlite') {
        const dir = mkdtempSync(join(tmpdir(), 'svc-transients-'));
        const logs = await logOpener(signer);
        open = async () => createSqliteStore({ dataDir: dir, scanCellLimit: 100 }, await logs.open(dir), { logger: quiet, now });
        cleanup = async () => rmSync(dir, { recursive: true, force: true });
      } else {
        const schema = randomSchema();
        open = () => createPostgresStore(pgConfig(), signer, { schema, logger: quiet, now });
        cleanup = () => dropSchema(schema);
      }
      a = await open();
    });
    after(async () => {
      await a?.close();
      await b?.close();
      await cleanup?.();
    });

    it('claimOnce is true once, false for a replay until the expiry, then true again', async () => {
      const exp = clockMs + 60_000;
      assert.equal(await a.transients.claimOnce('statement:test', 'abc', exp), true);
      assert.equal(await a.transients.claimOnce('statement:test', 'abc', exp), false);
      assert.equal(await a.transients.claimOnce('statement:other', 'abc', exp), true, 'namespaces are apart');
      clockMs += 59_000;
      assert.equal(await a.transients.claimOnce('statement:test', 'abc', exp), false);
      clockMs += 1_000;
      assert.equal(await a.transients.claimOnce('statement:test', 'abc', clockMs + 60_000), true, 'an expired claim is free again');
    });

    it('a claim survives a reopen (and, on PostgreSQL, holds at a second store); the log is untouched', async () => {
      const size = await a.log.size();
      assert.equal(await a.transients.claimOnce('statement:test', 'durable', clockMs + 60_000), true);
      assert.equal(await a.log.size(), size);
      if (driver === 'postgres') {
        b = await open();
        assert.equal(await b.transients.claimOnce('statement:test', 'durable', clockMs + 60_000), false);
      }
      await a.close();
      a = await open();
      assert.equal(await a.transients.claimOnce('statement:test', 'durable', clockMs + 60_000), false);
    });

    it('put and get keep a value until it expires; concurrent claims let exactly one through', async () => {
      await a.transients.put('state', 'k1', '{"x":1}', clockMs + 10_000);
      assert.equal(await a.transients.get('state', 'k1'), '{"x":1}');
      assert.equal(await a.transients.get('state', 'nope'), null);
      clockMs += 10_000;
      assert.equal(await a.transients.get('state', 'k1'), null);
      const got = await Promise.all(Array.from({ length: 20 }, () => a.transients.claimOnce('statement:race', 'same', clockMs + 5_000)));
      assert.equal(got.filter(Boolean).length, 1);
    });
  });
}

suite('sqlite');
suite('postgres');
