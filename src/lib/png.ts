/**
 * A small PNG writer (ISO/IEC 15948) for 8-bit RGB and RGBA pictures (colour types 2 and 6, no
 * interlace, optional tEXt chunks) and the display stretch from surface reflectance to 8 bits.
 * Pure and deterministic: the same pixels always give the same bytes (fixed filter, fixed zlib
 * level, no timestamps), so a thumbnail can be cached and compared by its bytes.
 */
import { deflateSync } from 'node:zlib';

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

/** CRC-32 (polynomial 0xEDB88320, reflected), as chunks are checked. */
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 of `parts` taken as one byte string. */
export function crc32(...parts: Uint8Array[]): number {
  let c = 0xffffffff;
  for (const p of parts) for (let i = 0; i < p.length; i++) c = CRC_TABLE[(c ^ p[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** One chunk: length, type, data, CRC over type and data. */
function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8), data), 8 + data.length);
  return out;
}

/**
 * PNG bytes of a `width` × `height` picture given as row-major RGB triplets. Every scanline
 * uses filter 1 (Sub: the difference to the pixel on the left), which suits photographs and
 * keeps the output a function of the pixels alone.
 */
export function encodePngRgb(width: number, height: number, rgb: Uint8Array): Buffer {
  return encode(width, height, rgb, 3, {});
}

/**
 * PNG bytes of a picture given as row-major RGBA quadruplets (colour type 6, straight alpha),
 * with optional tEXt chunks (keyword → text, both Latin-1; a keyword is 1 to 79 printable
 * characters). Same filter and compression as encodePngRgb; chunks are written in key order.
 */
export function encodePngRgba(width: number, height: number, rgba: Uint8Array, text: Readonly<Record<string, string>> = {}): Buffer {
  return encode(width, height, rgba, 4, text);
}

/** Latin-1 bytes of `s`; characters past U+00FF become '?'. */
function latin1(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => (c.charCodeAt(0) <= 0xff ? c.charCodeAt(0) : 0x3f));
}

function encode(width: number, height: number, px: Uint8Array, channels: 3 | 4, text: Readonly<Record<string, string>>): Buffer {
  const name = channels === 3 ? 'RGB' : 'RGBA';
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) throw new RangeError(`PNG size ${width}x${height}: expected positive integers`);
  if (px.length !== width * height * channels) throw new RangeError(`PNG ${width}x${height} ${name} needs ${width * height * channels} bytes, got ${px.length}`);
  const stride = width * channels;
  const raw = new Uint8Array(height * (stride + 1));
  for (let y = 0; y < height; y++) {
    const src = y * stride;
    const dst = y * (stride + 1);
    raw[dst] = 1;
    for (let x = 0; x < stride; x++) raw[dst + 1 + x] = (px[src + x] - (x >= channels ? px[src + x - channels] : 0)) & 0xff;
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  // Bit depth 8, colour type 2 (truecolour) or 6 (truecolour with alpha), compression 0, filter method 0, no interlace.
  ihdr.set([8, channels === 3 ? 2 : 6, 0, 0, 0], 8);
  const texts: Buffer[] = [];
  for (const key of Object.keys(text).sort()) {
    if (!/^[\x20-\x7e]{1,79}$/.test(key) || key.startsWith(' ') || key.endsWith(' '))
      throw new RangeError(`PNG tEXt keyword ${JSON.stringify(key)}: 1 to 79 printable characters, no leading or trailing space`);
    texts.push(chunk('tEXt', Buffer.concat([latin1(key), Uint8Array.of(0), latin1(text[key]!)])));
  }
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), ...texts, chunk('IDAT', deflateSync(raw, { level: 6 })), chunk('IEND', new Uint8Array(0))]);
}

/** Reflectance shown as full white: bright land surfaces sit below it, clouds and snow above. */
export const STRETCH_MAX_REFLECTANCE = 0.3;
/** Display gamma: a linear reflectance ramp looks too dark on an sRGB screen. */
export const STRETCH_GAMMA = 1 / 2.2;

/** 8-bit display value of a reflectance: linear 0..0.3 → 0..1, gamma 1/2.2, clamped; NaN → 0. */
export function stretchByte(reflectance: number): number {
  if (!(reflectance > 0)) return 0;
  const x = reflectance >= STRETCH_MAX_REFLECTANCE ? 1 : reflectance / STRETCH_MAX_REFLECTANCE;
  return Math.round(255 * x ** STRETCH_GAMMA);
}

/** RGB triplets of three reflectance rasters; pixels flagged in `mask` (no data) are black. */
export function trueColour(red: ArrayLike<number>, green: ArrayLike<number>, blue: ArrayLike<number>, mask?: ArrayLike<number>): Uint8Array {
  const n = red.length;
  if (green.length !== n || blue.length !== n || (mask && mask.length !== n)) throw new RangeError('trueColour: the rasters differ in size');
  const out = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) {
    if (mask?.[i]) continue;
    out[i * 3] = stretchByte(red[i]);
    out[i * 3 + 1] = stretchByte(green[i]);
    out[i * 3 + 2] = stretchByte(blue[i]);
  }
  return out;
}
