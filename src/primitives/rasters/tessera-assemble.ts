/**
 * Assembling an embedding field from GeoTessera tiles (docs/rasters.md, "tessera_field"): the
 * field's grid is one tile's grid (its CRS and pixel lattice, no resampling), and each field
 * pixel takes its embedding from the tile named by the 0.1° cell that holds the pixel's centre,
 * as a point read of that centre would. When that tile shares the field's lattice (same CRS,
 * pixel size and an origin whole pixels away, as neighbouring tiles of one UTM zone do) the
 * pixel is the tile's own; otherwise it is the tile pixel that holds the centre. The same grid
 * and tiles always give the same bytes: the request and the rebuild of an evicted artifact both
 * come through `assembleField`.
 */
import proj4, { type Converter } from 'proj4';
import { projectPoint } from '../../sources/cog/georef.js';
import { tesseraTile } from '../../sources/geotessera.js';
import { TESSERA_DIM, type TesseraArea, type TesseraTile, type TileWindow } from '../../sources/geotessera-area.js';
import type { Affine } from './geometry.js';
import type { EmbeddingField } from './tessera-format.js';
import type { FieldTileRecord } from './tessera-record.js';

/** The field's grid: a CRS, a GDAL-order geotransform and a size. */
export interface FieldGrid {
  epsg: number;
  geotransform: Affine;
  width: number;
  height: number;
}

export interface Assembled {
  field: EmbeddingField;
  tiles: FieldTileRecord[];
  missing: string[];
  valid: number;
  /** Range requests and bytes read for the windows (headers not counted). */
  requests: number;
  bytes: number;
}

interface ReadOptions {
  deadline?: number;
}

const inverse = new Map<number, Converter>();

/** WGS 84 (lng, lat) of a point of a UTM zone (or EPSG:4326 itself). */
function toLngLat(epsg: number): (x: number, y: number) => [number, number] {
  if (epsg === 4326) return (x, y) => [x, y];
  let c = inverse.get(epsg);
  if (!c) {
    const south = epsg >= 32701;
    c = proj4('EPSG:4326', `+proj=utm +zone=${epsg - (south ? 32700 : 32600)}${south ? ' +south' : ''} +datum=WGS84 +units=m +no_defs`);
    inverse.set(epsg, c);
  }
  const conv = c;
  return (x, y) => conv.inverse([x, y]) as [number, number];
}

/** The tile owning each field pixel (an index into `names`), and the WGS 84 centres when they had to be computed. */
export function owners(g: FieldGrid): { names: string[]; owner: Uint16Array; lat?: Float64Array; lng?: Float64Array } {
  const [x0, a, , y0, , e] = g.geotransform;
  const inv = toLngLat(g.epsg);
  const at = (c: number, r: number) => inv(x0 + (c + 0.5) * a, y0 + (r + 0.5) * e);
  // Latitude grows northward along every column and longitude eastward along every row, so the
  // extremes over the pixel centres lie on the border pixels: one tile for all four means one for every pixel.
  let minLat = Infinity;
  let maxLat = -Infinity;
  let minLng = Infinity;
  let maxLng = -Infinity;
  const see = (c: number, r: number) => {
    const [lng, lat] = at(c, r);
    if (lat < minLat) minLat = lat;
    if (lat > maxLat) maxLat = lat;
    if (lng < minLng) minLng = lng;
    if (lng > maxLng) maxLng = lng;
  };
  for (let c = 0; c < g.width; c++) {
    see(c, 0);
    see(c, g.height - 1);
  }
  for (let r = 0; r < g.height; r++) {
    see(0, r);
    see(g.width - 1, r);
  }
  const one = tesseraTile(minLat, minLng);
  const owner = new Uint16Array(g.width * g.height);
  if (one === tesseraTile(maxLat, maxLng)) return { names: [one], owner };
  const names: string[] = [];
  const index = new Map<string, number>();
  const { lat, lng } = pixelCentres(g);
  for (let p = 0; p < owner.length; p++) {
    const name = tesseraTile(lat[p], lng[p]);
    let i = index.get(name);
    if (i === undefined) {
      i = names.length;
      index.set(name, i);
      names.push(name);
    }
    owner[p] = i;
  }
  return { names, owner, lat, lng };
}

/** WGS 84 latitude and longitude of every pixel centre of `g` (row-major). */
export function pixelCentres(g: FieldGrid): { lat: Float64Array; lng: Float64Array } {
  const [x0, a, , y0, , e] = g.geotransform;
  const inv = toLngLat(g.epsg);
  const lat = new Float64Array(g.width * g.height);
  const lng = new Float64Array(g.width * g.height);
  for (let r = 0, p = 0; r < g.height; r++) {
    for (let c = 0; c < g.width; c++, p++) {
      const [lo, la] = inv(x0 + (c + 0.5) * a, y0 + (r + 0.5) * e);
      lat[p] = la;
      lng[p] = lo;
    }
  }
  return { lat, lng };
}

/** Whether tile grid `t` has the field's pixel lattice: then field pixel (c, r) is tile pixel (c + dc, r + dr). */
function sharedLattice(g: FieldGrid, t: TesseraTile): { dc: number; dr: number } | null {
  const tg = t.geotransform;
  if (t.epsg !== g.epsg || tg[1] !== g.geotransform[1] || tg[5] !== g.geotransform[5]) return null;
  const dc = (g.geotransform[0] - tg[0]) / tg[1];
  const dr = (g.geotransform[3] - tg[3]) / tg[5];
  return Number.isInteger(dc) && Number.isInteger(dr) ? { dc, dr } : null;
}

