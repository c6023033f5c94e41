/**
 * Quick-look PNGs of grid artifacts (GET /v1/artifacts/<cid>.png; docs/rasters.md, "Quick-look
 * PNG"): the grid's samples in the viridis ramp, stretched between their 2nd and 98th
 * percentiles, no data transparent, with a legend strip under the picture (the ramp, the values
 * at its ends, the unit, the data range). A picture for the eye only: the grid file stays the
 * thing to measure with. The renderer is a pure function of the grid bytes and the unit label,
 * so a quick-look is as immutable as its artifact; its ETag is the artifact cid and
 * QUICK_LOOK_VERSION, which changes whenever the picture would.
 */
import { BoundedCache } from '../../lib/cache.js';
import { encodePngRgba } from '../../lib/png.js';
import { invalidArgument } from '../../protocol/errors.js';
import { parseRasterToken } from '../../protocol/token-grammar.js';
import type { ArtifactInfo } from '../../store/contract.js';
import type { ServiceContext } from '../context/context.js';
import { artifactBytes } from '../rasters/artifacts.js';
import { decodeGrid, GRID_MEDIA_TYPE } from '../rasters/grid-format.js';
import { GLYPH_H, drawText, textWidth } from './font5x7.js';

/** Bumped whenever the same grid would give other PNG bytes (ramp, stretch, layout, labels). */
export const QUICK_LOOK_VERSION = 1;
/** Percentiles of the valid samples at the two ends of the ramp. */
export const STRETCH_LOW_PCT = 2;
export const STRETCH_HIGH_PCT = 98;
/** Grids up to this many pixels on their long side are enlarged by a whole factor towards it (nearest neighbour). */
export const TARGET_SIDE = 512;
/** Grids longer than this are shown at every n-th sample so the picture stays within it. */
export const MAX_SIDE = 1024;
/** The picture is at least this wide, so the legend has room. */
export const MIN_WIDTH = 320;
/** Valid samples the percentiles are taken from at most (an even stride through them beyond). */
const PERCENTILE_SAMPLE = 1 << 20;

/** Viridis (matplotlib's perceptually uniform ramp) at eleven even steps, interpolated in between. */
const VIRIDIS_STOPS = ['440154', '482475', '414487', '355f8d', '2a788e', '21918c', '22a884', '44bf70', '7ad151', 'bddf26', 'fde725'];
const RAMP = (() => {
  const stops = VIRIDIS_STOPS.map((h) => [0, 2, 4].map((i) => Number.parseInt(h.slice(i, i + 2), 16)));
  const lut = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    const f = (i / 255) * (stops.length - 1);
    const k = Math.min(stops.length - 2, Math.floor(f));
    const t = f - k;
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = Math.round(stops[k]![c]! * (1 - t) + stops[k + 1]![c]! * t);
  }
  return lut;
})();

/** The ramp's colour at `t` in [0, 1] (clamped). */
export function rampColour(t: number): [number, number, number] {
  const i = Math.round(Math.min(1, Math.max(0, t)) * 255) * 3;
  return [RAMP[i]!, RAMP[i + 1]!, RAMP[i + 2]!];
}

export interface QuickLookStats {
  /** Samples with a value, and without (NaN). */
  valid: number;
  nodata: number;
  /** Smallest and largest value; null when no sample has one. */
  min: number | null;
  max: number | null;
  /** Values at the two ends of the ramp (the stretch); equal when the grid holds one value. */
  low: number | null;
  high: number | null;
}

/** Value at percentile `p` of ascending `sorted` (nearest rank). */
function percentile(sorted: Float32Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round((p / 100) * (sorted.length - 1))))]!;
}

/** Counts, range and the p2–p98 stretch of a grid's samples. */
export function gridStats(values: ArrayLike<number>): QuickLookStats {
  let valid = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v)) continue;
    valid++;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const nodata = values.length - valid;
  if (valid === 0) return { valid, nodata, min: null, max: null, low: null, high: null };
  const stride = Math.ceil(valid / PERCENTILE_SAMPLE);
  const sample = new Float32Array(Math.ceil(valid / stride));
  let seen = 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v)) continue;
    if (seen++ % stride === 0) sample[n++] = v;
  }
  const sorted = sample.subarray(0, n).sort();
  let low = percentile(sorted, STRETCH_LOW_PCT);
  let high = percentile(sorted, STRETCH_HIGH_PCT);
  // A grid whose middle 96 % is one value still has a range: stretch over it rather than paint one colour.
  if (!(high > low)) [low, high] = [min, max];
  return { valid, nodata, min, max, low, high };
}

