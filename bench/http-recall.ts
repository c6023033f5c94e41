/**
 * Warm recall over HTTP (loopback, autocannon) next to the bare JSON route of the same server
 * (GET /health) and the raw Ed25519 sign rates, all in one run; then latency at half of the
 * maximum recall load; then MCP tools/call overhead over the REST call. Prints one JSON object.
 *
 * The server (`svc serve`) runs on core 0 and the load generator on core 1 when they can be
 * pinned. This machine's speed drifts by tens of percent within seconds, so throughput is taken
 * from short bare/recall loads run back to back for several rounds: the reported ratio is the
 * median of the per-round ratios (its range is printed too), and the server's CPU time per request
 * is read from /proc around every load. The CPU ratio (bare CPU / recall CPU per request) is the
 * capacity ratio on one core; unlike the rps ratio it holds when the load generator, not the
 * server, is the limit (see `server_busy`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as P from '../src/protocol/index.js';
import { nodeEd25519 } from '../src/crypto/node-ed25519.js';
import { serverEd25519 } from '../src/crypto/server-ed25519.js';
import { canPinCores, closedUpstreams, parisBatch, percentiles, pinSelf, rate, spawnNodeOn } from './harness.js';
import { LoadGenerator, median, pairedRounds } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const port = 18000 + Math.floor(Math.random() * 2000);
const base = `http://127.0.0.1:${port}`;
const data = mkdtempSync(join(tmpdir(), 'svc-bench-http-'));
const opSeed = P.blake3(P.utf8('bench operator'));
const opKey = P.b32encode(P.portableEd25519.publicKey(opSeed));

pinSelf(1);
const serverArgs = [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), '--import', 'tsx', 'src/cli.ts', 'serve'];
const server = spawnNodeOn(0, serverArgs, {
  env: {
    ...process.env,
    ...closedUpstreams(),
    PORT: String(port),
    SVC_HOST: '127.0.0.1',
    SVC_DATA: data,
    SVC_LOG_LEVEL: 'warn',
    SVC_RATE_LIMIT_RPS: '1000000',
    SVC_RATE_LIMIT_BURST: '1000000',
    SVC_ATTESTER_KEYS: opKey,
  },
  stdio: 'inherit',
});
const gen = await LoadGenerator.start(1);

async function waitUp(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not start');
}

try {
  await waitUp();
  const manifests = await (await fetch(`${base}/v1/manifests`)).json();
  const seeded = parisBatch(opSeed, manifests);
  const att = await fetch(`${base}/v1/attest`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(seeded.envelope) });
  if (!att.ok) throw new Error(`attest failed: ${await att.text()}`);
  // Two of the four bands: the answer is served warm and carries two facts with their receipts.
  const body = JSON.stringify(seeded.recall);
  const first = await fetch(`${base}/v1/recall`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const responseBytes = (await first.arrayBuffer()).byteLength;
  for (let i = 0; i < 300; i++) await (await fetch(`${base}/v1/recall`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).arrayBuffer();

  const bareSpec = { url: `${base}/health`, connections: 2, duration: SECONDS };
  const recallSpec = { url: `${base}/v1/recall`, method: 'POST' as const, body, connections: 2, duration: SECONDS };
  const max = await pairedRounds(gen, { bare: bareSpec, recall: recallSpec }, ROUNDS, server.pid);

  // Raw signature rates in this process (core 1), same run: node:crypto and the server's libsodium signer.
  const seed = P.blake3(P.utf8('bench key'));
  const digest = P.blake3(P.utf8('d'));
  const signNode = rate(() => nodeEd25519.sign(digest, seed), 500, 3);
  const signServer = rate(() => serverEd25519.sign(digest, seed), 500, 3);

  // Half of the maximum recall load (median of the rounds), fixed rate: four connections, one
  // connection, and the bare route at the same offered load for comparison.
  const half = Math.max(1, Math.floor(max.recall.rps_median / 2));
  const halfRounds = Math.max(1, Math.round(ROUNDS / 3));
  const atHalf = async (spec: typeof recallSpec | typeof bareSpec, connections: number) => {
    const runs = [];
    for (let i = 0; i < halfRounds; i++) runs.push(await gen.run({ ...spec, connections, overallRate: half, duration: SECONDS * 2 }, server.pid));
    return {
      achieved_rps: Math.round(median(runs.map((r) => r.rps))),
      connections,
      p50_ms: median(runs.map((r) => r.p50_ms)),
      p99_ms: median(runs.map((r) => r.p99_ms)),
      p99_worst_ms: Math.max(...runs.map((r) => r.p99_ms)),
      p99_9_ms: median(runs.map((r) => r.p99_9_ms)),
      rounds: runs.length,
    };
  };
  const halfLoad = await atHalf(recallSpec, 4);
  const halfLoad1 = await atHalf(recallSpec, 1);
  const bareHalf = await atHalf(bareSpec, 4);

  // MCP tools/call vs REST, sequential, same request.
  const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const rest: number[] = [];
  const mcp: number[] = [];
  for (let i = 0; i < 300; i++) {
    let t0 = performance.now();
    await (await fetch(`${base}/v1/recall`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).arrayBuffer();
    rest.push(performance.now() - t0);
    t0 = performance.now();
    await (
      await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: mcpHeaders,
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'svc_recall', arguments: JSON.parse(body) } }),
      })
    ).arrayBuffer();
    mcp.push(performance.now() - t0);
  }
  const restP = percentiles(rest);
  const mcpP = percentiles(mcp);
  console.log(
    JSON.stringify(
      {
        bench: 'http-recall',
        rounds: ROUNDS,
        seconds_per_load: SECONDS,
        cores: canPinCores ? { server: 0, load_generator: 1 } : 'shared',
        recall_response_bytes: responseBytes,
        bare_health_rps: max.bare.rps_median,
        warm_recall_rps: max.recall.rps_median,
        ratio_recall_over_bare: max.recall.ratio_to_first_median,
        ratio_range: max.recall.ratio_range,
        server_cpu_us_per_request: { bare: max.bare.server_cpu_us_median, recall: max.recall.server_cpu_us_median },
        // Capacity on one core from CPU time per request: does not depend on how fast the load generator is.
        cpu_ratio_recall_over_bare: max.bare.server_cpu_us_median && max.recall.server_cpu_us_median ? Number((max.bare.server_cpu_us_median / max.recall.server_cpu_us_median).toFixed(3)) : undefined,
        server_busy: { bare: max.bare.server_busy_median, recall: max.recall.server_busy_median },
        ed25519_sign_per_s: { node_crypto: signNode.ops_per_s, libsodium_server: signServer.ops_per_s },
        half_load: { target_rps: half, ...halfLoad },
        half_load_one_connection: halfLoad1,
        bare_route_at_half_load: bareHalf,
        mcp_vs_rest_sequential: { rest: restP, mcp: mcpP, overhead_p50_ms: Number((mcpP.p50_ms - restP.p50_ms).toFixed(3)) },
        targets: { ratio_recall_over_bare: '>= 0.5', half_load_p99_ms: '<= 2' },
      },
      null,
      2,
    ),
  );
} finally {
  gen.close();
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(data, { recursive: true, force: true });
}
