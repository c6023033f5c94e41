import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { build, type TestApp } from '../../support/app.js';
import { TokenBuckets } from '../../../src/api/rate-limit.js';

describe('per-IP token bucket (spec part 8)', () => {
  let t: TestApp;
  before(async () => {
    t = await build({ rateLimitRps: 10, rateLimitBurst: 5 });
  });
  after(async () => t.close());

  it('serves the burst, then answers 429 rate_limited with Retry-After: 1 and retry_after', async () => {
    const statuses: number[] = [];
    let last: any;
    for (let i = 0; i < 8; i++) {
      const r = await t.app.inject({ method: 'GET', url: '/v1/grid_info', remoteAddress: '10.0.0.1' });
      statuses.push(r.statusCode);
      if (r.statusCode === 429) last = r;
    }
    assert.deepEqual(statuses.slice(0, 5), [200, 200, 200, 200, 200]);
    assert.ok(statuses.slice(5).includes(429));
    assert.equal(last.headers['retry-after'], '1');
    assert.equal(last.json().code, 'rate_limited');
    assert.equal(last.json().retry_after, 1);
    assert.equal(last.json().schema, 'svc.error.v1');
  });

  it('keeps addresses apart and never limits /health', async () => {
    const other = await t.app.inject({ method: 'GET', url: '/v1/grid_info', remoteAddress: '10.0.0.2' });
    assert.equal(other.statusCode, 200);
    for (let i = 0; i < 20; i++) assert.equal((await t.app.inject({ method: 'GET', url: '/health', remoteAddress: '10.0.0.1' })).statusCode, 200);
  });

  it('refills continuously: 600/min sustained', () => {
    let now = 0;
    const b = new TokenBuckets({ rps: 10, burst: 120, now: () => now });
    let served = 0;
    for (let ms = 0; ms < 60_000; ms += 10) {
      now = ms;
      if (b.take('ip')) served++;
    }
    assert.ok(served >= 600 + 120 - 2 && served <= 600 + 120 + 1, `served ${served} in one minute`);
  });
});

describe('gateway timeout (SVC_TIMEOUT_SECS)', () => {
  it('is clamped to 1..600', async () => {
    const { loadConfig } = await import('../../../src/config.js');
    assert.equal(loadConfig({ SVC_TIMEOUT_SECS: '0' }).timeoutSecs, 1);
    assert.equal(loadConfig({ SVC_TIMEOUT_SECS: '9999' }).timeoutSecs, 600);
    assert.equal(loadConfig({}).timeoutSecs, 40);
    assert.equal(loadConfig({ SVC_MATERIALIZER_TIMEOUT_SECS: '1' }).materializerTimeoutSecs, 2);
    assert.equal(loadConfig({ SVC_MATERIALIZER_TIMEOUT_SECS: '1000' }).materializerTimeoutSecs, 240);
  });
  it('recall stops upstream work at the gateway deadline: a timeout note, not a hang', async () => {
    const { fakeConnector, slow } = await import('../../support/fake-connector.js');
    const t = await build(
      { timeoutSecs: 1, materializerTimeoutSecs: 30 },
      {},
      { materializers: [fakeConnector(['copdem30m.elevation_mean'], { 'copdem30m.elevation_mean': slow(3000, { status: 'value', value: 1, provenance: { source: 'x' }, fn: 'x@1' }) })] },
    );
    try {
      const { cellOf } = await import('../../../src/protocol/cell64.js');
      const started = Date.now();
      const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell: cellOf(3, 3), bands: ['copdem30m.elevation_mean'] } });
      assert.ok(Date.now() - started < 2500);
      assert.equal(r.statusCode, 200);
      assert.equal(r.json().materialize_notes[0].reason_class, 'timeout');
    } finally {
      await t.close();
    }
  });
  it('an operation that outlives it answers compute_timeout (504)', async () => {
    const { runOperation } = await import('../../../src/api/routes/operations.js');
    const t = await build({ timeoutSecs: 1 });
    try {
      const never = { name: 'never', method: 'POST', path: '/x', summary: '', tags: [], input: {}, mcp: false, run: () => new Promise(() => {}) } as const;
      await assert.rejects(runOperation(t.service, never as any, {}, {}, 'rest'), (e: any) => e.code === 'compute_timeout' && e.httpStatus === 504);
    } finally {
      await t.close();
    }
  });
});

describe('/v1/limits lists the quotas of docs/security.md as configured', () => {
  it('signing, witness, bundle and statement windows, the ask retention', async () => {
    const t = await build({ signingQuota: { count: 7, windowSecs: 60 } }, { SVC_ASK_STATE_RETENTION_SECS: '3600' });
    try {
      const q = (await t.app.inject({ method: 'GET', url: '/v1/limits' })).json().quotas;
      assert.deepEqual(q.responder_signed_records_per_address, { count: 7, window_s: 60 });
      assert.equal(q.ask_state_retention_s, 3600);
      assert.equal(q.statement_ttl_s, 900);
      assert.deepEqual(q.unlisted_witness_cosignatures_per_address, { count: 60, window_s: 3600 });
    } finally {
      await t.close();
    }
  });
});

describe('/v1/limits names every in-process cache with its bounds', () => {
  it('the hot cache and the COG caches, with their sizes', async () => {
    const t = await build();
    try {
      const caches = (await t.app.inject({ method: 'GET', url: '/v1/limits' })).json().caches;
      assert.deepEqual(caches.hot_cache, { max: 10_000 });
      assert.deepEqual(caches.hot_cache_generations, { max: 100_000 });
      assert.deepEqual(caches.cog_headers, { max: 256 });
      assert.deepEqual(caches.cog_blocks, { max: 64, max_bytes: 32 * 1024 * 1024 });
      assert.deepEqual(caches.sentinel2_scenes, { max: 2048, ttl_ms: 600_000 });
      for (const [name, b] of Object.entries<any>(caches)) assert.ok(Number.isSafeInteger(b.max) && b.max > 0, `${name}: ${JSON.stringify(b)}`);
    } finally {
      await t.close();
    }
  });
});
