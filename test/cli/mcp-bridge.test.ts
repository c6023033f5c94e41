/**
 * `svc mcp`, the stdio bridge (README "MCP"): run as its own process against a real responder
 * listening on a loopback port, it re-exposes the responder's tools, resources, prompts and
 * progress over stdin/stdout; answers verify offline with the responder's key (the bridge holds
 * none); stdout carries protocol messages only; the bearer is passed through; an unreachable
 * responder is a failed call, not a dead bridge; the process exits 0 when stdin closes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as P from '../../src/protocol/index.js';
import { OPERATIONS } from '../../src/api/ops/index.js';
import { toolsOf } from '../../src/api/mcp.js';
import { resourceUris } from '../../src/api/mcp-resources.js';
import { bridgeEndpoint } from '../../src/cli-mcp.js';
import type { MaterializeOutcome } from '../../src/sources/contract.js';
import { build, type TestApp } from '../support/app.js';
import { fakeConnector } from '../support/fake-connector.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const BOX = { min_lat: 41.6, min_lng: -83.2, max_lat: 41.62, max_lng: -83.18 };
const value = (v: number): MaterializeOutcome => ({ status: 'value', value: v, provenance: { source: 'fake', captured_at: '2026-11-20T00:00:00Z' }, fn: 'fake@1' });
/** The bridge's command line, as a desktop host would start it (from the repository). */
const bridgeArgs = (...args: string[]) => ['--import', 'tsx', 'src/cli.ts', 'mcp', ...args];

let t: TestApp;
let base: string;
/** The Authorization header of every request the responder received on /mcp. */
const seenAuth: Array<string | undefined> = [];

