/**
 * Derivations (docs/writes.md "Derivations"; src/primitives/memory/derive.ts): POST /v1/derive
 * writes one derivative whose parents share its cell and whose function is registered, and
 * recomputes nd.delta@1 and mean@1 from the stored parents; a refusal writes nothing. The same
 * rules hold for derivatives sent through POST /v1/attest. GET /v1/derived pages a key's public
 * derivatives, each signed, under one receipt.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as P from '../../src/protocol/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester, type TestAttester } from '../support/attester.js';

let t: TestApp;
let op: TestAttester;
let other: TestAttester;
const MEDIUM = P.currentTslot('medium');
const SIGNED_AT = '2026-11-20T12:00:00Z';

before(async () => {
  op = makeAttester('derive operator');
  other = makeAttester('derive other operator');
  t = await build({ attesterKeys: [op.publicKey, other.publicKey] }, {}, { materializers: [] });
});
after(async () => t.close());

let n = 0;
const freshCell = () => P.cellOf(30 + (n++ % 400) * 0.003, -40);

const ndvi = (cell: string, value: number, tslot: number, over: Record<string, unknown> = {}) => ({
  kind: 'primary',
  cell,
  band: 'indices.ndvi',
  tslot,
  value,
  unit: 'unitless',
  signed_at: SIGNED_AT,
  ...over,
});

async function attest(facts: Record<string, unknown>[], who: TestAttester = op) {
  const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: who.batch(facts, t.service.manifests) });
  assert.equal(r.statusCode, 200, r.body);
  return r.json() as { fact_cids: string[] };
}

/** Two stored NDVI parents at one fresh cell (newer first), their cids and the cell. */
async function parents(a = 0.6, b = 0.4) {
  const cell = freshCell();
  const newer = ndvi(cell, a, MEDIUM);
  const older = ndvi(cell, b, MEDIUM - 1);
  await attest([newer, older]);
  return { cell, cids: [P.factCid(newer), P.factCid(older)] };
}

const derivative = (cell: string, band: string, fn: string, parentCids: string[], value: unknown, over: Record<string, unknown> = {}) => ({
  kind: 'derivative',
  cell,
  band,
  value,
  signed_at: SIGNED_AT,
  derivation: { fn, parents: parentCids },
  ...over,
});

function derive(body: Record<string, unknown>, who: TestAttester = op) {
  return t.app.inject({ method: 'POST', url: '/v1/derive', payload: who.batch([body], t.service.manifests) });
}

/** Refused with `code` at `field`; the log and the store are unchanged. */
async function refused(send: () => Promise<{ statusCode: number; body: string; json(): any }>, body: Record<string, unknown>, status: number, code: string, field: string) {
  const before = await t.service.store.log.size();
  const r = await send();
  assert.equal(r.statusCode, status, r.body);
  const e = r.json();
  assert.equal(e.code, code, r.body);
  assert.equal(e.details.field, field, r.body);
  assert.equal(await t.service.store.log.size(), before, 'nothing logged');
  assert.equal(await t.service.store.getFact(P.factCid(body)), null, 'nothing stored');
  return e;
}

