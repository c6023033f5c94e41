import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { loadRegistry } from '../../src/registry/registry.js';
import type { LogEntryV1, LogReader } from '../../src/store/contract.js';
import { encodeLogEntry } from '../../src/store/entry.js';
import { VectorIndex, hammingDistance, packBits } from '../../src/primitives/embeddings/vector-index.js';

const registry = loadRegistry();
const vec = (seed: number) => Array.from({ length: 128 }, (_, i) => Math.fround(Math.sin(seed + i)));

function entry(facts: Array<{ cell: string; band: string; tslot: number; value: unknown; kind?: string; scope?: Record<string, string> }>): Uint8Array {
  const e: LogEntryV1 = {
    v: 1,
    type: 'batch',
    accepted_at: '2026-11-22T00:00:00Z',
    attester: 'A'.repeat(52),
    signature: 'S'.repeat(103),
    batch_root: new Uint8Array(32),
    registry_cid: 'r',
    schema_cid: 's',
    facts: facts.map((f) => ({ kind: f.kind ?? 'primary', cell: f.cell, band: f.band, value: f.value as never, unit: 'unitless', ...(f.scope ? { scope: f.scope } : {}) })),
    meta: facts.map((f) => ({ provenance_class: 'model_output', tslot: f.tslot })),
  };
  return encodeLogEntry(e);
}

const liveCells = (ix: VectorIndex, band: string) => {
  const a = ix.arena(band)!;
  return a.cells.filter((_, s) => a.isLive(s)).sort();
};

/** A log over prepared entries; each read waits `delayMs` (a slow disk or a remote database). */
function fakeLog(entries: Uint8Array[], delayMs = 0): LogReader & { reads: number } {
  const log = {
    reads: 0,
    async size() {
      return entries.length;
    },
    async root(size = entries.length) {
      return P.blake3(
        P.utf8(
          `root of ${entries.slice(0, size).length} entries: ${entries
            .slice(0, size)
            .map((e) => P.b32encode(P.blake3(e)))
            .join(',')}`,
        ),
      );
    },
    async entry(i: number) {
      log.reads++;
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      return entries[i] ?? null;
    },
  };
  return log as unknown as LogReader & { reads: number };
}

describe('VectorIndex', () => {
  const A = P.cellOf(1, 1);
  const B = P.cellOf(2, 2);

  it("keeps each cell's newest primary public vector; the same tslot later in the log supersedes", async () => {
    const ix = new VectorIndex(
      fakeLog([
        entry([
          { cell: A, band: 'geotessera', tslot: 55, value: vec(1) },
          { cell: B, band: 'geotessera', tslot: 55, value: vec(2) },
        ]),
        entry([{ cell: A, band: 'geotessera', tslot: 54, value: vec(3) }]), // older slot: ignored
        entry([{ cell: B, band: 'geotessera', tslot: 55, value: vec(4) }]), // same slot, later: supersedes
        entry([{ cell: A, band: 'geotessera', tslot: 56, value: null, kind: 'absence' }]), // not a vector
        entry([{ cell: P.cellOf(3, 3), band: 'geotessera', tslot: 56, value: vec(5), scope: { user_id: 'u' } }]), // private
      ]),
      registry.bands,
      { maxPerBand: 1000 },
    );
    const s = await ix.refresh(Date.now() + 10_000);
    assert.deepEqual(s, { entries_read: 5, log_size: 5, complete: true });
    assert.deepEqual(liveCells(ix, 'geotessera'), [A, B].sort());
    assert.deepEqual(Array.from(ix.get('geotessera', A)!.values!), vec(1));
    assert.deepEqual(Array.from(ix.get('geotessera', B)!.values!), vec(4));
  });

  it('binary codes are packed; Hamming distance counts differing bits', () => {
    const a = Array.from({ length: 128 }, (_, i) => (i % 3 === 0 ? 1 : 0));
    const b = a.map((x, i) => (i < 10 ? 1 - x : x));
    assert.equal(hammingDistance(packBits(a)!, packBits(b)!), 10);
    assert.equal(packBits([0, 2]), undefined);
  });

  it('stops at its cell cap and says so', async () => {
    const ix = new VectorIndex(fakeLog([entry([1, 2, 3].map((i) => ({ cell: P.cellOf(i, i), band: 'geotessera', tslot: 55, value: vec(i) })))]), registry.bands, { maxPerBand: 2 });
    await ix.refresh(Date.now() + 10_000);
    assert.equal(ix.arena('geotessera')!.live, 2);
    assert.equal(ix.isCapped('geotessera'), true);
  });

  it('a refresh that runs out of time answers partial and the rest is read in the background', async () => {
    const entries = Array.from({ length: 12 }, (_, i) => entry([{ cell: P.cellOf(10 + i, 10), band: 'geotessera', tslot: 55, value: vec(i) }]));
    const log = fakeLog(entries, 15);
    const ix = new VectorIndex(log, registry.bands, { maxPerBand: 1000 });
    const first = await ix.refresh(Date.now() + 20);
    assert.equal(first.complete, false);
    assert.ok(first.entries_read < 12);
    for (let i = 0; i < 100 && ix.arena('geotessera')!.live < 12; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(ix.arena('geotessera')!.live, 12);
    assert.equal((await ix.refresh(Date.now())).complete, true);
    assert.equal(log.reads, 12, 'every entry is read once');
  });
});
