/**
 * Georeferencing of a GeoTIFF (GeoTIFF 1.1: ModelTiepoint + ModelPixelScale or
 * ModelTransformation; GeoKeys for the CRS) and the lookup of the pixel holding a WGS 84
 * point. Supported CRSs: EPSG:4326 and WGS 84 / UTM (EPSG:326zz north, 327zz south), the
 * latter projected with proj4.
 */
import proj4, { type Converter } from 'proj4';
import { formatError, type TiffHeader } from './tiff.js';

const GeoKey = {
  GTModelType: 1024,
  GTRasterType: 1025,
  GeographicType: 2048,
  GeogGeodeticDatum: 2050,
  ProjectedCSType: 3072,
} as const;

const USER_DEFINED = 32767;

/** The pixel grid of an image in a CRS: the affine map and what it needs to project a point. */
export interface GeoRef {
  epsg: number;
  /** Pixel column and row (integers) holding the point, or null when it is outside the image. */
  pixelOf(lat: number, lng: number): { col: number; row: number } | null;
  /** Projected (or geographic) coordinates of the point in the image CRS: [x, y]. */
  project(lat: number, lng: number): [number, number];
  /** The affine map pixel → CRS as [a, b, c, d, e, f]: x = a·col + b·row + c, y = d·col + e·row + f (pixel corner at 0, 0). */
  transform: readonly [number, number, number, number, number, number];
}

const converters = new Map<number, Converter>();

/** Whether `epsg` is WGS 84 geographic or a WGS 84 / UTM zone. */
export function isSupportedEpsg(epsg: number): boolean {
  return epsg === 4326 || (epsg >= 32601 && epsg <= 32660) || (epsg >= 32701 && epsg <= 32760);
}

/** The proj4 converter from WGS 84 lng/lat to a UTM zone's metres (cached per zone). */
function utm(epsg: number): Converter {
  let c = converters.get(epsg);
  if (!c) {
    const south = epsg >= 32701;
    const zone = epsg - (south ? 32700 : 32600);
    c = proj4('EPSG:4326', `+proj=utm +zone=${zone}${south ? ' +south' : ''} +datum=WGS84 +units=m +no_defs`);
    converters.set(epsg, c);
  }
  return c;
}

/** [x, y] of a WGS 84 point in `epsg` (lng/lat itself for EPSG:4326). */
export function projectPoint(epsg: number, lat: number, lng: number): [number, number] {
  if (epsg === 4326) return [lng, lat];
  if (!isSupportedEpsg(epsg)) throw formatError(`unsupported CRS EPSG:${epsg} (only EPSG:4326 and WGS 84 / UTM are read)`);
  const [x, y] = utm(epsg).forward([lng, lat]);
  return [x, y];
}

/** The EPSG code the GeoKeys declare, or undefined when none (or a user-defined CRS). */
export function epsgOfKeys(keys: ReadonlyMap<number, number | string | number[]>): number | undefined {
  const model = keys.get(GeoKey.GTModelType);
  const projected = keys.get(GeoKey.ProjectedCSType);
  if (typeof projected === 'number' && projected !== USER_DEFINED && projected !== 0 && model !== 2) return projected;
  const geographic = keys.get(GeoKey.GeographicType);
  if (typeof geographic === 'number' && geographic !== USER_DEFINED && geographic !== 0 && model !== 1) return geographic;
  // A user-defined geographic CRS on the WGS 84 datum is EPSG:4326 for a point lookup.
  if (model === 2 && keys.get(GeoKey.GeogGeodeticDatum) === 6326) return 4326;
  return undefined;
}

/**
 * The image's georeferencing. `epsgHint` (for example a STAC item's `proj:epsg`) is used only
 * when the file itself declares no usable CRS.
 */
export function geoRefOf(h: TiffHeader, epsgHint?: number): GeoRef {
  const epsg = epsgOfKeys(h.geoKeys) ?? epsgHint;
  if (epsg === undefined) throw formatError('GeoTIFF declares no CRS (no usable GeoKeys) and none was given');
  if (!isSupportedEpsg(epsg)) throw formatError(`unsupported CRS EPSG:${epsg} (only EPSG:4326 and WGS 84 / UTM are read)`);

  // Affine pixel → model: x = a·col + b·row + c, y = d·col + e·row + f (pixel corner at 0,0).
  let a: number, b: number, c: number, d: number, e: number, f: number;
  const t = h.modelTransformation;
  if (t && t.length >= 16) {
    [a, b, , c, d, e, , f] = t;
  } else {
    const s = h.modelPixelScale;
    const tp = h.modelTiepoint;
    if (!s || s.length < 2 || !tp || tp.length < 6) throw formatError('GeoTIFF has neither ModelTransformation nor ModelTiepoint + ModelPixelScale');
    if (!(s[0] > 0 && s[1] > 0)) throw formatError(`ModelPixelScale ${s[0]},${s[1]} is not positive`);
    const [i, j, , x, y] = tp;
    a = s[0];
    b = 0;
    c = x - i * s[0];
    d = 0;
    e = -s[1];
    f = y + j * s[1];
  }
  // PixelIsPoint: the tie point names the centre of the pixel, so the corner is half a pixel off.
  if (h.geoKeys.get(GeoKey.GTRasterType) === 2) {
    c -= (a + b) / 2;
    f -= (d + e) / 2;
  }
  const det = a * e - b * d;
  if (!Number.isFinite(det) || det === 0) throw formatError('GeoTIFF transform is singular');

  const project = (lat: number, lng: number) => projectPoint(epsg, lat, lng);
  return {
    epsg,
    project,
    transform: [a, b, c, d, e, f],
    pixelOf(lat, lng) {
      const [x, y] = project(lat, lng);
      const dx = x - c;
      const dy = y - f;
      const colF = (e * dx - b * dy) / det;
      const rowF = (a * dy - d * dx) / det;
      const col = Math.floor(colF);
      const row = Math.floor(rowF);
      if (!Number.isFinite(colF) || !Number.isFinite(rowF) || col < 0 || row < 0 || col >= h.width || row >= h.height) return null;
      return { col, row };
    },
  };
}
