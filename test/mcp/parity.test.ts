/**
 * One implementation per behaviour: each tool called over MCP answers what its REST path answers
 * for the same arguments — the same document, receipts aside (every response signs its own:
 * request_id, served_at, cost and signature differ, the signed lists do not).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as P from '../../src/protocol/index.js';
import { OPERATIONS } from '../../src/api/ops/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';

const op = makeAttester('mcp-parity-operator');
const A = P.cellOf(43.3, 5.4);
const B = P.cellOf(43.301, 5.4);
const slow = P.currentTslot('slow');
const medium = P.currentTslot('medium');
const vec = (seed: number) => Array.from({ length: 128 }, (_, i) => Math.fround(Math.sin(seed + i)));
let t: TestApp;
let client: Client;
let cids: string[];

before(async () => {
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [] });
  const r = await t.app.inject({
    method: 'POST',
    url: '/v1/attest',
    payload: op.batch(
      [
        { kind: 'primary', cell: A, band: 'indices.ndvi', tslot: medium, value: 0.4, unit: 'unitless' },
        { kind: 'primary', cell: B, band: 'indices.ndvi', tslot: medium, value: 0.6, unit: 'unitless' },
        { kind: 'primary', cell: A, band: 'geotessera', tslot: slow - 1, value: vec(1), unit: 'unitless' },
        { kind: 'primary', cell: A, band: 'geotessera', tslot: slow, value: vec(2), unit: 'unitless' },
        { kind: 'primary', cell: B, band: 'geotessera', tslot: slow, value: vec(3), unit: 'unitless' },
      ],
      t.service.manifests,
    ),
  });
  assert.equal(r.statusCode, 200, r.body);
  cids = r.json().fact_cids;
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  client = new Client({ name: 'svc-parity', version: '0.0.1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/full`)));
});
after(async () => {
  await client?.close();
  await t.close();
});

/** Receipts sign each response: keep what they bind, drop what is per response. */
function normalise(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(normalise);
  if (x === null || typeof x !== 'object') return x;
  const o = x as Record<string, unknown>;
  const isReceipt = typeof o.signature === 'string' && typeof o.request_id === 'string';
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (isReceipt && ['request_id', 'served_at', 'signature', 'cost'].includes(k)) continue;
    if (k === 'token' || k === 'latency_ms' || k === 'elapsed_ms') continue; // minted per call / measured per call
    out[k] = normalise(v);
  }
  return out;
}

const cases: Array<[string, Record<string, unknown>]> = [
  ['recall', { cell: A, bands: ['indices.ndvi', 'geotessera'] }],
  ['recall_many', { cells: [A, B], bands: ['indices.ndvi'] }],
  ['recall_polygon', { cells: [A, B], bands: ['indices.ndvi'] }],
  ['query_region', { geometry: `cells:${A},${B}`, bands: ['indices.ndvi'], agg: 'median' }],
  ['fetch', { cid: '' }],
  ['trajectory', { cell: A, band: 'geotessera', window: [0, 2 ** 31] }],
  ['diff', { cell: A, band: 'geotessera', tslot_a: slow - 1, tslot_b: slow }],
  ['compare', { a: A, b: B }],
  ['compare_bands', { cell: A, a: 'geotessera', b: 'geotessera', tslot_a: slow - 1, tslot_b: slow, predicate: { kind: 'cosine_ge', threshold: 0.5 } }],
  ['verify', { cell: A, claim: { band: 'indices.ndvi', op: 'gt', value: 0.3, tslot: medium } }],
  ['find_similar', { key: A, k: 5 }],
  ['state_diff', { cell: A, tslot_a: slow - 1, tslot_b: slow }],
  ['state', { cell: A, view: 'cube', tslot: slow }],
  ['state_diff', { cell: A, view: 'cube', tslot_a: slow - 1, tslot_b: slow }],
  ['cell_view', { cell64: A }],
  ['corpus_state_stats', {}],
];

describe('MCP answers what REST answers', () => {
  for (const [name, args] of cases) {
    it(`svc_${name}`, async () => {
      const o = OPERATIONS.find((x) => x.name === name);
      assert.ok(o && o.mcp !== false, `${name} is an MCP tool`);
      const input = name === 'fetch' ? { cid: cids[0] } : args;
      const rest =
        o.method === 'GET'
          ? await t.app.inject({ method: 'GET', url: o.path, query: Object.fromEntries(Object.entries(input).map(([k, v]) => [k, String(v)])) })
          : await t.app.inject({ method: 'POST', url: o.path, payload: input });
      assert.equal(rest.statusCode, 200, rest.body);
      const res: any = await client.callTool({ name: `svc_${name}`, arguments: input });
      assert.equal(res.isError, undefined, JSON.stringify(res).slice(0, 300));
      assert.deepEqual(normalise(res.structuredContent), normalise(rest.json()));
    });
  }
});

/** Failures too: MCP answers REST's envelope as an isError result, at the status REST would send. */
const failures: Array<[string, Record<string, unknown>, string]> = [
  ['recall', { cell: 'defi.zb400', bands: ['indices.ndvi'] }, 'invalid_cell'],
  ['recall', { cell: A, bands: ['ndvi'] }, 'band_not_in_registry'],
  ['recall', { cell: A, nope: 1 }, 'invalid_argument'],
  ['trajectory', { cell: A, band: 'geotessera', window: 'always' }, 'invalid_argument'],
];

describe('MCP fails as REST fails', () => {
  for (const [name, input, code] of failures) {
    it(`svc_${name} → ${code}`, async () => {
      const o = OPERATIONS.find((x) => x.name === name)!;
      const rest = await t.app.inject({ method: 'POST', url: o.path, payload: input });
      const res: any = await client.callTool({ name: `svc_${name}`, arguments: input });
      assert.equal(res.isError, true);
      const { code: c, message, schema, details, http_status } = res.structuredContent;
      const { path: _path, ...envelope } = rest.json();
      assert.deepEqual({ code: c, message, schema, details }, envelope);
      assert.equal(c, code);
      assert.equal(http_status, rest.statusCode);
    });
  }
});
