/**
 * /v1/terrain: slope, aspect, ruggedness (TRI) and topographic position (TPI) from the 3×3
 * elevation neighbourhood of a cell. The nine cells are the protocol stencil (NW, N, NE, W, C, E,
 * SW, S, SE) and the spacing is the protocol pitch at the cell's latitude, so anyone holding the
 * nine signed elevation facts can recompute every number. A missing cell gives null with a
 * reason: a slope from eight cells would be a made-up slope.
 */
import { cellCenter, pitchMetres, stencil } from '../../protocol/cell64.js';
import type { ServiceContext } from '../context/context.js';
import { round } from '../reads/common.js';
import { Evidence, derivedPlace, numericValue, type DerivedEnvelope, type DerivedOpts } from './evidence.js';
import type { PlaceInput } from './place.js';

export const ELEVATION_BAND = 'copdem30m.elevation_mean';
export const STENCIL_ORDER = ['NW', 'N', 'NE', 'W', 'C', 'E', 'SW', 'S', 'SE'] as const;

export interface TerrainMetrics {
  slope_deg: number | null;
  /** Downslope direction, degrees clockwise from north; null on flat ground. */
  aspect_deg: number | null;
  tri_m: number | null;
  tpi_m: number | null;
  reason?: string;
}

/**
 * Terrain metrics of a 3×3 grid z (stencil order) with north-south and east-west spacing in
 * metres. Slope and aspect: Horn (1981) finite differences; TRI: Riley et al. (1999), the root of
 * the summed squared differences to the centre; TPI: Weiss (2001), centre minus neighbour mean.
 */
export function terrainMetrics(z: ReadonlyArray<number | undefined>, ns_m: number, ew_m: number): TerrainMetrics {
  const missing = STENCIL_ORDER.filter((_, i) => z[i] === undefined);
  if (missing.length > 0) {
    return { slope_deg: null, aspect_deg: null, tri_m: null, tpi_m: null, reason: `no usable elevation at ${missing.join(', ')}: all 9 cells are needed; nothing is interpolated` };
  }
  if (!(ns_m > 0) || !(ew_m > 1e-6)) return { slope_deg: null, aspect_deg: null, tri_m: null, tpi_m: null, reason: 'cell spacing degenerates at the pole' };
  const [a, b, c, d, e, f, g, h, i] = z as number[];
  const dzdx = (c + 2 * f + i - (a + 2 * d + g)) / (8 * ew_m); // rise to the east
  const dzdy = (a + 2 * b + c - (g + 2 * h + i)) / (8 * ns_m); // rise to the north
  const grad = Math.hypot(dzdx, dzdy);
  const slope = (Math.atan(grad) * 180) / Math.PI;
  const aspect = grad === 0 ? null : ((Math.atan2(-dzdx, -dzdy) * 180) / Math.PI + 360) % 360;
  const ring = [a, b, c, d, f, g, h, i];
  const tri = Math.sqrt(ring.reduce((s, x) => s + (x - e) ** 2, 0));
  const tpi = e - ring.reduce((s, x) => s + x, 0) / ring.length;
  return { slope_deg: round(slope), aspect_deg: aspect === null ? null : round(aspect), tri_m: round(tri), tpi_m: round(tpi) };
}

export interface TerrainResult extends DerivedEnvelope, TerrainMetrics {
  status: 'ok' | 'incomplete';
  spacing_m: { ns_m: number; ew_m: number };
  neighbourhood: Array<{ position: string; cell: string; elevation_m: number | null; kind: string | null; fact_cid: string | null }>;
  method: Record<string, string>;
}

/** Terrain at a place's cell (place, lat+lng or cell64). */
export async function terrain(ctx: ServiceContext, input: PlaceInput, opts: DerivedOpts = {}): Promise<TerrainResult> {
  const place = await derivedPlace(ctx, input, opts);
  const cell = place.loc.cell64;
  const cells = stencil(cell);
  const ev = new Evidence(ctx, 'terrain', opts);
  const facts = await ev.readMany(cells, ELEVATION_BAND);
  const z = facts.map(numericValue);
  const { ns_m, ew_m } = pitchMetres(cellCenter(cell).lat);
  const m = terrainMetrics(z, ns_m, ew_m);
  ev.caveat(
    "The DEM behind copdem30m.elevation_mean is coarser (about 30 to 90 m) than the 9.55 m cell pitch, so the 3×3 neighbourhood (about 29 m across) often reads one DEM pixel or the provider's interpolation: a flat answer does not prove flat ground, and slopes describe the DEM surface, not the exact site.",
  );
  ev.caveat('TRI and TPI depend on the neighbourhood size (here one cell pitch): compare them only with values computed at the same spacing.');
  const env = await ev.envelope(place, cell);
  return {
    ...env,
    status: m.slope_deg === null ? 'incomplete' : 'ok',
    ...m,
    spacing_m: { ns_m: round(ns_m, 8), ew_m: round(ew_m, 8) },
    neighbourhood: cells.map((c, i) => ({
      position: STENCIL_ORDER[i],
      cell: c,
      elevation_m: z[i] ?? null,
      kind: facts[i] ? String(facts[i]!.kind) : null,
      fact_cid: facts[i]?.fact_cid ?? null,
    })),
    method: {
      band: ELEVATION_BAND,
      stencil: 'protocol stencil(cell): NW, N, NE, W, C, E, SW, S, SE; spacing from protocol pitchMetres(latitude of the centre cell)',
      slope: 'Horn (1981): dz/dx = ((NE + 2E + SE) - (NW + 2W + SW)) / (8 ew), dz/dy = ((NW + 2N + NE) - (SW + 2S + SE)) / (8 ns), slope = atan(sqrt(dz/dx² + dz/dy²)) in degrees',
      aspect: 'downslope direction atan2(-dz/dx, -dz/dy), degrees clockwise from north; null when the gradient is 0',
      tri: 'Riley, DeGloria and Elliot (1999): sqrt(sum over the 8 neighbours of (z_i - z_C)^2), metres',
      tpi: 'Weiss (2001): z_C - mean of the 8 neighbours, metres (positive = ridge or hilltop, negative = valley)',
    },
  };
}
