/**
 * The physics solvers (docs/solvers.md): heat diffusion over a cell's 3×3 neighbourhood, linear
 * wave shoaling along a seaward depth profile, and a fixed-coefficient NDVI forecast. Each starts
 * from signed facts and signs its answer with one receipt citing exactly those facts. POST only;
 * MCP tools of /mcp/full.
 */
import { Type } from '@sinclair/typebox';
import { heatSolve, ndviPredict, NDVI_BAND } from '../../primitives/solvers/run-heat.js';
import { waveSolve } from '../../primitives/solvers/run-wave.js';
import { defineOperation, type Operation } from '../operations.js';
import { OneOf } from '../schemas/inputs.js';
import { Closed, MaterializeNote, Nullable, PlaceResolved, Signed } from '../schemas/responses.js';

const cellInput = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const num = Nullable(Type.Number());

/** The fields every solver answer carries besides its own. */
const envelope = {
  status: OneOf(['ok', 'insufficient_data'] as const),
  reason: Type.Optional(Type.String({ description: 'why the answer has no number (insufficient_data)' })),
  cell: Type.String({ description: 'the cell64 solved at' }),
  place: Type.Optional(PlaceResolved),
  initial_fact_cids: Type.Array(Type.String(), { description: 'every fact the answer rests on; the receipt cites exactly these' }),
  caveats: Type.Array(Type.String()),
  materialize_notes: Type.Array(MaterializeNote),
  method: Type.String({ description: 'the scheme, stated so the number can be recomputed' }),
};

const ENVELOPE =
  'Every answer also has status, cell, initial_fact_cids (the signed facts of the initial condition), caveats, materialize_notes, method and receipt (primitive svc.<name>, citing exactly initial_fact_cids; verify offline with POST /v1/verify_receipt). Read the facts themselves with POST /v1/recall.';

export const heatSolveOp = defineOperation({
  name: 'heat_solve',
  method: 'POST',
  path: '/v1/heat_solve',
  summary: 'Heat diffusion: the land-surface temperature of a cell after hours_ahead hours of conduction with its 8 neighbours',
  description: `Use to ask how a hot or cold spot would even out by conduction alone. Reads lst.day_8day (°C) at the cell and its 8 neighbours and runs explicit FTCS steps of dT/dt = D·∇²T on that 3×3 grid with insulated (zero-flux) edges; the sub-step keeps r = D·dt/dx² ≤ 0.2. Missing neighbours start at the mean of the present cells (listed in imputed); a missing centre gives status insufficient_data with null numbers. Response: temperature_c (centre after hours_ahead), grid {order, cells, before, after} (row-major, north row first), imputed, parameters, stability {r, r_x, r_y, r_max, steps, dt_s, dx_m, dy_m}. Not a weather forecast: no sun, wind or evaporation. ${ENVELOPE}`,
  tags: ['solvers'],
  input: Type.Object(
    {
      cell: cellInput('a cell64 (or cell token, or place name) at the centre of the 3×3 grid'),
      diffusivity_m2_per_s: Type.Number({ exclusiveMinimum: 0, maximum: 1e-3, default: 1e-6, description: 'thermal diffusivity D, m²/s (soil and rock: about 1e-7 to 1e-6)' }),
      hours_ahead: Type.Number({ exclusiveMinimum: 0, maximum: 168, default: 6, description: 'simulated time, hours' }),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    ...envelope,
    temperature_c: Nullable(Type.Number({ description: 'centre cell after hours_ahead, °C' })),
    grid: Closed({
      order: Type.String(),
      cells: Type.Array(Type.String(), { minItems: 9, maxItems: 9 }),
      before: Type.Array(num, { minItems: 9, maxItems: 9, description: 'the initial condition used (imputed cells filled in); null only where a value is missing' }),
      after: Nullable(Type.Array(Type.Number(), { minItems: 9, maxItems: 9 })),
    }),
    imputed: Type.Array(Type.String(), { description: 'neighbour cells without a usable value, started at the mean of the present cells' }),
    parameters: Closed({ band: Type.String(), diffusivity_m2_per_s: Type.Number(), hours_ahead: Type.Number() }),
    stability: Closed({
      r: Type.Number({ description: 'max(r_x, r_y), never above r_max' }),
      r_x: Type.Number({ description: 'D·dt/dx², east-west' }),
      r_y: Type.Number({ description: 'D·dt/dy², north-south' }),
      r_max: Type.Number(),
      steps: Type.Integer({ minimum: 1 }),
      dt_s: Type.Number(),
      dx_m: Type.Number({ description: 'east-west cell spacing, m' }),
      dy_m: Type.Number({ description: 'north-south cell spacing, m' }),
    }),
  }),
  mcp: 'full',
  run: (ctx, input, call) => heatSolve(ctx, input, { deadline: call.deadline }),
});

const Elevation = Closed({ cell: Type.String(), elevation_m: num, band: Nullable(Type.String()), fact_cid: Nullable(Type.String()) });

