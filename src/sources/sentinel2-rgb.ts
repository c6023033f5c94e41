/**
 * True-colour windows of a chosen Sentinel-2 L2A scene: red, green and blue (B04, B03, B02,
 * all on the 10 m grid) read as windows of the item's own UTM grid centred on the cell's pixel,
 * north-up with no resampling, and turned into reflectance by the same rule as point reads
 * (reflectanceOf). The scene itself is chosen by the connector (sentinel2.ts), so a thumbnail
 * always shows the scene the cell's point values come from.
 */
import type { MaterializeOutcome } from './contract.js';
import type { CogReader } from './cog/reader.js';
import { isoSecond } from './cog/outcome.js';
import { formatError } from './cog/tiff.js';
import { PIXEL_VALID } from './cog/window.js';
import { assetUrl, itemEpsg, type StacItem } from './stac-search.js';
import { reflectanceOf, type ReflectanceRule } from './s2-reflectance.js';

/** Side of a thumbnail window in 10 m pixels (2.56 km). */
export const THUMBNAIL_SIDE = 256;
/** Earth Search asset keys of the true-colour bands, in R, G, B order. */
export const RGB_ASSETS = ['red', 'green', 'blue'] as const;
export type RgbAsset = (typeof RGB_ASSETS)[number];

/** What a thumbnail says about its scene. */
export interface SceneInfo {
  id: string;
  /** Capture time, ISO 8601 UTC to the second. */
  datetime: string;
  /** eo:cloud_cover of the whole item (%), null when the item does not say. */
  cloud_cover: number | null;
  /** CRS of the item's grid (a WGS 84 / UTM zone). */
  epsg: number | null;
}

/** Reflectance windows of the three bands on one grid. */
export interface RgbWindows {
  width: number;
  height: number;
  /** Top-left pixel of the window in the 10 m grid of the item. */
  col0: number;
  row0: number;
  epsg: number;
  /** Reflectance per pixel, row-major; 0 where `mask` is set. */
  red: Float64Array;
  green: Float64Array;
  blue: Float64Array;
  /** 1 where any band has no data or the window hangs over the image's edge. */
  mask: Uint8Array;
  /** Pixels with data in all three bands. */
  valid: number;
  hrefs: Record<RgbAsset, string>;
  rules: Record<RgbAsset, ReflectanceRule>;
}

/** Why a cell has no thumbnail; `detail` is the text the point path gives for the same case. */
export interface NoScene {
  kind: 'none';
  reason: 'outside_coverage' | 'no_clear_scene';
  detail: string;
  /** The first scene probed, when there was one. */
  ref?: string;
}
/** An upstream failure (never an absence): the outcome a point read would have had. */
export interface SceneFailed {
  kind: 'failed';
  outcome: Extract<MaterializeOutcome, { status: 'timeout' | 'error' }>;
}
export type RgbSceneChoice = { kind: 'scene'; scene: SceneInfo } | NoScene | SceneFailed;
export type SceneRgb = { kind: 'rgb'; scene: SceneInfo; rgb: RgbWindows } | NoScene | SceneFailed;

/** Per-call options of the thumbnail methods. */
export interface SceneRgbOptions {
  deadline: number;
  signal?: AbortSignal;
  /** Medium-tempo tslot whose scene is wanted (default: the current one). */
  tslot?: number;
}

/** The SceneInfo of an item. */
export function sceneInfo(item: StacItem, capturedMs: number, epsg: number | undefined): SceneInfo {
  const cc = item.properties['eo:cloud_cover'];
  return { id: item.id, datetime: isoSecond(capturedMs), cloud_cover: typeof cc === 'number' ? cc : null, epsg: epsg ?? itemEpsg(item) ?? null };
}

/**
 * Reads the R, G, B windows of `item` around (lat, lng). The cell centre lying outside an
 * asset, or no pixel with data in all three bands, is a NoScene (never a black picture).
 */
export async function readRgbWindows(reader: CogReader, item: StacItem, base: string, at: { lat: number; lng: number }, o: SceneRgbOptions, side = THUMBNAIL_SIDE): Promise<RgbWindows | NoScene> {
  const reads = await Promise.all(
    RGB_ASSETS.map(async (a) => {
      const href = assetUrl(item, a, base);
      const nodata = item.assets[a]?.['raster:bands']?.[0]?.nodata;
      const r = await reader.readWindowAt(href, at.lat, at.lng, side, side, {
        deadline: o.deadline,
        signal: o.signal,
        epsgHint: itemEpsg(item, item.assets[a]),
        nodata: typeof nodata === 'number' ? [nodata] : [],
      });
      return { a, href, r };
    }),
  );
  const hrefs = {} as Record<RgbAsset, string>;
  const rules = {} as Record<RgbAsset, ReflectanceRule>;
  const refl = {} as Record<RgbAsset, Float64Array>;
  const mask = new Uint8Array(side * side);
  let origin: { col0: number; row0: number; epsg: number } | undefined;
  for (const { a, href, r } of reads) {
    if (r.kind === 'missing') throw formatError(`asset ${a} of ${item.id} is missing`);
    if (r.kind === 'outside') return { kind: 'none', reason: 'outside_coverage', detail: `the cell centre lies outside asset ${a} of ${item.id}`, ref: item.id };
    const w = r.read;
    // The three 10 m assets share one grid; a product that breaks that would mix pixels.
    if (origin && (w.col0 !== origin.col0 || w.row0 !== origin.row0 || w.epsg !== origin.epsg)) throw formatError(`asset ${a} of ${item.id} is not on the grid of asset red`);
    origin ??= { col0: w.col0, row0: w.row0, epsg: w.epsg };
    const rule = reflectanceOf(item, a);
    const out = new Float64Array(side * side);
    for (let i = 0; i < out.length; i++) {
      if (w.mask[i] === PIXEL_VALID) out[i] = w.values[i] * rule.scale + rule.offset;
      else mask[i] = 1;
    }
    hrefs[a] = href;
    rules[a] = rule;
    refl[a] = out;
  }
  let valid = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i]) refl.red[i] = refl.green[i] = refl.blue[i] = 0;
    else valid++;
  }
  if (valid === 0) return { kind: 'none', reason: 'no_clear_scene', detail: `no pixel of the ${side}x${side} window has data in red, green and blue of ${item.id}`, ref: item.id };
  return { width: side, height: side, ...origin!, red: refl.red, green: refl.green, blue: refl.blue, mask, valid, hrefs, rules };
}
