/**
 * Countries: Natural Earth 1:50m admin-0 polygons (world-atlas, public domain) joined to ISO
 * 3166-1 codes and names in many languages (i18n-iso-countries). Each country gets its main
 * territory box (overseas parts far from the mainland cluster are left out of the box, never of
 * the polygon), a representative point inside the polygon and a population proxy.
 */
import { createRequire } from 'node:module';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import type { Geometry } from 'geojson';
import { coverIntervals, pointInPolygon, samplePoints, wrapLng, type Box } from './geometry.js';
import type { GeoJsonPolygon } from './types.js';

const require = createRequire(import.meta.url);

/** Languages whose country names are indexed and returned as localized_names. */
export const COUNTRY_LANGUAGES = ['en', 'fr', 'de', 'es', 'it', 'pt', 'nl', 'sv', 'pl', 'tr', 'ru', 'uk', 'el', 'he', 'ar', 'fa', 'hi', 'zh', 'ja', 'ko', 'th', 'vi', 'id'] as const;

export interface Country {
  alpha2: string;
  alpha3: string;
  numeric: string;
  /** Natural Earth short name. */
  neName: string;
  /** Common English name. */
  name: string;
  localized: Record<string, string>;
  /** Every name and alias (all languages) for the index. */
  names: string[];
  /** Boundary at 1:50m (Natural Earth via world-atlas), planar rings. */
  geometry: GeoJsonPolygon;
  /** The boundary served in responses: 1:110m where Natural Earth has it (tens of KB, not hundreds), else 1:50m. */
  outline: GeoJsonPolygon;
  /** The same rings made continuous across ±180 (longitudes may leave [-180, 180]) for point tests. */
  pip: GeoJsonPolygon;
  /** Box of the main territory (crosses the antimeridian when min_lng > max_lng). */
  box: Box;
  /** Largest part (its centroid seeds the representative point). */
  main: Part;
  cluster: Part[];
}

interface I18n {
  registerLocale(data: unknown): void;
  numericToAlpha2(n: string | number): string | undefined;
  alpha2ToAlpha3(a: string): string | undefined;
  getName(code: string, lang: string, opts?: { select: 'official' | 'alias' | 'all' }): string | string[] | undefined;
}

/** One polygon of a country, with its box, planar area and centroid (continuous longitudes). */
export interface Part {
  rings: number[][][];
  box: Box;
  area: number;
  cx: number;
  cy: number;
}

/** A ring made continuous: a jump of more than 180° between vertices is a ±180 seam, not an edge. */
function unwrapRing(ring: number[][]): number[][] {
  const out: number[][] = [];
  let prev = ring[0][0];
  for (const [x0, y] of ring) {
    let x = x0;
    while (x - prev > 180) x -= 360;
    while (x - prev < -180) x += 360;
    out.push([x, y]);
    prev = x;
  }
  return out;
}

/**
 * Natural Earth draws Antarctica spherically: a degenerate outer ring along -89.999° and the
 * coastline as its "hole". In plate carrée that is the coast from one seam to the other, closed
 * along the pole edge: rebuilt here so planar point tests work.
 */
function planarCap(rings: number[][][]): number[][][] {
  if (rings.length < 2 || !rings[0].every((p) => Math.abs(p[1]) > 89.9)) return rings;
  const coast = rings[1].slice(0, -1);
  const seam = coast.findIndex((p, i) => Math.abs(coast[(i + 1) % coast.length][0] - p[0]) > 180);
  if (seam < 0) return rings;
  const run = [...coast.slice(seam + 1), ...coast.slice(0, seam + 1)];
  const first = run[0];
  const last = run[run.length - 1];
  const pole = Math.sign(rings[0][0][1]) * 90;
  const eLast = Math.sign(last[0]) * 180;
  const eFirst = Math.sign(first[0]) * 180;
  return [[...run, [eLast, last[1]], [eLast, pole], [eFirst, pole], [eFirst, first[1]], first]];
}

function partOf(rawRings: number[][][]): Part {
  let rings = rawRings.map(unwrapRing);
  // A ring that winds all the way round (Antarctica's cap, closed along -90°) is already a valid
  // plate-carrée polygon in its published form; unwrapping would open it.
  const xs = rings[0].map((p) => p[0]);
  if (Math.max(...xs) - Math.min(...xs) >= 359) rings = rawRings;
  const outer = rings[0];
  let minLat = Infinity,
    maxLat = -Infinity,
    minLng = Infinity,
    maxLng = -Infinity;
  let a2 = 0,
    cx = 0,
    cy = 0;
  for (let i = 0, j = outer.length - 1; i < outer.length; j = i++) {
    const [x0, y0] = outer[j];
    const [x1, y1] = outer[i];
    const cross = x0 * y1 - x1 * y0;
    a2 += cross;
    cx += (x0 + x1) * cross;
    cy += (y0 + y1) * cross;
    if (y1 < minLat) minLat = y1;
    if (y1 > maxLat) maxLat = y1;
    if (x1 < minLng) minLng = x1;
    if (x1 > maxLng) maxLng = x1;
  }
  const area = Math.abs(a2 / 2) * Math.cos((((minLat + maxLat) / 2) * Math.PI) / 180);
  const c = a2 !== 0 ? { x: cx / (3 * a2), y: cy / (3 * a2) } : { x: (minLng + maxLng) / 2, y: (minLat + maxLat) / 2 };
  return { rings, box: { min_lat: minLat, min_lng: minLng, max_lat: maxLat, max_lng: maxLng }, area, cx: c.x, cy: c.y };
}

