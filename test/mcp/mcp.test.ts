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
    assert.deepEqual(
      tools.map((x) => x.name).sort(),
      toolsOf(OPERATIONS, 'core')
        .map((o) => `svc_${o.name}`)
        .sort(),
    );
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
    assert.deepEqual(
      rest.facts.map((f: any) => f.fact_cid),
      sc.facts.map((f: any) => f.fact_cid),
    );
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

  it('a failed call is an isError result with the part-7 envelope, its MCP code and a hint; only an unknown tool is a JSON-RPC error', async () => {
    const c = await connect();
    const call = async (args: Record<string, unknown>) => (await c.callTool({ name: 'svc_recall', arguments: args })) as any;
    const cell = await call({ cell: 'defi.zb400' });
    assert.equal(cell.isError, true);
    assert.equal(cell.structuredContent.code, 'invalid_cell');
    assert.equal(cell.structuredContent.mcp_error_code, -27);
    assert.equal(cell.structuredContent.schema, 'svc.error.v1');
    const field = await call({ cell: P.cellOf(0, 0), nope: 1 });
    assert.deepEqual([field.isError, field.structuredContent.code, field.structuredContent.mcp_error_code], [true, 'invalid_argument', -25]);
    assert.match(field.structuredContent.message, /nope/);
    const band = await call({ cell: P.cellOf(0, 0), bands: ['ndvi'] });
    assert.deepEqual([band.isError, band.structuredContent.code, band.structuredContent.mcp_error_code], [true, 'band_not_in_registry', -3]);
    await assert.rejects(c.callTool({ name: 'svc_attest', arguments: {} }), (e: any) => e.code === -32601 && e.data?.code === 'not_found');
    await c.close();
  });

  it('/v1/tools names each MCP tool as tools/list does, with its tier and REST twin', async () => {
    const body = (await t.app.inject({ method: 'GET', url: '/v1/tools' })).json();
    const tier = (x: string) =>
      body.tools
        .filter((o: any) => o.tier === x || (x === 'full' && o.tier === 'core'))
        .map((o: any) => o.name)
        .sort();
    for (const [path, which] of [
      ['/mcp', 'core'],
      ['/mcp/full', 'full'],
    ] as const) {
      const c = await connect(path);
      assert.deepEqual(tier(which), (await c.listTools()).tools.map((x) => x.name).sort(), path);
      await c.close();
    }
    assert.deepEqual([body.core_count, body.full_count, body.mcp.core, body.mcp.full], [MCP_CORE_TOOL_COUNT, toolsOf(OPERATIONS, 'full').length, '/mcp', '/mcp/full']);
    const recall = body.tools.find((o: any) => o.name === 'svc_recall');
    assert.deepEqual([recall.tier, recall.method, recall.path], ['core', 'POST', '/v1/recall']);
    assert.ok(
      body.tools.filter((o: any) => o.tier === null).every((o: any) => o.mcp === false),
      'tier null = REST only',
    );
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
