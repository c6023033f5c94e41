/**
 * GeoTessera over an area (tessera_field, docs/rasters.md): a tile's three files (the int8
 * embeddings `.npy`, its scales `.npy` and the landmask GeoTIFF that georeferences both), checked
 * as the point reads check them, and the int8 values and scales of a pixel window of a tile,
 * read by byte range. A window's rows are contiguous runs of the (H, W, 128) C-order array, so
 * neighbouring runs are merged into one request while the gap between them is small, and a few
 * requests run at once; nothing else of the file is read.
 */
import { Pool } from '../lib/pool.js';
import type { UpstreamClient } from './http.js';
import type { CogReader } from './cog/reader.js';
import type { NpyHeader, NpyReader } from './cog/npy.js';
import { formatError } from './cog/tiff.js';

/** Channels of a GeoTessera embedding. */
export const TESSERA_DIM = 128;
/** Requests one window read keeps in flight. */
const READS_AT_ONCE = 8;
/** Two runs are read in one request when at most this many bytes lie between them … */
const MERGE_GAP_BYTES = 256 * 1024;
/** … and the merged request stays within this size. */
const MERGE_SPAN_BYTES = 4 * 1024 * 1024;

/** The three files of a tile and year. */
export interface TesseraHrefs {
  embeddings: string;
  scales: string;
  landmask: string;
}

/** A published tile, checked: its array shapes agree with its landmask grid. */
export interface TesseraTile {
  tile: string;
  year: number;
  hrefs: TesseraHrefs;
  width: number;
  height: number;
  /** 1 for (H, W) scales, 128 for (H, W, 128) scales. */
  scalesPerPixel: 1 | 128;
  epsg: number;
  /** GDAL order: [x of the top-left corner, pixel width, 0, y of the top-left corner, 0, −pixel height]. */
  geotransform: [number, number, number, number, number, number];
  emb: NpyHeader;
  sc: NpyHeader;
}

/** A window of a tile in its own grid. */
export interface TileWindow {
  col0: number;
  row0: number;
  width: number;
  height: number;
}

/** The source values of a window: int8 (height, width, 128) and float32 scales (height, width, S), C order. */
export interface TileSamples {
  q: Int8Array;
  s: Float32Array;
  /** Requests made and bytes received. */
  requests: number;
  bytes: number;
}

interface ReadOptions {
  deadline?: number;
  signal?: AbortSignal;
}

/** Byte runs [start, end) merged into inclusive request ranges. */
export function mergeRuns(runs: ReadonlyArray<[number, number]>, gap = MERGE_GAP_BYTES, span = MERGE_SPAN_BYTES): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const [a, b] of runs) {
    const last = out[out.length - 1];
    if (last && a - (last[1] + 1) <= gap && b - last[0] <= span) last[1] = b - 1;
    else out.push([a, b - 1]);
  }
  return out;
}

/** Area reads of GeoTessera tiles, sharing the connector's readers and caches. */
export class TesseraArea {
  private readonly pool = new Pool(READS_AT_ONCE);

  constructor(
    private readonly client: UpstreamClient,
    readonly base: string,
    private readonly npy: NpyReader,
    private readonly cog: CogReader,
  ) {}

  /** The files of `tile` (grid_{lon}_{lat}) for `year` under the configured base. */
  hrefs(tile: string, year: number): TesseraHrefs {
    const dir = `${this.base}/v1/global_0.1_degree_representation/${year}/${tile}`;
    return { embeddings: `${dir}/${tile}.npy`, scales: `${dir}/${tile}_scales.npy`, landmask: `${this.base}/v1/global_0.1_degree_tiff_all/${tile}.tiff` };
  }

