/**
 * The cube view of state, state_multi and state_diff (docs/embeddings.md, "The cube view"): 14
 * annual slots of geotessera (1792 values), slot j at tslot anchor − 13 + j, a missing slot as
 * nulls with a typed miss, years outside the encoder's coverage never fetched.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { fakeConnector } from '../../../support/fake-connector.js';
import { attest, fails, get, post, vec, verifies } from './helpers.js';

let t: TestApp;
const op = makeAttester('reads-state-cube-operator');
/** Vectors stored at 50, 52 and 55, an absence at 53; 54 is fetched; the other covered years fail upstream. */
const C = P.cellOf(-30, -50);
/** Vectors c·(1, …, 1) at tslot 51 + c (c = 1..4) and an absence at 51: for the hand-computed diff. */
const D = P.cellOf(-31, -51);
const ones = (c: number) => Array.from({ length: 128 }, () => c);
const stored: Record<number, number[]> = { 50: vec(50), 52: vec(52), 55: vec(55) };
const fetched = vec(54);
const connector = fakeConnector(['geotessera'], {
  geotessera: (req) =>
    req.cell === C && req.tslot === 54
      ? { status: 'value', value: fetched, provenance: { source: 'fake', ref: 'tile-2024', captured_at: '2025-01-01T00:00:00Z', version: 'v1' }, fn: 'fake@1' }
      : { status: 'error', reason: 'upstream answered 503', retryable: true },
});
let cids: string[];
let dCids: string[];

/** geotessera's first covered tslot: 2017 (history_from_unix 2017-01-01 on the 365-day grid). */
const FIRST = 47;

before(async () => {
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [connector] });
  cids = await attest(t, op, [
    { kind: 'primary', cell: C, band: 'geotessera', tslot: 50, value: stored[50], unit: 'unitless' },
    { kind: 'primary', cell: C, band: 'geotessera', tslot: 52, value: stored[52], unit: 'unitless' },
    { kind: 'primary', cell: C, band: 'geotessera', tslot: 55, value: stored[55], unit: 'unitless' },
    { kind: 'absence', cell: C, band: 'geotessera', tslot: 53, value: null, absence_reason: 'outside_coverage' },
  ]);
  dCids = await attest(t, op, [
    { kind: 'absence', cell: D, band: 'geotessera', tslot: 51, value: null, absence_reason: 'outside_coverage' },
    ...[1, 2, 3, 4].map((c) => ({ kind: 'primary', cell: D, band: 'geotessera', tslot: 51 + c, value: ones(c), unit: 'unitless' })),
  ]);
});
after(async () => t.close());

const callsAt = (cell: string) => connector.calls.filter((c) => c.cell === cell).map((c) => c.tslot);

describe('GET /v1/bands: cube_layout', () => {
  it('publishes 14 slots of 128 geotessera values, oldest first, 1792 in all', async () => {
    const r = await get(t.app, '/v1/bands');
    assert.equal(r.status, 200);
    const l = r.body.cube_layout;
    assert.equal(l.view, 'cube');
    assert.equal(l.encoder, 'geotessera');
    assert.equal(l.dim, 1792);
    assert.equal(l.slots.length, 14);
    assert.deepEqual(
      l.slots.map((s: any) => s.offset),
      Array.from({ length: 14 }, (_, j) => 128 * j),
    );
    assert.deepEqual(
      l.slots.map((s: any) => s.tslot_offset),
      Array.from({ length: 14 }, (_, j) => j - 13),
    );
    assert.equal(
      l.slots.reduce((n: number, s: any) => n + s.dim, 0),
      1792,
    );
    assert.ok(l.slots.every((s: any, j: number) => s.slot === j && s.band === 'geotessera'));
    assert.deepEqual(l.coverage, { from_tslot: FIRST, from_year: 2017, to_tslot: null });
    assert.match(l.encoding, /null/);
    assert.ok(
      r.body.bands.find((b: any) => b.key === 'geotessera'),
      'the band list is unchanged',
    );
  });
});

