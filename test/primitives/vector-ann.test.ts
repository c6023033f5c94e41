/** The approximate graph against the exact scan, and the index saved to and loaded from disk. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as P from '../../src/protocol/index.js';
import { loadRegistry } from '../../src/registry/registry.js';
import type { LogEntryV1, LogReader } from '../../src/store/contract.js';
import { encodeLogEntry } from '../../src/store/entry.js';
import { VectorIndex, indexedVector } from '../../src/primitives/embeddings/vector-index.js';
import { cosineTopK } from '../../src/primitives/embeddings/vector-scan.js';

const registry = loadRegistry();
const geo = registry.bands.get('geotessera')!;

/** Deterministic clustered 128-D vectors, float32-exact (like dequantized embeddings). */
function clustered(n: number, clusters: number, seed = 7): number[][] {
  let x = seed >>> 0;
  const rnd = () => {
    x = (Math.imul(x ^ (x >>> 15), 2246822519) + 0x9e3779b9) >>> 0;
    return x / 2 ** 32 - 0.5;
  };
  const centres = Array.from({ length: clusters }, () => Array.from({ length: 128 }, rnd));
  return Array.from({ length: n }, (_, i) => centres[i % clusters]!.map((c) => Math.fround(c + 0.35 * rnd())));
}

function entry(facts: Array<{ cell: string; tslot: number; value: number[] }>): Uint8Array {
  const e: LogEntryV1 = {
    v: 1,
    type: 'batch',
    accepted_at: '2026-11-22T00:00:00Z',
    attester: 'A'.repeat(52),
    signature: 'S'.repeat(103),
    batch_root: new Uint8Array(32),
    registry_cid: 'r',
    schema_cid: 's',
    facts: facts.map((f) => ({ kind: 'primary', cell: f.cell, band: 'geotessera', value: f.value as never, unit: 'unitless' })),
    meta: facts.map((f) => ({ provenance_class: 'model_output', tslot: f.tslot })),
  };
  return encodeLogEntry(e);
}

function fakeLog(entries: Uint8Array[]): LogReader & { reads: number[] } {
  const log = {
    reads: [] as number[],
    async size() {
      return entries.length;
    },
    async root(size = entries.length) {
      return P.blake3(
        P.utf8(
          entries
            .slice(0, size)
            .map((e) => P.b32encode(P.blake3(e)))
            .join(','),
        ),
      );
    },
    async entry(i: number) {
      log.reads.push(i);
      return entries[i] ?? null;
    },
  };
  return log as unknown as LogReader & { reads: number[] };
}

const cellAt = (i: number) => P.cellOf(-60 + (i % 1000) * 0.1, -170 + Math.floor(i / 1000) * 0.5);

function logOf(vectors: number[][], per = 1000): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let s = 0; s < vectors.length; s += per) out.push(entry(vectors.slice(s, s + per).map((value, j) => ({ cell: cellAt(s + j), tslot: 55, value }))));
  return out;
}

