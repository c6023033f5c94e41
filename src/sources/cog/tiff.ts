/**
 * TIFF 6.0 / BigTIFF first-IFD parser for point reads of (Cloud-Optimized) GeoTIFFs: image
 * layout, block offsets and byte counts, compression and predictor, the GeoTIFF 1.1 tags
 * (ModelPixelScale, ModelTiepoint, ModelTransformation, GeoKeyDirectory), GDAL_NODATA, and
 * the internal mask GDAL writes in the IFD after the image's.
 * Bytes come from a ByteSource that serves the prefetched head of the file and range-reads
 * the rest on demand, so a COG costs one request and a stripped GeoTIFF at most a few more.
 */
import { BoundedCache } from '../../lib/cache.js';
import { UpstreamError } from '../http.js';

/** Inclusive byte range fetch; may return fewer bytes at the end of the file. */
export type RangeFetcher = (start: number, end: number) => Promise<Uint8Array>;

/** A `format` UpstreamError: the bytes are not what the declared scheme promises. */
export function formatError(message: string): UpstreamError {
  return new UpstreamError('format', message);
}

/** The file's bytes: a prefetched head plus chunks read later (a few kept, oldest dropped). */
export class ByteSource {
  private chunks: Array<{ start: number; bytes: Uint8Array }>;

  constructor(
    head: Uint8Array,
    private readonly readAhead = 16_384,
    private readonly maxChunks = 8,
  ) {
    this.chunks = [{ start: 0, bytes: head }];
  }

  /** Whether bytes off..off+len-1 are held. */
  has(off: number, len: number): boolean {
    return this.chunks.some((c) => off >= c.start && off + len <= c.start + c.bytes.length);
  }

  /** `len` bytes at `off`, fetched (with read-ahead) through `fetch` when not held yet. */
  async bytes(off: number, len: number, fetch: RangeFetcher): Promise<Uint8Array> {
    for (const c of this.chunks) {
      if (off >= c.start && off + len <= c.start + c.bytes.length) return c.bytes.subarray(off - c.start, off - c.start + len);
    }
    const want = Math.max(len, this.readAhead);
    const got = await fetch(off, off + want - 1);
    if (got.length < len) throw formatError(`file ends at byte ${off + got.length}; a tag needs bytes ${off}..${off + len - 1}`);
    // The head (chunk 0) stays: it holds the IFD of a COG.
    if (this.chunks.length >= this.maxChunks) this.chunks.splice(1, 1);
    this.chunks.push({ start: off, bytes: got });
    return got.subarray(0, len);
  }
}

const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 16: 8, 17: 8, 18: 8 };

/** Tag numbers this reader uses (TIFF 6.0, GeoTIFF 1.1, GDAL). */
export const TAG = {
  NewSubfileType: 254,
  ImageWidth: 256,
  ImageLength: 257,
  BitsPerSample: 258,
  Compression: 259,
  StripOffsets: 273,
  SamplesPerPixel: 277,
  RowsPerStrip: 278,
  StripByteCounts: 279,
  PlanarConfiguration: 284,
  Predictor: 317,
  TileWidth: 322,
  TileLength: 323,
  TileOffsets: 324,
  TileByteCounts: 325,
  SampleFormat: 339,
  ModelPixelScale: 33550,
  ModelTiepoint: 33922,
  ModelTransformation: 34264,
  GeoKeyDirectory: 34735,
  GeoDoubleParams: 34736,
  GeoAsciiParams: 34737,
  GdalNodata: 42113,
} as const;