describe('POST /v1/state {view: "cube"}', () => {
  it('fills the attested and fetched years, nulls every other slot with a typed reason, and never fetches outside the coverage', async () => {
    const r = await post(t, '/v1/state', { cell: C, view: 'cube', tslot: 55 });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
    const b = r.body;
    assert.equal(b.view, 'cube');
    assert.equal(b.encoder, 'geotessera');
    assert.equal(b.dim, 1792);
    assert.equal(b.tslot, 55);
    assert.equal(b.fact_cid, null);
    assert.equal(b.vector.length, 1792);
    assert.deepEqual(
      b.slots.map((s: any) => [s.slot, s.tslot, s.offset]),
      Array.from({ length: 14 }, (_, j) => [j, 42 + j, 128 * j]),
    );
    assert.deepEqual(
      b.slots.map((s: any) => s.year),
      Array.from({ length: 14 }, (_, j) => 2012 + j),
    );
    const present: Record<number, number[]> = { ...stored, 54: fetched };
    for (const s of b.slots) {
      const got = b.vector.slice(s.offset, s.offset + 128);
      if (present[s.tslot]) {
        assert.deepEqual(got, present[s.tslot], `slot ${s.slot} holds the vector of tslot ${s.tslot}`);
        assert.ok(s.fact_cid);
      } else {
        assert.ok(
          got.every((x: unknown) => x === null),
          `slot ${s.slot} (tslot ${s.tslot}) is all null`,
        );
        assert.equal(s.fact_cid, null);
      }
    }
    assert.equal(b.vector.filter((x: unknown) => x === null).length, 10 * 128, 'exactly the 10 missing slots are null');
    const reasons = Object.fromEntries(b.missing.map((m: any) => [m.tslot, m.reason]));
    assert.deepEqual(reasons, {
      42: 'outside_coverage',
      43: 'outside_coverage',
      44: 'outside_coverage',
      45: 'outside_coverage',
      46: 'outside_coverage',
      47: 'not_materialized',
      48: 'not_materialized',
      49: 'not_materialized',
      51: 'not_materialized',
      53: 'absence',
    });
    assert.ok(b.missing.every((m: any) => m.encoder === 'geotessera' && m.slot === m.tslot - 42));
    assert.ok(b.missing.filter((m: any) => m.reason === 'not_materialized').every((m: any) => m.retryable === true));
    const absent = b.missing.find((m: any) => m.reason === 'absence');
    assert.equal(absent.fact_cid, cids[3]);
    assert.match(absent.detail, /outside_coverage/);
    assert.match(b.missing[0].detail, /2012.*outside the declared coverage/);

    // Upstream was asked for the covered years without a stored fact only: never before 2017, never a stored year.
    assert.deepEqual(callsAt(C).sort(), [47, 48, 49, 51, 54]);

    // The receipt binds every fact the slots read, in slot order, and the whole answer verifies.
    const used = b.slots.filter((s: any) => s.tslot >= FIRST && (s.fact_cid || s.tslot === 53));
    assert.equal(b.receipt.primitive, 'svc.state');
    assert.deepEqual(
      b.receipt.fact_cids,
      used.map((s: any) => s.fact_cid ?? cids[3]),
    );
    for (const cid of [cids[0], cids[1], cids[2], cids[3]]) assert.ok(b.receipt.fact_cids.includes(cid));
    assert.ok(verifies(t, b.receipt));
    const v = P.verifyResponse(b, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, v.errors.join('; '));
    assert.equal(b.materialize_notes.length, 5);
  });

  it('anchors at the newest covered slot (the current year) without a tslot', async () => {
    const now = P.currentTslot('slow');
    const r = await post(t, '/v1/state', { cell: C, view: 'cube' });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
    assert.equal(r.body.tslot, now);
    assert.deepEqual(
      r.body.slots.map((s: any) => s.tslot),
      Array.from({ length: 14 }, (_, j) => now - 13 + j),
    );
    assert.ok(callsAt(C).every((x) => x >= FIRST && x <= now));
    assert.ok(verifies(t, r.body.receipt));
  });

  it('a cube with no slot inside the coverage is vector null, reads nothing and still verifies', async () => {
    const calls = connector.calls.length;
    const r = await post(t, '/v1/state', { cell: C, view: 'cube', tslot: 40 });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
    assert.equal(r.body.vector, null);
    assert.equal(r.body.missing.length, 14);
    assert.ok(r.body.missing.every((m: any) => m.reason === 'outside_coverage'));
    assert.ok(r.body.slots.every((s: any) => s.fact_cid === null));
    assert.deepEqual(r.body.receipt.fact_cids, []);
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(connector.calls.length, calls);
  });

  it('the encoder view is unchanged; a future anchor and a binary band are typed errors', async () => {
    const e = await post(t, '/v1/state', { cell: C, tslot: 55 });
    assert.equal(e.body.view, 'encoder');
    assert.equal(e.body.dim, 128);
    assert.deepEqual(e.body.vector, stored[55]);
    assert.equal(e.body.slots, undefined);
    fails(await post(t, '/v1/state', { cell: C, view: 'cube', tslot: P.currentTslot('slow') + 5 }), 422, 'tslot_mismatch', 'tslot');
    fails(await post(t, '/v1/state', { cell: C, view: 'cube', encoder: 'geotessera.bin128' }), 422, 'invalid_argument', 'encoder');
  });
});

