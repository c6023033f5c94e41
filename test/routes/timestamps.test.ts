/**
 * Client timestamps are strict RFC 3339 (issue 13, item 12) where they enter a signed answer or
 * a signed body: recall's as_of_signed_at (REST and MCP, and recall_many through it) and an
 * attested fact's signed_at. The probe had "1", "2026-02-31" (read as March 3) and
 * "+010000-01-01T00:00Z" (signed as a malformed as_of) accepted. src/protocol/rfc3339.ts has the
 * grammar's own table; this checks the routes use it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester, sampleFact } from '../support/attester.js';

const op = makeAttester('timestamps');
let t: TestApp;
before(async () => {
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [] });
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
