/**
 * A bounded soak over loopback HTTP: thousands of mixed reads (REST recall, MCP tools/call —
 * which builds a protocol server per request —, find_similar and memory tokens) after a warm-up,
 * with the heap measured after full collections between rounds. Retained memory must level off:
 * per-request objects, warm answers, MCP servers and metrics windows are all bounded.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import * as P from '../../src/protocol/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const ROUND = Number(process.env.SVC_SOAK_REQUESTS ?? 2400);
const op = makeAttester('soak-operator');
const cells = Array.from({ length: 120 }, (_, i) => P.cellOf(12 + i * 0.01, 34));
let t: TestApp;
let base: string;
let cids: string[];

before(async () => {
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [] });
  const slow = P.currentTslot('slow');
  const facts = cells.flatMap((cell, i) => [
    { kind: 'primary', cell, band: 'copdem30m.elevation_mean', tslot: 0, value: i, unit: 'm_msl' },
    { kind: 'primary', cell, band: 'geotessera', tslot: slow, value: Array.from({ length: 128 }, (_, k) => Math.fround(Math.sin(i + k))), unit: 'unitless' },
  ]);
  const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch(facts, t.service.manifests) });
  assert.equal(r.statusCode, 200, r.body);
  cids = r.json().fact_cids;
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => t.close());

const json = { 'content-type': 'application/json' };
const calls: Array<(i: number) => Promise<Response>> = [
  (i) => fetch(`${base}/v1/recall`, { method: 'POST', headers: json, body: JSON.stringify({ cell: cells[i % cells.length], bands: ['copdem30m.elevation_mean'] }) }),
  (i) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...json, accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'svc_recall', arguments: { cell: cells[i % cells.length], bands: ['copdem30m.elevation_mean'] } } }),
    }),
  (i) => fetch(`${base}/v1/find_similar`, { method: 'POST', headers: json, body: JSON.stringify({ key: cells[i % cells.length], k: 5 }) }),
  (i) => fetch(`${base}/v1/memory_token`, { method: 'POST', headers: json, body: JSON.stringify({ fact_cid: cids[i % cids.length] }) }),
];

async function round(n: number): Promise<void> {
  for (let i = 0; i < n; i += 16) {
    const replies = await Promise.all(Array.from({ length: 16 }, (_, k) => calls[(i + k) % calls.length](i + k)));
    for (const r of replies) {
      assert.equal(r.status, 200, `${r.url}: ${r.status}`);
      await r.arrayBuffer();
    }
  }
}

/** Retained memory: the JS heap plus the ArrayBuffers it holds (Buffers live outside the heap). */
function heapMb(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return (m.heapUsed + m.arrayBuffers) / 1e6;
}

describe('soak (loopback, bounded)', () => {
  it('retained heap levels off over rounds of mixed REST, MCP and vector reads', { timeout: 300_000 }, async (ctx) => {
    await round(ROUND); // warm-up: caches, JIT, the gazetteer behind place labels
    const heaps = [heapMb()];
    for (let r = 0; r < 3; r++) {
      await round(ROUND);
      heaps.push(heapMb());
    }
    ctx.diagnostic(`heap after each round of ${ROUND} requests (MB): ${heaps.map((h) => h.toFixed(1)).join(', ')}`);
    const growth = heaps[heaps.length - 1] - heaps[0];
    assert.ok(growth < 12, `retained heap grew ${growth.toFixed(1)} MB over ${3 * ROUND} requests: ${heaps.map((h) => h.toFixed(1)).join(', ')}`);
  });
});