/** Degrees between two part boxes (0 when they touch), allowing for the ±180 seam. */
function gapDeg(a: Box, b: Box): number {
  const dLat = Math.max(0, a.min_lat - b.max_lat, b.min_lat - a.max_lat);
  let dLng = Infinity;
  for (const shift of [-360, 0, 360]) {
    dLng = Math.min(dLng, Math.max(0, a.min_lng - (b.max_lng + shift), b.min_lng + shift - a.max_lng));
  }
  const cos = Math.cos((((a.min_lat + a.max_lat) / 2) * Math.PI) / 180);
  return Math.hypot(dLat, dLng * cos);
}

/**
 * The main territory: the largest part plus every part within `reachDeg` of a part already in
 * (islands off a coast, the Chukotka piece east of 180°), so far overseas territories stay out.
 */
function mainCluster(parts: Part[], reachDeg = 3): Part[] {
  const sorted = [...parts].sort((p, q) => q.area - p.area);
  const inCluster = [sorted[0]];
  const rest = sorted.slice(1);
  let grew = true;
  while (grew) {
    grew = false;
    for (let i = rest.length - 1; i >= 0; i--) {
      if (inCluster.some((p) => gapDeg(p.box, rest[i].box) <= reachDeg)) {
        inCluster.push(rest[i]);
        rest.splice(i, 1);
        grew = true;
      }
    }
  }
  return inCluster;
}

/** Point-in-country on the continuous rings, trying the point's longitude and its ±360 twins. */
export function inCountry(c: Country, lat: number, lng: number): boolean {
  return pointInPolygon(c.pip, lat, lng) || pointInPolygon(c.pip, lat, lng + 360) || pointInPolygon(c.pip, lat, lng - 360);
}

const points = new WeakMap<Country, { lat: number; lng: number }>();

/**
 * Representative point, computed once on first use: the area-weighted centroid of the main
 * territory when it lies inside, else the inside point of the largest part nearest its centroid.
 */
export function countryPoint(c: Country): { lat: number; lng: number } {
  const hit = points.get(c);
  if (hit) return hit;
  let sx = 0,
    sy = 0,
    sa = 0;
  const ref = c.main.cx;
  for (const p of c.cluster) {
    let x = p.cx;
    while (x - ref > 180) x -= 360;
    while (x - ref < -180) x += 360;
    sx += x * p.area;
    sy += p.cy * p.area;
    sa += p.area;
  }
  let pt = { lat: sy / sa, lng: wrapLng(sx / sa) };
  if (!inCountry(c, pt.lat, pt.lng)) {
    const part: GeoJsonPolygon = { type: 'Polygon', coordinates: c.main.rings };
    const inside = samplePoints(c.main.box, `country:${c.alpha2}`, 64, (a, b) => pointInPolygon(part, a, b) || pointInPolygon(part, a, b + 360) || pointInPolygon(part, a, b - 360));
    let bestD = Infinity;
    const target = { lat: c.main.cy, lng: c.main.cx };
    pt = { lat: target.lat, lng: wrapLng(target.lng) };
    for (const s of inside) {
      const d = (s.lat - target.lat) ** 2 + (s.lng - target.lng) ** 2;
      if (d < bestD) {
        bestD = d;
        pt = { lat: s.lat, lng: wrapLng(s.lng) };
      }
    }
  }
  points.set(c, pt);
  return pt;
}

let i18nCache: I18n | undefined;

/** i18n-iso-countries with the indexed languages registered. */
export function countryNames(): I18n {
  if (i18nCache) return i18nCache;
  const lib = require('i18n-iso-countries') as I18n;
  for (const lang of COUNTRY_LANGUAGES) lib.registerLocale(require(`i18n-iso-countries/langs/${lang}.json`));
  i18nCache = lib;
  return lib;
}

/** Load every Natural Earth country that has an ISO 3166-1 code (Kosovo as XK). */
type CountryFeatures = { features: Array<{ id?: string | number; properties: { name: string }; geometry: Geometry | null }> };

function features(file: string): CountryFeatures {
  const topo = require(`world-atlas/${file}`) as Topology<{ countries: GeometryCollection<{ name: string }> }>;
  return feature(topo, topo.objects.countries) as unknown as CountryFeatures;
}

const round4 = (rings: number[][][]) => rings.map((r) => r.map(([x, y]) => [Math.round(x * 1e4) / 1e4, Math.round(y * 1e4) / 1e4]));

