/**
 * recall_many over 256 warm cells, in-process (fastify inject, embedded store, no upstreams):
 * p50/p99 latency of the whole call over a few runs. Prints one JSON line.
 * Run: node --import tsx bench/recall-many.ts [runs]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/api/app.js';
import { loadConfig } from '../src/config.js';
import * as P from '../src/protocol/index.js';
import { openService } from '../src/service.js';
import { percentiles } from './harness.js';

const CELLS = 256;
const runs = Number(process.argv[2] ?? 20);
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-recall-many-'));
const seed = P.blake3(P.utf8('bench recall_many attester'));
const attester = P.b32encode(P.portableEd25519.publicKey(seed));

const service = await openService(loadConfig({ SVC_LOG_LEVEL: 'silent' }, { dataDir, attesterKeys: [attester], timeoutSecs: 600 }), { materializers: [] });
const app = await buildApp(service);
await app.ready();
try {
  // Static bands and the current slow slot: nothing is due for refresh, so every read is warm.
  const slow = P.currentTslot('slow');
  const cells = Array.from({ length: CELLS }, (_, i) => P.cellOf(48 + Math.floor(i / 16) * 0.001, 11 + (i % 16) * 0.001));
  const facts = cells.flatMap((cell, i) => [
    { kind: 'primary', cell, band: 'copdem30m.elevation_mean', tslot: 0, value: 500 + i, unit: 'm_msl' },
    { kind: 'primary', cell, band: 'soil.clay_0_30cm', tslot: 0, value: 20 + (i % 7), unit: 'percent' },
    { kind: 'primary', cell, band: 'geotessera', tslot: slow, value: Array.from({ length: 128 }, (_, k) => Number(Math.sin(i + k).toFixed(5))), unit: 'unitless' },
  ]);
  const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
  const signature = P.b32encode(P.portableEd25519.sign(P.attesterDigest(root, service.manifests.registry_cid, service.manifests.schema_cid), seed));
  const w = await app.inject({ method: 'POST', url: '/v1/attest', payload: { batch_root: Array.from(root), attester, signature, facts } });
  if (w.statusCode !== 200) throw new Error(`attest failed: ${w.body}`);

  const payload = { cells, bands: ['copdem30m.elevation_mean', 'soil.clay_0_30cm', 'geotessera'] };
  const call = async () => {
    const t0 = performance.now();
    const r = await app.inject({ method: 'POST', url: '/v1/recall_many', payload });
    const ms = performance.now() - t0;
    if (r.statusCode !== 200) throw new Error(`recall_many failed: ${r.body}`);
    const body = r.json();
    if (body.merged_facts.length !== facts.length) throw new Error(`expected ${facts.length} facts, got ${body.merged_facts.length}`);
    if (body.by_cell[cells[0]].materialize_notes.length !== 0) throw new Error('not warm: something was materialized');
    return { ms, bytes: r.rawPayload.length };
  };
  for (let i = 0; i < 3; i++) await call(); // warm the hot cache and per-fact receipts
  const samples: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const r = await call();
    samples.push(r.ms);
    bytes = r.bytes;
  }
  const p = percentiles(samples);
  console.log(JSON.stringify({
    bench: 'recall_many',
    cells: CELLS,
    bands_per_cell: 3,
    facts_per_call: facts.length,
    runs: p.n,
    p50_ms: p.p50_ms,
    p99_ms: p.p99_ms,
    mean_ms: Number((samples.reduce((s, x) => s + x, 0) / samples.length).toFixed(3)),
    per_cell_p50_ms: Number((p.p50_ms / CELLS).toFixed(4)),
    response_bytes: bytes,
    store: service.store.driver,
    node: process.version,
  }));
} finally {
  await app.close();
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
