/**
 * The notes limits (docs/memory.md, Limits): a per-key daily quota on note writes, on by default
 * and counted by the store, and a bound on note searches running at once, whose excess is
 * refused at once with retry_after rather than queued.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as P from '../../../src/protocol/index.js';
import { CONFIG_VARS, loadConfig, type Config } from '../../../src/config.js';
import { secondsToUtcMidnight } from '../../../src/primitives/write/attester-quota.js';
import type { NoteCandidate, NoteHit, NoteSearch } from '../../../src/store/memory.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester, type TestAttester } from '../../support/attester.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../../store/support/pg-env.js';

function noteBody(text: string): Record<string, unknown> {
  const value = { text };
  return { kind: 'primary', cell: `svc:entity:${P.anchorId(value)}`, band: 'memory.note', tslot: 0, value, signed_at: '2026-11-20T12:00:00Z' };
}

const inject = async (t: TestApp, url: string, payload: unknown) => {
  const r = await t.app.inject({ method: 'POST', url, payload: payload as object });
  return { status: r.statusCode, body: r.json(), headers: r.headers };
};

for (const driver of ['sqlite', 'postgres'] as const) {
  describe(`per-key note quota (SVC_NOTE_DAILY_QUOTA, ${driver})`, { skip: driver === 'postgres' ? pgSkip : false }, () => {
    const LIMIT = 3;
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-note-quota-'));
    const schemas: string[] = [];
    /** A responder on this driver; the same `schema` is the same store (a restart, or a second responder). */
    const responder = ({ dataDir: dir, ...overrides }: Partial<Config>, schema = randomSchema()) => {
      if (driver === 'sqlite') return build(dir === undefined ? overrides : { ...overrides, dataDir: dir });
      schemas.push(schema);
      return build({ ...overrides, databaseUrl: pgUrl(), databaseSchema: schema });
    };
    const schema = randomSchema();
    let a: TestAttester;
    let t: TestApp;
    before(async () => {
      a = makeAttester('note-quota-a');
      t = await responder({ dataDir, attesterKeys: [a.publicKey], noteDailyQuota: LIMIT }, schema);
    });
    after(async () => {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
      for (const s of new Set(schemas)) await dropSchema(s);
    });

    it('is on by default, generous, configurable and listed', async () => {
      assert.equal(loadConfig({}).noteDailyQuota, 10_000);
      assert.equal(loadConfig({ SVC_NOTE_DAILY_QUOTA: '0' }).noteDailyQuota, undefined, '0 turns it off');
      assert.equal(loadConfig({ SVC_NOTE_DAILY_QUOTA: '50' }).noteDailyQuota, 50);
      assert.throws(() => loadConfig({ SVC_NOTE_DAILY_QUOTA: '-1' }));
      assert.ok(CONFIG_VARS.some((v) => v.name === 'SVC_NOTE_DAILY_QUOTA' && v.default === '10000'));
      const limits = (await t.app.inject({ method: 'GET', url: '/v1/limits' })).json();
      assert.equal(limits.memory.note_daily_quota, LIMIT);
    });

    it('accepts up to the quota, then refuses the whole batch with 429 compute_quota_exceeded and retry_after, writing nothing', async () => {
      const m = t.service.manifests;
      const ok = await inject(t, '/v1/memory/notes', a.batch([noteBody('quota note one'), noteBody('quota note two')], m));
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const over = await inject(t, '/v1/memory/notes', a.batch([noteBody('quota note three'), noteBody('quota note refused')], m));
      assert.equal(over.status, 429, JSON.stringify(over.body));
      assert.equal(over.body.code, 'compute_quota_exceeded');
      assert.ok(Number.isInteger(over.body.retry_after) && over.body.retry_after >= 1 && over.body.retry_after <= 86_400);
      assert.ok(Math.abs(over.body.retry_after - secondsToUtcMidnight(Date.now())) <= 5);
      assert.equal(over.headers['retry-after'], String(over.body.retry_after));
      assert.deepEqual([over.body.details.quota, over.body.details.limit, over.body.details.used, over.body.details.requested], ['notes', LIMIT, 2, 2]);
      const day = new Date().toISOString().slice(0, 10);
      assert.equal(await t.service.store.attesterFactsOn(a.publicKey, day), 2, 'nothing of the refused batch was written');
      const found = await inject(t, '/v1/memory/search', { query: 'refused' });
      assert.deepEqual(found.body.results, []);

      const last = await inject(t, '/v1/memory/notes', a.batch([noteBody('quota note three')], m));
      assert.equal(last.status, 200, 'the quota-th note fits');
      const after = await inject(t, '/v1/memory/notes', a.batch([noteBody('quota note four')], m));
      assert.deepEqual([after.status, after.body.code, after.body.details.used], [429, 'compute_quota_exceeded', LIMIT]);
    });

    it("holds across a restart: the count is the store's", async () => {
      await t.close();
      t = await responder({ dataDir, attesterKeys: [a.publicKey], noteDailyQuota: LIMIT }, schema);
      const r = await inject(t, '/v1/memory/notes', a.batch([noteBody('after restart')], t.service.manifests));
      assert.deepEqual([r.status, r.body.code], [429, 'compute_quota_exceeded']);
    });

    it('counts concurrent batches of one key together', async () => {
      const b = makeAttester('note-quota-b');
      const q = await responder({ attesterKeys: [b.publicKey], noteDailyQuota: 4 });
      try {
        const m = q.service.manifests;
        const sent = await Promise.all([0, 1, 2, 3].map((i) => inject(q, '/v1/memory/notes', b.batch([noteBody(`burst ${i} a`), noteBody(`burst ${i} b`)], m))));
        const statuses = sent.map((r) => r.status).sort();
        assert.deepEqual(statuses, [200, 200, 429, 429], JSON.stringify(sent.map((r) => r.body.code)));
        assert.equal(await q.service.store.attesterFactsOn(b.publicKey, new Date().toISOString().slice(0, 10)), 4);
      } finally {
        await q.close();
      }
    });
  });
}

