/**
 * Progress over MCP (docs/reads.md, "MCP"): a tools/call carrying a progressToken is answered as
 * an SSE stream, so the notifications/progress a hunt reports per sampled cell reach the client
 * before its result; every other request keeps the one JSON answer, and REST is unchanged.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import * as P from '../../src/protocol/index.js';
import type { MaterializeOutcome } from '../../src/sources/contract.js';
import { build, type TestApp } from '../support/app.js';
import { fakeConnector } from '../support/fake-connector.js';

const BOX = { min_lat: 41.6, min_lng: -83.2, max_lat: 41.62, max_lng: -83.18 };
const value = (v: number): MaterializeOutcome => ({ status: 'value', value: v, provenance: { source: 'fake', captured_at: '2026-11-20T00:00:00Z' }, fn: 'fake@1' });
// Reads that take a little while, spread out, so that the cells settle at different times.
const after_ = (ms: number, o: MaterializeOutcome) => new Promise<MaterializeOutcome>((r) => setTimeout(() => r(o), ms));
let n = 0;

let t: TestApp;
let base: string;
before(async () => {
  t = await build(
    {},
    {},
    {
      materializers: [
        fakeConnector(['indices.ndci', 'indices.mndwi'], {
          'indices.ndci': (r) => after_(20 + ((n++ * 37) % 400), value(0.3 + (r.center.lat - 41.6) * 10)),
          'indices.mndwi': () => value(0.4),
        }),
      ],
    },
  );
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => t.close());

async function connect(): Promise<Client> {
  const client = new Client({ name: 'svc-progress-test', version: '0.0.1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  return client;
}

/** A raw POST of one JSON-RPC message, as a client sends it after initialize. */
async function post(message: unknown) {
  const r = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify(message),
  });
  return { type: r.headers.get('content-type') ?? '', text: await r.text() };
}

describe('MCP progress notifications', () => {
  it('a hunt called with a progressToken reports progress per sampled cell, then answers a result that verifies', async () => {
    const c = await connect();
    try {
      const seen: Progress[] = [];
      const res: any = await c.callTool({ name: 'svc_hunt', arguments: { event: 'algal_bloom', polygon_bbox: BOX } }, undefined, { onprogress: (p) => seen.push(p) });
      assert.equal(res.isError, undefined, JSON.stringify(res.structuredContent));
      assert.ok(seen.length >= 1, 'at least one progress notification');
      assert.ok(seen.length >= 2, `the first and the last at least (${seen.length})`);
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress, 'progress grows');
      const last = seen.at(-1)!;
      assert.deepEqual([last.progress, last.total], [32, 32]);
      assert.match(String(last.message), /32 of 32 sampled cells read/);
      const sc = res.structuredContent;
      assert.ok(sc.hotspots.length > 0);
      assert.equal(P.verifyResponse(sc, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
    } finally {
      await c.close();
    }
  });

  it('recall_many reports per cell too', async () => {
    const c = await connect();
    try {
      const seen: Progress[] = [];
      const cells = [P.cellOf(41.601, -83.19), P.cellOf(41.605, -83.19), P.cellOf(41.609, -83.19)];
      const res: any = await c.callTool({ name: 'svc_recall_many', arguments: { cells, bands: ['indices.ndci'] } }, undefined, { onprogress: (p) => seen.push(p) });
      assert.equal(res.isError, undefined, JSON.stringify(res.structuredContent));
      assert.deepEqual([seen.at(-1)?.progress, seen.at(-1)?.total], [3, 3]);
    } finally {
      await c.close();
    }
  });

  it('the same call without a progressToken gets one JSON answer and no notification; with one, an SSE stream', async () => {
    const call = (meta?: Record<string, unknown>) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'svc_hunt', arguments: { event: 'algal_bloom', polygon_bbox: BOX }, ...(meta ? { _meta: meta } : {}) },
    });
    const plain = await post(call());
    assert.match(plain.type, /^application\/json/);
    assert.equal(JSON.parse(plain.text).result.structuredContent.event, 'algal_bloom');
    const streamed = await post(call({ progressToken: 'tok-1' }));
    assert.match(streamed.type, /^text\/event-stream/);
    const events = streamed.text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    const notes = events.filter((e) => e.method === 'notifications/progress');
    assert.ok(notes.length >= 1);
    assert.ok(notes.every((e) => e.params.progressToken === 'tok-1'));
    assert.equal(events.at(-1).id, 1, 'the result comes last');
    assert.equal(events.at(-1).result.structuredContent.event, 'algal_bloom');
  });

  it('REST is unchanged: the same hunt answers one JSON body', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/hunt', payload: { event: 'algal_bloom', polygon_bbox: BOX } });
    assert.equal(r.statusCode, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.ok(r.json().hotspots.length > 0);
  });

  it('a GET asking for an event stream is 405 (stateless: no server-initiated stream), a plain GET the description', async () => {
    const sse = await fetch(`${base}/mcp`, { headers: { accept: 'text/event-stream' } });
    assert.equal(sse.status, 405);
    assert.equal(sse.headers.get('allow'), 'POST');
    await sse.body?.cancel();
    const plain = await fetch(`${base}/mcp/full`);
    assert.equal(plain.status, 200);
    assert.equal((await plain.json()).stateless, true);
  });
});
