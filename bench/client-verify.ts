/**
 * What verify-by-default costs the TypeScript client (packages/client): a 10-band recall (10
 * facts, each with its own receipt, under one envelope receipt: 11 Ed25519 checks) read over
 * loopback HTTP from an in-process responder. Measures the client's check alone (the
 * whole-response verifier with the portable Ed25519 backend, as in a browser) in µs per fact,
 * and with node:crypto passed in as the backend (ClientOptions.ed25519), and whole calls with
 * verification on and off (ETag reuse off, so every call is a full answer).
 * Prints one JSON line. Run: node --import tsx bench/client-verify.ts [calls]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SvcClient } from '../packages/client/src/index.js';
import { buildApp } from '../src/api/app.js';
import { nodeEd25519 } from '../src/crypto/node-ed25519.js';
import { loadConfig } from '../src/config.js';
import * as P from '../src/protocol/index.js';
import { openService } from '../src/service.js';
import { percentiles } from './harness.js';

const calls = Number(process.argv[2] ?? 200);
const BANDS: [string, number, string][] = [
  ['copdem30m.elevation_mean', 12, 'm_msl'],
  ['forest.treecover2000', 35, 'percent'],
  ['forest.lossyear', 0, 'year_code'],
  ['soil.bdod_0_30cm', 1.3, 'kg_dm3'],
  ['soil.clay_0_30cm', 22, 'percent'],
  ['soil.nitrogen_0_30cm', 1.8, 'g_kg'],
  ['soil.phh2o_0_30cm', 6.4, 'pH'],
  ['soil.sand_0_30cm', 40, 'percent'],
  ['soil.soc_0_30cm', 14, 'g_kg'],
  ['water.gsw_occurrence', 0, 'percent'],
];

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-client-'));
const seed = P.blake3(P.utf8('bench client attester'));
const attester = P.b32encode(P.portableEd25519.publicKey(seed));
const service = await openService(loadConfig({ SVC_LOG_LEVEL: 'silent' }, { dataDir, attesterKeys: [attester], rateLimitRps: 1e6, rateLimitBurst: 1e6 }), { materializers: [] });
const app = await buildApp(service);
try {
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const cell = P.cellOf(47.37, 8.54);
  const bands = BANDS.map(([b]) => b);
  const writer = new SvcClient({ url, publicKey: service.keys.publicKeyB32 });
  const signed_at = P.signedAtText(new Date());
  await writer.attest(
    BANDS.map(([band, value, unit]) => ({ kind: 'primary', cell, band, tslot: 0, value, unit, signed_at })),
    { key: seed },
  );

  const verifying = new SvcClient({ url, publicKey: service.keys.publicKeyB32, etagCacheSize: 0 });
  const plain = new SvcClient({ url, publicKey: service.keys.publicKeyB32, etagCacheSize: 0, verify: false });
  const first = await verifying.callVerified('recall', { cell, bands });
  const facts = first.answer.facts.length;
  if (facts !== BANDS.length || !first.verdict?.trusted) throw new Error(`expected ${BANDS.length} verified facts, got ${facts}`);
  const answer = first.answer;
  const bytes = JSON.stringify(answer).length;

  // The client's check alone, on the answer it received: the portable backend, key admitted once.
  const key = service.keys.publicKeyB32;
  const checks: number[] = [];
  for (let i = 0; i < 20; i++) P.verifyResponse(answer, { publicKey: key });
  for (let i = 0; i < Math.max(50, calls); i++) {
    const t0 = performance.now();
    const v = P.verifyResponse(answer, { publicKey: key });
    checks.push(performance.now() - t0);
    if (!v.trusted) throw new Error('verification failed');
  }
  const check = percentiles(checks);
  // The same with node:crypto passed in as the backend (ClientOptions.ed25519), for Node callers.
  const nodeChecks: number[] = [];
  for (let i = 0; i < Math.max(50, calls); i++) {
    const t0 = performance.now();
    P.verifyResponse(answer, { publicKey: key, backend: nodeEd25519 });
    nodeChecks.push(performance.now() - t0);
  }
  const nodeCheck = percentiles(nodeChecks);

  // Whole calls, alternating so that drift hits both alike.
  const on: number[] = [];
  const off: number[] = [];
  for (let i = 0; i < 20; i++) {
    await verifying.recall({ cell, bands });
    await plain.recall({ cell, bands });
  }
  for (let i = 0; i < calls; i++) {
    let t0 = performance.now();
    await verifying.recall({ cell, bands });
    on.push(performance.now() - t0);
    t0 = performance.now();
    await plain.recall({ cell, bands });
    off.push(performance.now() - t0);
  }
  const pOn = percentiles(on);
  const pOff = percentiles(off);
  console.log(
    JSON.stringify({
      bench: 'client_verify',
      facts,
      receipts: first.verdict.receipts.length,
      response_bytes: bytes,
      verify_p50_ms: check.p50_ms,
      verify_p99_ms: check.p99_ms,
      verify_us_per_fact: Number(((check.p50_ms * 1000) / facts).toFixed(1)),
      verify_node_backend_p50_ms: nodeCheck.p50_ms,
      verify_node_backend_us_per_fact: Number(((nodeCheck.p50_ms * 1000) / facts).toFixed(1)),
      call_verified_p50_ms: pOn.p50_ms,
      call_unverified_p50_ms: pOff.p50_ms,
      call_overhead_p50_ms: Number((pOn.p50_ms - pOff.p50_ms).toFixed(3)),
      call_overhead_ratio: Number((pOn.p50_ms / pOff.p50_ms).toFixed(2)),
      calls,
      node: process.version,
    }),
  );
} finally {
  await app.close();
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
