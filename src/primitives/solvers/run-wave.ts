/**
 * /v1/wave_solve on the service side: walk a depth profile seaward from a coastal cell over signed
 * elevation facts, then shoal the wave along it with the pure solver.
 */
import { EARTH_RADIUS_M, PITCH_LAT_DEG, PITCH_LNG_DEG, cellCenter, cellOf, neighbours } from '../../protocol/cell64.js';
import { invalidArgument, SvcError } from '../../protocol/errors.js';
import type { ServiceContext } from '../context/context.js';
import { round } from '../reads/common.js';
import { BREAKER_INDEX, G, shoal } from './wave.js';
import { DEM_BAND, ElevationReader, SolverRun, TOPOBATHY_BAND, type ElevationRead, type SolverEnvelope, type SolverOpts } from './reads.js';

/** How far the refusal looks for water to suggest instead. */
export const SUGGESTION_RINGS = 3;

export interface WaveInput {
  coastal_cell: string;
  offshore_height_m: number;
  period_s: number;
  n_offshore_cells: number;
}

export interface ProfileCell {
  cell: string;
  depth_m: number;
  celerity_m_s: number;
  wavelength_m: number;
  height_m: number;
  breaking: boolean;
  band: string;
  fact_cid: string;
}

export interface WaveResult extends SolverEnvelope {
  status: 'ok';
  coastal: ElevationRead;
  profile: ProfileCell[];
  nearshore_height_m: number;
  breaks_at: { cell: string; depth_m: number; height_m: number } | null;
  travel_time_s: number;
  parameters: { offshore_height_m: number; period_s: number; n_offshore_cells: number; cells_walked: number; g_m_s2: number; breaker_index: number };
  scheme: { kind: string; time_stepping: false; note: string };
  method: string;
}

const r12 = (x: number) => round(x, 12);

/** Distance between two cell centres, metres (local flat-earth; exact enough over a few cells). */
export function centreDistance(a: string, b: string): number {
  const pa = cellCenter(a);
  const pb = cellCenter(b);
  const rad = Math.PI / 180;
  let dLng = pb.lng - pa.lng;
  if (dLng > 180) dLng -= 360;
  if (dLng < -180) dLng += 360;
  const north = (pb.lat - pa.lat) * rad * EARTH_RADIUS_M;
  const east = dLng * rad * EARTH_RADIUS_M * Math.cos(((pa.lat + pb.lat) / 2) * rad);
  return Math.hypot(north, east);
}

/** The cells exactly `k` steps away from `cell` (Chebyshev ring), north-west corner first. */
export function ring(cell: string, k: number): string[] {
  const c = cellCenter(cell);
  const out: string[] = [];
  for (let i = k; i >= -k; i--) {
    for (let j = -k; j <= k; j++) {
      if (Math.max(Math.abs(i), Math.abs(j)) !== k) continue;
      const lat = Math.max(-90, Math.min(90, c.lat + i * PITCH_LAT_DEG));
      const lng = ((((c.lng + j * PITCH_LNG_DEG + 180) % 360) + 360) % 360) - 180;
      const x = cellOf(lat, lng);
      if (x !== cell && !out.includes(x)) out.push(x);
    }
  }
  return out;
}

/** The deepest unvisited neighbour with water, or undefined (with what was read). */
async function nextStep(reader: ElevationReader, from: string, visited: Set<string>): Promise<{ pick?: ElevationRead; read: ElevationRead[] }> {
  const read = await reader.many(neighbours(from).filter((c) => !visited.has(c)));
  let pick: ElevationRead | undefined;
  for (const r of read) if (r.elevation_m !== null && r.elevation_m < 0 && (!pick || r.elevation_m < pick.elevation_m!)) pick = r;
  return { pick, read };
}

/** Nearest water within SUGGESTION_RINGS rings of a land-locked cell, for the refusal. */
async function suggestWater(reader: ElevationReader, cell: string): Promise<Record<string, unknown> | string> {
  for (let k = 1; k <= SUGGESTION_RINGS; k++) {
    const wet = (await reader.many(ring(cell, k))).filter((r) => r.elevation_m !== null && r.elevation_m < 0);
    if (wet.length === 0) continue;
    const best = wet.map((r) => ({ r, d: centreDistance(cell, r.cell) })).sort((a, b) => a.d - b.d || a.r.elevation_m! - b.r.elevation_m!)[0];
    return { cell: best.r.cell, elevation_m: best.r.elevation_m, ring: k, distance_m: r12(best.d), band: best.r.band };
  }
  return `none within ${SUGGESTION_RINGS} rings`;
}