describe('POST /v1/derive', () => {
  it('accepts nd.delta@1 recomputed from the stored parents; answers the derivation, its edges and a receipt binding both', async () => {
    const { cell, cids } = await parents(0.6, 0.4);
    // 0.6 − 0.4 is 0.19999999999999996 in binary floating point: 0.2 is within 1e-9.
    const body = derivative(cell, 'derived.delta', 'nd.delta@1', cids, 0.2);
    const before = await t.service.store.log.size();
    const r = await derive(body);
    assert.equal(r.statusCode, 200, r.body);
    const res = r.json();
    const cid = P.factCid(body);
    assert.deepEqual(res.derivation, { fact_cid: cid, cell, band: 'derived.delta', fn: 'nd.delta@1', parents: cids, value: 0.2, recomputed: true });
    assert.deepEqual(res.fact_cids, [cid]);
    assert.equal(await t.service.store.log.size(), before + 1);
    const stored = await t.service.store.getFact(cid);
    assert.deepEqual(stored!.body, body);
    assert.equal(stored!.provenance_class, 'deterministic_index');

    const edges = cids.map((to) => ({ edge_cid: P.contentId({ kind: 'derived_from', from: cid, to }), kind: 'derived_from', from: cid, to }));
    assert.deepEqual(res.edges, edges);
    assert.equal(res.receipt.primitive, 'svc.derive');
    assert.deepEqual(res.receipt.fact_cids, [cid]);
    assert.deepEqual(res.receipt.cells, [cell]);
    assert.deepEqual([...res.receipt.edge_cids].sort(), edges.map((e) => e.edge_cid).sort());
    for (const k of ['log_index', 'accepted_at', 'merkle_proofs', 'tree_head', 'log_inclusion']) assert.ok(k in res, k);

    const v = P.verifyResponse(res, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, v.errors.join('\n'));
    assert.equal(v.trusted, true);
    // A changed edge set no longer verifies: edge_cids are signed.
    const forged = structuredClone(res);
    forged.receipt.edge_cids = [P.contentId('another edge')];
    assert.equal(P.verifyResponse(forged, { publicKey: t.service.keys.publicKeyB32 }).valid, false);
  });

  it('accepts mean@1 over three parents, and a registered function it does not recompute as signed', async () => {
    const cell = freshCell();
    const ps = [0.1, 0.2, 0.6].map((v, i) => ndvi(cell, v, MEDIUM - i));
    await attest(ps);
    const cids = ps.map((p) => P.factCid(p));
    const mean = await derive(derivative(cell, 'derived.mean', 'mean@1', cids, 0.3));
    assert.equal(mean.statusCode, 200, mean.body);
    assert.equal(mean.json().derivation.recomputed, true);
    const free = await derive(derivative(cell, 'indices.ndvi', 'normalized_difference@1', cids.slice(0, 1), 0.55, { tslot: MEDIUM }));
    assert.equal(free.statusCode, 200, free.body);
    assert.equal(free.json().derivation.recomputed, false);
    assert.equal(free.json().edges.length, 1);
  });

  it('a band that is recomputed accepts only its own function; a sourced band only the function that produces it', async () => {
    const cell = freshCell();
    const ps = [0.1, 0.5].map((v, i) => ndvi(cell, v, MEDIUM - i));
    await attest(ps);
    const cids = ps.map((p) => P.factCid(p));
    const size = await t.service.store.log.size();
    for (const [band, fn, value] of [
      ['derived.mean', 'attested@1', 7777],
      ['derived.mean', 'nd.delta@1', -0.4],
      ['derived.delta', 'mean@1', 0.3],
      ['indices.ndvi', 'attested@1', 0.9],
      ['indices.ndvi', 'mean@1', 0.3],
    ] as const) {
      const body = derivative(cell, band, fn, cids, value, band === 'indices.ndvi' ? { tslot: MEDIUM } : {});
      const r = await derive(body);
      assert.equal(r.statusCode, 422, `${band} ${fn}: ${r.body}`);
      assert.equal(r.json().details.field, 'facts[0].derivation.fn');
      assert.equal(r.json().details.reason, 'function_not_allowed');
    }
    assert.equal(await t.service.store.log.size(), size, 'nothing was written');
  });

  it('no derivative can put a value into elevation under another recipe (ask keeps answering from the real reading)', async () => {
    const cell = freshCell();
    const real = { kind: 'primary', cell, band: 'copdem30m.elevation_mean', tslot: 0, value: 171, unit: 'm_msl', signed_at: SIGNED_AT };
    await attest([real]);
    const fake = derivative(cell, 'copdem30m.elevation_mean', 'attested@1', [P.factCid(real)], 8000, { tslot: 0 });
    const r = await derive(fake);
    assert.equal(r.statusCode, 422, r.body);
    assert.equal(r.json().details.reason, 'function_not_allowed');
    assert.deepEqual(r.json().details.allowed, ['open_meteo_elevation@1']);
    const got = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell, bands: ['copdem30m.elevation_mean'] } });
    assert.deepEqual(
      got.json().facts.map((f: any) => f.value),
      [171],
    );
  });

  it('refuses a value that does not recompute (recomputation_mismatch, with expected and got); nothing is written', async () => {
    const { cell, cids } = await parents(0.6, 0.4);
    const body = derivative(cell, 'derived.delta', 'nd.delta@1', cids, 0.3);
    const e = await refused(() => derive(body), body, 422, 'invalid_argument', 'facts[0].value');
    assert.equal(e.details.reason, 'recomputation_mismatch');
    assert.ok(Math.abs(e.details.expected - 0.2) < 1e-12, String(e.details.expected));
    assert.equal(e.details.got, 0.3);
    // Parent order matters: older − newer is −0.2.
    const swapped = derivative(cell, 'derived.delta', 'nd.delta@1', cids, 0.2, { derivation: { fn: 'nd.delta@1', parents: [cids[1], cids[0]] } });
    assert.equal((await refused(() => derive(swapped), swapped, 422, 'invalid_argument', 'facts[0].value')).details.reason, 'recomputation_mismatch');
  });

  it('refuses a parent at another cell (parent_cell_mismatch)', async () => {
    const { cell, cids } = await parents();
    const far = await parents();
    const body = derivative(cell, 'derived.delta', 'nd.delta@1', [cids[0], far.cids[1]], 0.2);
    const e = await refused(() => derive(body), body, 422, 'invalid_argument', 'facts[0].derivation.parents[1]');
    assert.equal(e.details.reason, 'parent_cell_mismatch');
  });

  it('refuses a function that is not registered (function_not_in_registry, 404)', async () => {
    const { cell, cids } = await parents();
    const body = derivative(cell, 'derived.delta', 'nd.delta@9', cids, 0.2);
    await refused(() => derive(body), body, 404, 'function_not_in_registry', 'facts[0].derivation.fn');
  });

  it('refuses the wrong parent count, an absence parent, parents of two bands and a parent named twice', async () => {
    const cell = freshCell();
    const a = ndvi(cell, 0.5, MEDIUM);
    const b = ndvi(cell, 0.3, MEDIUM - 1);
    const gone = { kind: 'absence', cell, band: 'indices.ndvi', tslot: MEDIUM - 2, value: null, absence_reason: 'upstream_timeout', signed_at: SIGNED_AT };
    const ndwi = { kind: 'primary', cell, band: 'indices.ndwi', tslot: MEDIUM, value: 0.1, unit: 'unitless', signed_at: SIGNED_AT };
    await attest([a, b, gone, ndwi]);
    const [ca, cb, cg, cw] = [a, b, gone, ndwi].map((f) => P.factCid(f));

    const three = derivative(cell, 'derived.delta', 'nd.delta@1', [ca, cb, cw], 0.2);
    await refused(() => derive(three), three, 422, 'invalid_argument', 'facts[0].derivation.parents');
    const absent = derivative(cell, 'derived.delta', 'nd.delta@1', [ca, cg], 0.2);
    assert.equal((await refused(() => derive(absent), absent, 422, 'invalid_argument', 'facts[0].derivation.parents[1]')).details.reason, 'parent_not_scalar');
    const mixed = derivative(cell, 'derived.delta', 'nd.delta@1', [ca, cw], 0.4);
    assert.equal((await refused(() => derive(mixed), mixed, 422, 'invalid_argument', 'facts[0].derivation.parents[1]')).details.reason, 'parent_band_mismatch');
    const twice = derivative(cell, 'derived.mean', 'mean@1', [ca, ca], 0.5);
    await refused(() => derive(twice), twice, 422, 'invalid_argument', 'facts[0].derivation.parents[1]');
  });

  it('takes exactly one fact, a derivative', async () => {
    const { cell, cids } = await parents();
    const good = derivative(cell, 'derived.delta', 'nd.delta@1', cids, 0.2);
    const two = await t.app.inject({ method: 'POST', url: '/v1/derive', payload: op.batch([good, { ...good, signed_at: '2026-11-20T12:00:01Z' }], t.service.manifests) });
    assert.equal(two.statusCode, 422, two.body);
    const primary = ndvi(cell, 0.1, MEDIUM);
    await refused(() => derive(primary), primary, 422, 'invalid_argument', 'facts[0].kind');
  });

  it('derived.* bands hold derivatives only', async () => {
    const body = { kind: 'primary', cell: freshCell(), band: 'derived.delta', value: 0.1, signed_at: SIGNED_AT };
    await refused(() => t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch([body], t.service.manifests) }), body, 422, 'invalid_argument', 'facts[0].kind');
  });
});

