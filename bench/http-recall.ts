/**
 * Warm recall over HTTP (loopback, autocannon) next to a bare JSON route of the same server
 * and the raw Ed25519 sign rate, all in one run; then p99 at half of the maximum recall load;
 * then MCP tools/call overhead over the REST call. Prints one JSON object. The server runs on
 * core 0 and the load generator on core 1 when it can pin them.
 */
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as P from '../src/protocol/index.js';
import { nodeEd25519 } from '../src/crypto/node-ed25519.js';
import { canPinCores, percentiles, pinSelf, rate, spawnNodeOn } from './harness.js';
import { loadRegistry } from '../src/registry/registry.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const port = 18000 + Math.floor(Math.random() * 2000);
const base = `http://127.0.0.1:${port}`;
const data = mkdtempSync(join(tmpdir(), 'svc-bench-http-'));
const opSeed = P.blake3(P.utf8('bench operator'));
const opKey = P.b32encode(P.portableEd25519.publicKey(opSeed));

/** Every upstream at a closed loopback port: the bench never leaves the machine. */
function closedUpstreams(): Record<string, string> {
  const env: Record<string, string> = { SVC_UPSTREAM_PHOTON_URL: 'off', SVC_UPSTREAM_NOMINATIM_URL: 'off' };
  for (const s of loadRegistry().sourceList) {
    env[s.env] = 'http://127.0.0.1:9';
    env[s.env.replace(/_URL$/, '_ASSETS_URL')] = 'http://127.0.0.1:9';
  }
  return env;
}

// Server on core 0, this process (the load generator) on core 1, when the machine allows it.
pinSelf(1);
const serverArgs = [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), '--import', 'tsx', 'src/cli.ts', 'serve'];
const server = spawnNodeOn(0, serverArgs, {
  env: { ...process.env, ...closedUpstreams(), PORT: String(port), SVC_HOST: '127.0.0.1', SVC_DATA: data, SVC_LOG_LEVEL: 'warn', SVC_RATE_LIMIT_RPS: '1000000', SVC_RATE_LIMIT_BURST: '1000000', SVC_ATTESTER_KEYS: opKey },
  stdio: 'inherit',
});

async function waitUp(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not start');
}

function cannon(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon(opts, (err, res) => (err ? reject(err) : resolve(res))));
}

try {
  await waitUp();
  const manifests = await (await fetch(`${base}/v1/manifests`)).json();
  const cell = P.cellOf(48.8566, 2.3522);
  const facts = ['copdem30m.elevation_mean', 'weather.temperature_2m', 'indices.ndvi', 'air.pm2_5'].map((band, i) => ({
    // Facts in the bands' current slots: a warm read must not try to refresh them.
    kind: 'primary', cell, band, tslot: band === 'copdem30m.elevation_mean' ? 0 : band === 'indices.ndvi' ? P.currentTslot('medium') : P.currentTslot('fast'), value: 10 + i, unit: 'x',
  }));
  const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
  const sig = P.b32encode(P.portableEd25519.sign(P.attesterDigest(root, manifests.registry_cid, manifests.schema_cid), opSeed));
  const att = await fetch(`${base}/v1/attest`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ batch_root: Array.from(root), attester: opKey, signature: sig, facts }) });
  if (!att.ok) throw new Error(`attest failed: ${await att.text()}`);
  const recallBody = JSON.stringify({ cell, bands: facts.map((f) => f.band), tslot: undefined });
  const body2 = JSON.stringify({ cell, bands: ['copdem30m.elevation_mean', 'indices.ndvi'] });
  for (let i = 0; i < 200; i++) await fetch(`${base}/v1/recall`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body2 });
  void recallBody;

  const bare = await cannon({ url: `${base}/health`, connections: 2, duration: DURATION });
  const warm = await cannon({ url: `${base}/v1/recall`, method: 'POST', headers: { 'content-type': 'application/json' }, body: body2, connections: 2, duration: DURATION });
  const seed = P.blake3(P.utf8('bench key'));
  const digest = P.blake3(P.utf8('d'));
  const sign = rate(() => nodeEd25519.sign(digest, seed), 500, 3);
  const half = Math.max(1, Math.floor(warm.requests.average / 2));
  const halfLoad = await cannon({ url: `${base}/v1/recall`, method: 'POST', headers: { 'content-type': 'application/json' }, body: body2, connections: 4, overallRate: half, duration: DURATION });
  // The same offered load on one connection, and the bare route under the same load generator:
  // autocannon's fixed-rate mode sends in bursts over several connections, which puts a tail on
  // even the bare route; these two show how much of the p99 is the generator's.
  const halfLoad1 = await cannon({ url: `${base}/v1/recall`, method: 'POST', headers: { 'content-type': 'application/json' }, body: body2, connections: 1, overallRate: half, duration: DURATION });
  const bareHalf = await cannon({ url: `${base}/health`, connections: 4, overallRate: half, duration: DURATION });

  // MCP tools/call vs REST, sequential, same request.
  const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const rest: number[] = [];
  const mcp: number[] = [];
  for (let i = 0; i < 300; i++) {
    let t0 = performance.now();
    await (await fetch(`${base}/v1/recall`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body2 })).arrayBuffer();
    rest.push(performance.now() - t0);
    t0 = performance.now();
    await (await fetch(`${base}/mcp`, { method: 'POST', headers: mcpHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'svc_recall', arguments: JSON.parse(body2) } }) })).arrayBuffer();
    mcp.push(performance.now() - t0);
  }
  const restP = percentiles(rest);
  const mcpP = percentiles(mcp);
  console.log(JSON.stringify({
    bench: 'http-recall',
    duration_s: DURATION,
    cores: canPinCores ? { server: 0, load_generator: 1 } : 'shared',
    bare_health_rps: Math.round(bare.requests.average),
    warm_recall_rps: Math.round(warm.requests.average),
    warm_recall_latency_ms: { p50: warm.latency.p50, p99: warm.latency.p99 },
    ed25519_sign_per_s: sign.ops_per_s,
    ratio_recall_over_bare: Number((warm.requests.average / bare.requests.average).toFixed(2)),
    half_load: { target_rps: half, achieved_rps: Math.round(halfLoad.requests.average), connections: 4, p50_ms: halfLoad.latency.p50, p99_ms: halfLoad.latency.p99, p99_9_ms: halfLoad.latency.p99_9 },
    half_load_one_connection: { achieved_rps: Math.round(halfLoad1.requests.average), p50_ms: halfLoad1.latency.p50, p99_ms: halfLoad1.latency.p99, p99_9_ms: halfLoad1.latency.p99_9 },
    bare_route_at_half_load: { achieved_rps: Math.round(bareHalf.requests.average), connections: 4, p50_ms: bareHalf.latency.p50, p99_ms: bareHalf.latency.p99, p99_9_ms: bareHalf.latency.p99_9 },
    mcp_vs_rest_sequential: { rest: restP, mcp: mcpP, overhead_p50_ms: Number((mcpP.p50_ms - restP.p50_ms).toFixed(3)) },
    targets: { ratio_recall_over_bare: '>= 0.5', half_load_p99_ms: '<= 2' },
  }, null, 2));
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(data, { recursive: true, force: true });
}
