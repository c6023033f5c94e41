/**
 * The find_similar index at a million vectors (docs/performance.md, "Similarity at scale").
 * For two synthetic 128-D corpora — clustered (centres plus noise, like embeddings) and uniform —
 * it builds the band arena and the HNSW graph as the service does, then reports: graph build time
 * per million vectors, memory per vector (arena and graph), the latency of a k = 10 search as the
 * service runs it (graph proposals re-scored exactly) and its recall@10 against the exact scan
 * for a range of expansion_search values, the exact scan's own latency, a Hamming top-10 over a
 * million 128-bit codes, and the start-up time of a saved index. Prints one JSON object.
 * Options: --n=1000000 --queries=200 --skip-uniform.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as P from '../src/protocol/index.js';
import { loadRegistry } from '../src/registry/registry.js';
import { ANN_PARAMS, AnnGraph } from '../src/primitives/embeddings/ann.js';
import { BandArena } from '../src/primitives/embeddings/vector-arena.js';
import { indexedVector, packBits, VectorIndex } from '../src/primitives/embeddings/vector-index.js';
import { cosineTopK, hammingTopK } from '../src/primitives/embeddings/vector-scan.js';
import type { LogReader } from '../src/store/contract.js';
import { percentiles, seededRandom } from './harness.js';

const opt = (k: string, d: string) => process.argv.find((a) => a.startsWith(`--${k}=`))?.slice(k.length + 3) ?? d;
const N = Number(opt('n', '1000000'));
const QUERIES = Number(opt('queries', '200'));
const DIM = 128;
const registry = loadRegistry();
const geo = registry.bands.get('geotessera')!;
const K = 10;

/** `n` corpus vectors and `q` held-out queries drawn the same way (the same cluster centres). */
function corpus(kind: 'clustered' | 'uniform', n: number, q: number, seed: number): { data: Float32Array; queries: Float32Array } {
  const rnd = seededRandom(seed);
  const data = new Float32Array(n * DIM);
  const queries = new Float32Array(q * DIM);
  if (kind === 'uniform') {
    for (let i = 0; i < data.length; i++) data[i] = rnd() - 0.5;
    for (let i = 0; i < queries.length; i++) queries[i] = rnd() - 0.5;
    return { data, queries };
  }
  const clusters = 1000;
  const centres = Float32Array.from({ length: clusters * DIM }, () => rnd() - 0.5);
  const draw = (out: Float32Array, i: number) => {
    const c = Math.floor(rnd() * clusters);
    for (let j = 0; j < DIM; j++) out[i * DIM + j] = centres[c * DIM + j]! + 0.25 * (rnd() - 0.5);
  };
  for (let i = 0; i < n; i++) draw(data, i);
  for (let i = 0; i < q; i++) draw(queries, i);
  return { data, queries };
}

