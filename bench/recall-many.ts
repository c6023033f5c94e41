/**
 * recall_many over 256 warm cells, in-process (fastify inject, embedded store, no upstreams):
 * p50/p99 latency of the whole call over a few runs. Prints one JSON line.
 * Run: node --import tsx bench/recall-many.ts [runs]
 */
import { manyCells } from './many-cells.js';
import { percentiles } from './harness.js';

const CELLS = 256;
const runs = Number(process.argv[2] ?? 20);
const { app, service, cells, facts, payload, close } = await manyCells(CELLS);
try {
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
  console.log(
    JSON.stringify({
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
    }),
  );
} finally {
  await close();
}