/** Shoal a wave from `n_offshore_cells` cells offshore to the coastal cell's first wet neighbour. */
export async function waveSolve(ctx: ServiceContext, input: WaveInput, opts: SolverOpts = {}): Promise<WaveResult> {
  const { offshore_height_m: H0, period_s: T, n_offshore_cells: n } = input;
  if (!(H0 >= 0 && H0 <= 30)) throw invalidArgument('offshore_height_m', `must be 0..30 m (got ${H0})`);
  if (!(T >= 2 && T <= 30)) throw invalidArgument('period_s', `must be 2..30 s (got ${T})`);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw invalidArgument('n_offshore_cells', `must be an integer 1..64 (got ${n})`);
  const run = await SolverRun.start(ctx, 'wave_solve', input.coastal_cell, 'coastal_cell', opts);
  const reader = new ElevationReader(run);
  const coastal = await reader.at(run.cell);
  const visited = new Set([run.cell]);
  const walk: ElevationRead[] = [];
  let at = run.cell;
  for (let i = 0; i < n; i++) {
    const { pick, read } = await nextStep(reader, at, visited);
    if (!pick) {
      if (i === 0) {
        const suggestion = await suggestWater(reader, run.cell);
        throw new SvcError('invalid_argument', `coastal_cell: no neighbour of ${run.cell} is below sea level, so there is no water to walk seaward into`, {
          field: 'coastal_cell',
          coastal,
          profile_read: read,
          suggestion,
          hint: typeof suggestion === 'string' ? 'give a cell on the shoreline, next to open water' : `try coastal_cell ${String(suggestion.cell)}, or a cell next to it`,
        });
      }
      run.ev.caveat(`The walk stopped after ${i} of ${n} cells: no unvisited neighbour of ${at} is below sea level.`);
      break;
    }
    walk.push(pick);
    visited.add(pick.cell);
    at = pick.cell;
  }
  const depths = walk.map((r) => -r.elevation_m!);
  const spacing = walk.slice(1).map((r, i) => centreDistance(walk[i].cell, r.cell));
  const s = shoal(depths, spacing, H0);
  const profile = walk.map((r, i): ProfileCell => {
    const c = s.cells[i];
    return {
      cell: r.cell,
      depth_m: r12(c.depth_m),
      celerity_m_s: r12(c.celerity_m_s),
      wavelength_m: r12(c.celerity_m_s * T),
      height_m: r12(c.height_m),
      breaking: c.breaking,
      band: r.band!,
      fact_cid: r.fact_cid!,
    };
  });
  const deepForLongWave = profile.filter((p) => p.depth_m / p.wavelength_m > 0.05).map((p) => p.cell);
  if (deepForLongWave.length > 0)
    run.ev.caveat(
      `At ${deepForLongWave.length} profile cell(s) the depth exceeds 1/20 of the long-wave wavelength c·period: the shallow-water speed √(g·h) overstates the real speed there, and shoaling is less than Green's law says.`,
    );
  if (walk.some((r) => r.band === DEM_BAND)) run.ev.caveat(`Some depths come from ${DEM_BAND}, a land DEM, where ${TOPOBATHY_BAND} had no value: it is not a bathymetry.`);
  run.ev.caveat('Normal incidence along the profile: no refraction, diffraction, friction, wind or tide; the walk follows the steepest descent of the seabed, not the wave direction.');
  const brokeAt = s.breaks_at === null ? null : s.cells.length - 1 - s.breaks_at;
  return {
    ...run.envelope(),
    status: 'ok',
    coastal,
    profile,
    nearshore_height_m: r12(s.nearshore_height_m),
    breaks_at: brokeAt === null ? null : { cell: profile[brokeAt].cell, depth_m: profile[brokeAt].depth_m, height_m: profile[brokeAt].height_m },
    travel_time_s: r12(s.travel_time_s),
    parameters: { offshore_height_m: H0, period_s: T, n_offshore_cells: n, cells_walked: walk.length, g_m_s2: G, breaker_index: BREAKER_INDEX },
    scheme: {
      kind: 'steady linear shoaling',
      time_stepping: false,
      note: 'the steady solution of the linear long-wave equations along the profile: no time steps, so no stability condition applies',
    },
    method: `walk: from coastal_cell, step to the deepest unvisited neighbour (${TOPOBATHY_BAND}, else ${DEM_BAND}; depth = −elevation) n_offshore_cells times; speed c = √(g·h), g = ${G}; height from the offshore end toward the coast by Green's law H₂ = H₁·(h₁/h₂)^¼, capped at ${BREAKER_INDEX}·h where the wave breaks; travel_time_s = Σ spacing·(1/c₁ + 1/c₂)/2 over the profile's segments; profile[0] is nearest the coast`,
  };
}
