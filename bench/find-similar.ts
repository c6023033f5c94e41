/**
 * find_similar over a corpus of N cells with a 128-D geotessera vector and its .bin128 code each
 * (in process: the primitive on the embedded store, no HTTP). Reports the first call (the
 * index reads the whole log), the memory the index holds, and the latency of warm queries per
 * mode. Prints one JSON object. BENCH_CELLS sets N (default 50 000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import * as P from '../src/protocol/index.js';
import { acceptBatch } from '../src/primitives/write/attest.js';
import { findSimilar, vectorIndexOf, type FindSimilarRequest } from '../src/primitives/embeddings/similar.js';
import { openService } from '../src/service.js';
import { signBits } from '../src/sources/geotessera.js';
import { gazetteer } from '../src/geo/gazetteer.js';
import { percentiles } from './harness.js';

const N = Number(process.env.BENCH_CELLS ?? 50_000);
const BATCH = 512;
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-similar-'));
const seed = P.blake3(P.utf8('bench find_similar attester'));
const attester = P.b32encode(P.portableEd25519.publicKey(seed));
const service = await openService(loadConfig({ SVC_LOG_LEVEL: 'silent' }, { dataDir, attesterKeys: [attester], timeoutSecs: 600 }), { materializers: [] });

/** A deterministic pseudo-random int8 vector times a scale, like a dequantized embedding. */
function vector(i: number): number[] {
  let x = (i + 1) * 2654435761;
  const scale = Math.fround(0.01 + (i % 13) * 0.001);
  return Array.from({ length: 128 }, () => {
    x = (Math.imul(x ^ (x >>> 15), 2246822519) + 0x9e3779b9) >>> 0;
    return Math.fround(((x % 255) - 127) * scale);
  });
}

try {
  const slow = P.currentTslot('slow');
  const cells: string[] = [];
  const t0 = performance.now();
  for (let start = 0; start < N; start += BATCH) {
    const facts: Record<string, unknown>[] = [];
    for (let i = start; i < Math.min(N, start + BATCH); i++) {
      const cell = P.cellOf(-60 + (i % 1000) * 0.1, -170 + Math.floor(i / 1000) * 0.5);
      cells.push(cell);
      const v = vector(i);
      facts.push({ kind: 'primary', cell, band: 'geotessera', tslot: slow, value: v, unit: 'unitless' });
      facts.push({ kind: 'primary', cell, band: 'geotessera.bin128', tslot: slow, value: signBits(v), unit: 'bit' });
    }
    const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
    const signature = P.b32encode(P.portableEd25519.sign(P.attesterDigest(root, service.manifests.registry_cid, service.manifests.schema_cid), seed));
    await acceptBatch(service, { batch_root: Array.from(root), attester, signature, facts } as any);
  }
  const ingestS = (performance.now() - t0) / 1000;

  gazetteer(); // loaded by the first answer's place labels
  const f0 = performance.now();
  const first = await findSimilar(service, { key: cells[0] }, { deadline: Date.now() + 600_000 });
  const firstMs = performance.now() - f0;
  if (!first.searched.index_complete || first.searched.candidates !== N) throw new Error(`index incomplete: ${JSON.stringify(first.searched)}`);
  // The follower indexes while the corpus is written: wait until every vector is in the graph.
  const ix = vectorIndexOf(service);
  const g0 = performance.now();
  while (ix.graph('geotessera')!.pending.size > 0) {
    await ix.refresh(Date.now());
    await new Promise((r) => setTimeout(r, 50));
  }
  const graphWaitS = (performance.now() - g0) / 1000;

  const runs = Number(process.env.BENCH_RUNS ?? 40);
  const measure = async (req: (i: number) => FindSimilarRequest) => {
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const r = await findSimilar(service, req(i));
      samples.push(performance.now() - t);
      if (r.neighbors.length === 0) throw new Error('no neighbours');
    }
    return percentiles(samples);
  };
  const key = (i: number) => cells[(i * 7919) % N];
  const out = {
    bench: 'find-similar',
    cells: N,
    vectors_indexed: first.searched.candidates * 2,
    ingest_s: Number(ingestS.toFixed(1)),
    // The index follows the log while the corpus is written, so the first call finds it built.
    first_call_ms: Math.round(firstMs),
    first_call_log_entries: first.searched.log_entries_read,
    graph_complete_after_first_call_s: Number(graphWaitS.toFixed(1)),
    index_arena_bytes: ix.arena('geotessera')!.data.byteLength + ix.arena('geotessera.bin128')!.bits.byteLength,
    warm: {
      cosine_k10_default: await measure((i) => ({ key: key(i) })),
      cosine_k10_exact: await measure((i) => ({ key: key(i), exact: true })),
      hamming_k10: await measure((i) => ({ key: key(i), mode: 'hamming' })),
      hamming_then_rerank_k10: await measure((i) => ({ key: key(i), mode: 'hamming_then_rerank' })),
      cosine_k1000: await measure((i) => ({ key: key(i), k: 1000 })),
      inline_cosine_k10: await measure((i) => ({ key: `inline:${JSON.stringify(vector(i + 17))}` })),
    },
  };
  console.log(JSON.stringify(out, null, 2));
} finally {
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
