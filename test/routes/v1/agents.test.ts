import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { OPERATIONS } from '../../../src/api/ops/index.js';
import { MCP_CORE_TOOL_COUNT } from '../../../src/api/mcp.js';
import { build, type TestApp } from '../../support/app.js';

let t: TestApp;
const get = async (url: string) => {
  const r = await t.app.inject({ method: 'GET', url });
  assert.equal(r.statusCode, 200, `${url}: ${r.body}`);
  return r.json();
};

before(async () => {
  t = await build({}, {}, { materializers: [] });
});
after(async () => t.close());

describe('agent discovery', () => {
  it('/.well-known/mcp.json names the endpoint and exactly the core tools, each with its REST twin', async () => {
    const m = await get('/.well-known/mcp.json');
    assert.equal(m.endpoint, '/mcp');
    assert.equal(m.full_endpoint, '/mcp/full');
    assert.equal(m.stateless, true);
    assert.equal(m.tools.length, MCP_CORE_TOOL_COUNT);
    const core = OPERATIONS.filter((o) => o.mcp === 'core');
    assert.deepEqual(m.tools.map((x: any) => x.name).sort(), core.map((o) => `svc_${o.name}`).sort());
    const recall = m.tools.find((x: any) => x.name === 'svc_recall');
    assert.equal(recall.rest, 'POST /v1/recall');
    assert.ok(m.resources.includes('svc://catalogue/bands'), JSON.stringify(m.resources));
    assert.ok(m.prompts.includes('what_is_here'));
  });

  it('the agent card is one document at its three addresses; the tool order starts ask → locate → recall and lists every MCP tool once', async () => {
    const [a, b, c] = await Promise.all(['/.well-known/agent-card.json', '/agent.json', '/v1/agent_card'].map(get));
    assert.deepEqual(a, b);
    assert.deepEqual(a, c);
    assert.equal(a.responder.public_key, t.service.keys.publicKeyB32);
    assert.equal(a.mcp.core_tools, MCP_CORE_TOOL_COUNT);
    const order: string[] = a.recommended_tool_order;
    assert.deepEqual(order.slice(0, 3), ['svc_ask', 'svc_locate', 'svc_recall']);
    const exposed = OPERATIONS.filter((o) => o.mcp !== false).map((o) => `svc_${o.name}`);
    assert.deepEqual([...order].sort(), [...exposed].sort());
    assert.ok(order.indexOf('svc_find_similar') < order.indexOf('svc_verify'), 'reads come before verification');
    assert.ok(!order.includes('svc_attest'), 'writes are not MCP tools');
  });

  it('/v1/agent_quickref maps intents to tools that exist', async () => {
    const q = await get('/v1/agent_quickref');
    assert.ok(q.intents.length >= 10);
    const names = new Set(OPERATIONS.map((o) => o.name));
    for (const i of q.intents) {
      assert.ok(i.intent && i.why, JSON.stringify(i));
      const tools = String(i.tool)
        .split(/ → | \/ /)
        .map((s) => s.trim().split(' ')[0]);
      assert.ok(
        tools.some((x) => names.has(x) || x.startsWith('POST') || x.startsWith('GET')),
        `${i.tool} names a tool`,
      );
    }
  });

  it('/v1/agent_stats counts real calls per tool and channel, errors by code, with latency', async () => {
    const cell = P.cellOf(5, 5);
    const before = await get('/v1/agent_stats');
    const calls = (s: any, tool: string) => s.tools.find((x: any) => x.tool === tool)?.calls ?? 0;
    for (let i = 0; i < 3; i++) {
      const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell, bands: ['indices.ndvi'] } });
      assert.equal(r.statusCode, 200, r.body);
    }
    const bad = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell: 'defi.nope.x', bands: ['indices.ndvi'] } });
    assert.equal(bad.json().code, 'invalid_cell');
    const after = await get('/v1/agent_stats');
    const recall = after.tools.find((x: any) => x.tool === 'recall');
    assert.ok(recall, JSON.stringify(after.tools));
    const beforeRecall = before.tools.find((x: any) => x.tool === 'recall');
    assert.equal(recall.errors_by_code.invalid_cell - (beforeRecall?.errors_by_code.invalid_cell ?? 0), 1, JSON.stringify(recall));
    assert.ok(calls(after, 'recall') - calls(before, 'recall') >= 3);
    assert.ok(calls(after, 'rest:recall') >= 3, 'the channel is counted too');
    assert.ok(recall.p50_ms >= 0 && recall.p99_ms >= recall.p50_ms);
    assert.ok(typeof after.since === 'string' && !Number.isNaN(Date.parse(after.since)));
  });
});
