/**
 * Window reads of a COG: a rectangle of full-resolution pixels of the first band, assembled
 * from exactly the blocks that cover it. The block arithmetic and the nodata rule live here
 * once; the reader fetches the blocks (through its block cache) and a point read is a 1 × 1
 * window, so both paths index blocks the same way.
 */
import type { Samples } from './decode.js';
import { formatError, type TiffHeader } from './tiff.js';

/** A rectangle of pixels of the full-resolution image (it may hang over the image's edges). */
export interface PixelWindow {
  col0: number;
  row0: number;
  width: number;
  height: number;
}

/** Per-pixel state in WindowRead.mask. */
export const PIXEL_VALID = 0;
/** The file's nodata value (GDAL_NODATA, NaN or one of the caller's extra values). */
export const PIXEL_NODATA = 1;
/** Outside the image: no sample exists. */
export const PIXEL_OUTSIDE = 2;

/** The samples of a window, row-major, with the state of each pixel. */
export interface WindowRead extends PixelWindow {
  epsg: number;
  /** The raw sample (nodata values kept, so callers can report them); NaN outside the image. */
  values: Float64Array;
  /** PIXEL_VALID, PIXEL_NODATA or PIXEL_OUTSIDE per pixel. */
  mask: Uint8Array;
  /** Pixels whose mask is PIXEL_VALID. */
  valid: number;
}

/** Largest window side read at once: bounds the memory one request can ask for. */
export const MAX_WINDOW_SIDE = 4096;

/** Whether a sample means "no data" for this file and the caller's extra values. */
export function isNodata(v: number, t: TiffHeader, extra: readonly number[] = []): boolean {
  return Number.isNaN(v) || v === t.nodata || extra.includes(v);
}

/** The part of `w` inside the image as [c0, r0, c1, r1) or null when none of it is. */
function clip(t: TiffHeader, w: PixelWindow): [number, number, number, number] | null {
  const c0 = Math.max(0, w.col0);
  const r0 = Math.max(0, w.row0);
  const c1 = Math.min(t.width, w.col0 + w.width);
  const r1 = Math.min(t.height, w.row0 + w.height);
  return c0 < c1 && r0 < r1 ? [c0, r0, c1, r1] : null;
}

/** Checks a window's shape before anything is fetched or allocated. */
export function checkWindow(w: PixelWindow): void {
  const ok = (n: number) => Number.isSafeInteger(n);
  if (!ok(w.col0) || !ok(w.row0) || !ok(w.width) || !ok(w.height) || w.width < 1 || w.height < 1) {
    throw new RangeError(`window ${w.col0},${w.row0} ${w.width}x${w.height}: expected integers and a positive size`);
  }
  if (w.width > MAX_WINDOW_SIDE || w.height > MAX_WINDOW_SIDE) throw new RangeError(`window ${w.width}x${w.height} is larger than ${MAX_WINDOW_SIDE} on a side`);
}

/** Indexes of the blocks (first plane) holding any pixel of `w`, row by row. */
export function blocksCovering(t: TiffHeader, w: PixelWindow): number[] {
  const c = clip(t, w);
  if (!c) return [];
  const [c0, r0, c1, r1] = c;
  const out: number[] = [];
  for (let by = Math.floor(r0 / t.blockHeight); by <= Math.floor((r1 - 1) / t.blockHeight); by++) {
    for (let bx = Math.floor(c0 / t.blockWidth); bx <= Math.floor((c1 - 1) / t.blockWidth); bx++) out.push(by * t.blocksAcross + bx);
  }
  return out;
}

/** The decoded blocks of an image's internal mask that cover a window (index → 0/1 samples). */
export interface MaskBlocks {
  header: TiffHeader;
  blocks: ReadonlyMap<number, Samples>;
}

/**
 * Copies the window's pixels out of its decoded blocks (`blocks` maps index → samples); with
 * `mask` (the file's internal mask), a pixel whose mask sample is 0 is PIXEL_NODATA.
 */
