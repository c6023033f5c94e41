import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as P from '../../src/protocol/index.js';
import { OPERATIONS } from '../../src/api/ops/index.js';
import { MCP_CORE_TOOL_COUNT, toolsOf } from '../../src/api/mcp.js';
import { build, type TestApp } from '../support/app.js';
import { fakeConnector } from '../support/fake-connector.js';

let t: TestApp;
let base: string;
before(async () => {
  t = await build({}, {}, { materializers: [fakeConnector(['copdem30m.elevation_mean', 'weather.temperature_2m'])] });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => t.close());

async function connect(path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'svc-test', version: '0.0.1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(base + path)));
  return client;
}

describe('MCP over Streamable HTTP (spec 4.2)', () => {
  it('initialize and tools/list give the core tools, all named svc_*', async () => {
    const c = await connect();
    const { tools } = await c.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), toolsOf(OPERATIONS, 'core').map((o) => `svc_${o.name}`).sort());
    assert.equal(tools.length, MCP_CORE_TOOL_COUNT);
    assert.equal(MCP_CORE_TOOL_COUNT, 18);
    assert.ok(tools.every((x) => x.name.startsWith('svc_') && x.inputSchema.type === 'object'));
    await c.close();
  });

  it('/mcp/full lists every non-write tool and no write tool', async () => {
    const c = await connect('/mcp/full');
    const { tools } = await c.listTools();
    const names = tools.map((x) => x.name);
    assert.equal(names.length, toolsOf(OPERATIONS, 'full').length);
    assert.ok(!names.some((n) => /attest|backfill/.test(n)), 'MCP is read-only');
    await c.close();
  });

  it('tools/call dispatches the same function as REST: same facts, verifiable receipt, structuredContent + text', async () => {
    const c = await connect();
    const cell = P.cellOf(1.5, 2.5);
    const res: any = await c.callTool({ name: 'svc_recall', arguments: { cell, bands: ['copdem30m.elevation_mean'] } });
    assert.equal(res.isError, undefined);
    const sc = res.structuredContent;
    assert.equal(sc.facts.length, 1);
    assert.deepEqual(JSON.parse(res.content[0].text), sc);
    assert.ok(P.verifyReceipt(sc.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid);
    const rest = (await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell, bands: ['copdem30m.elevation_mean'] } })).json();
    assert.deepEqual(rest.facts.map((f: any) => f.fact_cid), sc.facts.map((f: any) => f.fact_cid));
    await c.close();
  });

  it('calls every core tool that needs no prior data', async () => {
    const c = await connect();
    const stats: any = await c.callTool({ name: 'svc_corpus_state_stats', arguments: {} });
    assert.ok(P.verifyReceipt(stats.structuredContent.receipt).valid);
    const v: any = await c.callTool({ name: 'svc_verify_receipt', arguments: { receipt: stats.structuredContent.receipt } });
    assert.equal(v.structuredContent.valid, true);
    await c.close();
  });

  it('errors carry the part-7 MCP code and the envelope', async () => {
    const c = await connect();
    await assert.rejects(c.callTool({ name: 'svc_recall', arguments: { cell: 'defi.zb400' } }), (e: any) => e.code === -27 && e.data?.code === 'invalid_cell' && e.data?.schema === 'svc.error.v1');
    await assert.rejects(c.callTool({ name: 'svc_recall', arguments: { cell: P.cellOf(0, 0), nope: 1 } }), (e: any) => e.code === -25 && /nope/.test(e.message));
    await assert.rejects(c.callTool({ name: 'svc_recall', arguments: { cell: P.cellOf(0, 0), bands: ['ndvi'] } }), (e: any) => e.code === -3);
    await assert.rejects(c.callTool({ name: 'svc_attest', arguments: {} }), (e: any) => e.code === -32601);
    await c.close();
  });

  it('GET /mcp describes the endpoint', async () => {
    const r = await fetch(base + '/mcp');
    assert.equal(r.status, 200);
    assert.equal((await r.json()).transport, 'streamable-http');
  });

  it('records per-tool latency and error counts from real traffic', () => {
    const snap = t.service.metrics.snapshot();
    const recall = snap.find((s) => s.tool === 'mcp:recall');
    assert.ok(recall && recall.calls >= 1 && recall.errors >= 1);
  });
});
