/**
 * The cube file `application/x.svc-cube-f32.v1` (docs/rasters.md, "The cube file"): the grid
 * file's 80-byte header with magic "SVCCUBE" and the slice count in its last word, then one
 * 80-byte entry per slice (tslot, capture time, scene id), then one float32 plane per slice in
 * the entries' order, each row by row from the north, west to east. Only slices with a scene
 * have an entry and a plane: a time slot without one is listed as an absence in the record and
 * the answer, never written as a plane of zeros (or of NaN). The encoding is a pure function of
 * its inputs, with the grid file's rules for NaN and negative zero, so equal cubes are equal bytes.
 */
import { GRID_NODATA_BITS, type Grid } from './grid-format.js';

export const CUBE_MEDIA_TYPE = 'application/x.svc-cube-f32.v1';
/** "SVCCUBE" and a zero byte. */
export const CUBE_MAGIC = Uint8Array.from([0x53, 0x56, 0x43, 0x43, 0x55, 0x42, 0x45, 0x00]);
export const CUBE_VERSION = 1;
export const CUBE_HEADER_BYTES = 80;
export const CUBE_ENTRY_BYTES = 80;
/** Bytes of a scene id in a slice entry (ASCII, zero padded; the record holds the id whole). */
export const CUBE_SCENE_ID_BYTES = 64;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** One slice: its tslot, the capture time of its scene (Unix seconds), the scene id, and its plane. */
export interface CubeSlice {
  tslot: number;
  captured_s: number;
  scene_id: string;
  /** width × height samples, row 0 the northernmost; NaN where there is no data. */
  values: ArrayLike<number>;
}

export interface Cube {
  width: number;
  height: number;
  epsg: number;
  geotransform: Grid['geotransform'];
  slices: CubeSlice[];
}

/** The id field of an entry: the id in ASCII (any other character, or a zero, becomes '?'), cut at 64 bytes, zero padded. */
function idBytes(id: string): Uint8Array {
  const out = new Uint8Array(CUBE_SCENE_ID_BYTES);
  for (let i = 0; i < Math.min(id.length, CUBE_SCENE_ID_BYTES); i++) {
    const c = id.charCodeAt(i);
    out[i] = c > 0 && c < 0x80 ? c : 0x3f;
  }
  return out;
}

/** The bytes of `c` (docs/rasters.md). */
export function encodeCube(c: Cube): Uint8Array {
  const n = c.width * c.height;
  const s = c.slices.length;
  if (!Number.isSafeInteger(n) || c.width < 1 || c.height < 1 || s < 1) throw new RangeError(`cube: ${c.width} × ${c.height} × ${s} is empty`);
  const planes = CUBE_HEADER_BYTES + CUBE_ENTRY_BYTES * s;
  const out = new Uint8Array(planes + 4 * n * s);
  const dv = new DataView(out.buffer);
  out.set(CUBE_MAGIC, 0);
  dv.setUint32(8, CUBE_VERSION, true);
  dv.setUint32(12, c.width, true);
  dv.setUint32(16, c.height, true);
  dv.setUint32(20, c.epsg, true);
  for (let i = 0; i < 6; i++) dv.setFloat64(24 + 8 * i, c.geotransform[i] === 0 ? 0 : c.geotransform[i], true);
  dv.setUint32(72, GRID_NODATA_BITS, true);
  dv.setUint32(76, s, true);
  c.slices.forEach((slice, k) => {
    if (slice.values.length !== n) throw new RangeError(`cube: slice ${k} has ${slice.values.length} values for ${c.width} × ${c.height}`);
    if (!Number.isSafeInteger(slice.tslot) || slice.tslot < 0 || slice.tslot > 0xffffffff) throw new RangeError(`cube: slice ${k} tslot ${slice.tslot}`);
    const at = CUBE_HEADER_BYTES + CUBE_ENTRY_BYTES * k;
    dv.setUint32(at, slice.tslot, true);
    dv.setUint32(at + 4, 0, true);
    dv.setBigInt64(at + 8, BigInt(Math.trunc(slice.captured_s)), true);
    out.set(idBytes(slice.scene_id), at + 16);
    const base = planes + 4 * n * k;
    if (LITTLE_ENDIAN) {
      // Planes start at 80 + 80·s, a multiple of 4: typed views write in the file's byte order.
      const f = new Float32Array(out.buffer, base, n);
      const u = new Uint32Array(out.buffer, base, n);
      for (let i = 0; i < n; i++) {
        const v = slice.values[i];
        if (Number.isNaN(v)) u[i] = GRID_NODATA_BITS;
        else f[i] = v === 0 ? 0 : v;
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      const v = slice.values[i];
      if (Number.isNaN(v)) dv.setUint32(base + 4 * i, GRID_NODATA_BITS, true);
      else dv.setFloat32(base + 4 * i, v === 0 ? 0 : v, true);
    }
  });
  return out;
}

/** A cube file read back (tests, checks); throws RangeError on anything that is not one. */
export function decodeCube(bytes: Uint8Array): Omit<Cube, 'slices'> & { slices: Array<Omit<CubeSlice, 'values'> & { values: Float32Array }> } {
  if (bytes.length < CUBE_HEADER_BYTES || !CUBE_MAGIC.every((b, i) => bytes[i] === b)) throw new RangeError('cube: not an svc cube file (magic)');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dv.getUint32(8, true) !== CUBE_VERSION) throw new RangeError(`cube: version ${dv.getUint32(8, true)} is not ${CUBE_VERSION}`);
  const width = dv.getUint32(12, true);
  const height = dv.getUint32(16, true);
  const s = dv.getUint32(76, true);
  const n = width * height;
  const planes = CUBE_HEADER_BYTES + CUBE_ENTRY_BYTES * s;
  if (bytes.length !== planes + 4 * n * s) throw new RangeError(`cube: ${bytes.length} bytes for ${width} × ${height} × ${s}`);
  const geotransform = Array.from({ length: 6 }, (_, i) => dv.getFloat64(24 + 8 * i, true)) as unknown as Grid['geotransform'];
  const slices = Array.from({ length: s }, (_, k) => {
    const at = CUBE_HEADER_BYTES + CUBE_ENTRY_BYTES * k;
    const id = bytes.subarray(at + 16, at + 16 + CUBE_SCENE_ID_BYTES);
    const end = id.indexOf(0);
    const values = new Float32Array(n);
    for (let i = 0; i < n; i++) values[i] = dv.getFloat32(planes + 4 * (n * k + i), true);
    return {
      tslot: dv.getUint32(at, true),
      captured_s: Number(dv.getBigInt64(at + 8, true)),
      scene_id: String.fromCharCode(...(end < 0 ? id : id.subarray(0, end))),
      values,
    };
  });
  return { width, height, epsg: dv.getUint32(20, true), geotransform, slices };
}