export function assembleWindow(t: TiffHeader, w: PixelWindow, blocks: ReadonlyMap<number, Samples>, epsg: number, extraNodata: readonly number[] = [], mask?: MaskBlocks): WindowRead {
  const n = w.width * w.height;
  const values = new Float64Array(n).fill(NaN);
  const states = new Uint8Array(n).fill(PIXEL_OUTSIDE);
  let valid = 0;
  const c = clip(t, w);
  if (c) {
    const [c0, r0, c1, r1] = c;
    // With chunky samples the first band is every spp-th value.
    const spp = t.planar === 2 ? 1 : t.samplesPerPixel;
    const nodata = t.nodata;
    const extra = extraNodata.length > 0 ? extraNodata : null;
    // Row by row, one run of columns per block: the block is looked up once per run.
    for (let row = r0; row < r1; row++) {
      const by = Math.floor(row / t.blockHeight);
      const inRow = row - by * t.blockHeight;
      for (let col = c0; col < c1; ) {
        const bx = Math.floor(col / t.blockWidth);
        const runEnd = Math.min(c1, (bx + 1) * t.blockWidth);
        const samples = blocks.get(by * t.blocksAcross + bx);
        if (!samples) throw new Error(`internal: block ${by * t.blocksAcross + bx} of the window was not read`);
        let i = (inRow * t.blockWidth + (col - bx * t.blockWidth)) * spp;
        if (i + (runEnd - col - 1) * spp >= samples.length) throw formatError(`pixel ${runEnd - 1},${row} is beyond its decoded block`);
        let k = (row - w.row0) * w.width + (col - w.col0);
        for (; col < runEnd; col++, i += spp, k++) {
          const v = samples[i];
          values[k] = v;
          // The same rule as isNodata, inlined for the hot loop.
          if (Number.isNaN(v) || v === nodata || (extra !== null && extra.includes(v))) states[k] = PIXEL_NODATA;
          else {
            states[k] = PIXEL_VALID;
            valid++;
          }
        }
      }
    }
    if (mask) valid -= applyMask(mask, w, c, states);
  }
  return { ...w, epsg, values, mask: states, valid };
}

/** Marks PIXEL_NODATA where the internal mask is 0; returns how many valid pixels that took. */
function applyMask(m: MaskBlocks, w: PixelWindow, [c0, r0, c1, r1]: [number, number, number, number], states: Uint8Array): number {
  const t = m.header;
  let dropped = 0;
  for (let row = r0; row < r1; row++) {
    const by = Math.floor(row / t.blockHeight);
    const inRow = row - by * t.blockHeight;
    for (let col = c0; col < c1; ) {
      const bx = Math.floor(col / t.blockWidth);
      const runEnd = Math.min(c1, (bx + 1) * t.blockWidth);
      const samples = m.blocks.get(by * t.blocksAcross + bx);
      if (!samples) throw new Error(`internal: mask block ${by * t.blocksAcross + bx} of the window was not read`);
      let i = inRow * t.blockWidth + (col - bx * t.blockWidth);
      if (i + (runEnd - col - 1) >= samples.length) throw formatError(`mask pixel ${runEnd - 1},${row} is beyond its decoded block`);
      let k = (row - w.row0) * w.width + (col - w.col0);
      for (; col < runEnd; col++, i++, k++) {
        if (samples[i] === 0 && states[k] === PIXEL_VALID) {
          states[k] = PIXEL_NODATA;
          dropped++;
        }
      }
    }
  }
  return dropped;
}

/** The `size` × `size` window whose centre pixel (index size/2, rounded down) is (col, row). */
export function windowAround(col: number, row: number, width: number, height = width): PixelWindow {
  return { col0: col - Math.floor(width / 2), row0: row - Math.floor(height / 2), width, height };
}
