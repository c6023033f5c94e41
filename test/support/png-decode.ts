/**
 * A small PNG reader for tests, written apart from src/lib/png.ts so a picture is checked by
 * code that did not make it: chunk CRCs (zlib's crc32), IHDR, tEXt, IDAT inflated and all five
 * scanline filters undone. 8-bit greyscale, RGB, grey + alpha and RGBA, not interlaced (what the
 * service writes and what Chromium's screenshots are); every picture comes back as RGBA.
 */
import { crc32, inflateSync } from 'node:zlib';

export interface DecodedPng {
  width: number;
  height: number;
  colourType: number;
  /** width × height RGBA quadruplets, row by row from the top. */
  rgba: Uint8Array;
  /** tEXt chunks by keyword. */
  text: Record<string, string>;
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

export function decodePng(buf: Uint8Array): DecodedPng {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (!sig.every((b, i) => buf[i] === b)) throw new Error('not a PNG (signature)');
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let at = 8;
  let width = 0;
  let height = 0;
  let colourType = -1;
  const idat: Uint8Array[] = [];
  const text: Record<string, string> = {};
  let ended = false;
  while (at < buf.length) {
    const len = dv.getUint32(at);
    const type = Buffer.from(buf.subarray(at + 4, at + 8)).toString('latin1');
    const data = buf.subarray(at + 8, at + 8 + len);
    const crc = dv.getUint32(at + 8 + len);
    if (crc32(buf.subarray(at + 4, at + 8 + len)) !== crc) throw new Error(`PNG chunk ${type}: CRC mismatch`);
    if (type === 'IHDR') {
      width = dv.getUint32(at + 8);
      height = dv.getUint32(at + 12);
      const [depth, ct, comp, filter, interlace] = data.subarray(8, 13);
      if (depth !== 8 || comp !== 0 || filter !== 0 || interlace !== 0 || CHANNELS[ct!] === undefined) throw new Error(`PNG: unsupported IHDR ${[depth, ct, comp, filter, interlace]}`);
      colourType = ct!;
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'tEXt') {
      const nul = data.indexOf(0);
      text[Buffer.from(data.subarray(0, nul)).toString('latin1')] = Buffer.from(data.subarray(nul + 1)).toString('latin1');
    } else if (type === 'IEND') {
      ended = true;
      break;
    }
    at += 12 + len;
  }
  if (!ended || colourType < 0) throw new Error('PNG: no IHDR or IEND');
  const ch = CHANNELS[colourType]!;
  const stride = width * ch;
  const raw = inflateSync(Buffer.concat(idat));
  if (raw.length !== height * (stride + 1)) throw new Error(`PNG: ${raw.length} inflated bytes for ${width}x${height}x${ch}`);
  const px = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)]!;
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= ch ? px[row + x - ch]! : 0;
      const b = y > 0 ? px[row - stride + x]! : 0;
      const c = x >= ch && y > 0 ? px[row - stride + x - ch]! : 0;
      const pred = f === 0 ? 0 : f === 1 ? a : f === 2 ? b : f === 3 ? (a + b) >> 1 : f === 4 ? paeth(a, b, c) : Number.NaN;
      if (Number.isNaN(pred)) throw new Error(`PNG: filter ${f}`);
      px[row + x] = (src[x]! + pred) & 0xff;
    }
  }
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const p = px.subarray(i * ch, i * ch + ch);
    if (ch === 1) rgba.set([p[0]!, p[0]!, p[0]!, 255], i * 4);
    else if (ch === 2) rgba.set([p[0]!, p[0]!, p[0]!, p[1]!], i * 4);
    else if (ch === 3) rgba.set([p[0]!, p[1]!, p[2]!, 255], i * 4);
    else rgba.set(p, i * 4);
  }
  return { width, height, colourType, rgba, text };
}

/** The RGBA of pixel (x, y). */
export function pixel(png: DecodedPng, x: number, y: number): [number, number, number, number] {
  const i = (y * png.width + x) * 4;
  return [png.rgba[i]!, png.rgba[i + 1]!, png.rgba[i + 2]!, png.rgba[i + 3]!];
}

/** `#rrggbb` of pixel (x, y). */
export function hexAt(png: DecodedPng, x: number, y: number): string {
  return `#${pixel(png, x, y)
    .slice(0, 3)
    .map((v) => v.toString(16).padStart(2, '0'))
    .join('')}`;
}

/** Distinct colours (RGBA) in the rows [y0, y1) of the picture. */
export function distinctColours(png: DecodedPng, y0 = 0, y1 = png.height): number {
  const seen = new Set<number>();
  for (let i = y0 * png.width; i < y1 * png.width; i++) seen.add(((png.rgba[i * 4]! << 24) | (png.rgba[i * 4 + 1]! << 16) | (png.rgba[i * 4 + 2]! << 8) | png.rgba[i * 4 + 3]!) >>> 0);
  return seen.size;
}

/** Whether two colours are within `tol` on each channel. */
export function near(a: readonly number[], b: readonly number[], tol = 12): boolean {
  return a.every((v, i) => Math.abs(v - b[i]!) <= tol);
}

/** `#rrggbb` as [r, g, b]. */
export function rgbOf(hex: string): [number, number, number] {
  return [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
}