/** Read one value of TIFF field type `type` at `pos`. */
function readValue(dv: DataView, pos: number, type: number, le: boolean): number {
  switch (type) {
    case 1:
    case 2:
    case 7:
      return dv.getUint8(pos);
    case 6:
      return dv.getInt8(pos);
    case 3:
      return dv.getUint16(pos, le);
    case 8:
      return dv.getInt16(pos, le);
    case 4:
      return dv.getUint32(pos, le);
    case 9:
      return dv.getInt32(pos, le);
    case 5:
      return dv.getUint32(pos, le) / dv.getUint32(pos + 4, le);
    case 10:
      return dv.getInt32(pos, le) / dv.getInt32(pos + 4, le);
    case 11:
      return dv.getFloat32(pos, le);
    case 12:
      return dv.getFloat64(pos, le);
    case 16:
    case 18:
      return Number(dv.getBigUint64(pos, le));
    case 17:
      return Number(dv.getBigInt64(pos, le));
    default:
      throw formatError(`unknown TIFF field type ${type}`);
  }
}

function decodeValues(bytes: Uint8Array, type: number, count: number, le: boolean): number[] {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = TYPE_SIZE[type];
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) out[i] = readValue(dv, i * size, type, le);
  return out;
}

/** A numeric tag array (block offsets, byte counts) decoded whole, or read entry by entry. */
export class TagArray {
  private readonly cache = new BoundedCache<number, number>('cog_tag_entries', { max: 4096 });

  constructor(
    readonly count: number,
    private readonly type: number,
    private readonly offset: number,
    private readonly le: boolean,
    private readonly values?: number[],
  ) {}

  /** Entry `i`; a lazy array range-reads only that entry (huge global COGs). */
  async get(i: number, source: ByteSource, fetch: RangeFetcher): Promise<number> {
    if (!Number.isInteger(i) || i < 0 || i >= this.count) throw formatError(`block ${i} is outside the ${this.count} blocks the IFD lists`);
    if (this.values) return this.values[i];
    const hit = this.cache.get(i);
    if (hit !== undefined) return hit;
    const size = TYPE_SIZE[this.type];
    const b = await source.bytes(this.offset + i * size, size, fetch);
    const v = readValue(new DataView(b.buffer, b.byteOffset, b.byteLength), 0, this.type, this.le);
    this.cache.set(i, v);
    return v;
  }
}

/** What the first IFD says about the full-resolution image. */
export interface TiffHeader {
  littleEndian: boolean;
  bigTiff: boolean;
  width: number;
  height: number;
  /** Tiles, or strips (block width = image width, height = RowsPerStrip). */
  tiled: boolean;
  blockWidth: number;
  blockHeight: number;
  blocksAcross: number;
  blocksDown: number;
  samplesPerPixel: number;
  bitsPerSample: number;
  /** 1 unsigned int, 2 signed int, 3 IEEE float. */
  sampleFormat: number;
  /** 1 chunky, 2 separate planes. */
  planar: number;
  compression: number;
  predictor: number;
  offsets: TagArray;
  byteCounts: TagArray;
  modelPixelScale?: number[];
  modelTiepoint?: number[];
  modelTransformation?: number[];
  geoKeys: Map<number, number | string | number[]>;
  /** GDAL_NODATA, when the file declares one (NaN for "nan"). */
  nodata?: number;
  /**
   * The image's internal transparency mask (GDAL's PER_DATASET mask, usually 1 bit per pixel):
   * a pixel whose mask sample is 0 has no data. Same size as the image; its own blocks.
   */
  mask?: TiffHeader;
  source: ByteSource;
}

const SMALL_TAG_BYTES = 1 << 16;

/** NewSubfileType bit 2: the IFD is a transparency mask (TIFF 6.0 section 8). */
const SUBFILE_MASK = 4;

/** Typed access to the entries of one IFD. */
interface Ifd {
  has(tag: number): boolean;
  values(tag: number): Promise<number[] | undefined>;
  ascii(tag: number): Promise<string | undefined>;
  scalar(tag: number, def?: number): Promise<number>;
  blockArray(tag: number): Promise<TagArray>;
  /** Offset of the next IFD (0: none). */
  next: number;
}

/**
 * Reads the IFD at `ifdOffset`: its entry table and next-IFD pointer and, with `prefetch`, the
 * small out-of-line values that lie past the bytes held, in one range.
 */
