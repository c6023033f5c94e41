import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import * as P from '../../../../src/protocol/index.js';
import { SvcError } from '../../../../src/protocol/errors.js';
import { verifyClaim } from '../../../../src/primitives/verify/verify-claim.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { fakeConnector, type FakeConnector } from '../../../support/fake-connector.js';
import { attest, fails, get, paramRoutesApp, post, vec, verifies } from './helpers.js';

let t: TestApp;
let params: FastifyInstance;
let fake: FakeConnector;
const op = makeAttester('reads-verify-operator');
const cell = P.cellOf(45, 7);
const DAY = 86_400;
let cids: string[];

before(async () => {
  fake = fakeConnector(['copdem30m.elevation_mean']);
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [fake] });
  params = await paramRoutesApp(t);
  const w = (tslot: number, value: number) => ({ kind: 'primary', cell, band: 'weather.temperature_2m', tslot, value, unit: 'degC' });
  cids = await attest(t, op, [w(20_000, 10), w(20_001, 20), w(20_002, 30)]);
  await attest(t, op, [
    { kind: 'primary', cell, band: 'geotessera', tslot: 55, value: vec(3), unit: 'unitless' },
    { kind: 'primary', cell, band: 'landcover.esa_worldcover_2021', tslot: 0, value: 10, unit: 'class' },
    { kind: 'absence', cell, band: 'air.pm2_5', tslot: 20_000, value: null, absence_reason: 'outside_coverage' },
  ]);
});
after(async () => {
  await params.close();
  await t.close();
});

const verify = (claim: Record<string, unknown>, extra: Record<string, unknown> = {}) => post(t, '/v1/verify', { cell, claim, ...extra });
const temp = { band: 'weather.temperature_2m' };

