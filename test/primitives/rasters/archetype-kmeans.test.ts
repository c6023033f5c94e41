/**
 * The clustering of region_archetype_map (src/primitives/rasters/archetype-kmeans.ts): the PRNG
 * against the reference xoshiro128** outputs, the seed's derivation, recovery of planted
 * clusters, agreement of the bounded Lloyd passes with plain Lloyd from the same seeds, bit-for-bit
 * repeatability, and the refusal of data with fewer distinct points than k.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { blake3 } from '@noble/hashes/blake3.js';
import { kmeans, kmeansSeed, seeds, Xoshiro128, KMEANS_MAX_ITERATIONS } from '../../../src/primitives/rasters/archetype-kmeans.js';

const DIM = 16;

/** n unit vectors around `centres` planted prototypes (deterministic noise of amplitude `noise`). */
function planted(n: number, centres: number, noise: number, seedText = 'planted'): { x: Float32Array; truth: number[] } {
  const rng = new Xoshiro128(blake3(new TextEncoder().encode(seedText)).subarray(0, 16));
  const protos = Array.from({ length: centres }, () => Array.from({ length: DIM }, () => rng.uniform() - 0.5));
  const x = new Float32Array(n * DIM);
  const truth: number[] = [];
  for (let i = 0; i < n; i++) {
    const z = Math.floor(rng.uniform() * centres);
    truth.push(z);
    const v = protos[z].map((p) => p + (rng.uniform() - 0.5) * noise);
    const norm = Math.hypot(...v);
    v.forEach((a, d) => {
      x[i * DIM + d] = a / norm;
    });
  }
  return { x, truth };
}

/** The same distance as the implementation (four running sums added pairwise). */
function dist2(x: Float32Array, i: number, c: Float64Array): number {
  const s = [0, 0, 0, 0];
  for (let d = 0; d < DIM; d++) {
    const e = x[i * DIM + d] - c[d];
    s[d % 4] += e * e;
  }
  return s[0] + s[1] + (s[2] + s[3]);
}

/** Plain Lloyd from the given centres, every vector reassigned every pass. */
function plainLloyd(x: Float32Array, n: number, k: number, start: Float64Array[]): Int32Array {
  const c = start.map((v) => Float64Array.from(v));
  const labels = new Int32Array(n).fill(-1);
  for (let it = 0; it < KMEANS_MAX_ITERATIONS; it++) {
    let changed = 0;
    for (let i = 0; i < n; i++) {
      let bj = 0;
      let bd = Infinity;
      for (let j = 0; j < k; j++) {
        const v = dist2(x, i, c[j]);
        if (v < bd) {
          bd = v;
          bj = j;
        }
      }
      if (labels[i] !== bj) changed++;
      labels[i] = bj;
    }
    if (changed === 0) break;
    const sums = c.map(() => new Float64Array(DIM));
    const counts = new Array(k).fill(0);
    for (let i = 0; i < n; i++) {
      for (let d = 0; d < DIM; d++) sums[labels[i]][d] += x[i * DIM + d];
      counts[labels[i]]++;
    }
    sums.forEach((s, j) => {
      if (counts[j] > 0) c[j] = s.map((v) => v / counts[j]);
    });
  }
  return labels;
}

/** Whether two labelings are the same partition (ids may differ). */
function samePartition(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  const ab = new Map<number, number>();
  const ba = new Map<number, number>();
  for (let i = 0; i < a.length; i++) {
    if ((ab.get(a[i]) ?? b[i]) !== b[i] || (ba.get(b[i]) ?? a[i]) !== a[i]) return false;
    ab.set(a[i], b[i]);
    ba.set(b[i], a[i]);
  }
  return true;
}

describe('archetype k-means', () => {
  it('xoshiro128** gives the reference outputs for state (1, 2, 3, 4)', () => {
    const s = new Uint8Array(16);
    const dv = new DataView(s.buffer);
    [1, 2, 3, 4].forEach((v, i) => dv.setUint32(4 * i, v, true));
    const r = new Xoshiro128(s);
    assert.deepEqual(
      Array.from({ length: 10 }, () => r.next()),
      [11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849, 3729100597, 4258142804],
    );
    const u = new Xoshiro128(s).uniform();
    assert.ok(u >= 0 && u < 1);
  });

  it('the seed is the first 16 bytes of BLAKE3 over the label, aoi_cid and k', () => {
    const aoi = 'abcdefghijklmnopqrstuvwxyz';
    assert.deepEqual(kmeansSeed(aoi, 6), blake3(new TextEncoder().encode(`svc/region_archetype_map@1/seed\u0000${aoi}\u00006`)).subarray(0, 16));
    assert.notDeepEqual(kmeansSeed(aoi, 6), kmeansSeed(aoi, 7));
  });

  it('recovers planted clusters exactly, largest first, with unit centroids', async () => {
    const { x, truth } = planted(3000, 4, 0.05);
    const r = (await kmeans(x, 3000, DIM, 4, kmeansSeed('a'.repeat(26), 4)))!;
    assert.ok(r.converged);
    assert.ok(samePartition(r.labels, truth));
    const sizes = [0, 1, 2, 3].map((z) => truth.filter((t) => t === z).length).sort((a, b) => b - a);
    assert.deepEqual(r.counts, sizes);
    for (let j = 0; j < 4; j++) {
      const c = r.centroids.subarray(j * DIM, (j + 1) * DIM);
      assert.ok(Math.abs(Math.hypot(...c) - 1) < 1e-6);
    }
  });

  it('the bounded passes reach the same partition as plain Lloyd from the same k-means++ seeds', async () => {
    for (const [k, noise, text] of [
      [5, 0.8, 'a'],
      [8, 1.5, 'b'],
      [3, 3, 'c'],
    ] as const) {
      const n = 2000;
      const { x } = planted(n, 6, noise, text);
      const seed = kmeansSeed(text.repeat(26), k);
      const start = (await seeds(x, n, DIM, k, new Xoshiro128(seed)))!;
      const r = (await kmeans(x, n, DIM, k, seed))!;
      assert.ok(samePartition(r.labels, plainLloyd(x, n, k, start)), `k ${k}, noise ${noise}`);
    }
  });

  it('is repeatable bit for bit, and pausing between passes changes nothing', async () => {
    const { x } = planted(1500, 5, 1.2, 'rep');
    const a = (await kmeans(x, 1500, DIM, 5, kmeansSeed('q'.repeat(26), 5)))!;
    let pauses = 0;
    const b = (await kmeans(x, 1500, DIM, 5, kmeansSeed('q'.repeat(26), 5), async () => {
      pauses++;
      await new Promise((r) => setImmediate(r));
    }))!;
    assert.deepEqual(a, b);
    assert.ok(pauses >= a.iterations);
    await assert.rejects(
      kmeans(x, 1500, DIM, 5, kmeansSeed('q'.repeat(26), 5), async () => {
        throw new Error('stop');
      }),
      /stop/,
    );
    assert.ok(a.iterations <= KMEANS_MAX_ITERATIONS);
  });

  it('refuses data with fewer distinct vectors than k', async () => {
    const x = new Float32Array(100 * DIM);
    for (let i = 0; i < 100; i++) x[i * DIM + (i % 2)] = 1;
    assert.equal(await kmeans(x, 100, DIM, 3, kmeansSeed('z'.repeat(26), 3)), null);
    assert.ok(await kmeans(x, 100, DIM, 2, kmeansSeed('z'.repeat(26), 2)));
  });
});
