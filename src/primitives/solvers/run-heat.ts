/**
 * /v1/heat_solve and /v1/jepa_predict on the service side: read the signed initial state, run
 * the pure solver, sign the answer over exactly the facts read.
 */
import { invalidArgument, SvcError } from '../../protocol/errors.js';
import { cellCenter, pitchMetres, stencil } from '../../protocol/cell64.js';
import { tslotOf } from '../../protocol/tslot.js';
import type { ServiceContext } from '../context/context.js';
import { requireBand, round } from '../reads/common.js';
import { numericValue } from '../shortcuts/evidence.js';
import { AR_COEFFICIENTS, arPredict } from './ar.js';
import { imputeGrid, MAX_STEPS, R_MAX, heatPlan, solveHeat, type HeatPlan } from './heat.js';
import { SolverRun, type SolverEnvelope, type SolverOpts } from './reads.js';

export const LST_BAND = 'lst.day_8day';
export const NDVI_BAND = 'indices.ndvi';
const STENCIL_ORDER = 'NW, N, NE, W, C, E, SW, S, SE (row-major, north row first)';

export interface HeatInput {
  cell: string;
  diffusivity_m2_per_s: number;
  hours_ahead: number;
}

export interface HeatResult extends SolverEnvelope {
  status: 'ok' | 'insufficient_data';
  reason?: string;
  temperature_c: number | null;
  grid: { order: string; cells: string[]; before: Array<number | null>; after: number[] | null };
  imputed: string[];
  parameters: { band: string; diffusivity_m2_per_s: number; hours_ahead: number };
  stability: { r: number; r_x: number; r_y: number; r_max: number; steps: number; dt_s: number; dx_m: number; dy_m: number };
  method: string;
}

const r12 = (x: number) => round(x, 12);

function stabilityOf(plan: HeatPlan, dx: number, dy: number): HeatResult['stability'] {
  return { r: r12(plan.r), r_x: r12(plan.r_x), r_y: r12(plan.r_y), r_max: R_MAX, steps: plan.steps, dt_s: r12(plan.dt_s), dx_m: r12(dx), dy_m: r12(dy) };
}

/** Diffuse the land-surface temperature of a cell's 3×3 neighbourhood for hours_ahead hours. */
export async function heatSolve(ctx: ServiceContext, input: HeatInput, opts: SolverOpts = {}): Promise<HeatResult> {
  const { diffusivity_m2_per_s: D, hours_ahead: hours } = input;
  if (!(D > 0) || D > 1e-3) throw invalidArgument('diffusivity_m2_per_s', `must be > 0 and ≤ 1e-3 m²/s (got ${D})`);
  if (!(hours > 0) || hours > 168) throw invalidArgument('hours_ahead', `must be > 0 and ≤ 168 (got ${hours})`);
  const run = await SolverRun.start(ctx, 'heat_solve', input.cell, 'cell', opts);
  // East-west spacing shrinks with latitude; north-south does not. Both come from the lattice pitch.
  const { ew_m: dx, ns_m: dy } = pitchMetres(cellCenter(run.cell).lat);
  if (!(dx > 1e-6)) throw invalidArgument('cell', 'cell spacing degenerates at the pole');
  const totalS = hours * 3600;
  const plan = heatPlan(D, totalS, dx, dy);
  if (plan.steps > MAX_STEPS) {
    throw new SvcError(
      'invalid_argument',
      `cell: cells here are ${dx.toFixed(4)} m wide east-west, which needs ${plan.steps} sub-steps (more than ${MAX_STEPS}); choose a smaller diffusivity or horizon`,
      {
        field: 'cell',
        steps: plan.steps,
        max_steps: MAX_STEPS,
      },
    );
  }
  const cells = stencil(run.cell);
  const facts = await run.ev.readMany(cells, LST_BAND);
  const values = facts.map(numericValue);
  const parameters = { band: LST_BAND, diffusivity_m2_per_s: D, hours_ahead: hours };
  const stability = stabilityOf(plan, dx, dy);
  const method = `explicit FTCS of dT/dt = D·∇²T on the 3×3 stencil (${STENCIL_ORDER}), zero-flux edges (the value beyond an edge is the edge cell itself), dt = T / ceil(T / dt_max) with dt_max = ${R_MAX}·min(dx, dy)²/D so that D·dt/dx² ≤ ${R_MAX} on both axes; missing neighbours take the mean of the present cells`;
  run.ev.caveat(
    'Diffusion only: no sun, wind, evaporation or ground heat flux. lst.day_8day is an 8-day daytime composite of the land surface skin, so the result shows how conduction alone would even out this neighbourhood, not a weather forecast.',
  );
  run.ev.caveat('The edges are insulated: heat from beyond the 3×3 neighbourhood is not modelled, so over long horizons the grid tends to its own mean.');
  const filled = imputeGrid(values);
  if (!filled) {
    return {
      ...run.envelope(),
      status: 'insufficient_data',
      reason: `no usable ${LST_BAND} value at the centre cell ${run.cell} (missing or a signed absence; see materialize_notes): the centre is never imputed`,
      temperature_c: null,
      grid: { order: STENCIL_ORDER, cells, before: values.map((v) => v ?? null), after: null },
      imputed: [],
      parameters,
      stability,
      method,
    };
  }
  const { grid } = solveHeat(filled.grid, D, totalS, dx, dy);
  const imputed = filled.imputed.map((i) => cells[i]);
  if (imputed.length > 0) run.ev.caveat(`${imputed.length} of 8 neighbours had no usable ${LST_BAND} value and start at the mean of the present cells (listed in imputed).`);
  return {
    ...run.envelope(),
    status: 'ok',
    temperature_c: r12(grid[4]),
    grid: { order: STENCIL_ORDER, cells, before: filled.grid.map(r12), after: grid.map(r12) },
    imputed,
    parameters,
    stability,
    method,
  };
}

