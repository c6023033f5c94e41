/**
 * Block decoding for TIFF 6.0 / GeoTIFF: decompression (none, LZW, DEFLATE, PackBits, ZSTD),
 * predictors (1 none, 2 horizontal differencing, 3 floating point, TIFF Technical Note 3) and
 * byte order, producing the block's samples as a typed array (1-bit samples, as in a GDAL
 * mask, unpacked to one byte each). Any other compression (LERC, JPEG, WebP, LZMA, ...) is
 * refused by checkDecodable before a block is fetched, with a `format` error naming it
 * (docs/cog.md).
 */
import { inflateRawSync, inflateSync } from 'node:zlib';
import { decompress as zstdDecompress, init as zstdInit } from '@bokuweb/zstd-wasm';
import { formatError, type TiffHeader } from './tiff.js';

/** Byte order of this machine (typed arrays use it). */
const HOST_LE = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** Decoded samples of one block, in the file's sample type. */
export type Samples = Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | Float64Array;

/** TIFF compression codes this reader decodes. */
export const SUPPORTED_COMPRESSIONS: Readonly<Record<number, string>> = { 1: 'none', 5: 'LZW', 8: 'DEFLATE', 32946: 'DEFLATE (old code)', 32773: 'PackBits', 50000: 'ZSTD' };

/** Names of codes met in GeoTIFFs that this reader refuses (shown in the refusal). */
const REFUSED_NAMES: Record<number, string> = {
  2: 'CCITT RLE',
  3: 'CCITT Group 3',
  4: 'CCITT Group 4',
  6: 'old JPEG',
  7: 'JPEG',
  34712: 'JPEG 2000',
  34887: 'LERC',
  34925: 'LZMA',
  50001: 'WEBP',
  50002: 'JPEG-XL',
  52546: 'JPEG-XL',
};

/** A compression code with its name, as errors and docs show it: `34887 (LERC)`. */
export function compressionName(code: number): string {
  const name = SUPPORTED_COMPRESSIONS[code] ?? REFUSED_NAMES[code];
  return name ? `${code} (${name})` : String(code);
}

/**
 * Throws the `format` error a block of this file (or of its internal mask) would end in,
 * before anything is fetched: an unsupported compression, predictor or sample type. A window
 * read calls it first, so a LERC or JPEG file costs the header request only and never yields
 * made-up samples.
 */
export function checkDecodable(h: TiffHeader): void {
  if (!(h.compression in SUPPORTED_COMPRESSIONS)) throw formatError(`unsupported TIFF compression ${compressionName(h.compression)}`);
  if (h.predictor !== 1 && h.predictor !== 2 && h.predictor !== 3) throw formatError(`unsupported TIFF predictor ${h.predictor}`);
  if (h.predictor === 3 && h.sampleFormat !== 3) throw formatError('floating-point predictor on integer samples');
  if (h.predictor === 2 && h.sampleFormat === 3) throw formatError('horizontal predictor on floating-point samples');
  if (h.bitsPerSample === 1) {
    if (h.sampleFormat !== 1 || h.predictor !== 1) throw formatError(`unsupported 1-bit samples: format ${h.sampleFormat}, predictor ${h.predictor}`);
  } else {
    if (!Number.isInteger(h.bitsPerSample / 8)) throw formatError(`unsupported bit depth ${h.bitsPerSample}`);
    arrayFor(h.sampleFormat, h.bitsPerSample, 0);
  }
  if (h.mask) checkDecodable(h.mask);
}

let zstdReady: Promise<void> | undefined;
let zstdLoaded = false;

/**
 * Loads what decoding `compression` needs before decodeBlock runs (the ZSTD WebAssembly
 * module, once per process); a no-op for the codecs built on node:zlib or written here.
 */
export async function prepareDecoder(compression: number): Promise<void> {
  if (compression !== 50000) return;
  zstdReady ??= zstdInit().catch((e: unknown) => {
    zstdReady = undefined;
    throw e;
  });
  await zstdReady;
  zstdLoaded = true;
}

/**
 * The content size a ZSTD frame header declares (RFC 8878 section 3.1.1.1), or undefined when
 * the frame leaves it out; throws when the bytes do not start a ZSTD frame.
 */
export function zstdContentSize(input: Uint8Array): number | undefined {
  if (input.length < 6 || input[0] !== 0x28 || input[1] !== 0xb5 || input[2] !== 0x2f || input[3] !== 0xfd) throw formatError('ZSTD block does not start with a ZSTD frame');
  const fhd = input[4];
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  const dictBytes = [0, 1, 2, 4][fhd & 3];
  const fcsBytes = fcsFlag === 0 ? single : 1 << fcsFlag;
  if (fcsBytes === 0) return undefined;
  const at = 5 + (single ? 0 : 1) + dictBytes;
  if (input.length < at + fcsBytes) throw formatError('ZSTD frame header cut short');
  let v = 0;
  for (let i = fcsBytes - 1; i >= 0; i--) v = v * 256 + input[at + i];
  return fcsBytes === 2 ? v + 256 : v;
}

