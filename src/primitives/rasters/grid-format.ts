/**
 * The grid file `application/x.svc-grid-f32.v1` (docs/rasters.md, "The grid file"): an 80-byte
 * little-endian header (magic, version, width, height, EPSG, GDAL-order geotransform, nodata)
 * then width × height float32 samples, row by row from the north, west to east. Encoding is a
 * pure function of the samples and the georeferencing, so the same window always gives the same
 * bytes (and the same artifact_cid); every missing sample is written as the one NaN bit pattern.
 */

export const GRID_MEDIA_TYPE = 'application/x.svc-grid-f32.v1';
/** "SVCGRID" and a zero byte. */
export const GRID_MAGIC = Uint8Array.from([0x53, 0x56, 0x43, 0x47, 0x52, 0x49, 0x44, 0x00]);
export const GRID_VERSION = 1;
export const GRID_HEADER_BYTES = 80;
/** The bits of every nodata sample (and of the header's nodata field): the quiet NaN 0x7FC00000. */
export const GRID_NODATA_BITS = 0x7fc00000;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A grid: georeferencing and row-major samples (NaN: no data). */
export interface Grid {
  width: number;
  height: number;
  epsg: number;
  /** GDAL order: [x of the top-left corner, pixel width, row rotation, y of the top-left corner, column rotation, pixel height (negative: north-up)]. */
  geotransform: readonly [number, number, number, number, number, number];
  /** width × height samples, row 0 the northernmost; NaN where there is no data. */
  values: ArrayLike<number>;
}

/** The bytes of `g` (docs/rasters.md). */
export function encodeGrid(g: Grid): Uint8Array {
  const n = g.width * g.height;
  if (!Number.isSafeInteger(n) || g.width < 1 || g.height < 1 || g.values.length !== n) throw new RangeError(`grid: ${g.width} × ${g.height} does not match ${g.values.length} values`);
  const out = new Uint8Array(GRID_HEADER_BYTES + 4 * n);
  const dv = new DataView(out.buffer);
  out.set(GRID_MAGIC, 0);
  dv.setUint32(8, GRID_VERSION, true);
  dv.setUint32(12, g.width, true);
  dv.setUint32(16, g.height, true);
  dv.setUint32(20, g.epsg, true);
  for (let i = 0; i < 6; i++) dv.setFloat64(24 + 8 * i, g.geotransform[i] === 0 ? 0 : g.geotransform[i], true);
  dv.setUint32(72, GRID_NODATA_BITS, true);
  dv.setUint32(76, 0, true);
  // One NaN pattern, and +0 for a negative zero: equal grids are equal bytes.
  if (LITTLE_ENDIAN) {
    // The samples start at byte 80, a multiple of 4: typed views write them in the file's byte order.
    const f = new Float32Array(out.buffer, GRID_HEADER_BYTES, n);
    const u = new Uint32Array(out.buffer, GRID_HEADER_BYTES, n);
    for (let i = 0; i < n; i++) {
      const v = g.values[i];
      if (Number.isNaN(v)) u[i] = GRID_NODATA_BITS;
      else f[i] = v === 0 ? 0 : v;
    }
    return out;
  }
  for (let i = 0; i < n; i++) {
    const v = g.values[i];
    const at = GRID_HEADER_BYTES + 4 * i;
    if (Number.isNaN(v)) dv.setUint32(at, GRID_NODATA_BITS, true);
    else dv.setFloat32(at, v === 0 ? 0 : v, true);
  }
  return out;
}

/** Reads a grid file back (tests, checks); throws RangeError on anything that is not one. */
export function decodeGrid(bytes: Uint8Array): Grid & { values: Float32Array } {
  if (bytes.length < GRID_HEADER_BYTES || !GRID_MAGIC.every((b, i) => bytes[i] === b)) throw new RangeError('grid: not an svc grid file (magic)');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dv.getUint32(8, true) !== GRID_VERSION) throw new RangeError(`grid: version ${dv.getUint32(8, true)} is not ${GRID_VERSION}`);
  const width = dv.getUint32(12, true);
  const height = dv.getUint32(16, true);
  if (bytes.length !== GRID_HEADER_BYTES + 4 * width * height) throw new RangeError(`grid: ${bytes.length} bytes for ${width} × ${height}`);
  const gt = Array.from({ length: 6 }, (_, i) => dv.getFloat64(24 + 8 * i, true)) as unknown as Grid['geotransform'];
  const values = new Float32Array(width * height);
  for (let i = 0; i < values.length; i++) values[i] = dv.getFloat32(GRID_HEADER_BYTES + 4 * i, true);
  return { width, height, epsg: dv.getUint32(20, true), geotransform: gt, values };
}