function planarGeometry(g: GeoJsonPolygon, round = false): GeoJsonPolygon {
  const polys = (g.type === 'Polygon' ? [g.coordinates] : g.coordinates)
    .filter((r) => r.length > 0 && r[0].length >= 4)
    .map(planarCap)
    .map((r) => (round ? round4(r) : r));
  return polys.length === 1 ? { type: 'Polygon', coordinates: polys[0] } : { type: 'MultiPolygon', coordinates: polys };
}

export function loadCountries(): Country[] {
  const i18n = countryNames();
  const fc = features('countries-50m.json');
  const coarse = new Map<string, GeoJsonPolygon>();
  for (const f of features('countries-110m.json').features) {
    if (f.id !== undefined && f.geometry && (f.geometry.type === 'Polygon' || f.geometry.type === 'MultiPolygon'))
      coarse.set(String(f.id), planarGeometry(f.geometry as unknown as GeoJsonPolygon, true));
  }
  const out: Country[] = [];
  for (const f of fc.features) {
    if (!f.geometry || (f.geometry.type !== 'Polygon' && f.geometry.type !== 'MultiPolygon')) continue;
    const neName = f.properties.name;
    // Natural Earth leaves Kosovo without a numeric code; XK is its user-assigned code in common use.
    const alpha2 = f.id !== undefined ? i18n.numericToAlpha2(String(f.id)) : neName === 'Kosovo' ? 'XK' : undefined;
    if (!alpha2) continue;
    const published = f.geometry as unknown as GeoJsonPolygon;
    const polys = (published.type === 'Polygon' ? [published.coordinates] : published.coordinates).filter((r) => r.length > 0 && r[0].length >= 4).map(planarCap);
    // Served as planar rings (Antarctica's spherical cap rebuilt), exactly what the point tests use.
    const geometry: GeoJsonPolygon = polys.length === 1 ? { type: 'Polygon', coordinates: polys[0] } : { type: 'MultiPolygon', coordinates: polys };
    const parts = polys.map(partOf);
    if (parts.length === 0) continue;
    const cluster = mainCluster(parts);
    const minLat = Math.min(...cluster.map((p) => p.box.min_lat));
    const maxLat = Math.max(...cluster.map((p) => p.box.max_lat));
    const box = coverIntervals(
      cluster.flatMap((p) => seamIntervals(p.box.min_lng, p.box.max_lng)),
      minLat,
      maxLat,
    );
    const localized: Record<string, string> = {};
    const names = new Set<string>([neName]);
    for (const lang of COUNTRY_LANGUAGES) {
      const all = i18n.getName(alpha2, lang, { select: 'all' });
      const list = Array.isArray(all) ? all : all ? [all] : [];
      if (list.length > 0) localized[lang] = list[0];
      for (const n of list) names.add(n);
    }
    const name = localized.en ?? neName;
    const alpha3 = i18n.alpha2ToAlpha3(alpha2) ?? (alpha2 === 'XK' ? 'XKX' : alpha2);
    const pip: GeoJsonPolygon = { type: 'MultiPolygon', coordinates: parts.map((p) => p.rings) };
    const main = cluster.reduce((p, q) => (q.area > p.area ? q : p));
    const outline = (f.id !== undefined && coarse.get(String(f.id))) || planarGeometry(published, true);
    out.push({ alpha2, alpha3, numeric: String(f.id ?? ''), neName, name, localized, names: [...names], geometry, outline, pip, box, main, cluster });
  }
  return out;
}

/** A continuous longitude interval as intervals inside [-180, 180]. */
function seamIntervals(a: number, b: number): Array<readonly [number, number]> {
  if (b - a >= 360) return [[-180, 180]];
  const shift = a < -180 ? 360 : a > 180 ? -360 : 0;
  const [x, y] = [a + shift, b + shift];
  if (y > 180)
    return [
      [x, 180],
      [-180, y - 360],
    ];
  return [[x, y]];
}

/** The country whose polygon contains a point (box pre-filter first), if any. */
export function countryAt(countries: readonly Country[], lat: number, lng: number): Country | undefined {
  for (const c of countries) if (quickFullBox(c, lat, lng) && inCountry(c, lat, lng)) return c;
  return undefined;
}

const fullBoxes = new WeakMap<Country, Box>();
function quickFullBox(c: Country, lat: number, lng: number): boolean {
  let b = fullBoxes.get(c);
  if (!b) {
    let minLat = 90,
      maxLat = -90,
      minLng = Infinity,
      maxLng = -Infinity;
    for (const rings of (c.pip as { coordinates: number[][][][] }).coordinates)
      for (const [x, y] of rings[0]) {
        if (y < minLat) minLat = y;
        if (y > maxLat) maxLat = y;
        if (x < minLng) minLng = x;
        if (x > maxLng) maxLng = x;
      }
    b = { min_lat: minLat, min_lng: minLng, max_lat: maxLat, max_lng: maxLng };
    fullBoxes.set(c, b);
  }
  if (lat < b.min_lat || lat > b.max_lat) return false;
  return [lng, lng + 360, lng - 360].some((x) => x >= b!.min_lng && x <= b!.max_lng);
}
