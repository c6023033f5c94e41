/**
 * The embedding field file `application/x.svc-embed-q8.v1` (docs/rasters.md, "The embedding
 * field file"): GeoTessera's own representation over a grid, kept as the source stores it. A
 * 96-byte little-endian header (magic, version, width, height, EPSG, GDAL-order geotransform,
 * channels, scales per pixel, the nodata scale's bits), then the int8 values pixel-interleaved
 * (row by row from the north, west to east, each pixel's 128 channels together: the source's
 * (H, W, 128) C order), then the float32 scales (one or 128 per pixel). The vector of a pixel is
 * `float32(q[k] × scale)`, as numpy computes it from the source files. A pixel without an
 * embedding has every scale equal to the NaN bits 0x7FC00000 and every int8 zero, so the bytes
 * are a function of the values alone.
 */

export const FIELD_MEDIA_TYPE = 'application/x.svc-embed-q8.v1';
/** "SVCEMB8" and a zero byte. */
export const FIELD_MAGIC = Uint8Array.from([0x53, 0x56, 0x43, 0x45, 0x4d, 0x42, 0x38, 0x00]);
export const FIELD_VERSION = 1;
export const FIELD_HEADER_BYTES = 96;
/** The bits of every scale of a pixel without an embedding: the quiet NaN 0x7FC00000. */
export const FIELD_NODATA_BITS = 0x7fc00000;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** An embedding field: georeferencing, int8 values (H, W, C) and scales (H, W, S). */
export interface EmbeddingField {
  width: number;
  height: number;
  epsg: number;
  geotransform: readonly [number, number, number, number, number, number];
  channels: number;
  /** 1 (one scale per pixel) or `channels` (one per channel). */
  scalesPerPixel: number;
  q: Int8Array;
  /** NaN marks a pixel without an embedding (every one of its scales). */
  s: Float32Array;
}

/** Byte offset of the scales section. */
export function scalesOffset(f: { width: number; height: number; channels: number }): number {
  return FIELD_HEADER_BYTES + f.width * f.height * f.channels;
}

/** The bytes of `f` (docs/rasters.md). */
export function encodeField(f: EmbeddingField): Uint8Array {
  const n = f.width * f.height;
  if (!Number.isSafeInteger(n) || f.width < 1 || f.height < 1 || f.q.length !== n * f.channels || f.s.length !== n * f.scalesPerPixel) {
    throw new RangeError(`field: ${f.width} × ${f.height} × ${f.channels} does not match ${f.q.length} values and ${f.s.length} scales`);
  }
  if (f.scalesPerPixel !== 1 && f.scalesPerPixel !== f.channels) throw new RangeError(`field: ${f.scalesPerPixel} scales per pixel is neither 1 nor ${f.channels}`);
  const at = scalesOffset(f);
  const out = new Uint8Array(at + 4 * f.s.length);
  const dv = new DataView(out.buffer);
  out.set(FIELD_MAGIC, 0);
  dv.setUint32(8, FIELD_VERSION, true);
  dv.setUint32(12, f.width, true);
  dv.setUint32(16, f.height, true);
  dv.setUint32(20, f.epsg, true);
  for (let i = 0; i < 6; i++) dv.setFloat64(24 + 8 * i, f.geotransform[i] === 0 ? 0 : f.geotransform[i], true);
  dv.setUint32(72, f.channels, true);
  dv.setUint32(76, f.scalesPerPixel, true);
  dv.setUint32(80, FIELD_NODATA_BITS, true);
  // 84..95 reserved (zero).
  const S = f.scalesPerPixel;
  const C = f.channels;
  for (let p = 0; p < n; p++) {
    const none = Number.isNaN(f.s[p * S]);
    if (!none) out.set(new Uint8Array(f.q.buffer, f.q.byteOffset + p * C, C), FIELD_HEADER_BYTES + p * C);
    for (let j = 0; j < S; j++) {
      const v = f.s[p * S + j];
      if (none || Number.isNaN(v)) dv.setUint32(at + 4 * (p * S + j), FIELD_NODATA_BITS, true);
      else dv.setFloat32(at + 4 * (p * S + j), v, true);
    }
  }
  return out;
}

/** Reads a field file back; throws RangeError on anything that is not one. */
export function decodeField(bytes: Uint8Array): EmbeddingField {
  if (bytes.length < FIELD_HEADER_BYTES || !FIELD_MAGIC.every((b, i) => bytes[i] === b)) throw new RangeError('field: not an svc embedding field file (magic)');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dv.getUint32(8, true) !== FIELD_VERSION) throw new RangeError(`field: version ${dv.getUint32(8, true)} is not ${FIELD_VERSION}`);
  const width = dv.getUint32(12, true);
  const height = dv.getUint32(16, true);
  const channels = dv.getUint32(72, true);
  const scalesPerPixel = dv.getUint32(76, true);
  const at = scalesOffset({ width, height, channels });
  if (bytes.length !== at + 4 * width * height * scalesPerPixel) throw new RangeError(`field: ${bytes.length} bytes for ${width} × ${height} × ${channels} with ${scalesPerPixel} scales per pixel`);
  const geotransform = Array.from({ length: 6 }, (_, i) => dv.getFloat64(24 + 8 * i, true)) as unknown as EmbeddingField['geotransform'];
  const q = new Int8Array(bytes.buffer.slice(bytes.byteOffset + FIELD_HEADER_BYTES, bytes.byteOffset + at));
  const s = new Float32Array(width * height * scalesPerPixel);
  if (LITTLE_ENDIAN && (bytes.byteOffset + at) % 4 === 0) s.set(new Float32Array(bytes.buffer, bytes.byteOffset + at, s.length));
  else for (let i = 0; i < s.length; i++) s[i] = dv.getFloat32(at + 4 * i, true);
  return { width, height, epsg: dv.getUint32(20, true), geotransform, channels, scalesPerPixel, q, s };
}

/** The float32 vector of pixel `p` (row × width + col) into `out`; false (and `out` untouched) when it has no embedding. */
export function pixelVector(f: EmbeddingField, p: number, out: Float32Array): boolean {
  const S = f.scalesPerPixel;
  const C = f.channels;
  if (Number.isNaN(f.s[p * S])) return false;
  for (let k = 0; k < C; k++) out[k] = f.q[p * C + k] * f.s[p * S + (S === 1 ? 0 : k)];
  return true;
}
