/**
 * MCP JSON-RPC batches and the per-IP rate limit (issue 13, item 7): the probe got 2 000 tool
 * calls through in 1.3 s against 600/min by packing 100 calls into each HTTP request. Every
 * message of a batch now counts as a request; the refused ones answer rate_limited (JSON-RPC
 * code -23, retry_after 1) in their slot of the batch answer, the others run.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_CATALOGUE } from '../../src/protocol/errors.js';
import { build, type TestApp } from '../support/app.js';

const RPS = 10;
const BURST = 120;
let t: TestApp;
let base: string;

before(async () => {
  // The spec's defaults (600/min, burst 120); the test support lifts the limit unless told.
  t = await build({ rateLimitRps: RPS, rateLimitBurst: BURST }, {}, { materializers: [] });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => t.close());

async function post(body: unknown): Promise<{ status: number; json: any; retryAfter: string | null }> {
  const r = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null, retryAfter: r.headers.get('retry-after') };
}

let nextId = 1;
/** When the first test left the bucket empty: what refills after it depends on the time since. */
let drainedAt = 0;
const call = () => ({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'svc_corpus_state_stats', arguments: {} } });

describe('MCP batches count against the per-IP rate limit', () => {
  it('five batches of 100 tool calls: no more calls run than the bucket allows; the rest answer rate_limited in place', async (tc) => {
    const started = Date.now();
    let ran = 0;
    let refused = 0;
    let refusedRequests = 0;
    for (let b = 0; b < 5; b++) {
      const batch = Array.from({ length: 100 }, call);
      const r = await post(batch);
      if (r.status === 429) {
        // The HTTP request itself found the bucket empty: the REST envelope, nothing ran.
        refusedRequests++;
        assert.equal(r.json.code, 'rate_limited');
        assert.equal(r.retryAfter, '1');
        continue;
      }
      assert.equal(r.status, 200);
      assert.ok(Array.isArray(r.json), 'a batch is answered by a batch');
      assert.deepEqual(
        r.json.map((m: any) => m.id),
        batch.map((m) => m.id),
        'one answer per call, in order',
      );
      for (const m of r.json) {
        if (m.result) {
          assert.notEqual(m.result.isError, true, JSON.stringify(m.result).slice(0, 200));
          ran++;
          continue;
        }
        refused++;
        assert.equal(m.error.code, ERROR_CATALOGUE.rate_limited.mcp);
        assert.equal(m.error.data.code, 'rate_limited');
        assert.equal(m.error.data.retry_after, 1);
        assert.equal(m.error.data.schema, 'svc.error.v1');
        assert.equal(m.error.data.path, '/mcp');
      }
    }
    const elapsed = (Date.now() - started) / 1000;
    const allowed = BURST + Math.ceil(elapsed * RPS) + 1;
    tc.diagnostic(`${ran} calls ran, ${refused} refused in place, ${refusedRequests} whole requests refused, in ${elapsed.toFixed(2)} s (bucket allows ${allowed})`);
    assert.ok(ran <= allowed, `${ran} tool calls ran in ${elapsed.toFixed(2)} s; the bucket allows ${allowed}`);
    assert.ok(ran >= BURST - 5, `${ran} calls ran: the burst is served`);
    assert.equal(ran + refused + refusedRequests * 100, 500);
    drainedAt = Date.now();
  });

  it('every kind of message counts (tools/list and ping as much as tools/call)', async () => {
    // The bucket is empty after the first test: wait for 5 tokens, then send 20 cheap messages.
    await new Promise((r) => setTimeout(r, 500));
    const batch = Array.from({ length: 20 }, (_, i) => ({ jsonrpc: '2.0', id: nextId++, method: i % 2 ? 'tools/list' : 'ping' }));
    const r = await post(batch);
    assert.equal(r.status, 200);
    const served = r.json.filter((m: any) => m.result).length;
    // Tokens refilled since the bucket was drained (a loaded machine takes longer than the 500 ms
    // wait, so the count follows the clock), plus one for the token being refilled.
    const tokens = Math.ceil(((Date.now() - drainedAt) / 1000) * RPS) + 1;
    assert.ok(served <= Math.min(tokens, 19), `${served} of 20 messages served on about ${tokens} tokens`);
    assert.ok(r.json.some((m: any) => m.error?.data?.code === 'rate_limited'));
  });

  it('an empty batch is an Invalid Request (JSON-RPC 2.0), not a silent 202', async () => {
    await new Promise((r) => setTimeout(r, 300));
    const r = await post([]);
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32600);
    assert.equal(r.json.id, null);
    assert.equal(r.json.error.data.code, 'invalid_argument');
  });
});
