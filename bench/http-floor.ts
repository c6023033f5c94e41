/**
 * Where the warm-recall throughput goes over HTTP: the same fastify app as `svc serve`, plus a
 * few routes that exist only in this benchmark, each adding one piece of recall's work:
 *   GET  /health                  the bare route
 *   POST /floor/post-small        + a JSON body parsed, a tiny JSON answer
 *   POST /floor/post-same-size    + an answer of recall's size (a prepared, frozen recall response)
 *   POST /floor/post-same-size-sign + one Ed25519 signature (what every receipt costs at least)
 *   POST /floor/recall-direct     + the recall primitive itself, without the operation wrapper
 *   POST /v1/recall               the real route (validation, gateway deadline, agent_stats, ETag)
 * Server in this process on core 0, one autocannon child (2 connections) on core 1 when pinning.
 * Loads run back to back in rounds; each route's ratio to the bare route is the median over
 * rounds, next to the server's CPU time per request. One JSON object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/api/app.js';
import { loadConfig } from '../src/config.js';
import * as P from '../src/protocol/index.js';
import { recall, type RecallResult } from '../src/primitives/reads/recall.js';
import { deepFreeze } from '../src/protocol/freeze.js';
import { openService } from '../src/service.js';
import { canPinCores, parisBatch, pinSelf } from './harness.js';
import { LoadGenerator, pairedRounds } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
pinSelf(0);

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-floor-'));
const seed = P.blake3(P.utf8('bench operator'));
const attester = P.b32encode(P.portableEd25519.publicKey(seed));
const service = await openService(loadConfig({ SVC_LOG_LEVEL: 'warn', SVC_RATE_LIMIT_RPS: '1000000', SVC_RATE_LIMIT_BURST: '1000000' }, { dataDir, attesterKeys: [attester], timeoutSecs: 600 }), {
  materializers: [],
});
const app = await buildApp(service, { logger: { level: 'warn' } });
const digest = P.blake3(P.utf8('floor'));
let sameSize: RecallResult | undefined;
app.post('/floor/post-small', async () => ({ ok: true }));
app.post('/floor/post-same-size', async () => sameSize);
app.post('/floor/post-same-size-sign', async () => {
  service.keys.signer.sign(digest);
  return sameSize;
});
app.post('/floor/recall-direct', async (req) => recall(service, req.body as { cell: string }));
const gen = await LoadGenerator.start(1);

try {
  // The warm-read benches' corpus (bench/harness.ts), so this floor is measured on what they read.
  const seeded = parisBatch(seed, service.manifests);
  const w = await app.inject({ method: 'POST', url: '/v1/attest', payload: seeded.envelope });
  if (w.statusCode !== 200) throw new Error(`attest failed: ${w.body}`);
  const input = seeded.recall;
  // A real recall response, frozen: the same-size routes send it (its JSON is kept after the first send).
  sameSize = deepFreeze(JSON.parse(JSON.stringify(await recall(service, input))));
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const body = JSON.stringify(input);
  for (let i = 0; i < 500; i++) await app.inject({ method: 'POST', url: '/v1/recall', headers: { 'content-type': 'application/json' }, payload: body });

  const routes = [
    ['/health', 'GET'],
    ['/floor/post-small', 'POST'],
    ['/floor/post-same-size', 'POST'],
    ['/floor/post-same-size-sign', 'POST'],
    ['/floor/recall-direct', 'POST'],
    ['/v1/recall', 'POST'],
  ] as const;
  const specs = Object.fromEntries(routes.map(([path, method]) => [path, { url: address + path, method, body: method === 'POST' ? body : undefined, connections: 2, duration: SECONDS }]));
  const r = await pairedRounds(gen, specs, ROUNDS, process.pid);
  console.log(
    JSON.stringify(
      {
        bench: 'http-floor',
        rounds: ROUNDS,
        seconds_per_load: SECONDS,
        cores: canPinCores ? { server: 0, load_generator: 1 } : 'shared',
        rps_median: Object.fromEntries(routes.map(([p]) => [p, r[p].rps_median])),
        ratio_to_bare_median: Object.fromEntries(routes.map(([p]) => [p, r[p].ratio_to_first_median])),
        server_cpu_us_per_request: Object.fromEntries(routes.map(([p]) => [p, r[p].server_cpu_us_median])),
        server_busy: Object.fromEntries(routes.map(([p]) => [p, r[p].server_busy_median])),
      },
      null,
      2,
    ),
  );
} finally {
  gen.close();
  await app.close();
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
