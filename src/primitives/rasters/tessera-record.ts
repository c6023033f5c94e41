/**
 * Derivation records and tokens of the embedding capabilities (docs/rasters.md, "tessera_field"
 * and "region_archetype_map"). Both records are facts of the record band `raster.derivation`,
 * told apart from band_raster's by their `recipe`, signed by the responder through the write path
 * and filed under the `svc:entity:` subject anchored on the value, exactly as band_raster's are:
 * the same inputs give the same value, so asking again finds the record instead of writing one.
 *
 * Tokens: `<prefix>:tessera:<aoi_cid>:<year>:<derivation_cid>` names an embedding field,
 * `<prefix>:archetypes:<aoi_cid>:<k>:<derivation_cid>` an archetype map; each resolves (and
 * rebuilds an evicted artifact) at its own route.
 */
import { invalidArgument } from '../../protocol/errors.js';
import type { StoredFact } from '../../store/contract.js';
import type { ServiceContext } from '../context/context.js';
import { isRecordOf, keepRecord as keepDerivationRecord } from './derivation.js';
import type { Affine, LatLngBox } from './geometry.js';

export const TESSERA_FIELD_RECIPE = 'tessera_field@1';
export const ARCHETYPE_RECIPE = 'region_archetype_map@1';
export const TESSERA_SOURCE = 'geotessera';

/** One tile a field read, as its record pins it. */
export interface FieldTileRecord {
  tile: string;
  embeddings: string;
  scales: string;
  landmask: string;
  /** The tile's array shape [H, W] and its scales per pixel (1 or 128). */
  shape: [number, number];
  scales_per_pixel: number;
  epsg: number;
  geotransform: Affine;
  /** The rectangle of the tile's grid that was read. */
  window: { col0: number; row0: number; width: number; height: number };
  /** Field pixels this tile supplies. */
  pixels: number;
  /** `shared`: its pixels are the field's own (same CRS and pixel lattice); `nearest`: the tile pixel holding each field pixel's centre. */
  lattice: 'shared' | 'nearest';
}

/** The value of a tessera_field derivation record (every field is signed). */
export interface FieldRecord {
  recipe: typeof TESSERA_FIELD_RECIPE;
  aoi: LatLngBox;
  aoi_cid: string;
  year: number;
  /** The field's grid: the grid tile's CRS and pixel lattice, the window covering the box. */
  grid: { epsg: number; geotransform: Affine; width: number; height: number; tile: string };
  tiles: FieldTileRecord[];
  /** Tiles named by a field pixel's centre that are not published for the year (those pixels have no embedding). */
  missing_tiles: string[];
  channels: number;
  scales_per_pixel: number;
  valid_pixels: number;
  artifact: { cid: string; media_type: string; bytes: number };
  source_versions: Record<string, string>;
}

/** The signed record for `value` (derivation.ts keepRecord): recipe and source named by the value. */
export function keepRecord(ctx: ServiceContext, value: { recipe: string } & Record<string, unknown>, primitive: string, args: Record<string, unknown>): Promise<StoredFact> {
  return keepDerivationRecord(ctx, value, { primitive, fn: value.recipe, sources: [TESSERA_SOURCE], args });
}

export { isRecordOf };

const AOI = /^[a-z2-7]{26}$/;
const CID = /^[a-z2-7]{52}$/;
const INT = /^(0|[1-9]\d{0,8})$/;

/** The parts of a field or archetype token. */
export interface AreaToken {
  aoi_cid: string;
  /** The year (field) or k (archetype map). */
  n: number;
  derivation_cid: string;
}

/** `<prefix>:<kind>:<aoi_cid>:<n>:<derivation_cid>`. */
export function areaToken(prefix: string, kind: 'tessera' | 'archetypes', t: AreaToken): string {
  return `${prefix}:${kind}:${t.aoi_cid}:${t.n}:${t.derivation_cid}`;
}

/** Parses a field (`tessera`) or archetype map (`archetypes`) token; every refusal is invalid_argument on `token`. */
export function parseAreaToken(prefix: string, kind: 'tessera' | 'archetypes', token: unknown): AreaToken {
  const head = `${prefix}:${kind}:`;
  const what = kind === 'tessera' ? 'year' : 'k';
  const shape = `expected ${head}<aoi_cid>:<${what}>:<derivation_cid>`;
  if (typeof token !== 'string' || token.length > 200 || !token.startsWith(head)) throw invalidArgument('token', shape);
  const parts = token.slice(head.length).split(':');
  if (parts.length !== 3) throw invalidArgument('token', `${shape} (3 parts after ${head}, got ${parts.length})`);
  const [aoi, n, derivation] = parts;
  if (!AOI.test(aoi)) throw invalidArgument('token', `aoi_cid ${JSON.stringify(aoi.slice(0, 40))} is not 26 lowercase base32 characters`);
  if (!INT.test(n)) throw invalidArgument('token', `${what} ${JSON.stringify(n.slice(0, 40))} is not a non-negative integer`);
  if (!CID.test(derivation)) throw invalidArgument('token', 'derivation_cid is not 52 lowercase base32 characters (the fact_cid of the derivation record)');
  return { aoi_cid: aoi, n: Number(n), derivation_cid: derivation };
}
