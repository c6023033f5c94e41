import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { attest, paramRoutesApp, post, vec } from './helpers.js';

let t: TestApp;
const op = makeAttester('reads-nowrite-operator');
const A = P.cellOf(-5, -50);
const B = P.cellOf(-5.0001, -50);
let cids: string[];

before(async () => {
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [] });
  cids = await attest(t, op, [
    { kind: 'primary', cell: A, band: 'indices.ndvi', tslot: 680, value: 0.4, unit: 'unitless', signed_at: '2025-11-09T10:00:00Z' },
    { kind: 'primary', cell: B, band: 'indices.ndvi', tslot: 680, value: 0.5, unit: 'unitless' },
    { kind: 'primary', cell: A, band: 'geotessera', tslot: 54, value: vec(1), unit: 'unitless' },
    { kind: 'primary', cell: A, band: 'geotessera', tslot: 55, value: vec(2), unit: 'unitless' },
  ]);
});
after(async () => t.close());

describe('reads never modify facts', () => {
  it('the log size, fact count and every stored body are unchanged by any read that does not materialize', async () => {
    const before = { size: await t.service.store.log.size(), stats: await t.service.store.stats() };
    const bodies = await Promise.all(cids.map(async (c) => JSON.stringify((await t.service.store.getFact(c))!.body)));
    const params = await paramRoutesApp(t);
    const calls: Array<[string, unknown]> = [
      ['/v1/recall_many', { cells: [A, B], bands: ['indices.ndvi', 'geotessera'] }],
      ['/v1/recall_polygon', { cells: [A, B], bands: ['indices.ndvi'] }],
      ['/v1/query_region', { geometry: `cells:${A},${B}`, bands: ['indices.ndvi'] }],
      ['/v1/query_region', { bbox: [-50.01, -5.01, -49.99, -4.99], bands: ['indices.ndvi'] }],
      ['/v1/fetch', { cid: cids[0] }],
      ['/v1/trajectory', { cell: A, band: 'geotessera', window: [0, 56 * 31_536_000] }],
      ['/v1/diff', { cell: A, band: 'geotessera', tslot_a: 54, tslot_b: 55 }],
      ['/v1/compare', { a: A, b: B }],
      ['/v1/find_similar', { key: A }],
      ['/v1/state_diff', { cell: A, tslot_a: 54, tslot_b: 55 }],
      ['/v1/compare_bands', { cell: A, a: 'geotessera', b: 'geotessera', tslot_a: 54 }],
      ['/v1/verify', { cell: A, claim: { band: 'indices.ndvi', op: 'gt', value: 0.3, tslot: 680 }, mode: 'fast' }],
      ['/v1/memory_token', { fact_cid: cids[0] }],
      ['/v1/memory_token/resolve', { token: `svc:fact:${A}:${cids[0]}` }],
      ['/v1/memory_bundle', { fact_cids: cids }],
    ];
    for (const [url, body] of calls) {
      const r = await post(t, url, body);
      assert.equal(r.status, 200, `${url}: ${JSON.stringify(r.body)}`);
    }
    assert.equal((await params.inject({ method: 'GET', url: `/v1/cells/${A}` })).statusCode, 200);
    await params.close();
    assert.equal(await t.service.store.log.size(), before.size);
    const stats = await t.service.store.stats();
    assert.equal(stats.facts, before.stats.facts);
    const after = await Promise.all(cids.map(async (c) => JSON.stringify((await t.service.store.getFact(c))!.body)));
    assert.deepEqual(after, bodies);
  });
});