describe('note searches running at once (SVC_MEMORY_SEARCH_CONCURRENCY)', () => {
  const LIMIT = 2;
  let a: TestAttester;
  let t: TestApp;
  let running = 0;
  let most = 0;
  before(async () => {
    a = makeAttester('search-limit-a');
    t = await build({ attesterKeys: [a.publicKey], memorySearchConcurrency: LIMIT });
    const words = Array.from({ length: 32 }, (_, i) => `word${i}`);
    const notes = Array.from({ length: 40 }, (_, i) => noteBody(`${words.slice(i % 8, (i % 8) + 12).join(' ')} note ${i}`));
    const r = await inject(t, '/v1/memory/notes', a.batch(notes, t.service.manifests));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    // Every store search takes a while and is counted, so searches overlap and the bound shows.
    const memory = t.service.store.memory;
    const slowly =
      <A, R>(read: (q: A) => Promise<R>) =>
      async (q: A): Promise<R> => {
        running++;
        most = Math.max(most, running);
        try {
          await new Promise((resolve) => setTimeout(resolve, 20));
          return await read(q);
        } finally {
          running--;
        }
      };
    memory.searchNotes = slowly<NoteSearch, NoteHit[]>(memory.searchNotes.bind(memory));
    memory.noteCandidates = slowly<NoteSearch, NoteCandidate[]>(memory.noteCandidates.bind(memory));
  });
  after(async () => t.close());

  it('is configurable and listed', async () => {
    assert.equal(loadConfig({}).memorySearchConcurrency, 4);
    assert.equal(loadConfig({ SVC_MEMORY_SEARCH_CONCURRENCY: '16' }).memorySearchConcurrency, 16);
    assert.throws(() => loadConfig({ SVC_MEMORY_SEARCH_CONCURRENCY: '0' }));
    assert.ok(CONFIG_VARS.some((v) => v.name === 'SVC_MEMORY_SEARCH_CONCURRENCY'));
    const limits = (await t.app.inject({ method: 'GET', url: '/v1/limits' })).json();
    assert.equal(limits.memory.search_concurrency, LIMIT);
    assert.equal(limits.memory.search_query_words, 32);
  });

  it('refuses searches past the limit at once with 503 overloaded and retry_after, and never runs more', async () => {
    most = 0;
    const query = Array.from({ length: 32 }, (_, i) => `word${i}`).join(' ');
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => inject(t, '/v1/memory/search', i % 2 ? { query } : { query, vector: [1, 0, 0] })));
    const refused = replies.filter((r) => r.status !== 200);
    assert.ok(refused.length > 0, 'some were refused');
    assert.ok(
      replies.some((r) => r.status === 200 && r.body.results.length > 0),
      'some were answered',
    );
    for (const r of refused) {
      assert.deepEqual([r.status, r.body.code, r.body.retry_after, r.headers['retry-after']], [503, 'overloaded', 1, '1'], JSON.stringify(r.body));
      assert.equal(r.body.details.limit, LIMIT);
    }
    assert.ok(most <= LIMIT, `at most ${LIMIT} searches ran at once (saw ${most})`);
    assert.equal(running, 0);
  });

  it('frees its places whatever the outcome: refused and failed searches leave none taken', async () => {
    for (let i = 0; i < 5; i++) {
      const bad = await inject(t, '/v1/memory/search', { query: 'word1', observed_from: 'not a time' });
      assert.equal(bad.status, 422);
    }
    most = 0;
    const pair = await Promise.all([0, 1].map(() => inject(t, '/v1/memory/search', { query: 'word3 word4' })));
    assert.deepEqual(
      pair.map((r) => r.status),
      [200, 200],
    );
    assert.equal(most, LIMIT);
  });
});
