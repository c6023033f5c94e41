import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import * as P from '../../../../src/protocol/index.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { attest, fails, get, paramRoutesApp, post, verifies } from './helpers.js';

let t: TestApp;
let params: FastifyInstance;
const op = makeAttester('reads-tokens-operator');
const cell = P.cellOf(12.9716, 77.5946);
let tempCid: string;
let ndviCid: string;
let capturedCid: string;

before(async () => {
  t = await build({ attesterKeys: [op.publicKey] });
  params = await paramRoutesApp(t);
  [tempCid, ndviCid, capturedCid] = await attest(t, op, [
    { kind: 'primary', cell, band: 'weather.temperature_2m', tslot: 20_400, value: 24.5, unit: 'degC', signed_at: '2025-11-08T06:00:00Z' },
    { kind: 'primary', cell, band: 'indices.ndvi', tslot: 680, value: 0.61, unit: 'unitless', signed_at: '2025-11-09T10:00:00Z' },
    {
      kind: 'primary',
      cell,
      band: 'indices.evi',
      tslot: 680,
      value: 0.3,
      unit: 'unitless',
      signed_at: '2025-11-09T10:00:00Z',
      derivation: { fn: 'x@1', sources: ['s2'], captured_at: '2025-11-03T10:21:00Z' },
    },
  ]);
});
after(async () => {
  await params.close();
  await t.close();
});

const resolve = (token: string) => post(t, '/v1/memory_token/resolve', { token });

