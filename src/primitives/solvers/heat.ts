/**
 * Heat diffusion on a 3×3 grid of cells: explicit forward-time, centred-space (FTCS) steps of
 * ∂T/∂t = D·∇²T. Pure numbers only: the caller reads the grid and signs the answer.
 *
 * The grid is row-major, north row first (the protocol stencil order NW, N, NE, W, C, E, SW, S,
 * SE). Its outer faces carry no heat (zero flux): the value beyond an edge is taken to be the edge
 * cell itself, i.e. the field is mirrored about the outer face. With that rule the sum of the nine
 * values is conserved exactly, so a solver cannot create or lose heat at the border.
 */

/** Largest r = D·dt/dx² any step may use. The scheme itself is stable up to rx + ry ≤ 1/2; 0.2 per axis keeps a margin and no overshoot. */
export const R_MAX = 0.2;

/** Beyond this many sub-steps the request is refused: it only happens where cells are very narrow (near the poles). */
export const MAX_STEPS = 1_000_000;

export interface HeatPlan {
  /** Sub-steps taken. */
  steps: number;
  /** Length of one sub-step, seconds (total time / steps). */
  dt_s: number;
  /** D·dt/dx² along east-west. */
  r_x: number;
  /** D·dt/dy² along north-south. */
  r_y: number;
  /** The larger of r_x and r_y: the number the stability rule bounds. */
  r: number;
}

/**
 * How many equal sub-steps cover `totalS` seconds so that D·dt/h² ≤ R_MAX on the narrower axis:
 * steps = ceil(T / dt_max), dt = T / steps. Rounding can leave r a hair above the bound, so one
 * more step is added until it holds exactly.
 */
export function heatPlan(diffusivity: number, totalS: number, dxM: number, dyM: number): HeatPlan {
  if (!(diffusivity > 0) || !(totalS > 0) || !(dxM > 0) || !(dyM > 0)) throw new RangeError('heatPlan: diffusivity, time and spacings must be positive');
  const h = Math.min(dxM, dyM);
  const dtMax = (R_MAX * h * h) / diffusivity;
  let steps = Math.max(1, Math.ceil(totalS / dtMax));
  while ((diffusivity * (totalS / steps)) / (h * h) > R_MAX) steps++;
  const dt = totalS / steps;
  const r_x = (diffusivity * dt) / (dxM * dxM);
  const r_y = (diffusivity * dt) / (dyM * dyM);
  return { steps, dt_s: dt, r_x, r_y, r: Math.max(r_x, r_y) };
}

const clamp = (i: number) => (i < 0 ? 0 : i > 2 ? 2 : i);

/** One FTCS step on a 3×3 grid (row-major, north first) with zero-flux edges. */
export function ftcsStep(grid: readonly number[], rx: number, ry: number): number[] {
  if (grid.length !== 9) throw new RangeError('ftcsStep: the grid needs 9 values');
  const at = (row: number, col: number) => grid[clamp(row) * 3 + clamp(col)];
  const out = new Array<number>(9);
  for (let row = 0; row < 3; row++) {
    for (let col = 0; col < 3; col++) {
      const c = at(row, col);
      out[row * 3 + col] = c + rx * (at(row, col - 1) + at(row, col + 1) - 2 * c) + ry * (at(row - 1, col) + at(row + 1, col) - 2 * c);
    }
  }
  return out;
}

/** The grid after `totalS` seconds, and the step plan used. */
export function solveHeat(grid: readonly number[], diffusivity: number, totalS: number, dxM: number, dyM: number): { grid: number[]; plan: HeatPlan } {
  const plan = heatPlan(diffusivity, totalS, dxM, dyM);
  if (plan.steps > MAX_STEPS) throw new RangeError(`solveHeat: ${plan.steps} sub-steps needed (more than ${MAX_STEPS})`);
  let g = [...grid];
  for (let i = 0; i < plan.steps; i++) g = ftcsStep(g, plan.r_x, plan.r_y);
  return { grid: g, plan };
}

/** A grid with missing values filled by the mean of the present ones; which indices were filled. Undefined when the centre is missing or nothing is present. */
export function imputeGrid(values: ReadonlyArray<number | undefined>): { grid: number[]; imputed: number[] } | undefined {
  if (values.length !== 9 || values[4] === undefined) return undefined;
  const present = values.filter((v): v is number => v !== undefined);
  const mean = present.reduce((s, v) => s + v, 0) / present.length;
  const imputed: number[] = [];
  const grid = values.map((v, i) => {
    if (v !== undefined) return v;
    imputed.push(i);
    return mean;
  });
  return { grid, imputed };
}
