/**
 * Point reads of Cloud-Optimized GeoTIFFs over the shared UpstreamClient (so the egress
 * allow-list, timeouts, retries and the caller's deadline apply to every byte): one range
 * request for the head of the file (IFD + tag arrays of a COG), then one for the single
 * block holding the pixel. Parsed headers and decoded blocks are kept in per-URL LRU caches,
 * and identical reads in flight share one request, so a second point in the same COG costs
 * at most the block request and a point in a cached block costs none. A window read
 * (window.ts) fetches the covering blocks the same way, all at once.
 */
import { BoundedCache } from '../../lib/cache.js';
import type { UpstreamClient } from '../http.js';
import { UpstreamError } from '../http.js';
import { checkDecodable, decodeBlock, prepareDecoder, type Samples } from './decode.js';
import { geoRefOf, type GeoRef } from './georef.js';
import { ByteSource, formatError, parseTiff, type RangeFetcher, type TiffHeader } from './tiff.js';
import { assembleWindow, blocksCovering, checkWindow, PIXEL_OUTSIDE, PIXEL_VALID, windowAround, type PixelWindow, type WindowRead } from './window.js';

/** Per-read options: the caller's budget and how to interpret the file. */
export interface CogReadOptions {
  deadline?: number;
  signal?: AbortSignal;
  /** CRS to assume when the file declares none (a STAC item's proj:epsg). */
  epsgHint?: number;
  /** Cache key when the URL carries a short-lived credential (a SAS token). */
  cacheKey?: string;
  /** Extra values that mean "no data" besides GDAL_NODATA and NaN (for example JRC GSW's 255). */
  nodata?: readonly number[];
  /** A 404 answers `{kind: 'missing'}` instead of throwing (tiles that do not exist: ocean). */
  missingOk?: boolean;
}

/** The result of a point read. */
export type PointRead =
  | { kind: 'value'; value: number; col: number; row: number; epsg: number }
  | { kind: 'nodata'; raw: number; col: number; row: number; epsg: number }
  /** The point lies outside the raster's extent. */
  | { kind: 'outside'; epsg: number }
  /** The file does not exist (HTTP 404; only with missingOk). */
  | { kind: 'missing' };

/** Where a WGS 84 point falls in a file: its header, CRS and pixel (null: outside the image). */
export type Located = { kind: 'located'; header: CogHeader; epsg: number; pixel: { col: number; row: number } | null } | { kind: 'missing' };

/** The result of a window read centred on a point. */
export type WindowAt = { kind: 'window'; read: WindowRead; center: { col: number; row: number } } | { kind: 'outside'; epsg: number } | { kind: 'missing' };

/** A parsed header with its georeferencing (computed once per file). */
export interface CogHeader {
  url: string;
  tiff: TiffHeader;
  geo(epsgHint?: number): GeoRef;
}

/** Cache sizes and limits of a reader. */
export interface CogReaderOptions {
  /** Bytes of the first request (the COG head). */
  headerBytes?: number;
  headerEntries?: number;
  blockEntries?: number;
  /** Budget of decoded block bytes held. */
  blockBytes?: number;
  /** How long a 404 is kept as an answer (ms). */
  missingTtlMs?: number;
  /** Largest compressed block accepted. */
  maxBlockBytes?: number;
}

/** Counters for tests and benchmarks. */
export interface CogReaderStats {
  headerHits: number;
  headerFetches: number;
  blockHits: number;
  blockFetches: number;
}

const MISSING = Symbol('missing');
type HeaderEntry = CogHeader | { [MISSING]: number };

/** A COG point reader with bounded header and block caches; one per connector. */
export class CogReader {
  private readonly headers: BoundedCache<string, HeaderEntry>;
  private readonly blocks: BoundedCache<string, Samples>;
  private readonly headerFlight = new Map<string, Promise<HeaderEntry>>();
  private readonly blockFlight = new Map<string, Promise<Samples>>();
  readonly stats: CogReaderStats = { headerHits: 0, headerFetches: 0, blockHits: 0, blockFetches: 0 };
  private readonly o: Required<CogReaderOptions>;

  constructor(
    private readonly client: UpstreamClient,
    opts: CogReaderOptions = {},
  ) {
    this.o = {
      headerBytes: opts.headerBytes ?? 16_384,
      headerEntries: opts.headerEntries ?? 256,
      blockEntries: opts.blockEntries ?? 64,
      blockBytes: opts.blockBytes ?? 32 * 1024 * 1024,
      missingTtlMs: opts.missingTtlMs ?? 10 * 60_000,
      maxBlockBytes: opts.maxBlockBytes ?? 64 * 1024 * 1024,
    };
    this.headers = new BoundedCache('cog_headers', { max: this.o.headerEntries });
    // Decoded blocks range from a few KiB to megabytes: bounded by bytes as well as by count.
    this.blocks = new BoundedCache('cog_blocks', { max: this.o.blockEntries, maxBytes: this.o.blockBytes, bytesOf: (s) => s.byteLength });
  }