async function readIfd(source: ByteSource, fetch: RangeFetcher, ifdOffset: number, le: boolean, big: boolean, prefetch = true): Promise<Ifd> {
  const countBytes = await source.bytes(ifdOffset, big ? 8 : 2, fetch);
  const cdv = new DataView(countBytes.buffer, countBytes.byteOffset, countBytes.byteLength);
  const n = big ? Number(cdv.getBigUint64(0, le)) : cdv.getUint16(0, le);
  if (n === 0 || n > 4096) throw formatError(`IFD at byte ${ifdOffset} claims ${n} entries`);
  const entrySize = big ? 20 : 12;
  // The entries and the next-IFD pointer after them, in one read.
  const entries = await source.bytes(ifdOffset + (big ? 8 : 2), n * entrySize + (big ? 8 : 4), fetch);
  const edv = new DataView(entries.buffer, entries.byteOffset, entries.byteLength);
  const next = big ? Number(edv.getBigUint64(n * entrySize, le)) : edv.getUint32(n * entrySize, le);
  const inlineMax = big ? 8 : 4;

  const raw = new Map<number, { type: number; count: number; valuePos: number; offset: number | null }>();
  for (let i = 0; i < n; i++) {
    const p = i * entrySize;
    const tag = edv.getUint16(p, le);
    const type = edv.getUint16(p + 2, le);
    const count = big ? Number(edv.getBigUint64(p + 4, le)) : edv.getUint32(p + 4, le);
    if (!(type in TYPE_SIZE)) continue; // unknown types are skipped, as TIFF 6.0 asks
    const inline = TYPE_SIZE[type] * count <= inlineMax;
    const valuePos = p + (big ? 12 : 8);
    raw.set(tag, { type, count, valuePos, offset: inline ? null : big ? Number(edv.getBigUint64(valuePos, le)) : edv.getUint32(valuePos, le) });
  }

  // Out-of-line values of the small tags (GeoKeys, tie point, scales) that lie past the head
  // are fetched in one range rather than one request each.
  let lo = Infinity;
  let hi = -1;
  for (const e of raw.values()) {
    const len = TYPE_SIZE[e.type] * e.count;
    if (e.offset === null || len > SMALL_TAG_BYTES || source.has(e.offset, len)) continue;
    lo = Math.min(lo, e.offset);
    hi = Math.max(hi, e.offset + len);
  }
  if (prefetch && hi > lo && hi - lo <= 4 * SMALL_TAG_BYTES) await source.bytes(lo, hi - lo, fetch);

  const values = async (tag: number): Promise<number[] | undefined> => {
    const e = raw.get(tag);
    if (!e) return undefined;
    if (e.type === 2) return undefined;
    if (e.offset === null) return decodeValues(entries.subarray(e.valuePos, e.valuePos + TYPE_SIZE[e.type] * e.count), e.type, e.count, le);
    const len = TYPE_SIZE[e.type] * e.count;
    if (len > SMALL_TAG_BYTES) throw formatError(`tag ${tag} holds ${len} bytes, more than a header tag may`);
    return decodeValues(await source.bytes(e.offset, len, fetch), e.type, e.count, le);
  };
  return {
    next,
    has: (tag) => raw.has(tag),
    values,
    async ascii(tag) {
      const e = raw.get(tag);
      if (!e || e.type !== 2) return undefined;
      const b = e.offset === null ? entries.subarray(e.valuePos, e.valuePos + e.count) : await source.bytes(e.offset, Math.min(e.count, SMALL_TAG_BYTES), fetch);
      let s = '';
      for (const c of b) s += String.fromCharCode(c);
      return s;
    },
    async scalar(tag, def) {
      const v = await values(tag);
      if (v && v.length > 0) return v[0];
      if (def === undefined) throw formatError(`required TIFF tag ${tag} is missing`);
      return def;
    },
    async blockArray(tag) {
      const e = raw.get(tag);
      if (!e) throw formatError(`required TIFF tag ${tag} (block offsets or byte counts) is missing`);
      if (e.offset === null) return new TagArray(e.count, e.type, 0, le, await values(tag));
      const len = TYPE_SIZE[e.type] * e.count;
      // Small arrays are decoded whole (usually already in the COG head); huge ones stay lazy.
      if (len <= SMALL_TAG_BYTES) return new TagArray(e.count, e.type, e.offset, le, decodeValues(await source.bytes(e.offset, len, fetch), e.type, e.count, le));
      return new TagArray(e.count, e.type, e.offset, le);
    },
  };
}

