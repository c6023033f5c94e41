/**
 * The 256-cell corpus the recall_many and verification benchmarks share: a fresh embedded
 * responder holding, per cell, an elevation, a clay fraction and a 128-D embedding (static bands
 * and the current slow slot, so reads stay warm), attested in one batch by a listed key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/api/app.js';
import { loadConfig } from '../src/config.js';
import * as P from '../src/protocol/index.js';
import { openService, type Service } from '../src/service.js';

export interface ManyCells {
  app: FastifyInstance;
  service: Service;
  dataDir: string;
  cells: string[];
  facts: Record<string, unknown>[];
  /** The recall_many body reading every cell's three bands. */
  payload: { cells: string[]; bands: string[] };
  close(): Promise<void>;
}

export async function manyCells(count = 256): Promise<ManyCells> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-many-'));
  const seed = P.blake3(P.utf8('bench recall_many attester'));
  const attester = P.b32encode(P.portableEd25519.publicKey(seed));
  const service = await openService(loadConfig({ SVC_LOG_LEVEL: 'silent' }, { dataDir, attesterKeys: [attester], timeoutSecs: 600 }), { materializers: [] });
  const app = await buildApp(service);
  await app.ready();
  const slow = P.currentTslot('slow');
  const cells = Array.from({ length: count }, (_, i) => P.cellOf(48 + Math.floor(i / 16) * 0.001, 11 + (i % 16) * 0.001));
  const facts = cells.flatMap((cell, i) => [
    { kind: 'primary', cell, band: 'copdem30m.elevation_mean', tslot: 0, value: 500 + i, unit: 'm_msl' },
    { kind: 'primary', cell, band: 'soil.clay_0_30cm', tslot: 0, value: 20 + (i % 7), unit: 'percent' },
    { kind: 'primary', cell, band: 'geotessera', tslot: slow, value: Array.from({ length: 128 }, (_, k) => Number((Math.sin(i + k) / 2).toFixed(5))), unit: 'unitless' },
  ]);
  const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
  const signature = P.b32encode(P.portableEd25519.sign(P.attesterDigest(root, service.manifests.registry_cid, service.manifests.schema_cid), seed));
  const w = await app.inject({ method: 'POST', url: '/v1/attest', payload: { batch_root: Array.from(root), attester, signature, facts } });
  if (w.statusCode !== 200) throw new Error(`attest failed: ${w.body}`);
  return {
    app,
    service,
    dataDir,
    cells,
    facts,
    payload: { cells, bands: ['copdem30m.elevation_mean', 'soil.clay_0_30cm', 'geotessera'] },
    async close() {
      await app.close();
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
