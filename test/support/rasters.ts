/**
 * Helpers of the band_raster tests and bench over the Sentinel-2 fixture (test/sources/fixtures):
 * boxes drawn on the fixture's 10 m pixel grid, the fixture's expected reflectance, the bytes the
 * fixture server served per file, and the COG blocks a window needs.
 */
import proj4 from 'proj4';
import { ByteSource, parseTiff } from '../../src/sources/cog/tiff.js';
import type { RasterUpstreams } from '../sources/fixtures/raster-upstreams.js';
import { S2_GRID, S2_ITEMS, s2Dn, s2PointAt } from '../sources/fixtures/raster-scenes.js';

export const utm33 = proj4('EPSG:4326', '+proj=utm +zone=33 +datum=WGS84 +units=m +no_defs');

/** Inside the fixture's tslot 692 (2026-11-03 to 2026-12-03), whatever the machine's clock says. */
export const RASTER_NOW = new Date('2026-11-22T12:00:00Z');

/** The lat/lng box whose corners are the centres of 10 m pixels (c0, r0) and (c1, r1) of the fixture grid. */
export function pixelBox(c0: number, r0: number, c1: number, r1: number) {
  const pts = [s2PointAt(c0, r0), s2PointAt(c1, r0), s2PointAt(c0, r1), s2PointAt(c1, r1)];
  return {
    min_lat: Math.min(...pts.map((p) => p.lat)),
    max_lat: Math.max(...pts.map((p) => p.lat)),
    min_lng: Math.min(...pts.map((p) => p.lng)),
    max_lng: Math.max(...pts.map((p) => p.lng)),
  };
}

/** The fixture's files of item `idx` (by S2_ITEMS index). */
export function s2AssetPath(idx: number, file: string): string {
  const def = S2_ITEMS[idx];
  const d = def.datetime.slice(0, 10).split('-');
  return `/sentinel-cogs/sentinel-s2-l2a-cogs/33/T/WL/${d[0]}/${Number(d[1])}/${def.id}/${file}.tif`;
}

/** Reflectance band_raster must give for a DN of item `idx` (float32 of DN × scale + offset). */
export function expectedReflectance(idx: number, asset: string, col: number, row: number, offset: number): number {
  return Math.fround(s2Dn(idx, asset, col, row) * 0.0001 + offset);
}

/** Inclusive byte ranges the fixture served for `path` since the last reset. */
export function servedRanges(up: RasterUpstreams, path: string): Array<[number, number]> {
  return up.requests
    .filter((r) => r.path === path && r.method === 'GET')
    .map((r) => {
      const m = /^bytes=(\d+)-(\d*)$/.exec(r.range ?? '');
      const size = up.files.get(path)!.length;
      if (!m) return [0, size - 1];
      return [Number(m[1]), Math.min(size - 1, m[2] === '' ? size - 1 : Number(m[2]))];
    });
}

/** Bytes the fixture served for `path` since the last reset. */
export function servedBytes(up: RasterUpstreams, path: string): number {
  return servedRanges(up, path).reduce((n, [a, b]) => n + b - a + 1, 0);
}

/** The byte ranges of the full-resolution blocks of the COG at `path` holding any pixel of the window. */
export async function blockRanges(up: RasterUpstreams, path: string, w: { col0: number; row0: number; width: number; height: number }): Promise<Array<[number, number]>> {
  const file = up.files.get(path)!;
  const fetch = async (s: number, e: number) => file.subarray(s, e + 1);
  const t = await parseTiff(new ByteSource(file.subarray(0, 16_384)), fetch);
  const out: Array<[number, number]> = [];
  for (let by = Math.floor(Math.max(0, w.row0) / t.blockHeight); by <= Math.floor((Math.min(t.height, w.row0 + w.height) - 1) / t.blockHeight); by++) {
    for (let bx = Math.floor(Math.max(0, w.col0) / t.blockWidth); bx <= Math.floor((Math.min(t.width, w.col0 + w.width) - 1) / t.blockWidth); bx++) {
      const i = by * t.blocksAcross + bx;
      const off = await t.offsets.get(i, t.source, fetch);
      const n = await t.byteCounts.get(i, t.source, fetch);
      out.push([off, off + n - 1]);
    }
  }
  return out;
}

/** The (col, row) of the fixture's 10 m (or `res`) grid holding the WGS 84 point. */
export function fixturePixel(lat: number, lng: number, res = 10): [number, number] {
  const [x, y] = utm33.forward([lng, lat]);
  return [Math.floor((x - S2_GRID.origin[0]) / res), Math.floor((S2_GRID.origin[1] - y) / res)];
}
