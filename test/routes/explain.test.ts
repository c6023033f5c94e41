/**
 * POST /v1/explain (docs/memory-insight.md): deterministic prose about a read, labelled
 * signed: false, citing the fact_cids of the read; the response is verified first.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';
import { bearerFor } from '../support/scopes.js';

const a = makeAttester('insight-explain-a');
const A = P.cellOf(48.11, 11.51);
const SCOPE = { agent_id: 'insight-explain-agent' };
const DAY = Math.floor(Date.now() / 86_400_000) - 1;

type Json = Record<string, any>;
let t: TestApp;
let scopedCid = '';
const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
  const r = await t.app.inject({ method: 'POST', url, payload: payload as object, headers });
  return { status: r.statusCode, body: r.json() as Json };
};

before(async () => {
  t = await build({ attesterKeys: [a.publicKey] }, {}, { materializers: [] });
  const facts = [
    { kind: 'primary', cell: A, band: 'weather.temperature_2m', tslot: DAY, value: 11.5, unit: 'degC', signed_at: '2026-11-20T09:30:00Z' },
    { kind: 'primary', cell: A, band: 'landcover.esa_worldcover_2021', tslot: 0, value: 40, signed_at: '2026-11-20T09:30:00Z' },
    { kind: 'absence', cell: A, band: 'copdem30m.elevation_mean', tslot: 0, value: null, absence_reason: 'outside_coverage', signed_at: '2026-11-20T09:30:00Z' },
  ];
  const r = await post('/v1/attest', a.batch(facts, t.service.manifests));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const s = await post('/v1/attest', a.batch([{ ...facts[0], cell: A, value: 3, scope: SCOPE }], t.service.manifests));
  assert.equal(s.status, 200, JSON.stringify(s.body));
  scopedCid = s.body.fact_cids[0];
});
after(async () => t?.close());

const recallA = async () => (await post('/v1/recall', { cell: A, bands: ['weather.temperature_2m', 'landcover.esa_worldcover_2021', 'copdem30m.elevation_mean'] })).body;

describe('POST /v1/explain', () => {
  it('verifies a read, then explains every fact it cites in unsigned prose', async () => {
    const read = await recallA();
    assert.equal(read.facts.length, 3);
    const r = await post('/v1/explain', { response: read });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.signed, false);
    assert.equal(r.body.receipt, undefined, 'the prose is not signed: no receipt');
    assert.equal(r.body.verified, true);
    assert.equal(r.body.verification.signed_by_this_responder, true);
    assert.deepEqual([...r.body.cites].sort(), [...read.receipt.fact_cids].sort());
    const text: string = r.body.explanation;
    assert.match(text, /The response verified/);
    assert.match(text, /Air temperature|temperature/i);
    assert.match(text, /11\.5 degC/);
    assert.match(text, /class 40 \(Cropland\)/);
    assert.match(text, /signed absence: outside_coverage, meaning the cell lies outside the source's coverage/);
    assert.match(text, /an operator-listed attester key/);
    assert.match(text, /unsigned text/);
    for (const cid of r.body.cites) assert.ok(text.includes(cid), `the prose cites ${cid}`);
    const temp = r.body.per_fact.find((f: Json) => f.band === 'weather.temperature_2m');
    assert.deepEqual(
      [temp.value, temp.unit, temp.attester, temp.attester_role, temp.provenance_class, temp.signed_at],
      [11.5, 'degC', a.publicKey, 'operator', 'model_output', '2026-11-20T09:30:00Z'],
    );
    assert.deepEqual(temp.in_response, { shown: true, ok: true, failures: [] });
    // An operator's value is a statement: explain names its origin, never "a direct sensor reading".
    assert.equal(temp.origin, 'written_by_attester');
    assert.match(temp.sentence, /stated by that key, not fetched from the source/);
    assert.doesNotMatch(text, /a direct sensor reading/);
    // Deterministic: the same read explains in the same words.
    assert.equal((await post('/v1/explain', { response: read })).body.explanation, text);
  });

  it('says so when the response does not verify, and explains the stored facts instead', async () => {
    const read = structuredClone(await recallA());
    const i = read.facts.findIndex((f: Json) => f.band === 'weather.temperature_2m');
    read.facts[i].value = 30;
    const r = await post('/v1/explain', { response: read });
    assert.equal(r.body.verified, false);
    assert.ok(r.body.verification.failures.includes('cid_mismatch'));
    assert.match(r.body.explanation, /did NOT verify/);
    const temp = r.body.per_fact.find((f: Json) => f.band === 'weather.temperature_2m');
    assert.equal(temp.value, 11.5, 'the stored, signed value');
    assert.equal(temp.in_response.ok, false);
    assert.match(temp.sentence, /failed its checks/);
  });

  it('explains fact_cids directly (verified: null); unknown and scoped ones are not found without the bearer', async () => {
    const read = await recallA();
    const unknown = 'a'.repeat(52);
    const r = await post('/v1/explain', { fact_cids: [read.facts[0].fact_cid, unknown, scopedCid] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.verified, null);
    assert.deepEqual(r.body.cites, [read.facts[0].fact_cid]);
    assert.deepEqual(
      r.body.per_fact.map((f: Json) => f.found),
      [true, false, false],
    );
    const own = await post('/v1/explain', { fact_cids: [scopedCid], scope: SCOPE }, { authorization: await bearerFor(t, a, SCOPE) });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.deepEqual(own.body.cites, [scopedCid]);
    assert.match(own.body.per_fact[0].sentence, /Written under a scope/);
    assert.equal((await post('/v1/explain', { fact_cids: [scopedCid], scope: SCOPE })).status, 401);
  });

  it('refuses both or neither input, naming the field', async () => {
    const both = await post('/v1/explain', { response: {}, fact_cids: ['a'.repeat(52)] });
    assert.equal(both.status, 422);
    const neither = await post('/v1/explain', {});
    assert.equal(neither.status, 422);
    assert.equal(neither.body.details.field, 'response');
  });

  it('is an MCP tool that answers what REST answers', async () => {
    const read = await recallA();
    const res = (
      await t.app.inject({
        method: 'POST',
        url: '/mcp/full',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_explain', arguments: { response: read } } },
      })
    ).json().result;
    assert.equal(res.isError, undefined, JSON.stringify(res).slice(0, 300));
    assert.equal(res.structuredContent.explanation, (await post('/v1/explain', { response: read })).body.explanation);
  });
});