export interface NdviInput {
  cell: string;
  band: string;
  forecast_horizon_months: number;
  lookback_months: number;
}

export interface NdviPoint {
  month: string;
  tslot: number;
  ndvi: number | null;
  fact_cid: string | null;
}

export interface NdviResult extends SolverEnvelope {
  status: 'ok' | 'insufficient_data';
  reason?: string;
  n_present: number;
  prediction: { month: string; ndvi: number } | null;
  used_months: string[];
  series: NdviPoint[];
  coefficients: { y_t: number; y_t_minus_1: number; y_t_minus_2: number };
  parameters: { band: string; forecast_horizon_months: number; lookback_months: number };
  method: string;
}

const monthLabel = (d: Date) => `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;

/** Next month's NDVI from the last complete months, by a fixed-coefficient AR(2). */
export async function ndviPredict(ctx: ServiceContext, input: NdviInput, opts: SolverOpts = {}): Promise<NdviResult> {
  if (input.band !== NDVI_BAND) throw invalidArgument('band', `only ${NDVI_BAND} is supported (got ${JSON.stringify(input.band)})`);
  if (input.forecast_horizon_months !== 1) throw invalidArgument('forecast_horizon_months', `only 1 (the next month) is supported (got ${input.forecast_horizon_months})`);
  const lookback = input.lookback_months;
  if (!Number.isInteger(lookback) || lookback < 1 || lookback > 24) throw invalidArgument('lookback_months', `must be an integer 1..24 (got ${lookback})`);
  const entry = requireBand(ctx, NDVI_BAND, 'band');
  const run = await SolverRun.start(ctx, 'jepa_predict', input.cell, 'cell', opts);
  const now = ctx.now();
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  // Complete months only, oldest first: the current month is the one predicted.
  const months = Array.from({ length: lookback }, (_, i) => new Date(Date.UTC(y, m - lookback + i, 15)));
  const series: NdviPoint[] = [];
  for (const d of months) {
    const tslot = tslotOf(Math.floor(d.getTime() / 1000), entry.tempo);
    const f = await run.ev.read(run.cell, NDVI_BAND, tslot);
    const v = numericValue(f);
    series.push({ month: monthLabel(d), tslot, ndvi: v ?? null, fact_cid: v === undefined ? null : f!.fact_cid });
  }
  const shared = series.filter((p, i) => i > 0 && p.tslot === series[i - 1].tslot).map((p) => p.month);
  if (shared.length > 0) run.ev.caveat(`${shared.join(', ')}: the 15th falls in the same ${entry.tempo} tslot as the month before, so one fact stands for both months.`);
  const present = series.filter((p) => p.ndvi !== null);
  const used = present.slice(-3);
  const predicted = arPredict(used.map((p) => p.ndvi as number));
  const nextMonth = monthLabel(new Date(Date.UTC(y, m, 15)));
  const [a1, a2, a3] = AR_COEFFICIENTS;
  const base = {
    n_present: present.length,
    used_months: used.map((p) => p.month),
    series,
    coefficients: { y_t: a1, y_t_minus_1: a2, y_t_minus_2: a3 },
    parameters: { band: NDVI_BAND, forecast_horizon_months: 1, lookback_months: lookback },
    method: `AR(2) with fixed, unfitted coefficients: ŷ(t+1) = ${a1}·y(t) + ${a2}·y(t−1) + ${a3}·y(t−2), y(t) being the newest of the three most recent months with a value; each month's value is the ${NDVI_BAND} fact at the tslot of the 15th (UTC). Not a learned (JEPA) model.`,
  };
  run.ev.caveat('A fixed weighted persistence of the last three values: it carries no seasonality, weather or land-use change, and is no substitute for a trained forecaster.');
  if (predicted === undefined) {
    return {
      ...run.envelope(),
      status: 'insufficient_data',
      reason: `${present.length} of ${lookback} months have a usable ${NDVI_BAND} value; the forecast needs 3`,
      prediction: null,
      ...base,
    };
  }
  const newest = series.length - 1;
  if (series.indexOf(used[0]) !== newest - 2)
    run.ev.caveat(`The three values used (${base.used_months.join(', ')}) are not the three latest months: gaps are skipped, so the forecast rests on older data.`);
  return { ...run.envelope(), status: 'ok', prediction: { month: nextMonth, ndvi: r12(predicted) }, ...base };
}