/** Heap plus typed-array memory after a full collection (run with --expose-gc). */
function heldBytes(): number {
  global.gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
const log = (msg: string) => process.stderr.write(`${new Date().toISOString()} ${msg}\n`);

const cidFor = (i: number) => P.b32encode(P.blake3(P.utf8(`fact ${i}`)));
const cellFor = (i: number) => P.cellOf(-60 + (i % 1000) * 0.1, -170 + Math.floor(i / 1000) * 0.00034);
const rss = () => process.memoryUsage().rss;

function fill(arena: BandArena, data: Float32Array, n: number): void {
  for (let i = 0; i < n; i++) arena.put(indexedVector(geo, cellFor(i), 55, cidFor(i), Array.from(data.subarray(i * DIM, (i + 1) * DIM)))!);
}

function run(kind: 'clustered' | 'uniform', seed: number) {
  const { data, queries: qdata } = corpus(kind, N, QUERIES, seed);
  const m0 = heldBytes();
  const arena = new BandArena('geotessera', DIM, false);
  const t0 = performance.now();
  fill(arena, data, N);
  const fillS = (performance.now() - t0) / 1000;
  const m1 = heldBytes();
  log(`${kind}: arena filled in ${fillS.toFixed(1)} s`);
  const graph = new AnnGraph(DIM);
  for (let s = 0; s < N; s++) graph.touch(s);
  const t1 = performance.now();
  while (graph.pending.size > 0) graph.addPending(arena, 65_536);
  const buildS = (performance.now() - t1) / 1000;
  const rssAfter = rss();
  log(`${kind}: graph built in ${buildS.toFixed(1)} s`);

  // Queries: held-out vectors drawn like the corpus (not members of it).
  const queries = Array.from({ length: QUERIES }, (_, i) => indexedVector(geo, '', 0, '', Array.from(qdata.subarray(i * DIM, (i + 1) * DIM)))!);
  const exactMs: number[] = [];
  const truth = queries.map((q) => {
    const t = performance.now();
    const r = cosineTopK(arena, q, K, undefined);
    exactMs.push(performance.now() - t);
    return new Set(r.map((x) => x.v.cell));
  });

  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-ann-'));
  const file = join(dir, 'g.hnsw');
  graph.save(file);
  const graphFileBytes = statSync(file).size;
  const settings = [16, 32, 64, 128, 256].flatMap((ef) => [2 * K + 1, 64, 128].map((candidates) => ({ ef, candidates })));
  const curve = settings.map(({ ef, candidates }) => {
    const g = AnnGraph.load(file, DIM, { ...ANN_PARAMS, expansion_search: ef });
    const ms: number[] = [];
    let hits = 0;
    queries.forEach((q, i) => {
      const t = performance.now();
      const r = cosineTopK(arena, q, K, undefined, g.search(q.values!, candidates));
      ms.push(performance.now() - t);
      hits += r.filter((x) => truth[i]!.has(x.v.cell)).length;
    });
    return { expansion_search: ef, candidates_rescored: candidates, recall_at_10: Number((hits / (QUERIES * K)).toFixed(4)), ...percentiles(ms) };
  });
  rmSync(dir, { recursive: true, force: true });
  log(`${kind}: curve measured`);
  return {
    corpus: kind,
    n: N,
    arena_fill_s: Number(fillS.toFixed(1)),
    graph_build_s: Number(buildS.toFixed(1)),
    graph_build_s_per_million: Number(((buildS * 1e6) / N).toFixed(1)),
    // The graph lives in native memory the heap does not see: its saved size is what it holds.
    memory_bytes_per_vector: { arena: Math.round((m1 - m0) / N), graph: Math.round(graphFileBytes / N), process_rss_total: Math.round(rssAfter / N) },
    exact_scan: percentiles(exactMs),
    service_default_expansion_search: ANN_PARAMS.expansion_search,
    search_k10_rescored: curve,
    arena,
    graph,
  };
}

function hamming(n: number) {
  const rnd = seededRandom(5);
  const codes = new BandArena('geotessera.bin128', 128, true);
  for (let i = 0; i < n; i++) {
    const bits = packBits(Array.from({ length: 128 }, () => (rnd() < 0.5 ? 1 : 0)))!;
    codes.put({ cell: cellFor(i), tslot: 55, fact_cid: cidFor(i), dim: 128, norm: 0, bits });
  }
  const ms: number[] = [];
  for (let q = 0; q < 50; q++) {
    const bits = packBits(Array.from({ length: 128 }, () => (rnd() < 0.5 ? 1 : 0)))!;
    const t = performance.now();
    hammingTopK(codes, { cell: '', tslot: 0, fact_cid: '', dim: 128, norm: 0, bits }, K, undefined);
    ms.push(performance.now() - t);
  }
  return { n, exact_scan_k10: percentiles(ms) };
}

/** Start-up of a saved index: load the arena and the graph, no log entry read again. */
async function startup(arena: BandArena, graph: AnnGraph) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-vix-'));
  const root = P.blake3(P.utf8('bench log'));
  const log = { size: async () => 1, root: async () => root, entry: async () => null } as unknown as LogReader;
  const bands = new Map([['geotessera', geo]]);
  const ix = new VectorIndex(log, bands, { maxPerBand: 10_000_000, dir });
  // Hand the built parts to the index as if it had read them from the log, then save.
  Object.assign(ix as unknown as { arenas: Map<string, BandArena>; graphs: Map<string, AnnGraph>; next: number; dirty: boolean }, {
    arenas: new Map([['geotessera', arena]]),
    graphs: new Map([['geotessera', graph]]),
    next: 1,
    dirty: true,
  });
  const s0 = performance.now();
  await ix.save();
  const saveS = (performance.now() - s0) / 1000;
  const t0 = performance.now();
  const again = new VectorIndex(log, bands, { maxPerBand: 10_000_000, dir });
  const state = await again.refresh(Date.now() + 600_000);
  const loadS = (performance.now() - t0) / 1000;
  const ok = again.start.from === 'disk' && state.complete && again.arena('geotessera')!.live === arena.live;
  rmSync(dir, { recursive: true, force: true });
  return { vectors: arena.live, save_s: Number(saveS.toFixed(2)), load_s: Number(loadS.toFixed(2)), loaded_from_disk: ok };
}

const clustered = run('clustered', 1);
const start = await startup(clustered.arena, clustered.graph);
const { arena: _a, graph: _g, ...clusteredOut } = clustered;
let uniformOut: unknown = 'skipped';
if (!process.argv.includes('--skip-uniform')) {
  const { arena: _ua, graph: _ug, ...u } = run('uniform', 2);
  uniformOut = u;
}
console.log(
  JSON.stringify(
    { bench: 'vector-index', dim: DIM, k: K, queries: QUERIES, params: ANN_PARAMS, clustered: clusteredOut, uniform: uniformOut, hamming: hamming(N), startup_with_saved_index: start },
    null,
    1,
  ),
);
