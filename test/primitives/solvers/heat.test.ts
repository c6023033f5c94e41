/** The FTCS heat solver on a 3×3 grid: conservation, the discrete kernel, the step rule. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ftcsStep, heatPlan, imputeGrid, R_MAX, solveHeat } from '../../../src/primitives/solvers/heat.js';

const DX = 9.5546;

/** The same recurrence written out by hand: zero-flux edges repeat the edge cell. */
function referenceStep(g: number[], r: number): number[] {
  const v = (i: number, j: number) => g[Math.min(2, Math.max(0, i)) * 3 + Math.min(2, Math.max(0, j))];
  const out: number[] = [];
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) out.push(v(i, j) + r * (v(i - 1, j) + v(i + 1, j) + v(i, j - 1) + v(i, j + 1) - 4 * v(i, j)));
  return out;
}

describe('heat FTCS', () => {
  it('keeps a uniform field uniform to 1e-12 after any time', () => {
    for (const hours of [0.5, 6, 48, 168]) {
      for (const D of [1e-7, 1e-6, 1e-4, 1e-3]) {
        const { grid } = solveHeat(Array(9).fill(23.7), D, hours * 3600, DX, DX);
        for (const v of grid) assert.ok(Math.abs(v - 23.7) < 1e-12, `${hours} h, D ${D}: ${v}`);
      }
    }
  });

  it('decays a point anomaly at the centre exactly as the discrete kernel says, one step by hand', () => {
    const r = 0.2;
    const g = [0, 0, 0, 0, 1, 0, 0, 0, 0];
    const next = ftcsStep(g, r, r);
    // centre' = centre + r·(sum of 4 neighbours − 4·centre) = 1 − 4r
    assert.ok(Math.abs(next[4] - (1 - 4 * r)) < 1e-15);
    // an edge cell (N): its outer neighbour is itself (0), its inner one the centre (1)
    for (const i of [1, 3, 5, 7]) assert.ok(Math.abs(next[i] - r) < 1e-15);
    for (const i of [0, 2, 6, 8]) assert.equal(next[i], 0);
    assert.ok(Math.abs(next.reduce((s, x) => s + x, 0) - 1) < 1e-15, 'heat is conserved');
  });

  it('matches the independent recurrence over many steps and never overshoots', () => {
    const D = 1e-3;
    const T = 48 * 3600;
    const start = [20, 20, 20, 20, 30, 20, 20, 20, 20];
    const { grid, plan } = solveHeat(start, D, T, DX, DX);
    assert.ok(plan.steps > 1);
    let ref = [...start];
    let prevCentre = ref[4];
    for (let i = 0; i < plan.steps; i++) {
      ref = referenceStep(ref, plan.r);
      assert.ok(ref[4] <= prevCentre + 1e-12, 'the centre only cools');
      assert.ok(ref[4] >= 190 / 9 - 1e-12, 'the centre never drops below the mean');
      assert.ok(
        ref.every((x) => x >= 20 - 1e-12 && x <= 30 + 1e-12),
        'no value leaves the initial range',
      );
      prevCentre = ref[4];
    }
    for (let i = 0; i < 9; i++) assert.ok(Math.abs(grid[i] - ref[i]) < 1e-10, `cell ${i}: ${grid[i]} vs ${ref[i]}`);
    assert.ok(Math.abs(grid.reduce((s, x) => s + x, 0) - start.reduce((s, x) => s + x, 0)) < 1e-9, 'total heat conserved');
    // a long run tends to the mean: the slowest mode decays as exp(−D·t/dx²), about 1e-3 here
    const long = solveHeat(start, 1e-3, 168 * 3600, DX, DX).grid;
    for (const v of long) assert.ok(Math.abs(v - 190 / 9) < 10 * 2e-3, String(v));
  });

  it('chooses dt so that r ≤ 0.2, with dt = T / ceil(T / dt_max)', () => {
    for (const D of [1e-9, 1e-7, 1e-6, 3.3e-4, 1e-3]) {
      for (const hours of [0.01, 1, 6, 7.3, 168]) {
        const T = hours * 3600;
        const p = heatPlan(D, T, DX, DX * 0.7);
        assert.ok(p.r <= R_MAX && p.r_x <= R_MAX && p.r_y <= R_MAX, JSON.stringify(p));
        const dtMax = (R_MAX * (DX * 0.7) ** 2) / D;
        assert.ok(p.steps === Math.max(1, Math.ceil(T / dtMax)) || p.steps === Math.ceil(T / dtMax) + 1);
        assert.ok(Math.abs(p.dt_s * p.steps - T) < 1e-6 * T);
      }
    }
  });

  it('stays stable at 168 h with D = 1e-3 (bounded, no oscillation)', () => {
    const start = [10, -5, 40, 0, 100, 3, 7, 12, -20];
    const { grid, plan } = solveHeat(start, 1e-3, 168 * 3600, DX, DX);
    assert.ok(plan.r <= R_MAX);
    assert.ok(grid.every((v) => Number.isFinite(v) && v >= -20 && v <= 100));
    const mean = start.reduce((s, x) => s + x, 0) / 9;
    for (const v of grid) assert.ok(Math.abs(v - mean) < 120 * 2e-3, String(v));
    assert.ok(Math.abs(grid.reduce((s, x) => s + x, 0) - 9 * mean) < 1e-9);
  });

  it('imputes missing neighbours with the mean of the present cells, never the centre', () => {
    const r = imputeGrid([20, undefined, 20, 20, 30, 20, 20, 20, undefined]);
    assert.deepEqual(r?.imputed, [1, 8]);
    assert.ok(Math.abs(r!.grid[1] - 150 / 7) < 1e-12);
    assert.equal(imputeGrid([20, 20, 20, 20, undefined, 20, 20, 20, 20]), undefined);
  });
});
