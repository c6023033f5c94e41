/**
 * MCP resources and prompts (docs/reads.md, "MCP"): both endpoints list the catalogues and the
 * agent quickref as resources, each the very document its REST route serves; prompts name the
 * tools to call, with their arguments filled in.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OPERATIONS } from '../../src/api/ops/index.js';
import { PROMPT_NAMES } from '../../src/api/mcp-prompts.js';
import { resourceUris } from '../../src/api/mcp-resources.js';
import { build, type TestApp } from '../support/app.js';

let t: TestApp;
let base: string;
before(async () => {
  t = await build({}, {}, { materializers: [] });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => t.close());

async function connect(path: string): Promise<Client> {
  const client = new Client({ name: 'svc-resources-test', version: '0.0.1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(base + path)));
  return client;
}

const REST: Record<string, string> = {
  'svc://catalogue/bands': '/v1/bands',
  'svc://catalogue/topics': '/v1/topics',
  'svc://catalogue/algorithms': '/v1/algorithms',
  'svc://catalogue/sources': '/v1/sources',
  'svc://catalogue/limits': '/v1/limits',
};

describe('MCP resources', () => {
  for (const path of ['/mcp', '/mcp/full']) {
    it(`${path}: the catalogues and the quickref, each the document of its REST route`, async () => {
      const c = await connect(path);
      try {
        assert.ok(c.getServerCapabilities()?.resources, 'resources capability');
        const { resources } = await c.listResources();
        assert.deepEqual(
          resources.map((r) => r.uri),
          resourceUris('svc'),
        );
        assert.deepEqual(resources.map((r) => r.uri).sort(), [...Object.keys(REST), 'svc://agent/quickref'].sort());
        for (const r of resources) assert.ok(r.name && r.description && r.mimeType, JSON.stringify(r));
        for (const [uri, route] of Object.entries(REST)) {
          const { contents } = await c.readResource({ uri });
          assert.equal(contents.length, 1);
          assert.equal(contents[0].uri, uri);
          assert.equal(contents[0].mimeType, 'application/json');
          const rest = await t.app.inject({ method: 'GET', url: route });
          assert.equal(rest.statusCode, 200);
          assert.deepEqual(JSON.parse((contents[0] as { text: string }).text), rest.json(), uri);
        }
        assert.deepEqual((await c.listResourceTemplates()).resourceTemplates, []);
      } finally {
        await c.close();
      }
    });
  }

  it('the quickref is Markdown: the happy path, then every intent of /v1/agent_quickref with prefixed tool names', async () => {
    const c = await connect('/mcp');
    try {
      const { contents } = await c.readResource({ uri: 'svc://agent/quickref' });
      assert.equal(contents[0].mimeType, 'text/markdown');
      const md = (contents[0] as { text: string }).text;
      assert.match(md, /^# svc agent quickref\n/);
      assert.ok(md.indexOf('svc_locate') < md.indexOf('| intent | tool | why |'), 'the happy path comes first');
      const q = (await t.app.inject({ method: 'GET', url: '/v1/agent_quickref' })).json();
      for (const i of q.intents) assert.ok(md.includes(`| ${i.intent} |`), i.intent);
      assert.ok(md.includes('`svc_locate` → `svc_recall`'));
      assert.ok(md.includes('`svc_recall_polygon` / `svc_query_region`'));
    } finally {
      await c.close();
    }
  });

  it('an unknown URI is JSON-RPC error -32002 with the envelope and the URIs there are', async () => {
    const c = await connect('/mcp');
    try {
      await assert.rejects(c.readResource({ uri: 'svc://catalogue/nope' }), (e: any) => {
        assert.equal(e.code, -32002);
        assert.equal(e.data.code, 'not_found');
        assert.deepEqual(e.data.details.resources, resourceUris('svc'));
        assert.doesNotMatch(e.message, /MCP error -32002: MCP error/);
        return true;
      });
    } finally {
      await c.close();
    }
  });
});

describe('MCP prompts', () => {
  it('lists the prompts with their arguments; each names only tools that exist', async () => {
    const c = await connect('/mcp/full');
    try {
      assert.ok(c.getServerCapabilities()?.prompts, 'prompts capability');
      const { prompts } = await c.listPrompts();
      assert.deepEqual(
        prompts.map((p) => p.name),
        PROMPT_NAMES,
      );
      for (const n of ['what_is_here', 'verify_an_answer', 'remember_note', 'compare_places']) assert.ok(PROMPT_NAMES.includes(n), n);
      const tools = new Set(OPERATIONS.filter((o) => o.mcp !== false).map((o) => `svc_${o.name}`));
      for (const p of prompts) {
        const args = Object.fromEntries((p.arguments ?? []).map((a) => [a.name, a.name === 'response' ? '{"receipt": {}}' : 'Lyon']));
        const got = await c.getPrompt({ name: p.name, arguments: args });
        assert.equal(got.messages.length, 1);
        assert.equal(got.messages[0].role, 'user');
        const text = (got.messages[0].content as { text: string }).text;
        const named = text.match(/\bsvc_[a-z_]+/g) ?? [];
        assert.ok(named.length > 0, `${p.name} names a tool`);
        for (const n of named) assert.ok(tools.has(n), `${p.name}: ${n} is an MCP tool`);
      }
    } finally {
      await c.close();
    }
  });

  it('what_is_here fills in the place; a missing required argument or an unknown prompt is -32602', async () => {
    const c = await connect('/mcp');
    try {
      const got = await c.getPrompt({ name: 'what_is_here', arguments: { place: 'Mont Blanc' } });
      const text = (got.messages[0].content as { text: string }).text;
      assert.match(text, /Mont Blanc/);
      assert.ok(text.indexOf('svc_locate') < text.indexOf('svc_recall') && text.indexOf('svc_recall') < text.indexOf('svc_verify_receipt'));
      await assert.rejects(c.getPrompt({ name: 'what_is_here', arguments: {} }), (e: any) => e.code === -32602 && e.data.details.field === 'arguments.place');
      await assert.rejects(c.getPrompt({ name: 'nope' }), (e: any) => e.code === -32602 && /what_is_here/.test(e.data.hint));
    } finally {
      await c.close();
    }
  });
});