/** The fields of TiffHeader that describe one IFD's pixels and blocks. */
type Layout = Pick<
  TiffHeader,
  | 'width'
  | 'height'
  | 'tiled'
  | 'blockWidth'
  | 'blockHeight'
  | 'blocksAcross'
  | 'blocksDown'
  | 'samplesPerPixel'
  | 'bitsPerSample'
  | 'sampleFormat'
  | 'planar'
  | 'compression'
  | 'predictor'
  | 'offsets'
  | 'byteCounts'
>;

async function layoutOf(ifd: Ifd): Promise<Layout> {
  const width = await ifd.scalar(TAG.ImageWidth);
  const height = await ifd.scalar(TAG.ImageLength);
  if (!(width > 0 && height > 0)) throw formatError(`image size ${width}x${height}`);
  const samplesPerPixel = await ifd.scalar(TAG.SamplesPerPixel, 1);
  const bps = (await ifd.values(TAG.BitsPerSample)) ?? [1];
  const formats = (await ifd.values(TAG.SampleFormat)) ?? [1];
  const tiled = ifd.has(TAG.TileOffsets);
  const blockWidth = tiled ? await ifd.scalar(TAG.TileWidth) : width;
  const blockHeight = tiled ? await ifd.scalar(TAG.TileLength) : Math.min(await ifd.scalar(TAG.RowsPerStrip, height), height);
  if (!(blockWidth > 0 && blockHeight > 0)) throw formatError(`block size ${blockWidth}x${blockHeight}`);
  const planar = await ifd.scalar(TAG.PlanarConfiguration, 1);
  const offsets = await ifd.blockArray(tiled ? TAG.TileOffsets : TAG.StripOffsets);
  const byteCounts = await ifd.blockArray(tiled ? TAG.TileByteCounts : TAG.StripByteCounts);
  const blocksAcross = Math.ceil(width / blockWidth);
  const blocksDown = Math.ceil(height / blockHeight);
  const perPlane = blocksAcross * blocksDown;
  if (offsets.count < perPlane * (planar === 2 ? samplesPerPixel : 1) || byteCounts.count !== offsets.count) {
    throw formatError(`IFD lists ${offsets.count} offsets and ${byteCounts.count} byte counts for ${perPlane} blocks per plane`);
  }
  return {
    width,
    height,
    tiled,
    blockWidth,
    blockHeight,
    blocksAcross,
    blocksDown,
    samplesPerPixel,
    bitsPerSample: bps[0],
    sampleFormat: formats[0],
    planar,
    compression: await ifd.scalar(TAG.Compression, 1),
    predictor: await ifd.scalar(TAG.Predictor, 1),
    offsets,
    byteCounts,
  };
}

