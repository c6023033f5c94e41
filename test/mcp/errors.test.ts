/**
 * How MCP reports failures and what initialize tells a model: a failed tool call is a result a
 * model can read (isError, code, hint, one line of text), never a thrown error; unknown tools
 * and malformed requests are JSON-RPC errors that name what was meant; no message repeats the
 * SDK's "MCP error <code>:" text.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ERROR_CATALOGUE, SvcError } from '../../src/protocol/errors.js';
import { suggestTool, toolErrorResult } from '../../src/api/mcp-errors.js';
import { build, type TestApp } from '../support/app.js';

let t: TestApp;
let base: string;
before(async () => {
  t = await build({}, {}, { materializers: [] });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => t.close());

async function connect(url: string, path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'svc-test', version: '0.0.1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url + path)));
  return client;
}

/** The JSON-RPC error an SDK client throws, or a failure if it does not throw. */
async function rpcError(p: Promise<unknown>): Promise<{ code: number; message: string; data: any }> {
  try {
    await p;
  } catch (e) {
    return e as { code: number; message: string; data: any };
  }
  throw new Error('expected a JSON-RPC error');
}

/** The SDK client prefixes "MCP error <code>: " once; the server's own text must not carry it. */
function prefixedOnce(message: string): boolean {
  return /^MCP error -?\d+: /.test(message) && !message.replace(/^MCP error -?\d+: /, '').includes('MCP error');
}

async function post(path: string, body: string): Promise<{ status: number; json: any }> {
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });
  return { status: r.status, json: await r.json() };
}

describe('MCP tool failures are tool results', () => {
  it('an operation failure (invalid cell): isError with code, MCP code, hint and one line of text; the client does not throw', async () => {
    const c = await connect(base);
    const res: any = await c.callTool({ name: 'svc_recall', arguments: { cell: 'defi.zb400' } });
    const sc = res.structuredContent;
    assert.equal(res.isError, true);
    assert.deepEqual([sc.code, sc.schema, sc.mcp_error_code, sc.http_status, sc.path, sc.tool], ['invalid_cell', 'svc.error.v1', -27, 422, '/mcp', 'svc_recall']);
    assert.equal(sc.hint, ERROR_CATALOGUE.invalid_cell.recover);
    assert.match(sc.message, /^cell: /);
    assert.equal(res.content.length, 1);
    assert.equal(res.content[0].text, `invalid_cell: ${sc.message} (hint: ${sc.hint})`);
    assert.ok(!res.content[0].text.includes('\n'));
    await c.close();
  });

  it('an argument that fails the schema (svc_locate): invalid_argument naming the field', async () => {
    const c = await connect(base, '/mcp/full');
    for (const [args, field] of [
      [{ lat: 'north' }, 'lat'],
      [{ place: 'Lyon', nope: 1 }, 'nope'],
    ] as const) {
      const res: any = await c.callTool({ name: 'svc_locate', arguments: args });
      const sc = res.structuredContent;
      assert.equal(res.isError, true, field);
      assert.deepEqual([sc.code, sc.mcp_error_code, sc.details.field, sc.path], ['invalid_argument', -25, field, '/mcp/full']);
      assert.ok(sc.message.startsWith(`${field}: `), sc.message);
      assert.equal(res.content[0].text, `invalid_argument: ${sc.message} (hint: ${sc.hint})`);
    }
    await c.close();
  });

  it('the result carries retry_after where the error sets it, and a specific hint over the catalogue one', () => {
    const busy = toolErrorResult(new SvcError('overloaded', 'busy', { retry_after: 2 }), 'svc_recall', '/mcp').structuredContent;
    assert.deepEqual([busy.code, busy.retry_after, busy.mcp_error_code, busy.http_status, busy.hint], ['overloaded', 2, -30, 503, ERROR_CATALOGUE.overloaded.recover]);
    const place = toolErrorResult(new SvcError('place_not_found', 'place: nowhere', { hint: 'pass lat and lng' }), 'svc_locate', '/mcp');
    assert.deepEqual([place.structuredContent.hint, place.structuredContent.mcp_error_code], ['pass lat and lng', null]);
    assert.equal((place.content[0] as { text: string }).text, 'place_not_found: place: nowhere (hint: pass lat and lng)');
    const bug = toolErrorResult(new Error('secret stack detail'), 'svc_recall', '/mcp').structuredContent;
    assert.deepEqual([bug.code, bug.mcp_error_code, bug.http_status], ['internal', -26, 500]);
    assert.ok(!bug.message.includes('secret'));
  });
});