  /** Inclusive range read through the client; a server that ignores Range is sliced. */
  private fetcher(url: string, o: CogReadOptions): RangeFetcher {
    return async (start, end) => {
      const res = await this.client.request(url, { range: [start, end], deadline: o.deadline, signal: o.signal, acceptStatus: [416] });
      if (res.status === 416) throw formatError(`byte ${start} is past the end of ${new URL(url).pathname}`);
      if (res.status === 200 && res.body.length > end - start + 1) return res.body.subarray(start, end + 1);
      if (res.status === 200 && start > 0) throw formatError(`server ignored the Range request for bytes ${start}..${end}`);
      return res.body.length > end - start + 1 ? res.body.subarray(0, end - start + 1) : res.body;
    };
  }

  /** The parsed header of `url`, or null when the file does not exist (404). */
  async header(url: string, o: CogReadOptions = {}): Promise<CogHeader | null> {
    const key = o.cacheKey ?? url;
    const cached = this.headers.get(key);
    if (cached) {
      if (!(MISSING in cached)) {
        this.stats.headerHits++;
        return cached;
      }
      if (cached[MISSING] > Date.now()) {
        this.stats.headerHits++;
        return null;
      }
      this.headers.delete(key);
    }
    let p = this.headerFlight.get(key);
    if (!p) {
      p = this.fetchHeader(url, o).finally(() => this.headerFlight.delete(key));
      this.headerFlight.set(key, p);
    }
    const entry = await p;
    return MISSING in entry ? null : entry;
  }

  private async fetchHeader(url: string, o: CogReadOptions): Promise<HeaderEntry> {
    this.stats.headerFetches++;
    const key = o.cacheKey ?? url;
    const res = await this.client.request(url, { range: [0, this.o.headerBytes - 1], deadline: o.deadline, signal: o.signal, acceptStatus: [404] });
    if (res.status === 404) {
      const entry = { [MISSING]: Date.now() + this.o.missingTtlMs };
      this.headers.set(key, entry);
      return entry;
    }
    const head = res.status === 200 && res.body.length > this.o.headerBytes ? res.body.subarray(0, this.o.headerBytes) : res.body;
    const tiff = await parseTiff(new ByteSource(head), this.fetcher(url, o));
    const geos = new Map<number | undefined, GeoRef>();
    const header: CogHeader = {
      url,
      tiff,
      geo(epsgHint) {
        let g = geos.get(epsgHint);
        if (!g) {
          g = geoRefOf(tiff, epsgHint);
          geos.set(epsgHint, g);
        }
        return g;
      },
    };
    this.headers.set(key, header);
    return header;
  }

  /**
   * Samples of block `index` of a parsed file, or of its internal mask with `ofMask` (cached,
   * shared while in flight), fetched from `url`: the caller's URL, whose credential may be
   * newer than the one the header came with.
   */
  private async block(h: CogHeader, url: string, index: number, o: CogReadOptions, ofMask = false): Promise<Samples> {
    const t = ofMask ? h.tiff.mask : h.tiff;
    if (!t) throw new Error('internal: mask block of a file without a mask');
    const key = `${o.cacheKey ?? h.url}#${ofMask ? 'm' : ''}${index}`;
    const hit = this.blocks.get(key);
    if (hit) {
      this.stats.blockHits++;
      return hit;
    }
    let p = this.blockFlight.get(key);
    if (!p) {
      p = this.fetchBlock(t, url, index, o)
        .then((s) => {
          this.blocks.set(key, s);
          return s;
        })
        .finally(() => this.blockFlight.delete(key));
      this.blockFlight.set(key, p);
    }
    return p;
  }

  private async fetchBlock(t: TiffHeader, url: string, index: number, o: CogReadOptions): Promise<Samples> {
    const fetch = this.fetcher(url, o);
    const [offset, count] = await Promise.all([t.offsets.get(index, t.source, fetch), t.byteCounts.get(index, t.source, fetch)]);
    const down = Math.floor((index % (t.blocksAcross * t.blocksDown)) / t.blocksAcross);
    // Tiles are always full size; the last strip holds only the rows that are left.
    const rows = t.tiled ? t.blockHeight : Math.min(t.blockHeight, t.height - down * t.blockHeight);
    const spp = t.planar === 2 ? 1 : t.samplesPerPixel;
    if (offset === 0 || count === 0) {
      // A sparse block (GDAL SPARSE_OK): every pixel is the nodata value, or 0 without one.
      const fill = new Float64Array(t.blockWidth * rows * spp);
      fill.fill(t.nodata ?? 0);
      return fill;
    }
    if (count > this.o.maxBlockBytes) throw formatError(`block ${index} claims ${count} bytes`);
    this.stats.blockFetches++;
    const raw = await fetch(offset, offset + count - 1);
    if (raw.length !== count) throw formatError(`block ${index}: got ${raw.length} of ${count} bytes (truncated)`);
    return decodeBlock(t, raw, rows);
  }

