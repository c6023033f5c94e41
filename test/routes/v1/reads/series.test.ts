import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { fakeConnector, type FakeConnector } from '../../../support/fake-connector.js';
import { bearerFor } from '../../../support/scopes.js';
import { attest, fails, post, vec, verifies } from './helpers.js';

let t: TestApp;
let fake: FakeConnector;
const op = makeAttester('reads-series-operator');
const cell = P.cellOf(-20, 40);
const DAY = 86_400;
let cids: string[];

before(async () => {
  fake = fakeConnector(['copdem30m.elevation_mean']);
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [fake] });
  const base = { kind: 'primary', cell, band: 'weather.temperature_2m', unit: 'degC' };
  cids = await attest(t, op, [
    { ...base, tslot: 20_000, value: 10 },
    { ...base, tslot: 20_001, value: 11 },
    { ...base, tslot: 20_003, value: 14.5 },
  ]);
  // A newer version of tslot 20 001 supersedes the first one.
  cids.push(...(await attest(t, op, [{ ...base, tslot: 20_001, value: 12 }])));
  await attest(t, op, [
    { kind: 'primary', cell, band: 'geotessera', tslot: 54, value: vec(1), unit: 'unitless' },
    { kind: 'primary', cell, band: 'geotessera', tslot: 55, value: vec(2), unit: 'unitless' },
  ]);
});
after(async () => t.close());