  /** The tile's headers, checked; null when its embeddings are not published (404). */
  async tile(tile: string, year: number, hrefs: TesseraHrefs, o: ReadOptions = {}): Promise<TesseraTile | null> {
    const ref = `${year}/${tile}`;
    const [emb, landmask, sc] = await Promise.all([this.npy.header(hrefs.embeddings, o), this.cog.header(hrefs.landmask, o), this.npy.header(hrefs.scales, o)]);
    if (!emb) return null;
    if (!landmask) throw formatError(`tile ${tile} has embeddings but no landmask GeoTIFF to georeference them`);
    const [h, w, d] = emb.shape;
    if (emb.shape.length !== 3 || d !== TESSERA_DIM || emb.kind !== 'i' || emb.itemSize !== 1)
      throw formatError(`${ref}.npy is ${emb.descr} (${emb.shape.join(', ')}), not int8 (H, W, ${TESSERA_DIM})`);
    if (h !== landmask.tiff.height || w !== landmask.tiff.width) throw formatError(`${ref}.npy is ${h}×${w} but its landmask grid is ${landmask.tiff.height}×${landmask.tiff.width}`);
    if (!sc) throw formatError(`tile ${ref} has no scales array`);
    const sh = sc.shape;
    const perPixel = sh.length === 2;
    if (sc.kind !== 'f' || sh[0] !== h || sh[1] !== w || !(perPixel || (sh.length === 3 && sh[2] === TESSERA_DIM))) {
      throw formatError(`${ref}_scales.npy is ${sc.descr} (${sh.join(', ')}), not float (H, W) or (H, W, ${TESSERA_DIM})`);
    }
    const geo = landmask.geo();
    const [a, b, c, dd, e, f] = geo.transform;
    if (b !== 0 || dd !== 0 || !(a > 0) || !(e < 0)) throw formatError(`the landmask grid of ${ref} is not north-up (transform ${geo.transform.join(', ')})`);
    return { tile, year, hrefs, width: w, height: h, scalesPerPixel: perPixel ? 1 : TESSERA_DIM, epsg: geo.epsg, geotransform: [c, a, 0, f, 0, e], emb, sc };
  }

  /** The int8 values and scales of `win` (inside the tile), by range requests of the rows' runs. */
  async read(t: TesseraTile, win: TileWindow, o: ReadOptions = {}): Promise<TileSamples> {
    if (win.col0 < 0 || win.row0 < 0 || win.width < 1 || win.height < 1 || win.col0 + win.width > t.width || win.row0 + win.height > t.height) {
      throw new RangeError(`window ${JSON.stringify(win)} is outside tile ${t.tile} (${t.width} × ${t.height})`);
    }
    const q = new Int8Array(win.width * win.height * TESSERA_DIM);
    const S = t.scalesPerPixel;
    const s = new Float32Array(win.width * win.height * S);
    const stats = { requests: 0, bytes: 0 };
    const embRow = win.width * TESSERA_DIM;
    await Promise.all([
      this.readRuns(t.hrefs.embeddings, t.emb, t.width * TESSERA_DIM, win, TESSERA_DIM, o, stats, (row, bytes) => {
        q.set(new Int8Array(bytes.buffer, bytes.byteOffset, embRow), row * embRow);
      }),
      this.readRuns(t.hrefs.scales, t.sc, t.width * S, win, S, o, stats, (row, bytes) => {
        const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        const n = win.width * S;
        const size = t.sc.itemSize;
        for (let i = 0; i < n; i++) s[row * n + i] = size === 4 ? dv.getFloat32(i * 4, t.sc.littleEndian) : dv.getFloat64(i * 8, t.sc.littleEndian);
      }),
    ]);
    return { q, s, ...stats };
  }

  /** Reads the window's rows of one array (`rowItems` items per tile row, `per` items per pixel), handing each row's bytes to `put`. */
  private async readRuns(
    url: string,
    h: NpyHeader,
    rowItems: number,
    win: TileWindow,
    per: number,
    o: ReadOptions,
    stats: { requests: number; bytes: number },
    put: (row: number, bytes: Uint8Array) => void,
  ): Promise<void> {
    const size = h.itemSize;
    const runs: Array<[number, number]> = [];
    for (let r = 0; r < win.height; r++) {
      const start = h.dataOffset + ((win.row0 + r) * rowItems + win.col0 * per) * size;
      runs.push([start, start + win.width * per * size]);
    }
    const ranges = mergeRuns(runs);
    await Promise.all(
      ranges.map(([a, b]) =>
        this.pool.run(async () => {
          const res = await this.client.request(url, { range: [a, b], deadline: o.deadline, signal: o.signal, acceptStatus: [416] });
          if (res.status === 416) throw formatError(`${new URL(url).pathname} ends before byte ${a} (truncated)`);
          let body = res.body;
          if (res.status === 200 && body.length > b - a + 1) body = body.subarray(a, b + 1);
          else if (res.status === 200 && a > 0) throw formatError(`server ignored the Range request for bytes ${a}..${b}`);
          if (body.length < b - a + 1) throw formatError(`${new URL(url).pathname}: got ${body.length} of ${b - a + 1} bytes (truncated)`);
          stats.requests++;
          stats.bytes += body.length;
          for (let r = 0; r < runs.length; r++) {
            const [ra, rb] = runs[r];
            if (ra >= a && rb - 1 <= b) put(r, body.subarray(ra - a, rb - a));
          }
        }),
      ),
    );
  }
}
