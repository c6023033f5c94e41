/**
 * Where the warm-recall throughput goes over HTTP: the same fastify app as `svc serve`, plus a
 * few routes that exist only in this benchmark, each doing one more piece of recall's work:
 *   GET  /health                 the bare route
 *   POST /floor/post-small       + a JSON body parsed, a tiny JSON answer
 *   POST /floor/post-sign        + one Ed25519 signature (what every receipt costs at least)
 *   POST /floor/recall-direct    + the recall primitive, without the operation wrapper
 *   POST /v1/recall              the real route (validation, gateway deadline, agent_stats, ETag)
 * Server on core 0 and autocannon (2 connections) on core 1 when taskset exists. One JSON object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/api/app.js';
import { loadConfig } from '../src/config.js';
import * as P from '../src/protocol/index.js';
import { recall } from '../src/primitives/recall.js';
import { openService } from '../src/service.js';
import { canPinCores, pinSelf, spawnNodeOn } from './harness.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
pinSelf(0);

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-floor-'));
const seed = P.blake3(P.utf8('bench operator'));
const attester = P.b32encode(P.portableEd25519.publicKey(seed));
const service = await openService(loadConfig({ SVC_LOG_LEVEL: 'warn', SVC_RATE_LIMIT_RPS: '1000000', SVC_RATE_LIMIT_BURST: '1000000' }, { dataDir, attesterKeys: [attester], timeoutSecs: 600 }), { materializers: [] });
const app = await buildApp(service, { logger: { level: 'warn' } });
const digest = P.blake3(P.utf8('floor'));
app.post('/floor/post-small', async () => ({ ok: true }));
app.post('/floor/post-sign', async () => ({ signature: P.b32encode(service.keys.signer.sign(digest)) }));
app.post('/floor/recall-direct', async (req) => recall(service, req.body as { cell: string }));

try {
  const cell = P.cellOf(48.8566, 2.3522);
  const facts = ['copdem30m.elevation_mean', 'indices.ndvi'].map((band, i) => ({
    kind: 'primary', cell, band, tslot: band === 'indices.ndvi' ? P.currentTslot('medium') : 0, value: 10 + i, unit: 'x',
  }));
  const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
  const signature = P.b32encode(P.portableEd25519.sign(P.attesterDigest(root, service.manifests.registry_cid, service.manifests.schema_cid), seed));
  const w = await app.inject({ method: 'POST', url: '/v1/attest', payload: { batch_root: Array.from(root), attester, signature, facts } });
  if (w.statusCode !== 200) throw new Error(`attest failed: ${w.body}`);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const body = JSON.stringify({ cell, bands: facts.map((f) => f.band) });

  /** autocannon in a child process (on core 1 when pinned), so the server's core serves only requests. */
  const load = (path: string, method: 'GET' | 'POST') => new Promise<number>((resolve, reject) => {
    const code = `import autocannon from 'autocannon';
      const r = await autocannon({ url: ${JSON.stringify(address + path)}, method: '${method}', headers: { 'content-type': 'application/json' },
        body: ${method === 'POST' ? JSON.stringify(body) : 'undefined'}, duration: ${DURATION}, connections: 2 });
      if (r.non2xx > 0 || r.errors > 0) { console.error('errors', r.non2xx, r.errors); process.exit(1); }
      console.log(Math.round(r.requests.average));`;
    const args = ['--input-type=module', '-e', code];
    const c = spawnNodeOn(1, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout!.on('data', (d) => (out += d));
    c.stderr!.pipe(process.stderr);
    c.on('exit', (status) => (status === 0 ? resolve(Number(out.trim())) : reject(new Error(`load on ${path} failed`))));
  });

  for (let i = 0; i < 500; i++) await app.inject({ method: 'POST', url: '/v1/recall', payload: body });
  const routes = [['/health', 'GET'], ['/floor/post-small', 'POST'], ['/floor/post-sign', 'POST'], ['/floor/recall-direct', 'POST'], ['/v1/recall', 'POST']] as const;
  const rps: Record<string, number> = {};
  for (const [path, method] of routes) rps[path] = await load(path, method);
  const bare = rps['/health'];
  console.log(JSON.stringify({
    bench: 'http-floor',
    duration_s: DURATION,
    cores: canPinCores ? { server: 0, load_generator: 1 } : 'shared',
    rps,
    ratio_to_bare: Object.fromEntries(Object.entries(rps).map(([k, v]) => [k, Number((v / bare).toFixed(2))])),
  }, null, 2));
} finally {
  await app.close();
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