/** A value as a short label: four significant digits, exponents outside 0.001..999 999. */
export function formatValue(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e-3 && a < 1e6) return String(Number(v.toPrecision(4)));
  return v.toExponential(2);
}

export interface QuickLook {
  png: Buffer;
  width: number;
  height: number;
  /** Where the grid is drawn (its top-left corner is the picture's) and the legend strip's top row. */
  map: { width: number; height: number };
  legendTop: number;
  /** Grid pixels per picture pixel along each axis: > 1 enlarged, < 1 thinned. */
  scale: number;
  stats: QuickLookStats;
}

const STRIP: [number, number, number, number] = [246, 246, 246, 255];
const INK: [number, number, number, number] = [30, 30, 30, 255];
const MUTED: [number, number, number, number] = [90, 90, 90, 255];

/** `text` cut (with '…' drawn as '..') so it fits `room` pixels at `scale`. */
function clipText(text: string, room: number, scale: number): string {
  if (textWidth(text, scale) <= room) return text;
  let t = text;
  while (t.length > 0 && textWidth(`${t}..`, scale) > room) t = t.slice(0, -1);
  return `${t}..`;
}

/**
 * The quick-look of the grid file `bytes` (application/x.svc-grid-f32.v1). `unit` names what the
 * values are (shown in the legend); `title` goes into the PNG's tEXt Title. Throws RangeError
 * when the bytes are not a grid file.
 */
export function renderQuickLook(bytes: Uint8Array, opts: { unit: string; title?: string }): QuickLook {
  const g = decodeGrid(bytes);
  const stats = gridStats(g.values);
  const long = Math.max(g.width, g.height);
  // Enlarge by a whole factor, or thin by a whole stride: every picture pixel is one sample.
  const up = long <= TARGET_SIDE ? Math.max(1, Math.floor(TARGET_SIDE / long)) : 1;
  const step = long > MAX_SIDE ? Math.ceil(long / MAX_SIDE) : 1;
  const mw = up > 1 ? g.width * up : Math.ceil(g.width / step);
  const mh = up > 1 ? g.height * up : Math.ceil(g.height / step);
  const width = Math.max(mw, MIN_WIDTH);
  const s = width >= 480 ? 2 : 1;
  const pad = 4 * s;
  const barH = 10 * s;
  const line = (GLYPH_H + 4) * s;
  const stripH = pad + barH + 3 * s + 3 * line + pad;
  const height = mh + stripH;
  const px = new Uint8Array(width * height * 4);

  const { low, high } = stats;
  const span = low !== null && high !== null && high > low ? high - low : 0;
  const tOf = (v: number) => (span > 0 ? (v - low!) / span : 0.5);
  for (let y = 0; y < mh; y++) {
    const row = up > 1 ? Math.floor(y / up) : y * step;
    for (let x = 0; x < mw; x++) {
      const col = up > 1 ? Math.floor(x / up) : x * step;
      const v = g.values[row * g.width + col]!;
      if (!Number.isFinite(v)) continue; // no data: left transparent
      const [r, gr, b] = rampColour(tOf(v));
      px.set([r, gr, b, 255], (y * width + x) * 4);
    }
  }

  // The legend strip: ramp bar, the values at its ends, the unit, the data range and no data.
  for (let y = mh; y < height; y++) for (let x = 0; x < width; x++) px.set(STRIP, (y * width + x) * 4);
  const barY = mh + pad;
  const barW = width - 2 * pad;
  for (let x = 0; x < barW; x++) {
    const colour = stats.valid === 0 ? STRIP : [...rampColour(span > 0 ? x / Math.max(1, barW - 1) : 0.5), 255];
    for (let y = 0; y < barH; y++) px.set(colour, ((barY + y) * width + pad + x) * 4);
  }
  for (let x = pad - s; x < pad + barW + s; x++) for (const y of [barY - s, barY + barH]) for (let k = 0; k < s; k++) px.set(MUTED, ((y + k) * width + x) * 4);
  for (let y = barY - s; y < barY + barH + s; y++) for (const x of [pad - s, pad + barW]) for (let k = 0; k < s; k++) px.set(MUTED, (y * width + x + k) * 4);

  const room = width - 2 * pad;
  const row1 = barY + barH + 3 * s + 2 * s;
  if (stats.valid === 0) drawText(px, width, pad, row1, 'NO DATA: EVERY SAMPLE IS NODATA', s, INK);
  else if (span === 0) drawText(px, width, pad, row1, clipText(`ONE VALUE: ${formatValue(low!)}`, room, s), s, INK);
  else {
    const left = `≤${formatValue(low!)}`;
    const right = `≥${formatValue(high!)}`;
    const mid = `P${STRETCH_LOW_PCT} - P${STRETCH_HIGH_PCT}`;
    drawText(px, width, pad, row1, left, s, INK);
    drawText(px, width, width - pad - textWidth(right, s), row1, right, s, INK);
    const midX = Math.round((width - textWidth(mid, s)) / 2);
    if (midX > pad + textWidth(left, s) + 4 * s && midX + textWidth(mid, s) + 4 * s < width - pad - textWidth(right, s)) drawText(px, width, midX, row1, mid, s, MUTED);
  }
  drawText(px, width, pad, row1 + line, clipText(opts.unit, room, s), s, INK);
  const nodataPct = stats.valid + stats.nodata === 0 ? 0 : (100 * stats.nodata) / (stats.valid + stats.nodata);
  const range = stats.min === null ? '' : `DATA ${formatValue(stats.min)} TO ${formatValue(stats.max!)}; `;
  const nodata = `NODATA ${Number(nodataPct.toFixed(1))}%`;
  const notes = [`${range}${nodata} (CLEAR)`, `${range}${nodata}`];
  drawText(px, width, pad, row1 + 2 * line, clipText(notes.find((n) => textWidth(n, s) <= room) ?? notes[1]!, room, s), s, MUTED);

  const text: Record<string, string> = {
    Software: `svc quick-look v${QUICK_LOOK_VERSION} (viridis, p${STRETCH_LOW_PCT}-p${STRETCH_HIGH_PCT})`,
    'svc unit': opts.unit,
    'svc grid': `${g.width}x${g.height} EPSG:${g.epsg}`,
    'svc stretch': low === null ? 'none' : `${low} ${high}`,
    'svc range': stats.min === null ? 'none' : `${stats.min} ${stats.max}`,
    'svc samples': `${stats.valid} valid ${stats.nodata} nodata`,
  };
  if (opts.title) text.Title = opts.title;
  const png = encodePngRgba(width, height, px, text);
  return { png, width, height, map: { width: mw, height: mh }, legendTop: mh, scale: up > 1 ? up : 1 / step, stats };
}

