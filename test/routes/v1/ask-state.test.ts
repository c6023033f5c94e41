/**
 * Answer steps of /v1/ask and their svc:state: tokens (docs/ask.md, "Answer steps"): by default
 * a question never enters the public log; the step is kept outside it for a retention window and
 * resolves over REST and MCP until then. keep: "public" and keep: "scope" are opt-ins to a
 * durable record. Tools that keep something say so in their MCP annotations.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { bearerFor } from '../../support/scopes.js';
import { post } from './reads/helpers.js';

const owner = makeAttester('ask-state-owner');
const SCOPE = { agent_id: 'ask-state-private' };
const QUESTION = 'Tell me a joke about my neighbour Ada Lovelace';

describe('answer steps (svc:state:)', () => {
  let t: TestApp;
  let base = '';
  let skewMs = 0;
  before(async () => {
    t = await build({ attesterKeys: [owner.publicKey] }, {}, { materializers: [], now: () => new Date(Date.now() + skewMs) });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => t.close());

  /** Every log entry's stored bytes, as one text (CBOR keeps strings as UTF-8). */
  const logText = async () => {
    const size = await t.service.store.log.size();
    const parts: string[] = [];
    for (let i = 0; i < size; i++) parts.push(Buffer.from((await t.service.store.log.entry(i))!).toString('latin1'));
    return parts.join('\n');
  };
  /** Every log entry as the public reads it (GET /v1/log/entries/:i, anonymous). */
  const publicLogText = async () => {
    const size = await t.service.store.log.size();
    const parts: string[] = [];
    for (let i = 0; i < size; i++) {
      const e = (await t.app.inject({ method: 'GET', url: `/v1/log/entries/${i}` })).json();
      parts.push(JSON.stringify(e), e.cbor_hex ? Buffer.from(e.cbor_hex, 'hex').toString('latin1') : '');
    }
    return parts.join('\n');
  };
  const mcp = async (name: string, args: object, headers: Record<string, string> = {}) => {
    const r = await fetch(`${base}/mcp/full`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: name === 'tools/list' ? 'tools/list' : 'tools/call', params: name === 'tools/list' ? {} : { name, arguments: args } }),
    });
    return (await r.json()).result;
  };

  it('by default a question never enters the public log, however often it is asked', async () => {
    const size = await t.service.store.log.size();
    let last: any;
    for (let i = 0; i < 15; i++) {
      const r = await post(t, '/v1/ask', { q: QUESTION });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      last = r.body;
    }
    assert.equal(await t.service.store.log.size(), size, 'the public tree did not grow');
    assert.ok(!(await logText()).includes('Lovelace'));
    assert.ok(!(await publicLogText()).includes('Lovelace'));
    assert.equal(last.state.kept, 'transient');
    assert.equal(last.state.persisted, true);
    assert.equal(last.state.cid, last.state.record_cid);
    assert.equal(last.state.token, `svc:state:${last.state.record_cid}`);
    const until = Date.parse(last.state.kept_until) - Date.now();
    assert.ok(Math.abs(until - t.service.config.askStateRetentionSecs * 1000) < 5_000, last.state.kept_until);
  });

  it('a transient step resolves over REST and MCP until its retention window ends, then is gone', async () => {
    const a = (await post(t, '/v1/ask', { q: `${QUESTION}, again` })).body;
    const rest = await t.app.inject({ method: 'GET', url: `/v1/state/${encodeURIComponent(a.state.token)}` });
    assert.equal(rest.statusCode, 200, rest.body);
    const s = rest.json();
    assert.deepEqual(s.state, a.state.record);
    assert.equal(s.kept, 'transient');
    assert.equal(s.kept_until, a.state.kept_until);
    assert.equal(s.record_cid, P.contentId(s.state), 'anyone recomputes the id from the record');
    assert.ok(s.receipt.fact_cids.includes(a.state.record_cid));
    assert.ok(P.verifyReceipt(s.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid);
    const viaMcp = await mcp('svc_state_resolve', { token: a.state.token });
    assert.notEqual(viaMcp.isError, true, JSON.stringify(viaMcp));
    assert.deepEqual(viaMcp.structuredContent.state, a.state.record);
    skewMs = (t.service.config.askStateRetentionSecs + 1) * 1000;
    try {
      const gone = await t.app.inject({ method: 'POST', url: '/v1/state/resolve', payload: { token: a.state.token } });
      assert.deepEqual([gone.statusCode, gone.json().code], [404, 'cid_not_found']);
    } finally {
      skewMs = 0;
    }
  });

  it('keep: "public" opts in to a durable signed fact in the public log, verifying offline', async () => {
    const size = await t.service.store.log.size();
    const a = (await post(t, '/v1/ask', { q: 'How high is Lyon, France?', keep: 'public' })).body;
    assert.equal(a.state.kept, 'public');
    assert.equal(a.state.kept_until, null);
    assert.equal(await t.service.store.log.size(), size + 1);
    const s = (await t.app.inject({ method: 'GET', url: `/v1/state/${encodeURIComponent(a.state.token)}` })).json();
    assert.deepEqual(s.state, a.state.record);
    assert.equal(s.kept, 'public');
    assert.equal(s.fact.fact_cid, a.state.cid);
    assert.equal(s.fact.band, 'ask.state');
    assert.match(s.fact.cell, /^svc:entity:/);
    const v = P.verifyResponse(s, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, v.errors.join('; '));
    // The step never shows up in a read of its place.
    const r = (await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell: a.place_resolved.cell64 } })).json();
    assert.ok(!r.bands_already_attested_at_cell.includes('ask.state'));
  });

  it('keep: "scope" keeps the step in the caller\'s scope: its bearer only, over REST and MCP', async () => {
    const body = { q: `${QUESTION} in private`, keep: 'scope', scope: SCOPE };
    const anon = await post(t, '/v1/ask', body);
    assert.equal(anon.status, 401, JSON.stringify(anon.body));
    const auth = await bearerFor(t, owner, SCOPE);
    const a = await post(t, '/v1/ask', body, { authorization: auth });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(a.body.state.kept, 'scope');
    assert.ok(!(await publicLogText()).includes('in private'), 'a scoped entry publishes no body');
    const token = a.body.state.token;
    const own = await t.app.inject({ method: 'POST', url: '/v1/state/resolve', payload: { token }, headers: { authorization: auth } });
    assert.equal(own.statusCode, 200, own.body);
    assert.equal(own.json().kept, 'scope');
    assert.deepEqual(own.json().receipt.scope, SCOPE);
    const other = await t.app.inject({ method: 'POST', url: '/v1/state/resolve', payload: { token } });
    const never = await t.app.inject({ method: 'POST', url: '/v1/state/resolve', payload: { token: `svc:state:${'a'.repeat(52)}` } });
    assert.equal(other.statusCode, 404);
    assert.equal(other.body.replaceAll(token.slice(10), 'a'.repeat(52)), never.body, 'the same answer as a step never kept');
    const viaMcp = await mcp('svc_state_resolve', { token }, { authorization: auth });
    assert.equal(viaMcp.structuredContent.kept, 'scope');
    // The scope is refused without keep: "scope", and keep: "scope" without a scope.
    assert.equal((await post(t, '/v1/ask', { q: 'x', keep: 'scope' })).status, 422);
    assert.equal((await post(t, '/v1/ask', { q: 'x', scope: SCOPE }, { authorization: auth })).status, 422);
  });

  it('MCP annotations tell the truth: ask, entity and memory_bundle keep something; reads do not', async () => {
    const tools = (await mcp('tools/list', {})).tools as Array<{ name: string; annotations: { readOnlyHint: boolean } }>;
    const hint = (n: string) => tools.find((x) => x.name === n)!.annotations.readOnlyHint;
    for (const n of ['svc_ask', 'svc_entity', 'svc_memory_bundle']) assert.equal(hint(n), false, n);
    for (const n of ['svc_recall', 'svc_state_resolve', 'svc_memory_search', 'svc_locate']) assert.equal(hint(n), true, n);
  });
});