/** Reads the whole log and waits until every vector is in the graph. */
async function settle(ix: VectorIndex): Promise<void> {
  await ix.refresh(Date.now() + 60_000);
  for (let i = 0; i < 6000 && (ix.graph('geotessera')!.pending.size > 0 || !(await ix.refresh(Date.now())).complete); i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(ix.graph('geotessera')!.pending.size, 0, 'every vector entered the graph');
}

describe('approximate graph', () => {
  const vectors = clustered(12_000, 60);
  const log = fakeLog(logOf(vectors));

  it('finds the exact top 10 for nearly every query once candidates are re-scored (recall@10 >= 0.95), with exact scores', async () => {
    const ix = new VectorIndex(log, registry.bands, { maxPerBand: 100_000 });
    await settle(ix);
    const arena = ix.arena('geotessera')!;
    assert.equal(ix.graph('geotessera')!.size(), 12_000);
    let hits = 0;
    const queries = 60;
    for (let qi = 0; qi < queries; qi++) {
      const q = indexedVector(geo, '', 0, '', vectors[qi * 197]!)!;
      const exact = cosineTopK(arena, q, 10, undefined);
      const approx = cosineTopK(arena, q, 10, undefined, ix.graph('geotessera')!.search(q.values!, 21));
      const truth = new Set(exact.map((r) => r.v.cell));
      hits += approx.filter((r) => truth.has(r.v.cell)).length;
      for (const r of approx) {
        const e = exact.find((x) => x.v.cell === r.v.cell);
        if (e) assert.equal(r.score, e.score, 'a re-scored candidate has its exact score');
      }
    }
    assert.ok(hits / (queries * 10) >= 0.95, `recall@10 ${hits / (queries * 10)}`);
  });

  it('is saved at close and loaded at start: only the entries after the saved position are read again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-vix-'));
    const first = new VectorIndex(log, registry.bands, { maxPerBand: 100_000, dir });
    await settle(first);
    await first.close();
    assert.ok(existsSync(join(dir, 'state.json')) && existsSync(join(dir, 'geotessera.vec')) && existsSync(join(dir, 'geotessera.hnsw')));

    const more = clustered(500, 5, 99);
    const entries = [...logOf(vectors), ...logOf(more).map((_, i) => entry(more.slice(i * 1000, i * 1000 + 1000).map((value, j) => ({ cell: cellAt(20_000 + j), tslot: 55, value }))))];
    const grown = fakeLog(entries);
    const second = new VectorIndex(grown, registry.bands, { maxPerBand: 100_000, dir });
    const s = await second.refresh(Date.now() + 60_000);
    assert.equal(s.complete, true);
    assert.equal(second.start.from, 'disk', JSON.stringify(second.start));
    assert.deepEqual(grown.reads, [12], 'the saved twelve entries are not read again');
    assert.equal(second.arena('geotessera')!.live, 12_500);
    const q = indexedVector(geo, '', 0, '', vectors[5]!)!;
    assert.deepEqual(
      cosineTopK(second.arena('geotessera')!, q, 10, undefined).map((r) => [r.v.cell, r.score, r.v.fact_cid]),
      cosineTopK(first.arena('geotessera')!, q, 10, undefined).map((r) => [r.v.cell, r.score, r.v.fact_cid]),
      'the loaded index answers as the one that was saved',
    );
    await second.close();
  });

  it('a saved index from another log is stale: discarded, and the log read from the start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-vix-'));
    const small = fakeLog(logOf(vectors.slice(0, 3000)));
    const a = new VectorIndex(small, registry.bands, { maxPerBand: 100_000, dir });
    await settle(a);
    await a.close();
    const other = fakeLog(logOf(clustered(3000, 10, 3)));
    const b = new VectorIndex(other, registry.bands, { maxPerBand: 100_000, dir });
    await b.refresh(Date.now() + 60_000);
    assert.equal(b.start.from, 'log');
    assert.match(b.start.reason ?? '', /differs/);
    assert.deepEqual(other.reads, [0, 1, 2]);
    await b.close();
  });

  it('a damaged file is not trusted: the log is read again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-vix-'));
    const small = fakeLog(logOf(vectors.slice(0, 2000)));
    const a = new VectorIndex(small, registry.bands, { maxPerBand: 100_000, dir });
    await settle(a);
    await a.close();
    const bytes = readFileSync(join(dir, 'geotessera.vec'));
    writeFileSync(join(dir, 'geotessera.vec'), bytes.subarray(0, bytes.length - 100));
    const again = fakeLog(logOf(vectors.slice(0, 2000)));
    const b = new VectorIndex(again, registry.bands, { maxPerBand: 100_000, dir });
    await b.refresh(Date.now() + 60_000);
    assert.equal(b.start.from, 'log');
    assert.match(b.start.reason ?? '', /truncated|trailing/);
    assert.equal(b.arena('geotessera')!.live, 2000);
    await b.close();
  });
});
