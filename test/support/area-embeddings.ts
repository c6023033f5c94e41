/**
 * Helpers of the tessera_field and region_archetype_map tests and bench over the GeoTessera
 * fixture (test/sources/fixtures/raster-scenes.ts): boxes drawn on the fixture tiles' pixel
 * grids, the value the fixture holds at any tile pixel, and the owner tile of a point.
 */
import proj4 from 'proj4';
import { tesseraTile } from '../../src/sources/geotessera.js';
import { TESSERA_FINE, TESSERA_RES, TESSERA_TILES, tesseraFineQ, tesseraFineScale, tesseraQ, tesseraScale } from '../sources/fixtures/raster-scenes.js';

export const utm33 = proj4('EPSG:4326', '+proj=utm +zone=33 +datum=WGS84 +units=m +no_defs');

/** Inside 2026, so the 2025 vintage is a past year whatever the machine's clock says. */
export const TESSERA_NOW = new Date('2026-11-22T12:00:00Z');

/** WGS 84 of the centre of pixel (c, r) of a north-up UTM 33N grid. */
export function centreOf(origin: [number, number], res: number, c: number, r: number): { lat: number; lng: number } {
  const [lng, lat] = utm33.inverse([origin[0] + (c + 0.5) * res, origin[1] - (r + 0.5) * res]);
  return { lat, lng };
}

/** The lat/lng box whose corners are the centres of pixels (c0, r0) and (c1, r1) of a grid. */
export function gridBox(origin: [number, number], res: number, c0: number, r0: number, c1: number, r1: number) {
  const pts = [centreOf(origin, res, c0, r0), centreOf(origin, res, c1, r0), centreOf(origin, res, c0, r1), centreOf(origin, res, c1, r1)];
  return {
    min_lat: Math.min(...pts.map((p) => p.lat)),
    max_lat: Math.max(...pts.map((p) => p.lat)),
    min_lng: Math.min(...pts.map((p) => p.lng)),
    max_lng: Math.max(...pts.map((p) => p.lng)),
  };
}

/** A box on the 10 m fine tile's pixel centres. */
export const fineBox = (c0: number, r0: number, c1: number, r1: number) => gridBox(TESSERA_FINE.origin, TESSERA_FINE.res, c0, r0, c1, r1);

/** The fixture's int8 values and scales (one or 128) at pixel (col, row) of a published tile, or null outside its grid. */
export function fixtureAt(tile: string, col: number, row: number): { q: number[]; s: number[] } | null {
  if (tile === TESSERA_FINE.name) {
    if (col < 0 || row < 0 || col >= TESSERA_FINE.size || row >= TESSERA_FINE.size) return null;
    return { q: Array.from({ length: 128 }, (_, k) => tesseraFineQ(row, col, k)), s: [tesseraFineScale(row, col)] };
  }
  const t = Object.values(TESSERA_TILES).find((x) => x.name === tile);
  if (!t || col < 0 || row < 0 || col >= 42 || row >= 58) return null;
  const q = Array.from({ length: 128 }, (_, k) => tesseraQ(row, col, k));
  const s = t.scales3d ? Array.from({ length: 128 }, (_, k) => tesseraScale(row, col, k, true)) : [tesseraScale(row, col, 0, false)];
  return { q, s };
}

/** The grid (origin, resolution) of a published fixture tile, or null. */
export function fixtureGrid(tile: string): { origin: [number, number]; res: number } | null {
  if (tile === TESSERA_FINE.name) return { origin: TESSERA_FINE.origin, res: TESSERA_FINE.res };
  const t = Object.values(TESSERA_TILES).find((x) => x.name === tile);
  return t ? { origin: t.origin, res: TESSERA_RES } : null;
}

/**
 * What a field pixel centred on UTM 33N (x, y) must hold: the values of the tile named by the
 * centre's 0.1° cell at its pixel holding the centre, or null (no tile, outside its grid, or not
 * embedded: a zero scale).
 */
export function expectedAt(x: number, y: number): { tile: string; q: number[]; s: number[] } | null {
  const [lng, lat] = utm33.inverse([x, y]);
  const tile = tesseraTile(lat, lng);
  const g = fixtureGrid(tile);
  if (!g) return null;
  const col = Math.floor((x - g.origin[0]) / g.res);
  const row = Math.floor((y - g.origin[1]) / -g.res);
  const v = fixtureAt(tile, col, row);
  if (!v || v.s.every((s) => s === 0)) return null;
  return { tile, ...v };
}
