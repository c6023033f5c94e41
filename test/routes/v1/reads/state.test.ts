import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { fakeConnector } from '../../../support/fake-connector.js';
import { attest, fails, post, vec, verifies } from './helpers.js';

let t: TestApp;
const op = makeAttester('reads-state-operator');
const A = P.cellOf(-20, -40);
const ABSENT = P.cellOf(-21, -41);
const EMPTY = P.cellOf(-22, -42);
const FETCHED = P.cellOf(-23, -43);
const a = vec(1);
const b = vec(2);
let cids: string[];
const fetched = vec(9);
const connector = fakeConnector(['geotessera'], {
  geotessera: (req) =>
    req.cell === FETCHED
      ? { status: 'value', value: fetched, provenance: { source: 'fake', ref: 'tile', captured_at: '2026-01-01T00:00:00Z', version: 'v1' }, fn: 'fake@1' }
      : { status: 'error', reason: 'upstream answered 503', retryable: true },
});

before(async () => {
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [connector] });
  cids = await attest(t, op, [
    { kind: 'primary', cell: A, band: 'geotessera', tslot: 54, value: a, unit: 'unitless' },
    { kind: 'primary', cell: A, band: 'geotessera', tslot: 55, value: b, unit: 'unitless' },
    { kind: 'absence', cell: ABSENT, band: 'geotessera', tslot: 55, value: null, absence_reason: 'outside_coverage' },
  ]);
});
after(async () => t.close());

describe('POST /v1/state', () => {
  it('the newest stored vector of the default encoder, under a verifying svc.state receipt', async () => {
    const r = await post(t, '/v1/state', { cell: A });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.encoder, 'geotessera');
    assert.equal(r.body.view, 'encoder');
    assert.equal(r.body.dim, 128);
    assert.deepEqual(r.body.vector, b);
    assert.equal(r.body.tslot, 55);
    assert.equal(r.body.fact_cid, cids[1]);
    assert.deepEqual(r.body.missing, []);
    assert.equal(r.body.receipt.primitive, 'svc.state');
    assert.deepEqual(r.body.receipt.fact_cids, [cids[1]]);
    assert.ok(verifies(t, r.body.receipt));
    const older = await post(t, '/v1/state', { cell: A, tslot: 54 });
    assert.deepEqual(older.body.vector, a);
  });

  it('a miss is fetched and signed like any band', async () => {
    const r = await post(t, '/v1/state', { cell: FETCHED });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.vector, fetched);
    assert.equal(r.body.materialize_notes[0].status, 'materialized');
    assert.deepEqual(r.body.receipt.fact_cids, [r.body.fact_cid]);
  });

  it('no vector: null with a typed missing entry, never a zero vector', async () => {
    const absent = await post(t, '/v1/state', { cell: ABSENT });
    assert.equal(absent.status, 200);
    assert.equal(absent.body.vector, null);
    assert.equal(absent.body.missing[0].reason, 'absence');
    assert.match(absent.body.missing[0].detail, /outside_coverage/);
    assert.equal(absent.body.missing[0].fact_cid, cids[2]);
    const failed = await post(t, '/v1/state', { cell: EMPTY });
    assert.equal(failed.body.vector, null);
    assert.equal(failed.body.missing[0].reason, 'not_materialized');
    assert.equal(failed.body.missing[0].retryable, true);
    assert.ok(verifies(t, failed.body.receipt));
  });

  it('bad input: unknown views, non-encoders and unknown bands are typed (the cube view: state-cube.test.ts)', async () => {
    fails(await post(t, '/v1/state', { cell: A, view: 'flat' }), 422, 'invalid_argument', 'view');
    fails(await post(t, '/v1/state', { cell: A, encoder: 'geotessera.bin128' }), 422, 'invalid_argument', 'encoder');
    fails(await post(t, '/v1/state', { cell: A, encoder: 'indices.ndvi' }), 422, 'invalid_argument', 'encoder');
    fails(await post(t, '/v1/state', { cell: A, encoder: 'tessera' }), 404, 'band_not_in_registry', 'encoder');
    fails(await post(t, '/v1/state', {}), 422, 'invalid_argument', 'cell');
  });
});

describe('POST /v1/state_multi', () => {
  it('one vector per served encoder, and a typed miss for each encoder without one', async () => {
    const r = await post(t, '/v1/state_multi', { cell: A });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.encoders, ['geotessera']);
    assert.deepEqual(
      r.body.states.map((s: any) => [s.encoder, s.dim, s.fact_cid]),
      [['geotessera', 128, cids[1]]],
    );
    assert.equal(r.body.receipt.primitive, 'svc.state_multi');
    assert.ok(verifies(t, r.body.receipt));
    const none = await post(t, '/v1/state_multi', { cell: ABSENT, encoders: ['geotessera'] });
    assert.deepEqual(none.body.states, []);
    assert.deepEqual(
      none.body.missing.map((m: any) => [m.encoder, m.reason]),
      [['geotessera', 'absence']],
    );
    fails(await post(t, '/v1/state_multi', { cell: A, encoders: ['indices.ndvi'] }), 422, 'invalid_argument', 'encoders[0]');
  });
});

describe('POST /v1/state_diff', () => {
  it("delta, L2, cosine and the residual orthogonal to a, over both sides' facts", async () => {
    const r = await post(t, '/v1/state_diff', { cell: A, tslot_a: 54, tslot_b: 55 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const delta = b.map((x, i) => x - a[i]);
    r.body.delta.forEach((d: number, i: number) => assert.ok(Math.abs(d - delta[i]) < 1e-9));
    assert.ok(Math.abs(r.body.l2 - Math.hypot(...delta)) < 1e-9);
    const dot = (u: number[], v: number[]) => u.reduce((s, x, i) => s + x * v[i], 0);
    assert.ok(Math.abs(r.body.cosine - dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b))) < 1e-9);
    assert.ok(Math.abs(dot(r.body.residual, a)) < 1e-6, 'the residual is orthogonal to a');
    assert.ok(Math.abs(r.body.residual_l2 - Math.hypot(...r.body.residual)) < 1e-6);
    assert.ok(r.body.residual_l2 > 0 && r.body.residual_l2 <= Math.hypot(...b));
    assert.equal(r.body.receipt.primitive, 'svc.state_diff');
    assert.deepEqual(r.body.receipt.fact_cids, [cids[0], cids[1]]);
    assert.ok(verifies(t, r.body.receipt));
  });

  it('a side without a vector gives nulls, never zeros; it never fetches', async () => {
    const calls = connector.calls.length;
    const r = await post(t, '/v1/state_diff', { cell: EMPTY, tslot_a: 54, tslot_b: 55 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.delta, null);
    assert.equal(r.body.residual, null);
    assert.equal(r.body.residual_l2, null);
    assert.equal(connector.calls.length, calls);
    fails(await post(t, '/v1/state_diff', { cell: A, tslot_a: 54 }), 422, 'invalid_argument', 'tslot_b');
  });
});