/** Parses the header and first IFD; `fetch` supplies bytes past the prefetched head. */
export async function parseTiff(source: ByteSource, fetch: RangeFetcher): Promise<TiffHeader> {
  let head: Uint8Array;
  try {
    head = await source.bytes(0, 16, fetch);
  } catch {
    throw formatError('not a TIFF: shorter than a TIFF header');
  }
  const order = String.fromCharCode(head[0], head[1]);
  if (order !== 'II' && order !== 'MM') throw formatError(`not a TIFF: byte-order mark ${JSON.stringify(order)}`);
  const le = order === 'II';
  const hv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const magic = hv.getUint16(2, le);
  if (magic !== 42 && magic !== 43) throw formatError(`not a TIFF: magic number ${magic}`);
  const big = magic === 43;
  if (big && (hv.getUint16(4, le) !== 8 || hv.getUint16(6, le) !== 0)) throw formatError('BigTIFF header with an offset size other than 8');
  const ifdOffset = big ? Number(hv.getBigUint64(8, le)) : hv.getUint32(4, le);
  if (ifdOffset < 8) throw formatError(`first IFD offset ${ifdOffset} is inside the header`);

  const ifd = await readIfd(source, fetch, ifdOffset, le, big);
  const layout = await layoutOf(ifd);

  const geoKeys = new Map<number, number | string | number[]>();
  const dir = await ifd.values(TAG.GeoKeyDirectory);
  if (dir && dir.length >= 4) {
    const doubles = (await ifd.values(TAG.GeoDoubleParams)) ?? [];
    const asciiParams = (await ifd.ascii(TAG.GeoAsciiParams)) ?? '';
    const nKeys = dir[3];
    for (let k = 0; k < nKeys && 4 + k * 4 + 3 < dir.length; k++) {
      const [id, loc, count, off] = dir.slice(4 + k * 4, 8 + k * 4);
      if (loc === 0) geoKeys.set(id, off);
      else if (loc === TAG.GeoDoubleParams) geoKeys.set(id, count === 1 ? doubles[off] : doubles.slice(off, off + count));
      else if (loc === TAG.GeoAsciiParams) geoKeys.set(id, asciiParams.slice(off, off + count).replace(/[|\0]+$/, ''));
      else if (loc === TAG.GeoKeyDirectory) geoKeys.set(id, count === 1 ? dir[off] : dir.slice(off, off + count));
    }
  }
  // GDAL_NODATA is ASCII ("0", "-9999", "nan"); NaN is kept so sparse blocks fill with it.
  const nodataText = (await ifd.ascii(TAG.GdalNodata))?.replace(/\0/g, '').trim();
  let nodata: number | undefined;
  if (nodataText !== undefined && /^[-+]?nan$/i.test(nodataText)) nodata = NaN;
  else if (nodataText !== undefined && Number.isFinite(Number.parseFloat(nodataText))) nodata = Number.parseFloat(nodataText);

  const header: TiffHeader = {
    littleEndian: le,
    bigTiff: big,
    ...layout,
    modelPixelScale: await ifd.values(TAG.ModelPixelScale),
    modelTiepoint: await ifd.values(TAG.ModelTiepoint),
    modelTransformation: await ifd.values(TAG.ModelTransformation),
    geoKeys,
    nodata,
    source,
  };
  header.mask = await maskOf(header, ifd.next, fetch);
  return header;
}

/**
 * The full-resolution transparency mask GDAL writes as the IFD right after the image's (a
 * PER_DATASET mask: 0 = no data), as a header of its own, or undefined when that IFD is
 * something else (an overview) or there is none. Its blocks decode like the image's.
 */
async function maskOf(h: TiffHeader, next: number, fetch: RangeFetcher): Promise<TiffHeader | undefined> {
  if (next === 0) return undefined;
  if (next < 8) throw formatError(`next IFD offset ${next} is inside the header`);
  // Only the entry table first: an overview's values are never read.
  const ifd = await readIfd(h.source, fetch, next, h.littleEndian, h.bigTiff, false);
  const subfile = await ifd.scalar(TAG.NewSubfileType, 0);
  if ((subfile & SUBFILE_MASK) === 0 || (subfile & 1) !== 0) return undefined;
  const layout = await layoutOf(ifd);
  if (layout.width !== h.width || layout.height !== h.height) return undefined;
  if (layout.samplesPerPixel !== 1) throw formatError(`mask IFD with ${layout.samplesPerPixel} samples per pixel`);
  return { ...h, ...layout, nodata: undefined, mask: undefined };
}
