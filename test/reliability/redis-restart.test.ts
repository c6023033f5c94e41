/**
 * Issue 13 item 1, end to end: two responders of one PostgreSQL + Redis deployment, Redis
 * restarted empty between a warm read and a write. The probe saw the pre-outage answer served
 * again (was_cached true, fresh receipt) through recall, recall_many and query_region; every one
 * of them must now serve the newer fact.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import type { RedisCache } from '../../src/store/cache/redis-cache.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../store/support/pg-env.js';
import { redisServerSkip, startPrivateRedis, type PrivateRedis } from '../store/support/redis-server.js';

describe('a Redis restart never revives a pre-restart answer (two responders over HTTP)', { skip: pgSkip || redisServerSkip }, () => {
  const op = makeAttester('redis-restart-operator');
  const schema = randomSchema();
  let redis: PrivateRedis;
  let writer: TestApp;
  let reader: TestApp;
  const X = P.cellOf(30 + Math.random(), 60 + Math.random());
  const SLOT = P.currentTslot('medium');
  const ndvi = (value: number) => ({ kind: 'primary', cell: X, band: 'indices.ndvi', tslot: SLOT, value, unit: 'unitless' });
  const post = async (t: TestApp, url: string, payload: unknown) => {
    const r = await t.app.inject({ method: 'POST', url, payload: payload as object });
    assert.equal(r.statusCode, 200, r.body);
    return r.json();
  };
  const attest = async (value: number): Promise<string> => (await post(writer, '/v1/attest', op.batch([ndvi(value)], writer.service.manifests))).fact_cids[0];
  /** What each read path serves for X: the fact cids, and whether the answer came from the cache. */
  const readAll = async () => {
    const recall = await post(reader, '/v1/recall', { cell: X, bands: ['indices.ndvi'] });
    const many = await post(reader, '/v1/recall_many', { cells: [X], bands: ['indices.ndvi'] });
    const region = await post(reader, '/v1/query_region', { geometry: X, bands: ['indices.ndvi'] });
    return {
      recall: recall.facts.map((f: { fact_cid: string }) => f.fact_cid),
      recall_cached: recall.receipt.cost.was_cached,
      many: many.by_cell[X].facts.map((f: { fact_cid: string }) => f.fact_cid),
      region: region.by_band['indices.ndvi'].fact_cids,
    };
  };
  const reconnected = async () => {
    for (const t of [writer, reader]) assert.ok(await (t.service.store.cache as RedisCache).ready(5000), 'the responder reconnects to Redis');
  };

  before(async () => {
    redis = await startPrivateRedis();
    const config = { attesterKeys: [op.publicKey], databaseUrl: pgUrl(), databaseSchema: schema, redisUrl: redis.url };
    writer = await build(config, {}, { materializers: [] });
    reader = await build(config, {}, { materializers: [] });
  });
  after(async () => {
    await Promise.all([writer, reader].map((t) => t?.close()));
    await dropSchema(schema).catch(() => undefined);
    await redis?.stop();
  });

  it('recall, recall_many and query_region serve the fact written after the restart', async () => {
    const first = await attest(0.25);
    assert.deepEqual((await readAll()).recall, [first]);
    const warm = await readAll(); // everything is now warm on the reader
    assert.equal(warm.recall_cached, true);
    assert.deepEqual([warm.recall, warm.many, warm.region], [[first], [first], [first]]);

    await redis.restart(); // empty: no persistence
    await reconnected();
    const second = await attest(0.75);
    const after = await readAll();
    assert.deepEqual({ recall: after.recall, many: after.many, region: after.region }, { recall: [second], many: [second], region: [second] }, 'a pre-restart answer came back');
    // A further write keeps invalidating (the counter must not walk back onto the old numbers).
    const third = await attest(0.5);
    const later = await readAll();
    assert.deepEqual([later.recall, later.many, later.region], [[third], [third], [third]]);
  });
});