describe('POST /v1/fetch', () => {
  it('by cid: the fact, and a receipt carrying its merkle_proof', async () => {
    const r = await post(t, '/v1/fetch', { cid: cids[0] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.fact.fact_cid, cids[0]);
    assert.equal(P.factCid(r.body.fact), cids[0]);
    assert.equal(r.body.fact.value, 10);
    assert.ok(verifies(t, r.body.receipt));
    assert.ok(verifies(t, r.body.fact.receipt));
    assert.equal(r.body.receipt.primitive, 'svc.fetch');
    assert.deepEqual(r.body.receipt.fact_cids, [cids[0]]);
    assert.ok(r.body.receipt.merkle_proof);
  });

  it('unknown cid → 404 cid_not_found; malformed cid → 422; cid with band → 422', async () => {
    fails(await post(t, '/v1/fetch', { cid: 'a'.repeat(52) }), 404, 'cid_not_found', 'cid');
    fails(await post(t, '/v1/fetch', { cid: 'nope' }), 422, 'invalid_argument', 'cid');
    fails(await post(t, '/v1/fetch', { cid: cids[0], band: 'indices.ndvi' }), 422, 'invalid_argument', 'band');
    fails(await post(t, '/v1/fetch', {}), 422, 'invalid_argument', 'cid');
  });

  it('by cell + band: materializes on a miss, then serves the stored fact', async () => {
    const c = P.cellOf(-21, 41);
    const calls = fake.calls.length;
    const r = await post(t, '/v1/fetch', { cell: c, band: 'copdem30m.elevation_mean' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.fact.value, 42.5);
    assert.equal(r.body.materialize_notes[0].status, 'materialized');
    assert.ok(verifies(t, r.body.receipt));
    assert.ok(r.body.receipt.merkle_proof);
    const again = await post(t, '/v1/fetch', { cell: c, band: 'copdem30m.elevation_mean', tslot: 0 });
    assert.equal(again.body.fact.fact_cid, r.body.fact.fact_cid);
    assert.equal(fake.calls.length, calls + 1);
  });

  it('by cell: band required, tslot checked on the band grid, bad cell', async () => {
    fails(await post(t, '/v1/fetch', { cell }), 422, 'invalid_argument', 'band');
    fails(await post(t, '/v1/fetch', { cell, band: 'copdem30m.elevation_mean', tslot: 3 }), 422, 'tslot_mismatch');
    fails(await post(t, '/v1/fetch', { cell: 'defi.zb400.bafi.bab', band: 'indices.ndvi' }), 422, 'invalid_cell');
    fails(await post(t, '/v1/fetch', { cell, band: 'nope.nope' }), 404, 'band_not_in_registry', 'band');
  });
});

describe('POST /v1/trajectory', () => {
  it('stored series over the window: newest version per tslot, never fetches, receipt over the points', async () => {
    const calls = fake.calls.length;
    const size = await t.service.store.log.size();
    const r = await post(t, '/v1/trajectory', { cell, band: 'weather.temperature_2m', window: [20_000 * DAY, 20_003 * DAY + 5] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.points.map((p: any) => [p.tslot, p.value]),
      [
        [20_000, 10],
        [20_001, 12],
        [20_003, 14.5],
      ],
    );
    assert.deepEqual(
      r.body.points.map((p: any) => p.fact_cid),
      [cids[0], cids[3], cids[2]],
    );
    assert.deepEqual(r.body.tslot_range, [20_000, 20_003]);
    assert.equal(r.body.points[0].start_unix, 20_000 * DAY);
    assert.ok(verifies(t, r.body.receipt));
    assert.deepEqual(r.body.receipt.fact_cids, [cids[0], cids[3], cids[2]]);
    assert.equal(fake.calls.length, calls);
    assert.equal(await t.service.store.log.size(), size);
    const part = await post(t, '/v1/trajectory', { cell, band: 'weather.temperature_2m', window: [20_001 * DAY, 20_002 * DAY] });
    assert.deepEqual(
      part.body.points.map((p: any) => p.tslot),
      [20_001],
    );
    const none = await post(t, '/v1/trajectory', { cell, band: 'indices.ndvi', window: [0, 100] });
    assert.deepEqual(none.body.points, []);
    assert.ok(verifies(t, none.body.receipt));
  });

  it('a scope filters the series and is bound into the receipt', async () => {
    const scope = { user_id: 'alice' };
    const r = await post(t, '/v1/trajectory', { cell, band: 'weather.temperature_2m', window: [20_000 * DAY, 20_003 * DAY], scope }, { authorization: await bearerFor(t, op, scope) });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.points, [], 'unscoped facts are not visible to a scoped read');
    assert.deepEqual(r.body.receipt.scope, scope);
    assert.ok(verifies(t, r.body.receipt));
  });

  it('validates cell, band and window', async () => {
    fails(await post(t, '/v1/trajectory', { cell, band: 'weather.temperature_2m' }), 422, 'invalid_argument', 'window');
    fails(await post(t, '/v1/trajectory', { cell, band: 'weather.temperature_2m', window: [5, 1] }), 422, 'invalid_argument', 'window');
    fails(await post(t, '/v1/trajectory', { cell, band: 'weather.temperature_2m', window: [1] }), 422, 'invalid_argument', 'window');
    fails(await post(t, '/v1/trajectory', { cell, band: 'weather.temperature_2m', window: [-1, 5] }), 422, 'invalid_argument', 'window');
    fails(await post(t, '/v1/trajectory', { band: 'weather.temperature_2m', window: [1, 5] }), 422, 'invalid_argument', 'cell');
  });
});

describe('POST /v1/diff', () => {
  it('scalar: delta b − a with both fact_cids in the receipt', async () => {
    const r = await post(t, '/v1/diff', { cell, band: 'weather.temperature_2m', tslot_a: 20_000, tslot_b: 20_003 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.delta, 4.5);
    assert.equal(r.body.percent_change, 45);
    assert.deepEqual([r.body.a.fact_cid, r.body.b.fact_cid], [cids[0], cids[2]]);
    assert.deepEqual(r.body.receipt.fact_cids, [cids[0], cids[2]]);
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(r.body.receipt.primitive, 'svc.diff');
  });

  it('a missing side gives value null, delta null and a note — never 0', async () => {
    const r = await post(t, '/v1/diff', { cell, band: 'weather.temperature_2m', tslot_a: 20_000, tslot_b: 20_002 });
    assert.equal(r.body.delta, null);
    assert.equal(r.body.b.value, null);
    assert.equal(r.body.b.fact_cid, null);
    assert.match(r.body.b.note, /no stored fact/);
    assert.deepEqual(r.body.receipt.fact_cids, [cids[0]]);
    assert.ok(verifies(t, r.body.receipt));
  });

  it('vector: elementwise delta and L2', async () => {
    const r = await post(t, '/v1/diff', { cell, band: 'geotessera', tslot_a: 54, tslot_b: 55 });
    assert.equal(r.body.delta.length, 128);
    const [a, b] = [vec(1), vec(2)];
    assert.ok(Math.abs(r.body.delta[3] - (b[3] - a[3])) < 1e-9);
    const l2 = Math.sqrt(a.reduce((s, x, i) => s + (b[i] - x) ** 2, 0));
    assert.ok(Math.abs(r.body.l2 - l2) < 1e-9);
  });

  it('validates: both tslots required, on the band grid', async () => {
    fails(await post(t, '/v1/diff', { cell, band: 'weather.temperature_2m', tslot_a: 1 }), 422, 'invalid_argument', 'tslot_b');
    fails(await post(t, '/v1/diff', { cell, band: 'copdem30m.elevation_mean', tslot_a: 0, tslot_b: 1 }), 422, 'tslot_mismatch', 'tslot_b');
  });
});
