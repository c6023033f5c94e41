/**
 * NumPy `.npy` files read by range (format versions 1.0, 2.0 and 3.0): the magic string, the
 * header dictionary (descr, fortran_order, shape), then only the bytes of the elements wanted.
 * Used for GeoTessera's embedding tiles (int8, H×W×128) and their scales (float32, H×W or
 * H×W×128).
 */
import { BoundedCache } from '../../lib/cache.js';
import type { UpstreamClient } from '../http.js';
import { formatError } from './tiff.js';

/** A parsed `.npy` header. */
export interface NpyHeader {
  /** Element type, for example `|i1` or `<f4`. */
  descr: string;
  shape: number[];
  /** Byte offset of the first element. */
  dataOffset: number;
  itemSize: number;
  littleEndian: boolean;
  kind: 'i' | 'u' | 'f';
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

/** Parses the header from the first bytes of a file; throws a format error on anything else. */
export function parseNpyHeader(bytes: Uint8Array): NpyHeader {
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC[i]) throw formatError('not a .npy file: bad magic string');
  const major = bytes[6];
  if (major !== 1 && major !== 2 && major !== 3) throw formatError(`.npy format version ${major}.${bytes[7]} is not supported`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lenSize = major === 1 ? 2 : 4;
  if (bytes.length < 8 + lenSize) throw formatError('.npy header truncated');
  const hlen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  const start = 8 + lenSize;
  if (bytes.length < start + hlen) throw formatError(`.npy header of ${hlen} bytes is truncated`);
  const text = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(start, start + hlen));
  const descr = /'descr'\s*:\s*'([^']+)'/.exec(text)?.[1];
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(text)?.[1];
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(text)?.[1];
  if (!descr || !fortran || shapeText === undefined) throw formatError('.npy header dictionary lacks descr, fortran_order or shape');
  // Column-major arrays would scatter one pixel's channels across the file.
  if (fortran === 'True') throw formatError('.npy array is in Fortran order; a pixel read needs C order');
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  if (shape.some((n) => !Number.isSafeInteger(n) || n < 0)) throw formatError(`.npy shape (${shapeText}) is not a tuple of sizes`);
  const m = /^([<>|=]?)([iuf])(\d+)$/.exec(descr);
  if (!m) throw formatError(`.npy dtype ${descr} is not a plain number type`);
  const itemSize = Number(m[3]);
  const kind = m[2] as 'i' | 'u' | 'f';
  if (!(kind === 'f' ? [4, 8] : [1, 2, 4]).includes(itemSize)) throw formatError(`.npy dtype ${descr} is not supported`);
  return { descr, shape, dataOffset: start + hlen, itemSize, littleEndian: m[1] !== '>', kind };
}

/** Decodes `n` elements of `h`'s type from `bytes`. */
export function npyValues(h: NpyHeader, bytes: Uint8Array, n: number): number[] {
  if (bytes.length < n * h.itemSize) throw formatError(`.npy element read: got ${bytes.length} of ${n * h.itemSize} bytes (truncated)`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const p = i * h.itemSize;
    if (h.kind === 'f') out[i] = h.itemSize === 4 ? dv.getFloat32(p, h.littleEndian) : dv.getFloat64(p, h.littleEndian);
    else if (h.itemSize === 1) out[i] = h.kind === 'i' ? dv.getInt8(p) : dv.getUint8(p);
    else if (h.itemSize === 2) out[i] = h.kind === 'i' ? dv.getInt16(p, h.littleEndian) : dv.getUint16(p, h.littleEndian);
    else out[i] = h.kind === 'i' ? dv.getInt32(p, h.littleEndian) : dv.getUint32(p, h.littleEndian);
  }
  return out;
}

/** The caller's budget for a .npy read. */
export interface NpyReadOptions {
  deadline?: number;
  signal?: AbortSignal;
}

/** Range reads of `.npy` files with a header cache; 404 answers null. */
export class NpyReader {
  private readonly headers = new BoundedCache<string, NpyHeader>('npy_headers', { max: 512 });
  private readonly flight = new Map<string, Promise<NpyHeader | null>>();

  constructor(
    private readonly client: UpstreamClient,
    private readonly headBytes = 4096,
  ) {}

  /** The header of `url`, or null when the file does not exist. */
  async header(url: string, o: NpyReadOptions = {}): Promise<NpyHeader | null> {
    const hit = this.headers.get(url);
    if (hit) return hit;
    let p = this.flight.get(url);
    if (!p) {
      p = (async () => {
        const res = await this.client.request(url, { range: [0, this.headBytes - 1], deadline: o.deadline, signal: o.signal, acceptStatus: [404] });
        if (res.status === 404) return null;
        const h = parseNpyHeader(res.body);
        this.headers.set(url, h);
        return h;
      })().finally(() => this.flight.delete(url));
      this.flight.set(url, p);
    }
    return p;
  }

  /** `count` elements starting at flat element index `index` (C order). */
  async elements(url: string, h: NpyHeader, index: number, count: number, o: NpyReadOptions = {}): Promise<number[]> {
    const total = h.shape.reduce((a, b) => a * b, 1);
    if (index < 0 || index + count > total) throw formatError(`.npy element ${index}+${count} is outside shape (${h.shape.join(', ')})`);
    const start = h.dataOffset + index * h.itemSize;
    const end = start + count * h.itemSize - 1;
    const res = await this.client.request(url, { range: [start, end], deadline: o.deadline, signal: o.signal, acceptStatus: [416] });
    if (res.status === 416) throw formatError(`.npy file ends before element ${index} (truncated)`);
    const body = res.status === 200 && res.body.length > end - start + 1 ? res.body.subarray(start, end + 1) : res.body;
    return npyValues(h, body, count);
  }
}
