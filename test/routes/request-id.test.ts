/**
 * Request ids (docs/deploy.md, "Logs and request ids"): every answer carries `X-Request-Id`, a
 * fresh ULID or the caller's own when it is well formed; the request's JSON log lines carry the
 * same id as `reqId`, and the "request completed" line names the answer's receipt request_id.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { lifecycleOf } from '../../src/api/shutdown.js';
import { build, type TestApp } from '../support/app.js';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

let t: TestApp;
let logged: FastifyInstance;
const lines: any[] = [];
let base: string;

before(async () => {
  t = await build();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  // A second app over the same service, logging JSON lines into the test.
  logged = await buildApp(t.service, { logger: { level: 'info', stream: { write: (l: string) => void lines.push(JSON.parse(l)) } } });
  await logged.ready();
});
after(async () => {
  await logged.close();
  await t.close();
});

describe('X-Request-Id', () => {
  it('is a fresh ULID per request when none is sent', async () => {
    const a = await t.app.inject({ method: 'GET', url: '/health' });
    const b = await t.app.inject({ method: 'GET', url: '/health' });
    assert.match(String(a.headers['x-request-id']), ULID);
    assert.match(String(b.headers['x-request-id']), ULID);
    assert.notEqual(a.headers['x-request-id'], b.headers['x-request-id']);
  });

  it('keeps a well-formed incoming id (a proxy or the client names the request)', async () => {
    for (const id of ['trace-42', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'Root=1-67891233-abcdef012345678912345678', 'a'.repeat(128)]) {
      const r = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': id } });
      assert.equal(r.headers['x-request-id'], id);
    }
  });

  it('replaces a malformed one (spaces, separators, quotes, too long, empty) with a fresh ULID', async () => {
    for (const id of ['has space', 'a,b', 'x"y', 'semi;colon', 'a'.repeat(129), '', 'new\\nline']) {
      const r = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': id } });
      assert.match(String(r.headers['x-request-id']), ULID, JSON.stringify(id));
    }
  });

  it('is on error envelopes, on answers refused before routing and on hijacked MCP answers', async () => {
    const notFound = await t.app.inject({ method: 'GET', url: '/no/such/route', headers: { 'x-request-id': 'nf-1' } });
    assert.equal(notFound.statusCode, 404);
    assert.equal(notFound.headers['x-request-id'], 'nf-1');
    const invalid = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell: 'defi.zb400' }, headers: { 'x-request-id': 'bad-cell-1' } });
    assert.equal(invalid.statusCode, 422);
    assert.equal(invalid.headers['x-request-id'], 'bad-cell-1');
    const badUrl = await t.app.inject({ method: 'GET', url: '/v1/cells/%E0%A4%A', headers: { 'x-request-id': 'bad-url-1' } });
    assert.ok(badUrl.statusCode >= 400);
    assert.equal(badUrl.headers['x-request-id'], 'bad-url-1');
    const mcp = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-request-id': 'mcp-1' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_corpus_state_stats', arguments: {} } }),
    });
    assert.equal(mcp.status, 200);
    assert.equal(mcp.headers.get('x-request-id'), 'mcp-1');
    await mcp.text();
  });

  it('is on the 503 of a request that arrives while the responder shuts down, which also closes the connection', async () => {
    const other = await buildApp(t.service);
    try {
      lifecycleOf(other).closing = true;
      const r = await other.inject({ method: 'GET', url: '/v1/limits', headers: { 'x-request-id': 'late-1' } });
      assert.equal(r.statusCode, 503);
      assert.equal(r.json().code, 'overloaded');
      assert.equal(r.headers['x-request-id'], 'late-1');
      assert.equal(r.headers.connection, 'close');
    } finally {
      await other.close();
    }
  });
});

describe('request log lines', () => {
  it('name the request id (reqId) on each line of a request, and the receipt request_id of its answer', async () => {
    lines.length = 0;
    const r = await logged.inject({ method: 'GET', url: '/v1/corpus_state_stats', headers: { 'x-request-id': 'log-1' } });
    assert.equal(r.statusCode, 200);
    const receiptId = r.json().receipt.request_id;
    assert.match(receiptId, ULID);
    const mine = lines.filter((l) => l.reqId === 'log-1');
    assert.deepEqual(
      mine.map((l) => l.msg),
      ['incoming request', 'request completed'],
    );
    const done = mine[1];
    assert.equal(done.res.statusCode, 200);
    assert.equal(done.res.receipt_request_id, receiptId, 'the receipt id is on the completion line');
    assert.equal(typeof done.responseTime, 'number');
    assert.equal(typeof done.level, 'number');
    // An answer without a receipt logs none.
    lines.length = 0;
    await logged.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'log-2' } });
    const health = lines.find((l) => l.reqId === 'log-2' && l.msg === 'request completed');
    assert.ok(health);
    assert.equal(health.res.receipt_request_id, undefined);
  });
});