describe('POST /v1/attest applies the same derivative rules', () => {
  it('recomputes, checks cells and the function', async () => {
    const { cell, cids } = await parents(0.7, 0.1);
    const send = (b: Record<string, unknown>) => () => t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch([b], t.service.manifests) });
    const wrong = derivative(cell, 'derived.delta', 'nd.delta@1', cids, 0.5);
    assert.equal((await refused(send(wrong), wrong, 422, 'invalid_argument', 'facts[0].value')).details.reason, 'recomputation_mismatch');
    const unknown = derivative(cell, 'derived.delta', 'made_up@1', cids, 0.6);
    await refused(send(unknown), unknown, 404, 'function_not_in_registry', 'facts[0].derivation.fn');
    const elsewhere = derivative(freshCell(), 'derived.delta', 'nd.delta@1', cids, 0.6);
    assert.equal((await refused(send(elsewhere), elsewhere, 422, 'invalid_argument', 'facts[0].derivation.parents[0]')).details.reason, 'parent_cell_mismatch');
    const r = await send(derivative(cell, 'derived.delta', 'nd.delta@1', cids, 0.6))();
    assert.equal(r.statusCode, 200, r.body);
  });
});

describe('GET /v1/derived', () => {
  it("pages a key's public derivatives in log order, each signed, under one receipt", async (ctx) => {
    if (typeof t.service.store.memory?.derivedBy !== 'function') {
      ctx.skip('this store driver does not index derivations yet (store.memory)');
      return;
    }
    const mine: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { cell, cids } = await parents(0.5 + i / 10, 0.1);
      const body = derivative(cell, 'derived.delta', 'nd.delta@1', cids, 0.4 + i / 10);
      const r = await derive(body, other);
      assert.equal(r.statusCode, 200, r.body);
      mine.push(P.factCid(body));
    }
    const page1 = await t.app.inject({ method: 'GET', url: `/v1/derived?attester=${other.publicKey}&limit=2` });
    assert.equal(page1.statusCode, 200, page1.body);
    const p1 = page1.json();
    assert.deepEqual(
      p1.facts.map((f: any) => f.fact_cid),
      mine.slice(0, 2),
    );
    assert.equal(p1.count, 2);
    assert.equal(typeof p1.next_after, 'number');
    assert.deepEqual(p1.receipt.fact_cids, mine.slice(0, 2));
    assert.deepEqual(new Set(p1.receipt.cells), new Set(p1.facts.map((f: any) => f.cell)));
    const v = P.verifyResponse(p1, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, v.errors.join('\n'));

    const page2 = (await t.app.inject({ method: 'GET', url: `/v1/derived?attester=${other.publicKey}&limit=2&after=${p1.next_after}` })).json();
    assert.deepEqual(
      page2.facts.map((f: any) => f.fact_cid),
      mine.slice(2),
    );
    assert.equal('next_after' in page2, false);

    const none = (await t.app.inject({ method: 'GET', url: `/v1/derived?attester=${makeAttester('nobody').publicKey}` })).json();
    assert.deepEqual(none.facts, []);
  });

  it('validates its query', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/derived?attester=nope' })).statusCode, 422);
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/derived?attester=${op.publicKey}&limit=201` })).statusCode, 422);
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/derived?attester=${op.publicKey}&scope=x` })).statusCode, 422);
  });
});
