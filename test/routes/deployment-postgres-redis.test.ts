/**
 * The PostgreSQL + Redis deployment, end to end through the HTTP app: two responders of one
 * deployment (one schema, one Redis) and a second deployment on the same servers (another
 * schema). What one responder acknowledges, the other serves at once (its warm answers end with
 * the cell's generation in Redis); nothing of one deployment is ever served by the other.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../store/support/pg-env.js';

const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? '';
const redisSkip = REDIS_URL === '' && process.env.SVC_TEST_REQUIRE_SERVICES !== '1' ? 'SVC_TEST_REDIS_URL not set: the Redis deployment tests need a server' : false;
const skip = pgSkip || redisSkip;

describe('PostgreSQL + Redis deployment over HTTP', { skip }, () => {
  const op = makeAttester('deployment-pg-redis-operator');
  const schemaA = randomSchema();
  const schemaB = randomSchema();
  let a1: TestApp;
  let a2: TestApp;
  let b: TestApp;
  const X = P.cellOf(45.5 + Math.random(), 9 + Math.random()); // fresh per run: Redis outlives schemas
  const post = async (t: TestApp, url: string, payload: unknown, headers: Record<string, string> = {}) => {
    const r = await t.app.inject({ method: 'POST', url, payload: payload as object, headers });
    return { status: r.statusCode, body: r.body ? r.json() : null, headers: r.headers };
  };
  const attest = async (t: TestApp, facts: Record<string, unknown>[]) => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch(facts, t.service.manifests) });
    assert.equal(r.statusCode, 200, r.body);
    return r.json().fact_cids as string[];
  };
  // The current slot: an older one is due for refresh, and a read that tries to refresh is never reused warm.
  const SLOT = P.currentTslot('medium');
  const ndvi = (value: number) => ({ kind: 'primary', cell: X, band: 'indices.ndvi', tslot: SLOT, value, unit: 'unitless' });

  before(async () => {
    if (REDIS_URL === '') throw new Error('SVC_TEST_REQUIRE_SERVICES=1 but SVC_TEST_REDIS_URL is not set');
    const deployment = (schema: string) => ({ attesterKeys: [op.publicKey], databaseUrl: pgUrl(), databaseSchema: schema, redisUrl: REDIS_URL });
    a1 = await build(deployment(schemaA), {}, { materializers: [] });
    a2 = await build(deployment(schemaA), {}, { materializers: [] });
    b = await build(deployment(schemaB), {}, { materializers: [] });
  });
  after(async () => {
    await Promise.all([a1, a2, b].map((t) => t?.close()));
    await Promise.all([dropSchema(schemaA), dropSchema(schemaB)]);
  });

  it('runs on the shared servers', () => {
    for (const t of [a1, a2, b]) assert.equal(t.service.store.driver, 'postgres');
    assert.notEqual(a1.service.keys.publicKeyB32, a2.service.keys.publicKeyB32, 'each responder signs with its own key');
  });

  it("a fact one responder acknowledges is served by the other; a newer version ends the other's warm answer at once", async () => {
    const [first] = await attest(a1, [ndvi(0.25)]);
    const r1 = await post(a2, '/v1/recall', { cell: X, bands: ['indices.ndvi'] });
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    assert.deepEqual(
      r1.body.facts.map((f: any) => f.fact_cid),
      [first],
    );
    const warm = await post(a2, '/v1/recall', { cell: X, bands: ['indices.ndvi'] });
    assert.equal(warm.body.receipt.cost.was_cached, true, 'the repeat is served warm');
    assert.equal(warm.headers.etag, r1.headers.etag);

    const [second] = await attest(a1, [ndvi(0.75)]);
    const r2 = await post(a2, '/v1/recall', { cell: X, bands: ['indices.ndvi'] }, { 'if-none-match': String(r1.headers.etag) });
    assert.equal(r2.status, 200, 'the old ETag no longer matches');
    assert.deepEqual(
      r2.body.facts.map((f: any) => [f.fact_cid, f.value]),
      [[second, 0.75]],
    );
    assert.notEqual(r2.headers.etag, r1.headers.etag);
    assert.ok(P.verifyReceipt(r2.body.receipt, { publicKey: a2.service.keys.publicKeyB32 }).valid);
    // Each served fact carries a receipt of the responder that served it, not of the one that wrote it.
    for (const f of [...r1.body.facts, ...r2.body.facts]) assert.ok(P.verifyReceipt(f.receipt, { publicKey: a2.service.keys.publicKeyB32 }).valid, f.fact_cid);
  });

  it('another deployment on the same PostgreSQL and Redis serves none of it', async () => {
    const r = await post(b, '/v1/recall', { cell: X, bands: ['indices.ndvi'] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.facts, [], JSON.stringify(r.body.facts));
    assert.equal((await b.service.store.stats()).facts, 0);
    const f = await post(b, '/v1/fetch', { cell: X, band: 'indices.ndvi', tslot: SLOT });
    assert.equal(f.body.fact, null, 'a fact of another deployment is not fetched either');
    assert.equal(f.body.materialize_notes[0].status, 'skipped');
  });

  it('the other reads answer on this deployment too, with receipts that verify and proofs that reach the log', async () => {
    const key = a2.service.keys.publicKeyB32;
    const ok = (r: { status: number; body: any }) => {
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(P.verifyReceipt(r.body.receipt ?? r.body.by_cell?.[X]?.receipt, { publicKey: key }).valid, JSON.stringify(r.body).slice(0, 300));
      return r.body;
    };
    ok(await post(a2, '/v1/recall_many', { cells: [X], bands: ['indices.ndvi'] }));
    ok(await post(a2, '/v1/query_region', { geometry: X, bands: ['indices.ndvi'] }));
    const series = ok(await post(a2, '/v1/trajectory', { cell: X, band: 'indices.ndvi', window: [0, 2 ** 31] }));
    assert.equal(series.receipt.fact_cids.length, 1, 'the newest version per tslot');
    ok(await post(a2, '/v1/verify', { cell: X, claim: { band: 'indices.ndvi', op: 'gt', value: 0.5, tslot: SLOT } }));
    const fetched = ok(await post(a2, '/v1/fetch', { cell: X, band: 'indices.ndvi', tslot: SLOT }));
    const cid = fetched.fact?.fact_cid;
    assert.ok(cid, JSON.stringify(fetched).slice(0, 300));
    const token = await post(a2, '/v1/memory_token', { fact_cid: cid });
    assert.equal(token.status, 200, JSON.stringify(token.body));
    const resolved = await post(a1, '/v1/memory_token/resolve', { token: token.body.token });
    assert.equal(resolved.status, 200, 'a token minted by one responder resolves on the other');
  });
});