/** ZSTD decompression of one block; the frame may not declare more bytes than the block holds. */
export function zstdDecode(input: Uint8Array, expected: number): Uint8Array {
  if (!zstdLoaded) throw new Error('internal: ZSTD decoder used before prepareDecoder(50000)');
  const declared = zstdContentSize(input);
  if (declared !== undefined && declared > expected) throw formatError(`ZSTD frame declares ${declared} bytes, the block holds ${expected}`);
  try {
    return zstdDecompress(input, { defaultHeapSize: Math.max(expected, 1) });
  } catch (e) {
    throw formatError(`ZSTD stream corrupt (${(e as Error).message})`);
  }
}

/** TIFF LZW (MSB-first codes, 9 to 12 bits, "early change"), as libtiff writes it. */
export function lzwDecode(input: Uint8Array, expected: number): Uint8Array {
  let out = new Uint8Array(Math.max(expected, 256));
  let o = 0;
  const ensure = (n: number) => {
    if (n <= out.length) return;
    const grown = new Uint8Array(Math.max(out.length * 2, n));
    grown.set(out.subarray(0, o));
    out = grown;
  };
  // The string table as prefix links: entry = string(prefix) + suffix.
  const prefix = new Int16Array(4096);
  const suffix = new Uint8Array(4096);
  const length = new Uint16Array(4096);
  for (let i = 0; i < 256; i++) {
    prefix[i] = -1;
    suffix[i] = i;
    length[i] = 1;
  }
  let next = 258;
  let width = 9;
  let old = -1;
  let acc = 0;
  let accBits = 0;
  let ip = 0;
  for (;;) {
    while (accBits < width && ip < input.length) {
      acc = ((acc & 0xffffff) << 8) | input[ip++];
      accBits += 8;
    }
    if (accBits < width) break; // a stream cut short ends like EOI; the caller checks the length
    const code = (acc >>> (accBits - width)) & ((1 << width) - 1);
    accBits -= width;
    if (code === 257) break;
    if (code === 256) {
      next = 258;
      width = 9;
      old = -1;
      continue;
    }
    let len: number;
    if (code < next) {
      len = length[code];
      ensure(o + len);
      for (let k = o + len - 1, c = code; k >= o; k--, c = prefix[c]) out[k] = suffix[c];
      if (old >= 0 && next < 4096) {
        prefix[next] = old;
        suffix[next] = out[o];
        length[next] = length[old] + 1;
        next++;
      }
    } else if (code === next && old >= 0) {
      // The KwKwK case: the new entry is string(old) + its own first byte.
      len = length[old] + 1;
      ensure(o + len);
      for (let k = o + len - 2, c = old; k >= o; k--, c = prefix[c]) out[k] = suffix[c];
      out[o + len - 1] = out[o];
      prefix[next] = old;
      suffix[next] = out[o];
      length[next] = len;
      next++;
    } else {
      throw formatError(`LZW stream corrupt: code ${code} with ${next} table entries`);
    }
    o += len;
    old = code;
    // Early change: the code width grows one code before the table would need it.
    if (next + 1 >= 1 << width && width < 12) width++;
    if (o >= expected) break;
  }
  return out.subarray(0, o);
}

/** PackBits run-length decoding (TIFF 6.0 section 9). */
export function packBitsDecode(input: Uint8Array, expected: number): Uint8Array {
  const out = new Uint8Array(expected);
  let i = 0;
  let o = 0;
  while (i < input.length && o < expected) {
    const n = (input[i++] << 24) >> 24;
    if (n >= 0) {
      const len = Math.min(n + 1, expected - o, input.length - i);
      out.set(input.subarray(i, i + len), o);
      i += n + 1;
      o += len;
    } else if (n !== -128) {
      const len = Math.min(1 - n, expected - o);
      out.fill(input[i++], o, o + len);
      o += len;
    }
  }
  return out.subarray(0, o);
}

/** Decompressed bytes of one block. */
export function decompress(h: TiffHeader, raw: Uint8Array, expected: number): Uint8Array {
  switch (h.compression) {
    case 1:
      return raw;
    case 5:
      return lzwDecode(raw, expected);
    case 8:
    case 32946:
      try {
        return new Uint8Array(inflateSync(raw));
      } catch {
        try {
          return new Uint8Array(inflateRawSync(raw));
        } catch (e) {
          throw formatError(`DEFLATE stream corrupt (${(e as Error).message})`);
        }
      }
    case 32773:
      return packBitsDecode(raw, expected);
    case 50000:
      return zstdDecode(raw, expected);
    default:
      throw formatError(`unsupported TIFF compression ${compressionName(h.compression)}`);
  }
}

/**
 * A block of 1-bit samples (a GDAL mask, a bilevel band): each row starts on a byte, most
 * significant bit first; the result holds one 0 or 1 per sample.
 */