describe('fact tokens', () => {
  it('cell form: mint → resolve returns the signed fact, its provenance class and a caution for model_output', async () => {
    const m = await post(t, '/v1/memory_token', { fact_cid: tempCid, cell });
    assert.equal(m.status, 200, JSON.stringify(m.body));
    assert.equal(m.body.token, `svc:fact:${cell}:${tempCid}`);
    assert.ok(verifies(t, m.body.receipt));
    const r = await resolve(m.body.token);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.fact.fact_cid, tempCid);
    assert.equal(P.factCid(r.body.fact), tempCid);
    assert.ok(verifies(t, r.body.fact.receipt));
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(r.body.provenance_class, 'model_output');
    assert.match(r.body.caution, /model_output/);
    const ndvi = await resolve(`svc:fact:${cell}:${ndviCid}`);
    assert.equal(ndvi.body.provenance_class, 'deterministic_index');
    assert.equal(ndvi.body.caution, undefined);
  });

  it('readable form: centre at 6 decimals, date from signed_at (or the capture time when recorded)', async () => {
    const m = await post(t, '/v1/memory_token', { fact_cid: ndviCid, band: 'indices.ndvi', observed_on: '2025-11-09' });
    assert.equal(m.status, 200, JSON.stringify(m.body));
    const c = P.cellCenter(cell);
    assert.equal(m.body.token, `svc:fact:${c.lat.toFixed(6)},${c.lng.toFixed(6)}@2025-11-09@indices.ndvi:${ndviCid}`);
    const r = await resolve(m.body.token);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.checks, { cell: true, band: true, date: true });
    // A recorded capture time wins over signed_at.
    fails(await post(t, '/v1/memory_token', { fact_cid: capturedCid, band: 'indices.evi', observed_on: '2025-11-09' }), 409, 'token_claim_mismatch', 'observed_on');
    const cap = await post(t, '/v1/memory_token', { fact_cid: capturedCid, band: 'indices.evi', observed_on: '2025-11-03' });
    assert.equal((await resolve(cap.body.token)).status, 200);
  });

  it('claims that do not match the signed body → 409 token_claim_mismatch', async () => {
    const c = P.cellCenter(cell);
    const ll = `${c.lat.toFixed(6)},${c.lng.toFixed(6)}`;
    fails(await resolve(`svc:fact:${ll}@2025-11-09@indices.evi:${ndviCid}`), 409, 'token_claim_mismatch', 'indices.ndvi');
    fails(await resolve(`svc:fact:${ll}@2025-11-10@indices.ndvi:${ndviCid}`), 409, 'token_claim_mismatch', '2025-11-10');
    fails(await resolve(`svc:fact:${(c.lat + 0.001).toFixed(6)},${c.lng.toFixed(6)}@2025-11-09@indices.ndvi:${ndviCid}`), 409, 'token_claim_mismatch');
    fails(await resolve(`svc:fact:${P.cellOf(0, 0)}:${ndviCid}`), 409, 'token_claim_mismatch');
    fails(await post(t, '/v1/memory_token', { fact_cid: ndviCid, cell: P.cellOf(0, 0) }), 409, 'token_claim_mismatch', 'cell');
    fails(await post(t, '/v1/memory_token', { fact_cid: ndviCid, band: 'indices.evi', observed_on: '2025-11-09' }), 409, 'token_claim_mismatch', 'band');
  });

  it('coordinates with fewer than 5 decimals → 400', async () => {
    fails(await resolve(`svc:fact:12.9716,77.59460@2025-11-09@indices.ndvi:${ndviCid}`), 400, 'invalid_argument', 'decimals');
  });

  it('legacy memt: resolves; meme: is a typed entity miss; malformed tokens → 422; unknown cid → 404', async () => {
    const r = await resolve(`memt:${cell}:${ndviCid}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.legacy, true);
    assert.equal(r.body.fact.fact_cid, ndviCid);
    fails(await resolve(`meme:${'a'.repeat(26)}`), 404, 'cid_not_found', 'entity');
    fails(await resolve('hello'), 422, 'invalid_argument', 'token');
    fails(await resolve(`svc:raster:x:y:1:z`), 422, 'invalid_argument', 'raster/resolve');
    fails(await resolve(`svc:fact:${cell}:${'a'.repeat(52)}`), 404, 'cid_not_found');
    fails(await post(t, '/v1/memory_token', { fact_cid: ndviCid, band: 'indices.ndvi' }), 422, 'invalid_argument', 'observed_on');
    fails(await post(t, '/v1/memory_token', { fact_cid: ndviCid, band: 'indices.ndvi', observed_on: '2025-13-01' }), 422, 'invalid_argument', 'observed_on');
  });
});

describe('bundles', () => {
  it('mint: content-derived bundle_cid, persisted; GET /v1/memory_bundle/<token> serves the facts with a receipt', async () => {
    const m = await post(t, '/v1/memory_bundle', { fact_cids: [ndviCid, tempCid, ndviCid], label: 'bengaluru' });
    assert.equal(m.status, 200, JSON.stringify(m.body));
    assert.match(m.body.token, /^svc:bundle:[a-z2-7]{26}$/);
    assert.deepEqual(m.body.fact_cids, [ndviCid, tempCid].sort());
    assert.ok(verifies(t, m.body.receipt));
    const kept = await t.service.store.documents.get('bundle', m.body.bundle_cid);
    assert.deepEqual(JSON.parse(kept!).fact_cids, m.body.fact_cids, 'the definition is kept in the store');
    assert.ok(!existsSync(join(t.dataDir, 'bundles')), 'no file is written');
    const again = await post(t, '/v1/memory_bundle', { fact_cids: [tempCid, ndviCid], label: 'bengaluru' });
    assert.equal(again.body.bundle_cid, m.body.bundle_cid, 'same set and label, same bundle');
    const other = await post(t, '/v1/memory_bundle', { fact_cids: [tempCid, ndviCid] });
    assert.notEqual(other.body.bundle_cid, m.body.bundle_cid);

    const r = await get(params, `/v1/memory_bundle/${m.body.token}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.facts.map((f: any) => f.fact_cid),
      m.body.fact_cids,
    );
    assert.equal(r.body.label, 'bengaluru');
    assert.deepEqual(r.body.missing, []);
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(r.body.receipt.primitive, 'svc.memory_bundle_resolve');
    const legacy = await resolve(`memb:${m.body.bundle_cid}`);
    assert.equal(legacy.status, 200);
    assert.equal(legacy.body.kind, 'bundle');
    const viaOp = await post(t, '/v1/memory_bundle/resolve', { token: m.body.token });
    assert.equal(viaOp.body.facts.length, 2);
  });

  it('unknown bundle → 404 cid_not_found; validation of fact_cids', async () => {
    fails(await get(params, `/v1/memory_bundle/svc:bundle:${'a'.repeat(26)}`), 404, 'cid_not_found');
    fails(await get(params, '/v1/memory_bundle/svc:bundle:short'), 422, 'invalid_argument', 'token');
    fails(await post(t, '/v1/memory_bundle', { fact_cids: [] }), 422, 'invalid_argument', 'fact_cids');
    fails(await post(t, '/v1/memory_bundle', { fact_cids: [ndviCid, 'x'] }), 422, 'invalid_argument', 'fact_cids[1]');
    fails(await post(t, '/v1/memory_bundle', { fact_cids: [ndviCid, 'a'.repeat(51) + 'q'] }), 404, 'cid_not_found', 'fact_cids[1]');
    fails(await post(t, '/v1/memory_bundle', { fact_cids: Array.from({ length: 257 }, () => ndviCid) }), 422, 'invalid_argument', 'fact_cids');
  });
});
