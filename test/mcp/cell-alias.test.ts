/**
 * One name for a cell (docs/operations.md): an operation declaring `cell64` accepts `cell` and one
 * declaring `cell` accepts `cell64`, over REST and MCP alike; sending both is still refused.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as P from '../../src/protocol/index.js';
import { OPERATIONS } from '../../src/api/ops/index.js';
import { cellAliasOf } from '../../src/api/cell-alias.js';
import { build, type TestApp } from '../support/app.js';

let t: TestApp;
let base: string;
const CELL = P.cellOf(45.75, 4.85);
before(async () => {
  t = await build({}, {}, { materializers: [] });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => t.close());

const post = async (url: string, body: unknown) => {
  const r = await t.app.inject({ method: 'POST', url, payload: body as object });
  return { status: r.statusCode, body: r.json() };
};

describe('cell and cell64 are one parameter', () => {
  it('an operation declaring one name gets the other as an alias; one declaring both takes both itself', () => {
    for (const op of OPERATIONS) {
      const props = (op.input as { properties?: Record<string, unknown> }).properties ?? {};
      const alias = cellAliasOf(op.input);
      if ('cell' in props && 'cell64' in props) assert.equal(alias, undefined, op.name);
      else if ('cell64' in props) assert.deepEqual(alias, { from: 'cell', to: 'cell64' }, op.name);
      else if ('cell' in props) assert.deepEqual(alias, { from: 'cell64', to: 'cell' }, op.name);
    }
    assert.ok(OPERATIONS.filter((o) => cellAliasOf(o.input)?.to === 'cell64').length > 0);
  });

  it('REST: cell where cell64 is declared, cell64 where cell is declared', async () => {
    const nc = await post('/v1/neighborhood_consistency', { cell: CELL });
    assert.equal(nc.status, 200, JSON.stringify(nc.body));
    assert.equal(nc.body.cell, CELL);
    const rc = await post('/v1/recall', { cell64: CELL, bands: ['copdem30m.elevation_mean'] });
    assert.equal(rc.status, 200, JSON.stringify(rc.body));
    assert.equal(rc.body.cell, CELL);
    const both = await post('/v1/recall', { cell: CELL, cell64: CELL });
    assert.deepEqual([both.status, both.body.code, both.body.details.field], [422, 'invalid_argument', 'cell64']);
  });

  it('MCP: the same over tools/call', async () => {
    const c = new Client({ name: 'svc-cell-alias-test', version: '0.0.1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/full`)));
    try {
      const r = (await c.callTool({ name: 'svc_recall', arguments: { cell64: CELL, bands: ['copdem30m.elevation_mean'] } })) as { isError?: boolean; structuredContent?: any };
      assert.notEqual(r.isError, true, JSON.stringify(r.structuredContent));
      assert.equal(r.structuredContent.cell, CELL);
      const n = (await c.callTool({ name: 'svc_neighborhood_consistency', arguments: { cell: CELL } })) as { isError?: boolean; structuredContent?: any };
      assert.notEqual(n.isError, true, JSON.stringify(n.structuredContent));
    } finally {
      await c.close();
    }
  });
});
