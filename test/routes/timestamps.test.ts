/**
 * Client timestamps are strict RFC 3339 (issue 13, item 12) where they enter a signed answer or
 * a signed body: recall's as_of_signed_at (REST and MCP, and recall_many through it) and an
 * attested fact's signed_at. The probe had "1", "2026-02-31" (read as March 3) and
 * "+010000-01-01T00:00Z" (signed as a malformed as_of) accepted. src/protocol/rfc3339.ts has the
 * grammar's own table; this checks the routes use it.
 *
 * And no fact's times lie ahead of the responder's clock beyond the published skew: a signed_at
 * in 2099 or a capture time not yet reached is refused on every write path (attest, and the
 * responder's own materialization and backfill, which skip such an upstream value).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester, sampleFact } from '../support/attester.js';
import { fakeConnector } from '../support/fake-connector.js';

const op = makeAttester('timestamps');
/** The responder's clock in the tests below: fixed, so "ahead" means ahead of this. */
const NOW = Date.parse('2026-11-24T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** A connector that reports an observation captured a day after the responder's now, for every slot. */
const ahead = fakeConnector(['weather.temperature_2m'], {
  'weather.temperature_2m': () => ({ status: 'value', value: 12, provenance: { source: 'fake', ref: 'r', captured_at: iso(NOW + 86_400_000) }, fn: 'fake@1' }),
});
(ahead as { history: boolean }).history = true;
let t: TestApp;
before(async () => {
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [ahead], now: () => new Date(NOW) });
});
after(async () => t.close());

const BAD = ['1', '2026-02-31T00:00:00Z', '+010000-01-01T00:00Z', '2026-02-31', '2026-01-01T00:00:00', '2026-12-31T23:59:60Z'];
const cell = P.cellOf(12.5, 7.25);

describe('client timestamps are strict RFC 3339', () => {
  for (const bad of BAD) {
    it(`recall as_of_signed_at ${JSON.stringify(bad)} → 422 invalid_argument naming the field`, async () => {
      const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell, bands: ['weather.temperature_2m'], as_of_signed_at: bad } });
      assert.equal(r.statusCode, 422, r.body.slice(0, 300));
      assert.equal(r.json().code, 'invalid_argument');
      assert.match(r.json().message, /^as_of_signed_at: /);
    });

    it(`attest signed_at ${JSON.stringify(bad)} → 422 invalid_argument, nothing written`, async () => {
      const size = await t.service.store.log.size();
      const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch([sampleFact({ tslot: 20_000, signed_at: bad })], t.service.manifests) });
      assert.equal(r.statusCode, 422, r.body.slice(0, 300));
      assert.equal(r.json().code, 'invalid_argument');
      assert.match(r.json().message, /signed_at: /);
      assert.equal(await t.service.store.log.size(), size);
    });
  }

  it('a valid offset time is accepted and bound to the receipt as its UTC second', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell, bands: ['weather.temperature_2m'], as_of_signed_at: '2026-01-01T01:00:00.750+01:00' } });
    assert.equal(r.statusCode, 200, r.body.slice(0, 300));
    assert.deepEqual(r.json().receipt.as_of, { transaction_time: '2026-01-01T00:00:00Z' });
  });

  it('the same refusal through MCP (one function behind both)', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_recall', arguments: { cell, as_of_signed_at: '2026-02-31T00:00:00Z' } } }),
    });
    const body = await res.json();
    assert.equal(body.result.isError, true);
    assert.equal(body.result.structuredContent.code, 'invalid_argument');
  });
});

describe('fact times ahead of the responder clock', () => {
  const sth = async () => {
    const r = await t.app.inject({ method: 'GET', url: '/v1/log/sth' });
    const { tree_size, root } = r.json();
    return { tree_size, root, size: await t.service.store.log.size() };
  };
  const attest = (facts: Record<string, unknown>[]) => t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch(facts, t.service.manifests) });

  it('signed_at in 2099 → 422 invalid_argument naming the field, with the reason and the skew; nothing written', async () => {
    const before = await sth();
    const f = sampleFact({ tslot: Math.floor(NOW / 86_400_000), signed_at: '2099-01-01T00:00:00Z' });
    const r = await attest([sampleFact({ signed_at: iso(NOW - 60_000) }), f]);
    assert.equal(r.statusCode, 422, r.body);
    const e = r.json();
    assert.deepEqual([e.code, e.details.field, e.details.reason, e.details.max_skew_s], ['invalid_argument', 'facts[1].signed_at', 'in_future', 300]);
    assert.match(e.message, /^facts\[1\]\.signed_at: signed_at 2099-01-01T00:00:00Z lies \d+ s ahead of this responder's clock \(2026-11-24T12:00:00Z\); at most 300 s/);
    assert.deepEqual(await sth(), before);
    assert.equal(await t.service.store.getFact(P.factCid(f)), null);
  });

  it('captured_at ahead → 422 naming derivation.captured_at; 301 s ahead is refused, 300 s accepted', async () => {
    const before = await sth();
    const at = (ms: number) => sampleFact({ signed_at: iso(NOW), derivation: { fn: 'x@1', sources: ['upstream'], captured_at: iso(ms) } });
    const r = await attest([at(NOW + 301_000)]);
    assert.equal(r.statusCode, 422, r.body);
    assert.deepEqual([r.json().code, r.json().details.field, r.json().details.reason], ['invalid_argument', 'facts[0].derivation.captured_at', 'in_future']);
    assert.deepEqual(await sth(), before);
    const ok = await attest([at(NOW + 300_000), sampleFact({ signed_at: iso(NOW + 300_000) })]);
    assert.equal(ok.statusCode, 200, ok.body);
  });

  it('/v1/limits publishes the skew', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/v1/limits' });
    assert.equal(r.json().fact_future_skew_s, 300);
  });

  it('an upstream value captured ahead is skipped by materialization and backfill, never signed', async () => {
    const before = await sth();
    const cell = P.cellOf(12.75, 7.5);
    const rec = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell, bands: ['weather.temperature_2m'] } });
    assert.equal(rec.statusCode, 200, rec.body);
    const note = rec.json().materialize_notes[0];
    assert.deepEqual([note.status, note.fact_cid], ['skipped', null]);
    assert.match(note.reason, /captured_at .* ahead of this responder's clock/);

    const body = {
      cell,
      band: 'weather.temperature_2m',
      start_unix: NOW / 1000 - 3 * 86_400,
      end_unix: NOW / 1000,
      responder: t.service.keys.publicKeyB32,
      nonce: 'n'.repeat(26),
      expires_unix: NOW / 1000 + 60,
      attester: op.publicKey,
    };
    const sig = P.portableEd25519.sign(P.blake3(P.encodeCanonical(body as P.CborValue)), op.seed);
    const bf = await t.app.inject({ method: 'POST', url: '/v1/backfill', payload: { ...body, signature: P.b32encode(sig) } });
    assert.equal(bf.statusCode, 200, bf.body);
    const steps = JSON.stringify(bf.json());
    assert.doesNotMatch(steps, /"status":"materialized"/);
    assert.match(steps, /captured_at .* ahead of this responder's clock/);
    assert.deepEqual(await sth(), before);
  });
});