describe('POST /v1/verify', () => {
  it('a tslot claim: holds with the evidence cid and a verifiable receipt', async () => {
    const r = await verify({ ...temp, op: 'eq', value: 20, tslot: 20_001 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.holds, true);
    assert.deepEqual(r.body.evidence_cids, [cids[1]]);
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(r.body.receipt.primitive, 'svc.verify');
    assert.deepEqual(r.body.receipt.fact_cids, [cids[1]]);
    assert.equal((await verify({ ...temp, op: 'gt', value: 25, tslot: 20_001 })).body.holds, false);
    assert.equal((await verify({ ...temp, op: 'in', value: [1, 20], tslot: 20_001 })).body.holds, true);
    assert.equal((await verify({ ...temp, op: 'ni', value: [1, 20], tslot: 20_001 })).body.holds, false);
  });

  it('window claims aggregate with any, all, mean, min, max', async () => {
    const window = [20_000 * DAY, 20_002 * DAY];
    assert.equal((await verify({ ...temp, op: 'gt', value: 25, window })).body.holds, true);
    assert.equal((await verify({ ...temp, op: 'gt', value: 25, window, agg: 'all' })).body.holds, false);
    const mean = await verify({ ...temp, op: 'eq', value: 20, window, agg: 'mean' });
    assert.equal(mean.body.holds, true);
    assert.deepEqual(mean.body.evidence_cids, cids);
    assert.equal((await verify({ ...temp, op: 'ge', value: 10, window, agg: 'min' })).body.holds, true);
    assert.equal((await verify({ ...temp, op: 'lt', value: 30, window, agg: 'max' })).body.holds, false);
  });

  it('no evidence → holds false with an explanation; absent holds without a primary fact', async () => {
    const none = await verify({ ...temp, op: 'gt', value: 0, tslot: 19_000 });
    assert.equal(none.body.holds, false);
    assert.deepEqual(none.body.evidence_cids, []);
    assert.match(none.body.explanation, /No evidence/);
    assert.ok(verifies(t, none.body.receipt));
    const absent = await verify({ band: 'air.pm2_5', op: 'absent', value: null, tslot: 20_000 });
    assert.equal(absent.body.holds, true);
    assert.equal(absent.body.evidence_cids.length, 1, 'the signed absence is the evidence');
    assert.equal((await verify({ band: 'indices.ndvi', op: 'absent', value: 0, tslot: 600 })).body.holds, true);
    assert.equal((await verify({ ...temp, op: 'exists', value: 0, tslot: 20_000 })).body.holds, true);
    assert.equal((await verify({ band: 'air.pm2_5', op: 'exists', value: 0, tslot: 20_000 })).body.holds, false);
  });

  it('vector and categorical bands compare like with like', async () => {
    assert.equal((await verify({ band: 'geotessera', op: 'eq', value: vec(3), tslot: 55 })).body.holds, true);
    assert.equal((await verify({ band: 'geotessera', op: 'ne', value: vec(4), tslot: 55 })).body.holds, true);
    assert.equal((await verify({ band: 'landcover.esa_worldcover_2021', op: 'in', value: [10, 20], tslot: 0 })).body.holds, true);
  });

  it('NaN and type mismatches → claim_undecidable (422)', async () => {
    fails(await verify({ ...temp, op: 'eq', value: 'NaN', tslot: 20_001 }), 422, 'claim_undecidable');
    fails(await verify({ band: 'geotessera', op: 'eq', value: 0.5, tslot: 55 }), 422, 'claim_undecidable');
    fails(await verify({ ...temp, op: 'eq', value: [1, 2], tslot: 20_001 }), 422, 'claim_undecidable');
    fails(await verify({ ...temp, op: 'in', value: 3, tslot: 20_001 }), 422, 'claim_undecidable');
    fails(await verify({ band: 'geotessera', op: 'gt', value: vec(1), tslot: 55 }), 422, 'claim_undecidable');
    fails(await verify({ band: 'landcover.esa_worldcover_2021', op: 'lt', value: 10, tslot: 0 }), 422, 'claim_undecidable');
    // In-process callers can pass a real NaN.
    await assert.rejects(
      verifyClaim(t.service, { cell, mode: 'fast', claim: { ...temp, op: 'eq', value: NaN, tslot: 20_001 } as any }),
      (e: unknown) => e instanceof SvcError && e.code === 'claim_undecidable',
    );
  });

  it('structural problems → invalid_argument naming the field', async () => {
    fails(await verify({ ...temp, op: 'eq', tslot: 20_001 }), 422, 'invalid_argument', 'value');
    fails(await verify({ ...temp, op: 'eq', value: 1 }), 422, 'invalid_argument', 'claim.tslot');
    fails(await verify({ ...temp, op: 'eq', value: 1, tslot: 20_001, window: [0, 1] }), 422, 'invalid_argument', 'claim');
    fails(await verify({ ...temp, op: 'approx', value: 1, tslot: 20_001 }), 422, 'invalid_argument', 'op');
    fails(await verify({ ...temp, op: 'eq', value: 1, tslot: 20_001, agg: 'median' }), 422, 'invalid_argument', 'agg');
    fails(await post(t, '/v1/verify', { claim: { ...temp, op: 'eq', value: 1, tslot: 1 } }), 422, 'invalid_argument', 'cell');
    fails(await verify({ ...temp, op: 'eq', value: 1, tslot: 1 }, { mode: 'slow' }), 422, 'invalid_argument', 'mode');
    fails(await verify({ band: 'ndvi', op: 'eq', value: 1, tslot: 1 }), 404, 'band_not_in_registry', 'claim.band');
  });

  it('mode fast reads stored facts only; resolve may materialize through recall', async () => {
    const c = P.cellOf(46, 8);
    const claim = { band: 'copdem30m.elevation_mean', op: 'gt', value: 40, tslot: 0 };
    const size = await t.service.store.log.size();
    const fast = await post(t, '/v1/verify', { cell: c, claim, mode: 'fast' });
    assert.equal(fast.body.holds, false);
    assert.equal(await t.service.store.log.size(), size);
    const resolved = await post(t, '/v1/verify', { cell: c, claim, mode: 'resolve' });
    assert.equal(resolved.body.holds, true);
    assert.equal(resolved.body.materialize_notes[0].status, 'materialized');
    assert.ok(verifies(t, resolved.body.receipt));
  });
});

describe('cell view', () => {
  it('GET /v1/cells/:cell64: centre, bbox, neighbours, latest fact per band, counts, receipt', async () => {
    const r = await get(params, `/v1/cells/${cell}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.cell64, cell);
    assert.deepEqual(r.body.center, P.cellCenter(cell));
    assert.deepEqual(r.body.bbox, P.cellBbox(cell));
    assert.equal(r.body.neighbours.length, 8);
    assert.deepEqual(r.body.bands_attested, ['air.pm2_5', 'geotessera', 'landcover.esa_worldcover_2021', 'weather.temperature_2m']);
    const temp2m = r.body.bands.find((b: any) => b.band === 'weather.temperature_2m');
    assert.equal(temp2m.fact.fact_cid, cids[2], 'the latest tslot');
    assert.ok(verifies(t, temp2m.fact.receipt));
    assert.deepEqual(r.body.counts, { bands: 4, absences: 1, versions: 6, versions_truncated: false });
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(r.body.receipt.primitive, 'svc.cell_view');
    assert.equal(r.body.receipt.fact_cids.length, 4);
  });

  it('the cell_view operation (MCP) answers the same; a bad cell → invalid_cell', async () => {
    const r = await t.app.inject({ method: 'GET', url: `/v1/cell_view?cell64=${cell}` });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json().counts.bands, 4);
    fails(await get(params, '/v1/cells/defi.zb400.bafi.bab'), 422, 'invalid_cell');
    const bad = await t.app.inject({ method: 'GET', url: '/v1/cell_view?cell64=nope' });
    assert.equal(bad.json().code, 'invalid_cell');
  });
});