function decodeBits(h: TiffHeader, raw: Uint8Array, rows: number): Uint8Array {
  if (h.sampleFormat !== 1) throw formatError(`unsupported sample type: format ${h.sampleFormat}, 1 bit`);
  if (h.predictor !== 1) throw formatError(`predictor ${h.predictor} on 1-bit samples`);
  const spp = h.planar === 2 ? 1 : h.samplesPerPixel;
  const perRow = h.blockWidth * spp;
  const rowBytes = Math.ceil(perRow / 8);
  const expected = rowBytes * rows;
  const bytes = decompress(h, raw, expected);
  if (bytes.length < expected) throw formatError(`block decodes to ${bytes.length} bytes, ${expected} expected (truncated or corrupt)`);
  const out = new Uint8Array(perRow * rows);
  for (let r = 0; r < rows; r++) {
    const base = r * rowBytes;
    for (let i = 0; i < perRow; i++) out[r * perRow + i] = (bytes[base + (i >> 3)] >> (7 - (i & 7))) & 1;
  }
  return out;
}

function arrayFor(format: number, bits: number, n: number): Samples {
  if (format === 3) {
    if (bits === 32) return new Float32Array(n);
    if (bits === 64) return new Float64Array(n);
  } else if (format === 2) {
    if (bits === 8) return new Int8Array(n);
    if (bits === 16) return new Int16Array(n);
    if (bits === 32) return new Int32Array(n);
  } else if (format === 1 || format === 4) {
    if (bits === 8) return new Uint8Array(n);
    if (bits === 16) return new Uint16Array(n);
    if (bits === 32) return new Uint32Array(n);
  }
  throw formatError(`unsupported sample type: format ${format}, ${bits} bits`);
}

/**
 * Samples of one block (`rows` rows of `h.blockWidth` pixels; one sample per pixel for planar
 * blocks, `samplesPerPixel` for chunky ones).
 */
export function decodeBlock(h: TiffHeader, raw: Uint8Array, rows: number): Samples {
  if (h.bitsPerSample === 1) return decodeBits(h, raw, rows);
  const bytesPer = h.bitsPerSample / 8;
  if (!Number.isInteger(bytesPer)) throw formatError(`unsupported bit depth ${h.bitsPerSample}`);
  const spp = h.planar === 2 ? 1 : h.samplesPerPixel;
  const perRow = h.blockWidth * spp;
  const n = perRow * rows;
  const expected = n * bytesPer;
  const bytes = decompress(h, raw, expected);
  if (bytes.length < expected) throw formatError(`block decodes to ${bytes.length} bytes, ${expected} expected (truncated or corrupt)`);
  const out = arrayFor(h.sampleFormat, h.bitsPerSample, n);

  if (h.predictor === 3) {
    if (h.sampleFormat !== 3) throw formatError('floating-point predictor on integer samples');
    // Technical Note 3: bytes are differenced with a stride of samplesPerPixel, then the row's
    // samples are stored as byte planes, most significant plane first. Undo both straight into
    // the output's bytes in this machine's order.
    const rowBytes = perRow * bytesPer;
    const work = h.compression === 1 ? bytes.slice(0, expected) : bytes; // never mutate a caller's buffer
    const outBytes = new Uint8Array(out.buffer, out.byteOffset, expected);
    for (let r = 0; r < rows; r++) {
      const base = r * rowBytes;
      for (let i = base + spp; i < base + rowBytes; i++) work[i] = (work[i] + work[i - spp]) & 0xff;
      for (let b = 0; b < bytesPer; b++) {
        const plane = base + b * perRow;
        const shift = HOST_LE ? bytesPer - 1 - b : b;
        for (let i = 0; i < perRow; i++) outBytes[base + i * bytesPer + shift] = work[plane + i];
      }
    }
    return out;
  }
  if (h.predictor !== 1 && h.predictor !== 2) throw formatError(`unsupported TIFF predictor ${h.predictor}`);

  const dv = new DataView(bytes.buffer, bytes.byteOffset, expected);
  const le = h.littleEndian;
  if (le === HOST_LE || bytesPer === 1) {
    // Same byte order as this machine: one copy into the typed array's own buffer.
    new Uint8Array(out.buffer, out.byteOffset, expected).set(bytes.subarray(0, expected));
  } else
    for (let i = 0; i < n; i++) {
      const p = i * bytesPer;
      if (h.sampleFormat === 3) out[i] = bytesPer === 4 ? dv.getFloat32(p, le) : dv.getFloat64(p, le);
      else if (bytesPer === 1) out[i] = h.sampleFormat === 2 ? dv.getInt8(p) : dv.getUint8(p);
      else if (bytesPer === 2) out[i] = h.sampleFormat === 2 ? dv.getInt16(p, le) : dv.getUint16(p, le);
      else out[i] = h.sampleFormat === 2 ? dv.getInt32(p, le) : dv.getUint32(p, le);
    }
  if (h.predictor === 2) {
    if (h.sampleFormat === 3) throw formatError('horizontal predictor on floating-point samples');
    // Each sample is stored as the difference from the same sample of the pixel to its left;
    // the typed array wraps the running sum exactly as the writer's modular arithmetic did.
    for (let r = 0; r < rows; r++) {
      const base = r * perRow;
      for (let i = spp; i < perRow; i++) out[base + i] += out[base + i - spp];
    }
  }
  return out;
}
