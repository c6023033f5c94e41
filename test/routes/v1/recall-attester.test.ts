import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester, sampleFact } from '../../support/attester.js';
import { fakeConnector } from '../../support/fake-connector.js';

const a = makeAttester('filter-a');
const b = makeAttester('filter-b');
const cell = P.cellOf(45.764, 4.8357);
let t: TestApp;
before(async () => {
  t = await build({ attesterKeys: [a.publicKey, b.publicKey] }, {}, { materializers: [fakeConnector(['weather.temperature_2m'])] });
  const m = t.service.manifests;
  const post = (body: unknown) => t.app.inject({ method: 'POST', url: '/v1/attest', payload: body as object });
  assert.equal((await post(a.batch([sampleFact({ cell, value: 10, tslot: 20_000, signed_at: undefined })], m))).statusCode, 200);
  assert.equal((await post(b.batch([sampleFact({ cell, value: 30, tslot: 20_000, signed_at: undefined })], m))).statusCode, 200);
});
after(async () => t?.close());

const recall = async (body: Record<string, unknown>) =>
  (await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell, bands: ['weather.temperature_2m'], tslot: 20_000, ...body } })).json();

describe('POST /v1/recall with attester', () => {
  it("serves each band's newest fact by the listed key, and says who signed it", async () => {
    const all = await recall({});
    assert.equal(all.facts[0].value, 30, 'without a filter: the newest fact');
    const onlyA = await recall({ attester: [a.publicKey] });
    assert.equal(onlyA.facts.length, 1);
    assert.equal(onlyA.facts[0].value, 10);
    assert.equal(onlyA.fact_meta[onlyA.facts[0].fact_cid].attester, a.publicKey);
    assert.equal(onlyA.fact_meta[onlyA.facts[0].fact_cid].attester_role, 'operator');
    assert.deepEqual(onlyA.receipt.fact_cids, [onlyA.facts[0].fact_cid]);
    assert.equal(P.verifyResponse(onlyA).valid, true);
  });

  it('fetches nothing upstream unless the responder key is listed', async () => {
    const other = makeAttester('filter-none');
    const none = await recall({ attester: [other.publicKey], tslot: undefined, bands: ['weather.temperature_2m'] });
    assert.equal(none.facts.length, 0);
    assert.deepEqual(none.materialize_notes, []);
    const mine = await recall({ attester: [t.service.keys.publicKeyB32], tslot: undefined });
    assert.equal(mine.facts.length, 1);
    assert.equal(mine.fact_meta[mine.facts[0].fact_cid].attester_role, 'responder');
    assert.equal(mine.fact_meta[mine.facts[0].fact_cid].source, 'fake');
  });

  it('refuses a key that is not base32', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell, attester: ['not-a-key'] } });
    assert.equal(r.statusCode, 422);
    assert.equal(r.json().code, 'invalid_argument');
  });
});

describe('GET /v1/contributors', () => {
  it('counts public facts per attester with its role', async () => {
    const body = (await t.app.inject({ method: 'GET', url: '/v1/contributors' })).json();
    const byKey = Object.fromEntries(body.attesters.map((x: { attester: string }) => [x.attester, x]));
    assert.deepEqual([byKey[a.publicKey].facts, byKey[a.publicKey].role], [1, 'operator']);
    assert.deepEqual([byKey[b.publicKey].facts, byKey[b.publicKey].role], [1, 'operator']);
    assert.equal(byKey[t.service.keys.publicKeyB32].role, 'responder');
    assert.ok(Array.isArray(body.sources) && body.sources.length > 0);
  });
});