describe('POST /v1/state_multi {view: "cube"}', () => {
  it('one cube per annual encoder, every missing slot typed', async () => {
    const r = await post(t, '/v1/state_multi', { cell: C, view: 'cube', tslot: 55 });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
    assert.equal(r.body.view, 'cube');
    assert.deepEqual(r.body.encoders, ['geotessera']);
    assert.equal(r.body.states.length, 1);
    const s = r.body.states[0];
    assert.deepEqual([s.encoder, s.dim, s.tslot, s.vector.length, s.slots.length], ['geotessera', 1792, 55, 1792, 14]);
    assert.deepEqual(s.vector.slice(13 * 128), stored[55]);
    assert.equal(r.body.missing.length, 10);
    assert.equal(r.body.receipt.primitive, 'svc.state_multi');
    assert.ok(P.verifyResponse(r.body, { publicKey: t.service.keys.publicKeyB32 }).valid);
    const none = await post(t, '/v1/state_multi', { cell: C, view: 'cube', tslot: 40 });
    assert.deepEqual(none.body.states, []);
    assert.equal(none.body.missing.length, 14);
  });
});

describe('POST /v1/state_diff {view: "cube"}', () => {
  it('slot by slot: delta where both sides have the slot, nulls elsewhere, l2 and cosine over the compared slots', async () => {
    const calls = connector.calls.length;
    const r = await post(t, '/v1/state_diff', { cell: D, view: 'cube', tslot_a: 54, tslot_b: 55 });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
    const b = r.body;
    assert.equal(b.view, 'cube');
    // a: tslots 41..54, b: 42..55. Both sides have slots 11, 12, 13 (a: 52, 53, 54 = 1, 2, 3; b: 2, 3, 4); slot 10 is a's absence at 51.
    assert.equal(b.slots_compared, 3);
    assert.equal(b.delta.length, 1792);
    assert.ok(b.delta.slice(0, 11 * 128).every((x: unknown) => x === null));
    assert.ok(b.delta.slice(11 * 128).every((x: unknown) => x === 1));
    assert.ok(Math.abs(b.l2 - Math.sqrt(3 * 128)) < 1e-9);
    assert.ok(Math.abs(b.cosine - 20 / Math.sqrt(14 * 29)) < 1e-9);
    assert.equal(b.residual, null);
    assert.equal(b.residual_l2, null);
    assert.deepEqual([b.a.tslot, b.a.kind, b.a.fact_cid, b.b.tslot], [54, 'cube', null, 55]);
    assert.equal(b.a.value.length, 1792);
    assert.deepEqual(b.a.value.slice(13 * 128), ones(3));
    assert.deepEqual(
      b.a.missing.find((m: any) => m.tslot === 51),
      { encoder: 'geotessera', slot: 10, tslot: 51, reason: 'absence', detail: 'signed absence (outside_coverage)', fact_cid: dCids[0] },
    );
    assert.ok(b.a.missing.filter((m: any) => m.tslot < FIRST).every((m: any) => m.reason === 'outside_coverage'));
    assert.ok(b.a.missing.filter((m: any) => m.tslot >= FIRST && m.tslot < 51).every((m: any) => m.reason === 'not_stored'));
    assert.equal(b.receipt.primitive, 'svc.state_diff');
    assert.deepEqual([...b.receipt.fact_cids].sort(), [...dCids].sort());
    assert.ok(verifies(t, b.receipt));
    const v = P.verifyResponse(b, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, v.errors.join('; '));
    assert.equal(connector.calls.length, calls, 'state_diff never fetches');
  });

  it('no slot on both sides: delta null, no l2 or cosine; the encoder view is unchanged', async () => {
    const r = await post(t, '/v1/state_diff', { cell: D, view: 'cube', tslot_a: 40, tslot_b: 55 });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
    assert.equal(r.body.slots_compared, 0);
    assert.equal(r.body.delta, null);
    assert.equal(r.body.a.value, null);
    assert.equal(r.body.l2, undefined);
    assert.equal(r.body.cosine, undefined);
    assert.ok(verifies(t, r.body.receipt));
    const e = await post(t, '/v1/state_diff', { cell: D, tslot_a: 54, tslot_b: 55 });
    assert.equal(e.body.view, 'encoder');
    assert.deepEqual(e.body.delta, ones(1));
    assert.equal(e.body.slots_compared, undefined);
  });
});
