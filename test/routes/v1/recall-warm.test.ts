/**
 * Prepared warm answers (primitives/reads/warm-reads.ts): a repeated recall reuses the facts, caveats
 * and ETag it computed before, but never past a write to the cell, a slot boundary, or for
 * answers that age with the clock — and every response still carries its own signed receipt.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { recall as recallPrimitive } from '../../../src/primitives/reads/recall.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { fakeConnector, type FakeConnector } from '../../support/fake-connector.js';

let t: TestApp;
let fake: FakeConnector;
const op = makeAttester('warm-operator');
// The service clock: tests move it forward to cross slot boundaries.
let clock = Date.now();
let n = 0;
const freshCell = () => P.cellOf(-20 + n++ * 0.01, 40);

before(async () => {
  fake = fakeConnector(['weather.temperature_2m', 'copdem30m.elevation_mean']);
  t = await build({ attesterKeys: [op.publicKey], materializerTimeoutSecs: 2 }, {}, { materializers: [fake], now: () => new Date(clock) });
});
after(async () => t.close());

const recall = async (body: Record<string, unknown>) => {
  const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: body });
  assert.equal(r.statusCode, 200, r.body);
  return { body: r.json(), etag: r.headers.etag };
};
const verifies = (receipt: any) => P.verifyReceipt(receipt, { publicKey: t.service.keys.publicKeyB32 }).valid;

describe('warm recall answers', () => {
  it('a repeat returns the same facts and ETag under a receipt of its own', async () => {
    const cell = freshCell();
    const first = await recall({ cell, bands: ['copdem30m.elevation_mean'] });
    const second = await recall({ cell, bands: ['copdem30m.elevation_mean'] });
    const third = await recall({ cell, bands: ['copdem30m.elevation_mean'] });
    assert.deepEqual(third.body.facts, second.body.facts);
    assert.deepEqual(second.body.facts, first.body.facts);
    assert.equal(third.etag, first.etag);
    assert.notEqual(third.body.receipt.request_id, second.body.receipt.request_id);
    assert.notEqual(third.body.receipt.signature, second.body.receipt.signature);
    assert.ok(verifies(second.body.receipt) && verifies(third.body.receipt));
    assert.equal(third.body.receipt.cost.was_cached, true);
    assert.deepEqual(third.body.materialize_notes, []);
    // The warm receipt (re-issued from a template) has the cold one's fields, in the same order.
    const fixed = (r: any) => {
      const { request_id: _i, served_at: _s, signature: _g, cost: _c, ...rest } = r;
      return rest;
    };
    assert.deepEqual(Object.keys(third.body.receipt), Object.keys(first.body.receipt));
    assert.deepEqual(fixed(third.body.receipt), fixed(first.body.receipt));
  });

  it('a write to the cell is visible to the very next read (new band, newer fact)', async () => {
    const cell = freshCell();
    const slot = P.currentTslot('fast', clock);
    const base = { kind: 'primary', cell, band: 'weather.temperature_2m', unit: 'degC', signed_at: new Date(clock).toISOString().slice(0, 19) + 'Z' };
    const w1 = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch([{ ...base, tslot: slot - 1, value: 1 }], t.service.manifests) });
    assert.equal(w1.statusCode, 200, w1.body);
    const before = await recall({ cell });
    await recall({ cell });
    assert.deepEqual(
      before.body.facts.map((f: any) => f.value),
      [1],
    );
    assert.deepEqual(before.body.bands_already_attested_at_cell, ['weather.temperature_2m']);

    const w2 = await t.app.inject({
      method: 'POST',
      url: '/v1/attest',
      payload: op.batch(
        [
          { ...base, tslot: slot, value: 2 },
          { ...base, band: 'indices.ndvi', unit: 'unitless', tslot: P.currentTslot('medium', clock), value: 0.5 },
        ],
        t.service.manifests,
      ),
    });
    assert.equal(w2.statusCode, 200, w2.body);
    const after = await recall({ cell });
    assert.deepEqual(
      after.body.facts.map((f: any) => [f.band, f.value]),
      [
        ['indices.ndvi', 0.5],
        ['weather.temperature_2m', 2],
      ],
    );
    assert.deepEqual(after.body.bands_already_attested_at_cell, ['indices.ndvi', 'weather.temperature_2m']);
    assert.notEqual(after.etag, before.etag);
  });

  it('a fact that falls due at a slot boundary is refreshed on the first read after it', async () => {
    const cell = freshCell();
    const body = { cell, bands: ['weather.temperature_2m'] };
    // Five seconds before the fast tempo's next slot (the next UTC midnight): well inside the
    // longest reuse, so only the slot boundary can end it.
    const slotEnd = (P.currentTslot('fast', clock) + 1) * 86_400_000;
    clock = slotEnd - 5_000;
    const first = await recall(body);
    assert.equal(first.body.materialize_notes[0]?.status, 'materialized');
    const calls = fake.calls.length;
    await recall(body);
    await recall(body);
    assert.equal(fake.calls.length, calls, 'inside the slot a warm read asks no upstream');
    clock = slotEnd + 1_000;
    const next = await recall(body);
    assert.equal(fake.calls.length, calls + 1, 'the due fact was refreshed');
    assert.equal(next.body.facts[0].tslot, P.currentTslot('fast', clock));
    assert.notEqual(next.etag, first.etag);
  });

  it('freshness is computed on every read (it ages with the clock)', async () => {
    const cell = freshCell();
    const body = { cell, bands: ['copdem30m.elevation_mean'], include: ['freshness'] };
    const a = await recall(body);
    clock += 10_000;
    const b = await recall(body);
    assert.equal(b.body.freshness[0].age_s - a.body.freshness[0].age_s, 10);
  });

  it('served facts are shared read-only: a caller cannot alter what the next response carries', async () => {
    const cell = freshCell();
    await recall({ cell, bands: ['copdem30m.elevation_mean'] });
    const r = await recallPrimitive(t.service, { cell, bands: ['copdem30m.elevation_mean'] });
    assert.throws(() => {
      (r.facts[0] as any).value = 0;
    }, TypeError);
    assert.throws(() => {
      r.caveats.push('x');
    }, TypeError);
    const again = await recall({ cell, bands: ['copdem30m.elevation_mean'] });
    assert.equal(again.body.facts[0].value, 42.5);
  });
});