describe('MCP protocol failures are JSON-RPC errors', () => {
  it('an unknown tool throws -32601 not_found; the bare name, another case, a typo or a doubled prefix name the tool meant', async () => {
    const c = await connect(base);
    const none = await rpcError(c.callTool({ name: 'svc_no_such_tool', arguments: {} }));
    assert.deepEqual([none.code, none.data.code, none.data.schema, none.data.details.did_you_mean], [-32601, 'not_found', 'svc.error.v1', null]);
    const bare = await rpcError(c.callTool({ name: 'locate', arguments: { place: 'Lyon' } }));
    assert.equal(bare.code, -32601);
    assert.equal(bare.message, 'MCP error -32601: unknown tool locate; did you mean svc_locate?');
    assert.equal(bare.data.hint, 'Call svc_locate.');
    for (const [name, meant] of [
      ['SVC_Recall', 'svc_recall'],
      ['svc_verify_reciept', 'svc_verify_receipt'],
      ['svc_svc_locate', 'svc_locate'],
      ['recal', 'svc_recall'],
    ]) {
      const e = await rpcError(c.callTool({ name, arguments: {} }));
      assert.equal(e.data.details.did_you_mean, meant, name);
      assert.ok(e.message.includes(`did you mean ${meant}?`), e.message);
    }
    await c.close();
  });

  it('suggests nothing beyond two edits', () => {
    assert.equal(suggestTool('weather_forecast', ['svc_weather', 'svc_recall'], 'svc'), undefined);
    assert.equal(suggestTool('weathr', ['svc_weather', 'svc_recall'], 'svc'), 'svc_weather');
  });

  it('no message starts with, or repeats, "MCP error": on the wire and as the SDK client reports it', async () => {
    const c = await connect(base);
    for (const name of ['locate', 'svc_attest', 'svc_nope']) {
      const e = await rpcError(c.callTool({ name, arguments: {} }));
      assert.ok(prefixedOnce(e.message), e.message);
    }
    await c.close();
    const bodies = [
      '{not json',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'locate' } }),
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: {} }),
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'no/such_method' }),
    ];
    for (const body of bodies) {
      const { json } = await post('/mcp', body);
      assert.equal(typeof json.error?.message, 'string', body);
      assert.ok(!json.error.message.includes('MCP error'), json.error.message);
    }
  });

  it('a body that is not JSON answers the JSON-RPC parse error; a tools/call without a name answers -32602 naming the field', async () => {
    const parse = await post('/mcp', '{not json');
    assert.equal(parse.status, 400);
    assert.deepEqual([parse.json.jsonrpc, parse.json.id, parse.json.error.code, parse.json.error.data.code], ['2.0', null, -32700, 'invalid_argument']);
    const noName = await post('/mcp/full', JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { arguments: {} } }));
    assert.equal(noName.json.id, 7);
    assert.equal(noName.json.error.code, -32602);
    assert.match(noName.json.error.message, /^params\.name: /);
    assert.ok(!noName.json.error.message.includes('\n'));
    assert.equal(noName.json.error.data.schema, 'svc.error.v1');
  });
});

describe('initialize instructions', () => {
  it('name the happy path, the two endpoints and the failure shape', async () => {
    const c = await connect(base);
    const text = c.getInstructions() ?? '';
    for (const must of ['svc_locate', 'svc_recall', 'svc_verify_receipt', 'Ed25519', '/mcp/full', 'isError', 'hint', 'REST only']) assert.ok(text.includes(must), must);
    assert.ok(text.indexOf('svc_locate') < text.indexOf('svc_recall') && text.indexOf('svc_recall') < text.indexOf('svc_verify_receipt'), 'in call order');
    await c.close();
  });

  it('use the configured prefix, as tool names and suggestions do', async () => {
    const geo = await build({ prefix: 'geo' }, {}, { materializers: [] });
    try {
      const url = await geo.app.listen({ port: 0, host: '127.0.0.1' });
      const c = await connect(url);
      const text = c.getInstructions() ?? '';
      assert.ok(text.includes('geo_locate') && text.includes('geo_verify_receipt') && !text.includes('svc_'), text);
      const e = await rpcError(c.callTool({ name: 'locate', arguments: {} }));
      assert.equal(e.data.details.did_you_mean, 'geo_locate');
      await c.close();
    } finally {
      await geo.close();
    }
  });
});