  /**
   * The pixels of window `w` (first band) of a parsed file: only the blocks covering it (and
   * those of the file's internal mask, when it has one) are fetched, in parallel; pixels outside
   * the image are PIXEL_OUTSIDE, pixels the mask excludes PIXEL_NODATA.
   */
  async window(h: CogHeader, w: PixelWindow, epsg: number, o: CogReadOptions = {}, url = h.url): Promise<WindowRead> {
    checkWindow(w);
    // A compression or sample type this reader cannot decode is refused before any block is
    // fetched (a `format` error naming it: source_format_mismatch for the connectors).
    checkDecodable(h.tiff);
    const mask = h.tiff.mask;
    await prepareDecoder(h.tiff.compression);
    if (mask) await prepareDecoder(mask.compression);
    const indexes = blocksCovering(h.tiff, w);
    const maskIndexes = mask ? blocksCovering(mask, w) : [];
    const [samples, maskSamples] = await Promise.all([Promise.all(indexes.map((i) => this.block(h, url, i, o))), Promise.all(maskIndexes.map((i) => this.block(h, url, i, o, true)))]);
    const masked = mask ? { header: mask, blocks: new Map(maskIndexes.map((i, k) => [i, maskSamples[k]])) } : undefined;
    return assembleWindow(h.tiff, w, new Map(indexes.map((i, k) => [i, samples[k]])), epsg, o.nodata, masked);
  }

  /** The sample (first band) at pixel (col, row) of a parsed file, with the nodata rules applied. */
  async pixel(h: CogHeader, col: number, row: number, epsg: number, o: CogReadOptions = {}, url = h.url): Promise<PointRead> {
    const w = await this.window(h, { col0: col, row0: row, width: 1, height: 1 }, epsg, o, url);
    if (w.mask[0] === PIXEL_OUTSIDE) throw formatError(`pixel ${col},${row} is outside the ${h.tiff.width}x${h.tiff.height} image`);
    if (w.mask[0] !== PIXEL_VALID) return { kind: 'nodata', raw: w.values[0], col, row, epsg };
    return { kind: 'value', value: w.values[0], col, row, epsg };
  }

  /** The header of `url` and the pixel holding the WGS 84 point (lat, lng) in the file's CRS. */
  async locate(url: string, lat: number, lng: number, o: CogReadOptions = {}): Promise<Located> {
    const h = await this.header(url, o);
    if (!h) {
      if (o.missingOk) return { kind: 'missing' };
      throw new UpstreamError('http', `HTTP 404 from ${new URL(url).host}`, 404);
    }
    const geo = h.geo(o.epsgHint);
    return { kind: 'located', header: h, epsg: geo.epsg, pixel: geo.pixelOf(lat, lng) };
  }

  /** The value of the pixel holding the WGS 84 point (lat, lng). */
  async readPoint(url: string, lat: number, lng: number, o: CogReadOptions = {}): Promise<PointRead> {
    const at = await this.locate(url, lat, lng, o);
    if (at.kind === 'missing') return at;
    if (!at.pixel) return { kind: 'outside', epsg: at.epsg };
    return this.pixel(at.header, at.pixel.col, at.pixel.row, at.epsg, o, url);
  }

  /**
   * A `width` × `height` window of the file's own grid (no resampling) whose centre pixel
   * (index width/2, height/2, rounded down) holds the WGS 84 point (lat, lng).
   */
  async readWindowAt(url: string, lat: number, lng: number, width: number, height: number, o: CogReadOptions = {}): Promise<WindowAt> {
    const at = await this.locate(url, lat, lng, o);
    if (at.kind === 'missing') return at;
    if (!at.pixel) return { kind: 'outside', epsg: at.epsg };
    const read = await this.window(at.header, windowAround(at.pixel.col, at.pixel.row, width, height), at.epsg, o, url);
    return { kind: 'window', read, center: at.pixel };
  }

  /** Drops every cached header and block. */
  clear(): void {
    this.headers.clear();
    this.blocks.clear();
  }
}