export const waveSolveOp = defineOperation({
  name: 'wave_solve',
  method: 'POST',
  path: '/v1/wave_solve',
  summary: 'Wave shoaling: how an offshore wave grows, slows and breaks on its way to a coastal cell',
  description: `Use to estimate the nearshore wave height and arrival time at a shoreline cell from an offshore wave. Walks n_offshore_cells cells seaward from coastal_cell, each step to the deepest neighbour (gebco.elevation_m, else copdem30m.elevation_mean; depth = −elevation), then applies linear shallow-water theory: speed √(g·h) per cell and Green's law H₂ = H₁·(h₁/h₂)^¼ from the offshore end toward the coast, capped at 0.78·h where the wave breaks. Steady solution, no time stepping. A coastal_cell with no water next to it is refused (invalid_argument) with the elevations read and details.suggestion, the nearest cell below sea level within 3 rings: retry with it. Response: coastal, profile[] (coast first: cell, depth_m, celerity_m_s, wavelength_m, height_m, breaking, band, fact_cid), nearshore_height_m, breaks_at, travel_time_s, parameters, scheme. ${ENVELOPE}`,
  tags: ['solvers'],
  input: Type.Object(
    {
      coastal_cell: cellInput('a cell64 (or cell token, or place name) on the shoreline, next to open water'),
      offshore_height_m: Type.Number({ minimum: 0, maximum: 30, description: 'wave height at the offshore end of the profile, m' }),
      period_s: Type.Number({ minimum: 2, maximum: 30, description: 'wave period, s (gives the wavelength used to flag where the long-wave approximation is weak)' }),
      n_offshore_cells: Type.Integer({ minimum: 1, maximum: 64, default: 8, description: 'cells walked seaward (about 10 m each)' }),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    ...envelope,
    coastal: Elevation,
    profile: Type.Array(
      Closed({
        cell: Type.String(),
        depth_m: Type.Number(),
        celerity_m_s: Type.Number(),
        wavelength_m: Type.Number({ description: 'celerity × period' }),
        height_m: Type.Number(),
        breaking: Type.Boolean({ description: 'the height is capped at 0.78·depth here' }),
        band: Type.String(),
        fact_cid: Type.String(),
      }),
      { description: 'nearest the coast first, offshore end last' },
    ),
    nearshore_height_m: Type.Number({ description: 'height at profile[0]' }),
    breaks_at: Nullable(Closed({ cell: Type.String(), depth_m: Type.Number(), height_m: Type.Number() }, 'the outermost cell where the wave breaks; null if it never does')),
    travel_time_s: Type.Number({ description: 'time to cross the profile from its offshore end to profile[0]' }),
    parameters: Closed({
      offshore_height_m: Type.Number(),
      period_s: Type.Number(),
      n_offshore_cells: Type.Integer(),
      cells_walked: Type.Integer({ description: 'fewer than n_offshore_cells when the walk ran out of water' }),
      g_m_s2: Type.Number(),
      breaker_index: Type.Number(),
    }),
    scheme: Closed({ kind: Type.String(), time_stepping: Type.Literal(false), note: Type.String() }),
  }),
  mcp: 'full',
  run: (ctx, input, call) => waveSolve(ctx, input, { deadline: call.deadline }),
});

export const jepaPredictOp = defineOperation({
  name: 'jepa_predict',
  method: 'POST',
  path: '/v1/jepa_predict',
  summary: "Next month's NDVI at a cell from its recent monthly NDVI, by a fixed-coefficient AR(2) (not a learned model)",
  description: `Use for a quick, reproducible next-month NDVI expectation. Reads indices.ndvi at the tslot of the 15th of each of the last lookback_months complete months (oldest first) and predicts the current month as 0.6·y(t) + 0.3·y(t−1) + 0.1·y(t−2) over the three most recent months with a value. Fewer than three values: status insufficient_data with n_present, never a zero. Only band indices.ndvi and forecast_horizon_months 1 are accepted. Response: prediction {month, ndvi}, series[] {month, tslot, ndvi, fact_cid}, used_months, n_present, coefficients, parameters. For a change between two dates, call /v1/deforestation_alert. ${ENVELOPE}`,
  tags: ['solvers'],
  input: Type.Object(
    {
      cell: cellInput('a cell64 (or cell token, or place name)'),
      band: Type.String({ minLength: 1, maxLength: 100, default: NDVI_BAND, description: `band forecast; only ${NDVI_BAND}` }),
      forecast_horizon_months: Type.Integer({ default: 1, description: 'months ahead; only 1' }),
      lookback_months: Type.Integer({ minimum: 1, maximum: 24, default: 6, description: 'complete months read, ending last month' }),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    ...envelope,
    n_present: Type.Integer({ minimum: 0, description: 'months with a usable value' }),
    prediction: Nullable(Closed({ month: Type.String({ description: 'YYYY-MM' }), ndvi: Type.Number() })),
    used_months: Type.Array(Type.String(), { description: 'the months behind y(t−2), y(t−1), y(t), oldest first' }),
    series: Type.Array(Closed({ month: Type.String(), tslot: Type.Integer(), ndvi: num, fact_cid: Nullable(Type.String()) })),
    coefficients: Closed({ y_t: Type.Number(), y_t_minus_1: Type.Number(), y_t_minus_2: Type.Number() }),
    parameters: Closed({ band: Type.String(), forecast_horizon_months: Type.Integer(), lookback_months: Type.Integer() }),
  }),
  mcp: 'full',
  run: (ctx, input, call) => ndviPredict(ctx, input, { deadline: call.deadline }),
});

/** The solver operations: POST only, MCP full. */
export const SOLVER_OPS: Operation[] = [heatSolveOp, waveSolveOp, jepaPredictOp];
