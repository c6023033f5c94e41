/**
 * Readiness (/ready) and the hot cache on /health: the embedded deployment, one with a
 * reachable Redis, and one whose Redis is down (reads then go to the store).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';

const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? '';
const redisSkip = REDIS_URL === '' && process.env.SVC_TEST_REQUIRE_SERVICES !== '1' ? 'SVC_TEST_REDIS_URL not set: the Redis readiness test needs a server' : false;
/** A closed loopback port: connecting fails at once. */
const DEAD_REDIS = 'redis://127.0.0.1:1';

const get = async (t: TestApp, url: string) => {
  const r = await t.app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.json(), headers: r.headers };
};

describe('readiness without Redis', () => {
  let t: TestApp;
  before(async () => {
    t = await build();
  });
  after(async () => t.close());

  it('GET /ready: the store answers, Redis is not configured', async () => {
    const r = await get(t, '/ready');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { ready: true, checks: { store: 'ok', redis: 'not_configured' } });
  });

  it('GET /health shows the in-process cache and keeps its other fields', async () => {
    const r = await get(t, '/health');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.cache, { kind: 'memory', status: 'ok' });
    assert.equal(r.body.status, 'ok');
    assert.equal(r.body.driver, t.service.store.driver);
    assert.deepEqual(r.body.storage, { status: 'ok' });
    assert.equal(r.body.responder, t.service.keys.publicKeyB32);
  });
});

describe('readiness with a reachable Redis', { skip: redisSkip }, () => {
  let t: TestApp;
  before(async () => {
    if (REDIS_URL === '') throw new Error('SVC_TEST_REQUIRE_SERVICES=1 but SVC_TEST_REDIS_URL is not set');
    t = await build({ redisUrl: REDIS_URL });
  });
  after(async () => t?.close());

  it('GET /ready and /health report Redis ok', async () => {
    const r = await get(t, '/ready');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { ready: true, checks: { store: 'ok', redis: 'ok' } });
    assert.deepEqual((await get(t, '/health')).body.cache, { kind: 'redis', status: 'ok' });
  });
});

describe('readiness with Redis down', () => {
  const op = makeAttester('ready-redis-down');
  let t: TestApp;
  before(async () => {
    t = await build({ redisUrl: DEAD_REDIS, attesterKeys: [op.publicKey] }, {}, { materializers: [] });
  });
  after(async () => t.close());

  it('GET /ready is 503 overloaded naming redis', async () => {
    const r = await get(t, '/ready');
    assert.equal(r.status, 503);
    assert.equal(r.body.code, 'overloaded');
    assert.equal(r.body.details.component, 'redis');
    assert.deepEqual(r.body.details.checks, { store: 'ok', redis: 'unreachable' });
  });

  it('GET /health stays 200 and says the cache is unreachable', async () => {
    const r = await get(t, '/health');
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'ok');
    assert.deepEqual(r.body.cache, { kind: 'redis', status: 'unreachable' });
  });

  it('writes and reads still work from the store', async () => {
    const cell = P.cellOf(45.5, 9.2);
    const fact = { kind: 'primary', cell, band: 'indices.ndvi', tslot: P.currentTslot('medium'), value: 0.4, unit: 'unitless' };
    const w = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch([fact], t.service.manifests) });
    assert.equal(w.statusCode, 200, w.body);
    const [cid] = w.json().fact_cids as string[];
    const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell, bands: ['indices.ndvi'] } });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(
      r.json().facts.map((f: { fact_cid: string }) => f.fact_cid),
      [cid],
    );
  });
});
