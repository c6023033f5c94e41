/**
 * The band_cube@1 recipe (docs/rasters.md, "band_cube"): the cube's record, its caps, how a
 * scene's grid is matched to the cube's one grid, and the functions that turn the record's
 * slices into cube bytes. band_cube and the rebuild of an evicted cube both go through
 * `readPlanes` and `cubeBytes`, so the same record always gives the same bytes.
 */
import { Pool } from '../../lib/pool.js';
import type { ReadOptions, Sentinel2Raster } from '../../sources/sentinel2-raster.js';
import { encodeCube } from './cube-format.js';
import type { Affine, LatLngBox } from './geometry.js';
import { readReflectance, RASTERS_AT_ONCE } from './recipe.js';

/** The recipe a cube record names. */
export const BAND_CUBE_RECIPE = 'band_cube@1';
/** Time slots one cube spans at most (`band_cube.max_slices` at /v1/limits). */
export const MAX_CUBE_SLICES = 12;
/** Cubes one process makes at once (each reads up to RASTERS_AT_ONCE windows at a time); more wait. */
export const CUBES_AT_ONCE = 2;
/** Cubes a process has made (their choices → record), so a repeat reads no pixel. */
export const MADE_CUBES_KEPT = 256;

/** Why a time slot has no slice. */
export type SliceAbsenceReason = 'no_scene_in_slot' | 'outside_coverage' | 'off_grid' | 'no_data';

/** The grid every slice of a cube is read on: the first slice's window of its scene's grid. */
export interface CubeGrid {
  epsg: number;
  geotransform: Affine;
  width: number;
  height: number;
}

/** One slice as the record pins it. */
export interface CubeSliceRecord {
  tslot: number;
  scene: {
    source: string;
    collection: string;
    id: string;
    captured_at: string;
    cloud_cover: number | null;
    processing_baseline: string | null;
    asset: string;
    href: string;
  };
  reflectance: { scale: number; offset: number; rule: string; nodata: number[] };
  /** The cube's top-left pixel in this scene's grid. */
  window: { col0: number; row0: number };
}

/** The value of a band_cube record (every field is signed). */
export interface BandCubeRecord {
  recipe: typeof BAND_CUBE_RECIPE;
  band: string;
  aoi: LatLngBox;
  aoi_cid: string;
  /** The tslot range asked for (both ends included) in the band's tempo. */
  tslots: { lo: number; hi: number; tempo: string };
  grid: CubeGrid;
  /** The slices with a scene, by tslot: the cube's planes in this order. */
  slices: CubeSliceRecord[];
  /** The time slots without a slice, by tslot (`scene`: the scene that was chosen but not used). */
  absences: Array<{ tslot: number; reason: SliceAbsenceReason; scene?: string }>;
  artifact: { cid: string; media_type: string; bytes: number };
  source_versions: Record<string, string>;
}

/** Off-grid tolerance on an origin (metres): Sentinel-2 origins and pixel sizes are whole metres, so only float noise is forgiven. */
const ORIGIN_EPS = 1e-6;

/**
 * The cube's top-left pixel in a scene's grid (`t`: the scene's affine, `[px, 0, x0, 0, -py, y0]`),
 * or null when the scene is not on the cube's grid: another CRS, another pixel size, or an origin
 * that is not a whole number of pixels away. A slice is read only from a scene on the grid, so
 * every plane's pixel (c, r) is the same patch of ground.
 */
export function alignedWindow(cube: CubeGrid, epsg: number, t: readonly number[]): { col0: number; row0: number } | null {
  const g = cube.geotransform;
  if (epsg !== cube.epsg || t[0] !== g[1] || t[4] !== g[5] || t[1] !== 0 || t[3] !== 0) return null;
  const col0 = Math.round((g[0] - t[2]) / t[0]);
  const row0 = Math.round((g[3] - t[5]) / t[4]);
  if (Math.abs(t[2] + t[0] * col0 - g[0]) > ORIGIN_EPS || Math.abs(t[5] + t[4] * row0 - g[3]) > ORIGIN_EPS) return null;
  return { col0, row0 };
}

/** Slice windows read at once per responder, across all its cubes and cube rebuilds (each holds its window and the blocks it came from). */
const slicePools = new WeakMap<object, Pool>();
export function slicePool(ctx: object): Pool {
  let p = slicePools.get(ctx);
  if (!p) slicePools.set(ctx, (p = new Pool(RASTERS_AT_ONCE)));
  return p;
}

/** The planes of `slices` on `grid` (by slice, NaN where there is no data) and each one's count of valid samples; `pool` bounds the windows read at once. */
export async function readPlanes(s2: Sentinel2Raster, grid: CubeGrid, slices: CubeSliceRecord[], pool: Pool, o: ReadOptions): Promise<Array<{ values: Float64Array; valid: number }>> {
  return Promise.all(
    slices.map((s) =>
      pool.run(() =>
        readReflectance(
          s2,
          {
            href: s.scene.href,
            epsg: grid.epsg,
            window: { col0: s.window.col0, row0: s.window.row0, width: grid.width, height: grid.height },
            scale: s.reflectance.scale,
            offset: s.reflectance.offset,
            nodata: s.reflectance.nodata,
          },
          o,
        ),
      ),
    ),
  );
}

/** The cube bytes of `slices` with their planes. */
export function cubeBytes(grid: CubeGrid, slices: CubeSliceRecord[], planes: Array<{ values: Float64Array }>): Uint8Array {
  return encodeCube({
    width: grid.width,
    height: grid.height,
    epsg: grid.epsg,
    geotransform: grid.geotransform,
    slices: slices.map((s, k) => ({ tslot: s.tslot, captured_s: Math.floor(Date.parse(s.scene.captured_at) / 1000), scene_id: s.scene.id, values: planes[k].values })),
  });
}

/** Upstream product versions of a cube's slices: `{earth_search_s2: "<baselines, sorted, comma-separated>"}`. */
export function cubeSourceVersions(slices: CubeSliceRecord[]): Record<string, string> {
  const out: Record<string, Set<string>> = {};
  for (const s of slices) (out[s.scene.source] ??= new Set()).add(s.scene.processing_baseline ?? 'unknown');
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v].sort().join(',')]));
}