/**
 * The field over `g`: owners per pixel, the tiles' windows read, each pixel's values copied.
 * `tileOf` gives a tile's checked headers, or null when it is not published; `expected`, on a
 * rebuild, is the windows the record pins (a difference means the upstream changed).
 */
export async function assembleField(area: TesseraArea, g: FieldGrid, tileOf: (name: string) => Promise<TesseraTile | null>, o: ReadOptions = {}): Promise<Assembled> {
  const { names, owner, lat, lng } = owners(g);
  const tiles = await Promise.all(names.map((n) => tileOf(n)));
  const n = g.width * g.height;
  const [x0, a, , y0, , e] = g.geotransform;
  // Source pixel (flat index into the tile) of every field pixel, −1 when outside the tile's grid.
  const src = new Int32Array(n).fill(-1);
  const windows: Array<TileWindow | null> = tiles.map(() => null);
  const counts = tiles.map(() => 0);
  const lattices = tiles.map((t) => (t ? sharedLattice(g, t) : null));
  for (let r = 0, p = 0; r < g.height; r++) {
    for (let c = 0; c < g.width; c++, p++) {
      const i = owner[p];
      const t = tiles[i];
      if (!t) continue;
      let col: number;
      let row: number;
      const shared = lattices[i];
      if (shared) {
        col = c + shared.dc;
        row = r + shared.dr;
      } else {
        const tg = t.geotransform;
        let x = x0 + (c + 0.5) * a;
        let y = y0 + (r + 0.5) * e;
        if (t.epsg !== g.epsg) {
          const [lo, la] = lat && lng ? [lng[p], lat[p]] : toLngLat(g.epsg)(x, y);
          [x, y] = projectPoint(t.epsg, la, lo);
        }
        col = Math.floor((x - tg[0]) / tg[1]);
        row = Math.floor((y - tg[3]) / tg[5]);
      }
      if (col < 0 || row < 0 || col >= t.width || row >= t.height) continue;
      src[p] = row * t.width + col;
      counts[i]++;
      const w = windows[i];
      if (!w) windows[i] = { col0: col, row0: row, width: 1, height: 1 };
      else {
        if (col < w.col0) {
          w.width += w.col0 - col;
          w.col0 = col;
        } else if (col >= w.col0 + w.width) w.width = col - w.col0 + 1;
        if (row < w.row0) {
          w.height += w.row0 - row;
          w.row0 = row;
        } else if (row >= w.row0 + w.height) w.height = row - w.row0 + 1;
      }
    }
  }
  const reads = await Promise.all(tiles.map((t, i) => (t && windows[i] ? area.read(t, windows[i]!, o) : Promise.resolve(null))));
  const S = tiles.some((t, i) => t && windows[i] && t.scalesPerPixel !== 1) ? TESSERA_DIM : 1;
  const q = new Int8Array(n * TESSERA_DIM);
  const s = new Float32Array(n * S).fill(Number.NaN);
  let valid = 0;
  for (let p = 0; p < n; p++) {
    const i = owner[p];
    const t = tiles[i];
    const got = reads[i];
    if (!t || !got || src[p] < 0) continue;
    const w = windows[i]!;
    const k = (Math.floor(src[p] / t.width) - w.row0) * w.width + ((src[p] % t.width) - w.col0);
    const St = t.scalesPerPixel;
    // A zero (or non-finite) scale marks a pixel the model did not embed, as for the point reads.
    let zero = true;
    let finite = true;
    for (let j = 0; j < St; j++) {
      const v = got.s[k * St + j];
      if (!Number.isFinite(v)) finite = false;
      if (v !== 0) zero = false;
    }
    if (!finite || zero) continue;
    q.set(got.q.subarray(k * TESSERA_DIM, (k + 1) * TESSERA_DIM), p * TESSERA_DIM);
    if (St === S) s.set(got.s.subarray(k * St, (k + 1) * St), p * S);
    else s.fill(got.s[k], p * S, (p + 1) * S);
    valid++;
  }
  const records: FieldTileRecord[] = [];
  const missing: string[] = [];
  tiles.forEach((t, i) => {
    if (!t) {
      missing.push(names[i]);
      return;
    }
    const w = windows[i];
    if (!w) return;
    records.push({
      tile: t.tile,
      embeddings: t.hrefs.embeddings,
      scales: t.hrefs.scales,
      landmask: t.hrefs.landmask,
      shape: [t.height, t.width],
      scales_per_pixel: t.scalesPerPixel,
      epsg: t.epsg,
      geotransform: t.geotransform,
      window: { ...w },
      pixels: counts[i],
      lattice: lattices[i] ? 'shared' : 'nearest',
    });
  });
  records.sort((x, y) => (x.tile < y.tile ? -1 : x.tile > y.tile ? 1 : 0));
  missing.sort();
  const stats = reads.reduce((acc, r) => ({ requests: acc.requests + (r?.requests ?? 0), bytes: acc.bytes + (r?.bytes ?? 0) }), { requests: 0, bytes: 0 });
  return {
    field: { width: g.width, height: g.height, epsg: g.epsg, geotransform: g.geotransform, channels: TESSERA_DIM, scalesPerPixel: S, q, s },
    tiles: records,
    missing,
    valid,
    ...stats,
  };
}
