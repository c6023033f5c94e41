/** Linear shoaling: constant depth, Green's law on a slope, depth-limited breaking; and the AR(2) forecast. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BREAKER_INDEX, G, shoal } from '../../../src/primitives/solvers/wave.js';
import { AR_COEFFICIENTS, arPredict } from '../../../src/primitives/solvers/ar.js';

const rel = (a: number, b: number) => Math.abs(a - b) / Math.abs(b);

describe('wave shoaling', () => {
  it('over a constant depth: celerity √(g·h) everywhere, height unchanged, travel = length / c', () => {
    const depths = Array(10).fill(12);
    const spacing = Array(9).fill(9.55);
    const s = shoal(depths, spacing, 1.5);
    for (const c of s.cells) {
      assert.ok(rel(c.celerity_m_s, Math.sqrt(G * 12)) < 1e-15);
      assert.ok(rel(c.height_m, 1.5) < 1e-15);
      assert.equal(c.breaking, false);
    }
    assert.ok(rel(s.travel_time_s, (9 * 9.55) / Math.sqrt(G * 12)) < 1e-12);
    assert.equal(s.breaks_at, null);
  });

  it("follows Green's law on a gentle slope from 20 m to 5 m within 1e-9 relative", () => {
    const n = 31;
    const depths = Array.from({ length: n }, (_, i) => 5 + (15 * i) / (n - 1)); // coast first: 5 m … 20 m
    const s = shoal(depths, Array(n - 1).fill(10), 1);
    for (let i = 0; i < n; i++) {
      assert.ok(rel(s.cells[i].height_m, (20 / depths[i]) ** 0.25) < 1e-9, `cell ${i}`);
      assert.equal(s.cells[i].breaking, false);
    }
    assert.ok(rel(s.nearshore_height_m, 4 ** 0.25) < 1e-9);
  });

  it('caps the height at 0.78·h where the wave breaks, and keeps it capped shoreward', () => {
    const depths = [0.5, 1, 2, 3, 4, 6, 8];
    const s = shoal(depths, Array(6).fill(10), 3);
    for (const [i, c] of s.cells.entries()) assert.ok(c.height_m <= BREAKER_INDEX * depths[i] + 1e-12);
    // 3 m offshore at 8 m: 3 ≤ 6.24, no break; at 4 m Green's gives 3·2^¼ ≈ 3.57 > 3.12: breaks there
    assert.equal(s.cells[6].breaking, false);
    assert.equal(s.cells[5].breaking, false);
    assert.equal(s.cells[4].breaking, true);
    assert.ok(rel(s.cells[4].height_m, BREAKER_INDEX * 4) < 1e-15);
    assert.equal(s.breaks_at, 2);
    assert.ok(rel(s.nearshore_height_m, BREAKER_INDEX * 0.5) < 1e-15);
  });

  it('refuses a profile with dry cells', () => {
    assert.throws(() => shoal([2, 0], [10], 1), RangeError);
  });
});

describe('AR(2) forecast', () => {
  it('predicts 0.6·0.5 + 0.3·0.4 + 0.1·0.2 = 0.44 on [0.2, 0.4, 0.5]', () => {
    assert.deepEqual([...AR_COEFFICIENTS], [0.6, 0.3, 0.1]);
    assert.ok(Math.abs(arPredict([0.2, 0.4, 0.5])! - 0.44) < 1e-12);
    assert.ok(Math.abs(arPredict([0.9, 0.9, 0.2, 0.4, 0.5])! - 0.44) < 1e-12, 'only the last three count');
  });

  it('gives nothing with fewer than three values, and keeps a constant series constant', () => {
    assert.equal(arPredict([0.3, 0.4]), undefined);
    assert.equal(arPredict([]), undefined);
    assert.ok(Math.abs(arPredict([0.5, 0.5, 0.5])! - 0.5) < 1e-12);
  });
});
