/**
 * The store-level facilities beside the log on both drivers: content-addressed documents
 * (contract.ts, DocumentStore: the first text under a cid stays; what one store wrote a reopened
 * SQLite store, or a second store over the same PostgreSQL schema, reads) and the geocoder cache
 * (`store.geocache`: answers expire, replace, and are shared the same way). Nothing of either
 * enters the log.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../../src/store/contract.js';
import { MAX_DOCUMENT_BYTES } from '../../src/store/documents.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { logOpener } from './support/log-factory.js';
import { dropSchema, pgConfig, pgQuery, pgSkip, randomSchema } from './support/pg-env.js';
import { testSigner } from './support/facts.js';

const signer = testSigner();
const now = () => new Date('2026-11-26T12:00:00Z');
const quiet = () => undefined;

function suite(driver: 'sqlite' | 'postgres') {
  describe(`documents and geocache (${driver})`, { skip: driver === 'postgres' ? pgSkip : false }, () => {
    let open: () => Promise<Store>;
    let a: Store;
    let b: Store | undefined;
    let dir = '';
    let schema = '';
    before(async () => {
      if (driver === 'sqlite') {
        dir = mkdtempSync(join(tmpdir(), 'svc-documents-'));
        const logs = await logOpener(signer);
        open = async () => createSqliteStore({ dataDir: dir, scanCellLimit: 100 }, await logs.open(dir), { logger: quiet, now });
      } else {
        schema = randomSchema();
        open = () => createPostgresStore(pgConfig(), signer, { schema, logger: quiet, now });
      }
      a = await open();
    });
    after(async () => {
      await a?.close();
      await b?.close();
      if (driver === 'sqlite') rmSync(dir, { recursive: true, force: true });
      else await dropSchema(schema);
    });

    /** A second responder: on PostgreSQL another store over the schema; on SQLite the store reopened. */
    async function other(): Promise<Store> {
      if (driver === 'postgres') {
        b ??= await open();
        return b;
      }
      await a.close();
      a = await open();
      return a;
    }

    it('putOnce stores a document once: the first text stays, kinds are apart, unknown is null', async () => {
      assert.equal(await a.documents.putOnce('bundle', 'cid1', '{"v":1}'), 'stored');
      assert.equal(await a.documents.putOnce('bundle', 'cid1', '{"v":2}'), 'existing');
      assert.equal(await a.documents.get('bundle', 'cid1'), '{"v":1}');
      assert.equal(await a.documents.get('other', 'cid1'), null);
      assert.equal(await a.documents.get('bundle', 'nope'), null);
      assert.equal(await a.documents.putOnce('other', 'cid1', 'x'), 'stored');
      assert.equal(await a.documents.get('other', 'cid1'), 'x');
      const text = 'é'.repeat(1000);
      assert.equal(await a.documents.putOnce('bundle', 'unicode', text), 'stored');
      assert.equal(await a.documents.get('bundle', 'unicode'), text);
    });

    it('concurrent puts of one cid store it exactly once', async () => {
      const got = await Promise.all(Array.from({ length: 20 }, (_, i) => a.documents.putOnce('bundle', 'race', `text ${i}`)));
      assert.equal(got.filter((x) => x === 'stored').length, 1);
      assert.match((await a.documents.get('bundle', 'race'))!, /^text \d+$/);
    });

    it('refuses malformed keys and oversized texts before writing anything', async () => {
      await assert.rejects(a.documents.putOnce('Bundle', 'c', 'x'), TypeError);
      await assert.rejects(a.documents.putOnce('bundle', 'a/b', 'x'), TypeError);
      await assert.rejects(a.documents.putOnce('bundle', 'c'.repeat(129), 'x'), TypeError);
      await assert.rejects(a.documents.get('bundle', ''), TypeError);
      await assert.rejects(a.documents.putOnce('bundle', 'big', 'x'.repeat(MAX_DOCUMENT_BYTES + 1)), RangeError);
      assert.equal(await a.documents.get('bundle', 'big'), null);
    });

    it('what one store wrote, another responder (PostgreSQL) or the reopened store (SQLite) reads; the log is untouched', async () => {
      const size = await a.log.size();
      assert.equal(await a.documents.putOnce('bundle', 'shared', 'from a'), 'stored');
      const o = await other();
      assert.equal(await o.documents.get('bundle', 'shared'), 'from a');
      assert.equal(await o.documents.putOnce('bundle', 'shared', 'from o'), 'existing');
      assert.equal(await o.documents.get('bundle', 'cid1'), '{"v":1}');
      assert.equal(await o.log.size(), size);
      if (driver === 'postgres') {
        assert.equal(await o.documents.putOnce('bundle', 'from-b', 'b'), 'stored');
        assert.equal(await a.documents.get('bundle', 'from-b'), 'b');
      }
    });

    if (driver === 'sqlite') {
      it('documents live in documents.sqlite: rebuilding the index from the log keeps them', async () => {
        assert.ok(existsSync(join(dir, 'documents.sqlite')));
        await a.close();
        for (const f of ['index.sqlite', 'index.sqlite-wal', 'index.sqlite-shm']) rmSync(join(dir, f), { force: true });
        a = await open();
        assert.equal(await a.documents.get('bundle', 'shared'), 'from a');
      });
    }

    it('geocache: put and get, expiry at stored_at + ttl, replacement', async () => {
      assert.equal(a.geocache.driver, driver);
      assert.equal(await a.geocache.get('paris'), undefined);
      await a.geocache.put('paris', { source: 'photon', payload: { lat: 48.85, lng: 2.35 }, stored_at: 1000 }, 500);
      assert.deepEqual(await a.geocache.get('paris', 1200), { source: 'photon', payload: { lat: 48.85, lng: 2.35 }, stored_at: 1000 });
      assert.equal(await a.geocache.get('paris', 1500), undefined, 'expired at stored_at + ttl');
      await a.geocache.put('paris', { source: 'nominatim', payload: { lat: 48.86 }, stored_at: 2000 }, 500);
      assert.deepEqual((await a.geocache.get('paris', 2100))?.payload, { lat: 48.86 });
      const at = Date.now();
      await a.geocache.put('nowhere', { source: 'none', payload: null, stored_at: at }, 60_000);
      assert.deepEqual(await a.geocache.get('nowhere'), { source: 'none', payload: null, stored_at: at }, 'a cached miss');
    });

    it('geocache answers are shared with another responder (PostgreSQL) or survive a reopen (SQLite); expired rows are pruned', async () => {
      const t = Date.now();
      await a.geocache.put('oymyakon', { source: 'photon', payload: { country: 'RU' }, stored_at: t }, 60_000);
      const o = await other();
      assert.deepEqual(await o.geocache.get('oymyakon'), { source: 'photon', payload: { country: 'RU' }, stored_at: t });
      // 'paris' expired at 2500 by the writers' clocks: a later write pruned it.
      await o.geocache.put('lima', { source: 'photon', payload: {}, stored_at: t }, 60_000);
      if (driver === 'postgres') {
        const left = await pgQuery<{ key: string }>(`SELECT key FROM "${schema}".geocache ORDER BY key`);
        assert.deepEqual(
          left.map((r) => r.key),
          ['lima', 'nowhere', 'oymyakon'],
        );
      }
      assert.equal(await o.geocache.get('paris', 2100), undefined, 'pruned');
    });
  });
}

suite('sqlite');
suite('postgres');