/** What the values of an artifact are, from the token that rebuilds it: band_raster grids hold reflectance. */
export function unitLabel(rebuild: string | null, prefix: string): string {
  if (rebuild !== null) {
    try {
      const t = parseRasterToken(prefix, rebuild);
      return `${t.band} surface reflectance (unitless)`;
    } catch {
      // Not a band_raster token: its unit is not known here.
    }
  }
  return 'unit not recorded';
}

/** ETag of an artifact's quick-look: its cid and the renderer version. */
export function quickLookEtag(cid: string): string {
  return `"${cid}.png-v${QUICK_LOOK_VERSION}"`;
}

/** Refuses an artifact that is not a grid: only grids have a quick-look. */
export function requireGrid(info: ArtifactInfo): void {
  if (info.media_type !== GRID_MEDIA_TYPE) throw invalidArgument('cid', `artifact ${info.cid} is ${info.media_type}; only grids (${GRID_MEDIA_TYPE}) have a quick-look`);
}

const caches = new WeakMap<ServiceContext, BoundedCache<string, Buffer>>();
function cacheOf(ctx: ServiceContext): BoundedCache<string, Buffer> {
  let c = caches.get(ctx);
  if (!c) {
    c = new BoundedCache<string, Buffer>('artifact_quick_looks', { max: 64, maxBytes: 16 * 1024 * 1024, bytesOf: (b) => b.length });
    caches.set(ctx, c);
  }
  return c;
}

/**
 * The quick-look PNG of a stored artifact (described by `info`, from storedArtifact): only grids
 * have one (another media type: invalid_argument); kept in a bounded cache by cid.
 */
export async function artifactQuickLook(ctx: ServiceContext, info: ArtifactInfo): Promise<Buffer> {
  requireGrid(info);
  const cache = cacheOf(ctx);
  const hit = cache.get(info.cid);
  if (hit) return hit;
  const { bytes } = await artifactBytes(ctx, info.cid);
  const png = renderQuickLook(bytes, { unit: unitLabel(info.rebuild, ctx.config.prefix), title: `quick-look of artifact ${info.cid}` }).png;
  cache.set(info.cid, png);
  return png;
}