before(async () => {
  t = await build(
    {},
    {},
    {
      materializers: [
        fakeConnector(['copdem30m.elevation_mean', 'indices.ndci', 'indices.mndwi'], {
          'indices.ndci': (r) => new Promise((res) => setTimeout(() => res(value(0.3 + (r.center.lat - 41.6) * 10)), 20)),
          'indices.mndwi': () => value(0.4),
        }),
      ],
    },
  );
  t.app.server.on('request', (req: IncomingMessage) => {
    if (req.url?.startsWith('/mcp')) seenAuth.push(req.headers.authorization);
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => t.close());

/** A loopback port nothing listens on (one just released; not one of fetch's blocked ports). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

async function bridge(args: string[], env: Record<string, string> = {}): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: bridgeArgs(...args), cwd: root, env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d) => {
    err += String(d);
  });
  const client = new Client({ name: 'svc-bridge-test', version: '0.0.1' });
  await client.connect(transport);
  return { client, transport, stderr: () => err };
}

describe('svc mcp: the stdio bridge', () => {
  it('re-exposes the tools; a read through it verifies offline with the responder key', async () => {
    const { client } = await bridge(['--url', base]);
    try {
      assert.match(client.getInstructions() ?? '', /svc_locate/);
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((x) => x.name).sort(),
        toolsOf(OPERATIONS, 'core')
          .map((o) => `svc_${o.name}`)
          .sort(),
      );
      const cell = P.cellOf(1.5, 2.5);
      const res: any = await client.callTool({ name: 'svc_recall', arguments: { cell, bands: ['copdem30m.elevation_mean'] } });
      assert.equal(res.isError, undefined, JSON.stringify(res.structuredContent));
      const sc = res.structuredContent;
      assert.equal(sc.facts.length, 1);
      assert.equal(P.verifyReceipt(sc.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
      assert.equal(P.verifyResponse(JSON.parse(res.content[0].text), { publicKey: t.service.keys.publicKeyB32 }).valid, true);
      // A failed call is the responder's own failure, and an unknown tool its JSON-RPC error.
      const bad: any = await client.callTool({ name: 'svc_recall', arguments: { cell: 'defi.zb400' } });
      assert.deepEqual([bad.isError, bad.structuredContent.code], [true, 'invalid_cell']);
      await assert.rejects(client.callTool({ name: 'svc_attest', arguments: {} }), (e: any) => {
        assert.equal(e.code, -32601);
        assert.equal(e.data.code, 'not_found');
        assert.doesNotMatch(e.message, /MCP error -32601: MCP error/);
        return true;
      });
    } finally {
      await client.close();
    }
  });

  it('--full bridges /mcp/full; resources, prompts and progress pass through', async () => {
    const { client } = await bridge(['--url', base, '--full']);
    try {
      assert.equal((await client.listTools()).tools.length, toolsOf(OPERATIONS, 'full').length);
      const { resources } = await client.listResources();
      assert.deepEqual(
        resources.map((r) => r.uri),
        resourceUris('svc'),
      );
      const bands = await client.readResource({ uri: 'svc://catalogue/bands' });
      assert.deepEqual(JSON.parse((bands.contents[0] as { text: string }).text), (await t.app.inject({ method: 'GET', url: '/v1/bands' })).json());
      const prompt = await client.getPrompt({ name: 'compare_places', arguments: { place_a: 'Lyon', place_b: 'Turin' } });
      assert.match((prompt.messages[0].content as { text: string }).text, /Lyon[\s\S]*Turin/);
      const seen: Array<{ progress: number; total?: number }> = [];
      const res: any = await client.callTool({ name: 'svc_hunt', arguments: { event: 'algal_bloom', polygon_bbox: BOX } }, undefined, { onprogress: (p) => seen.push(p) });
      assert.ok(seen.length >= 1, 'progress notifications reach the stdio client');
      assert.deepEqual([seen.at(-1)!.progress, seen.at(-1)!.total], [32, 32]);
      assert.equal(P.verifyResponse(res.structuredContent, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
    } finally {
      await client.close();
    }
  });

  it('passes the bearer through as the Authorization header (flag or SVC_MCP_BEARER)', async () => {
    for (const [args, env, want] of [
      [['--bearer', 'sb1.flag'], {}, 'Bearer sb1.flag'],
      [[], { SVC_MCP_BEARER: 'sb1.env' }, 'Bearer sb1.env'],
    ] as const) {
      seenAuth.length = 0;
      const { client } = await bridge(['--url', base, ...args], env);
      try {
        await client.listTools();
        assert.ok(seenAuth.length >= 2, 'initialize and tools/list');
        assert.ok(
          seenAuth.every((a) => a === want),
          JSON.stringify(seenAuth),
        );
      } finally {
        await client.close();
      }
    }
  });

  it('an unreachable responder: the bridge still starts; a call is a failed call naming it, other requests a JSON-RPC error', async () => {
    const { client, stderr } = await bridge(['--url', `http://127.0.0.1:${await closedPort()}`]);
    try {
      const res: any = await client.callTool({ name: 'svc_recall', arguments: {} });
      assert.equal(res.isError, true);
      assert.equal(res.structuredContent.code, 'source_fetch_failed');
      assert.match(res.structuredContent.message, /127\.0\.0\.1:\d+\/mcp did not answer \(ECONNREFUSED\)/);
      assert.match(res.structuredContent.hint, /--url/);
      // source_fetch_failed's MCP code (GET /v1/errors): the bridge could not reach its upstream.
      await assert.rejects(client.listTools(), (e: any) => e.code === -19 && e.data.code === 'source_fetch_failed' && /did not answer/.test(e.message));
      assert.match(stderr(), /svc mcp: .*did not answer/);
    } finally {
      await client.close();
    }
  });

  it('stdout carries only JSON-RPC messages, and the process exits 0 when stdin closes', async () => {
    const child = spawn(process.execPath, bridgeArgs('--url', base), { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += String(d);
    });
    child.stderr.on('data', (d) => {
      err += String(d);
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const deadline = Date.now() + 20_000;
    while (!out.includes('"id":2') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.stdin.end();
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 10_000))]);
    if (code === 'still running') child.kill('SIGKILL');
    assert.equal(code, 0, err);
    const lines = out.split('\n').filter((l) => l.length > 0);
    assert.ok(lines.length >= 2, out);
    for (const l of lines) assert.equal(JSON.parse(l).jsonrpc, '2.0', `stdout line is a JSON-RPC message: ${l}`);
    const list = lines.map((l) => JSON.parse(l)).find((m) => m.id === 2);
    assert.ok(list.result.tools.some((x: { name: string }) => x.name === 'svc_locate'));
    assert.match(err, /bridging stdio to http:\/\/127\.0\.0\.1:\d+\/mcp/);
  });

  it('finds the endpoint from a base URL, a base with a path, or the endpoint itself', () => {
    const e = (url: string, full = false) => bridgeEndpoint(url, full).href;
    assert.equal(e('http://127.0.0.1:8080'), 'http://127.0.0.1:8080/mcp');
    assert.equal(e('http://127.0.0.1:8080/', true), 'http://127.0.0.1:8080/mcp/full');
    assert.equal(e('https://geo.example/svc/'), 'https://geo.example/svc/mcp');
    assert.equal(e('https://geo.example/svc/mcp/full'), 'https://geo.example/svc/mcp/full');
    assert.equal(e('https://geo.example/mcp', true), 'https://geo.example/mcp/full');
    assert.throws(() => bridgeEndpoint('ftp://geo.example', false), /not an http\(s\) URL/);
  });
});
