/**
 * The two network geocoders of the cascade (docs/locate.md, "The cascade"): Photon
 * (`GET /api/?q=&limit=5`, a GeoJSON FeatureCollection) and Nominatim (`GET /search?q=
 * &format=jsonv2&limit=5&polygon_geojson=1`, a JSON array). Transport is injected (the service's
 * one UpstreamClient), so this file only builds URLs and reads the providers' real shapes.
 */
import type { Box } from './geometry.js';
import type { GeoJsonPolygon, OvertureSubtype } from './types.js';

/** The slice of UpstreamClient the geocoders use. */
export interface JsonFetcher {
  json<T = unknown>(url: string, o?: { deadline?: number; headers?: Record<string, string> }): Promise<{ data: T }>;
}

/** A network answer, normalized across both providers. */
export interface NetPlace {
  source: 'photon' | 'nominatim';
  name: string;
  label: string;
  lat: number;
  lng: number;
  /** OSM key:value (Photon) or category:type (Nominatim). */
  kind: string;
  country?: string;
  box?: Box;
  geojson?: GeoJsonPolygon;
  importance?: number;
  osmId?: string;
  subtype?: OvertureSubtype;
}

/** A reply that does not have the provider's documented shape. */
export class GeocoderFormatError extends Error {
  readonly kind = 'format';
  constructor(message: string) {
    super(message);
    this.name = 'GeocoderFormatError';
  }
}

const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN);
const finiteLatLng = (lat: number, lng: number) => Number.isFinite(lat) && Number.isFinite(lng) && Math.abs(lat) <= 90 && Math.abs(lng) <= 180;

function osmRef(type: unknown, id: unknown): string | undefined {
  if (id === undefined || id === null) return undefined;
  const t = String(type ?? '').toUpperCase();
  const letter = t.startsWith('R') ? 'relation' : t.startsWith('W') ? 'way' : t.startsWith('N') ? 'node' : String(type ?? 'object').toLowerCase();
  return `osm:${letter}:${id}`;
}

/** Overture division subtype for an OSM place or boundary. */
export function subtypeOf(kind: string, type?: string, adminLevel?: number): OvertureSubtype | undefined {
  const v = (type ?? kind.split(':')[1] ?? '').toLowerCase();
  if (v === 'country' || adminLevel === 2) return 'country';
  if (['state', 'region', 'province'].includes(v) || adminLevel === 4) return 'region';
  if (['county', 'district', 'state_district'].includes(v) || adminLevel === 5 || adminLevel === 6) return 'county';
  if (['municipality'].includes(v) || adminLevel === 7) return 'localadmin';
  if (['city', 'town', 'village', 'hamlet', 'locality', 'isolated_dwelling'].includes(v) || adminLevel === 8) return 'locality';
  if (['borough', 'suburb', 'city_district'].includes(v) || adminLevel === 9) return 'borough';
  if (['quarter'].includes(v)) return 'macrohood';
  if (['neighbourhood', 'neighborhood'].includes(v) || adminLevel === 10) return 'neighborhood';
  return undefined;
}

interface PhotonFeature {
  type?: string;
  geometry?: { type?: string; coordinates?: unknown };
  properties?: Record<string, unknown>;
}

/** Photon search: up to 5 features, in Photon's own ranking order. */
export async function photonSearch(http: JsonFetcher, base: string, q: string, deadline?: number): Promise<NetPlace[]> {
  const url = `${base}/api/?q=${encodeURIComponent(q)}&limit=5`;
  const { data } = await http.json<{ type?: string; features?: PhotonFeature[] }>(url, { deadline });
  if (!data || typeof data !== 'object' || !Array.isArray(data.features)) throw new GeocoderFormatError('photon: reply is not a GeoJSON FeatureCollection');
  const out: NetPlace[] = [];
  for (const f of data.features) {
    const c = f.geometry?.coordinates;
    if (!Array.isArray(c) || c.length < 2) continue;
    const [lng, lat] = [num(c[0]), num(c[1])];
    if (!finiteLatLng(lat, lng)) continue;
    const p = f.properties ?? {};
    const name = String(p.name ?? p.city ?? p.street ?? '');
    if (!name) continue;
    const kind = `${String(p.osm_key ?? 'unknown')}:${String(p.osm_value ?? 'unknown')}`;
    const country = typeof p.countrycode === 'string' ? p.countrycode.toUpperCase() : undefined;
    let box: Box | undefined;
    // Photon's extent is [minLon, maxLat, maxLon, minLat].
    const e = p.extent;
    if (Array.isArray(e) && e.length === 4 && e.every((x) => Number.isFinite(num(x)))) {
      const [minLng, maxLat, maxLng, minLat] = e.map(num);
      box = { min_lat: Math.min(minLat, maxLat), min_lng: minLng, max_lat: Math.max(minLat, maxLat), max_lng: maxLng };
    }
    const context = [p.city !== name ? p.city : undefined, p.state, p.country].filter((x) => typeof x === 'string' && x) as string[];
    out.push({
      source: 'photon',
      name,
      label: [name, ...context].join(', '),
      lat,
      lng,
      kind,
      country,
      box,
      osmId: osmRef(p.osm_type, p.osm_id),
      subtype: subtypeOf(kind, typeof p.type === 'string' ? p.type : undefined),
    });
  }
  return out;
}

interface NominatimItem {
  lat?: string;
  lon?: string;
  boundingbox?: unknown[];
  importance?: number;
  category?: string;
  class?: string;
  type?: string;
  display_name?: string;
  name?: string;
  geojson?: { type?: string; coordinates?: unknown };
  osm_type?: string;
  osm_id?: number;
  place_rank?: number;
  addresstype?: string;
  extratags?: Record<string, string>;
  address?: { country_code?: string };
}

/** Nominatim search (jsonv2): up to 5 places with boxes and boundary polygons. */
export async function nominatimSearch(http: JsonFetcher, base: string, q: string, deadline?: number): Promise<NetPlace[]> {
  const url = `${base}/search?q=${encodeURIComponent(q)}&format=jsonv2&limit=5&polygon_geojson=1`;
  const { data } = await http.json<NominatimItem[]>(url, { deadline });
  if (!Array.isArray(data)) throw new GeocoderFormatError('nominatim: reply is not a JSON array');
  const out: NetPlace[] = [];
  for (const it of data) {
    const lat = num(it.lat);
    const lng = num(it.lon);
    if (!finiteLatLng(lat, lng)) continue;
    const display = String(it.display_name ?? '');
    const name = String(it.name || display.split(',')[0] || '').trim();
    if (!name) continue;
    const kind = `${it.category ?? it.class ?? 'unknown'}:${it.type ?? 'unknown'}`;
    let box: Box | undefined;
    // Nominatim's boundingbox is [min_lat, max_lat, min_lon, max_lon], as strings.
    if (Array.isArray(it.boundingbox) && it.boundingbox.length === 4) {
      const [a, b, c, d] = it.boundingbox.map(num);
      if ([a, b, c, d].every(Number.isFinite)) box = { min_lat: a, max_lat: b, min_lng: c, max_lng: d };
    }
    const g = it.geojson;
    const geojson = g && (g.type === 'Polygon' || g.type === 'MultiPolygon') && Array.isArray(g.coordinates) ? (g as GeoJsonPolygon) : undefined;
    const adminLevel = it.extratags?.admin_level ? Number(it.extratags.admin_level) : undefined;
    out.push({
      source: 'nominatim',
      name,
      label: display || name,
      lat,
      lng,
      kind,
      box,
      geojson,
      country: it.address?.country_code?.toUpperCase(),
      importance: typeof it.importance === 'number' ? it.importance : undefined,
      osmId: osmRef(it.osm_type, it.osm_id),
      subtype: subtypeOf(kind, it.addresstype ?? it.type, adminLevel),
    });
  }
  return out;
}

/** Shrink a boundary to at most `maxPoints` vertices (every k-th vertex, rings kept closed). */
export function thinPolygon(g: GeoJsonPolygon, maxPoints = 4000): GeoJsonPolygon {
  const polys = g.type === 'Polygon' ? [g.coordinates] : g.coordinates;
  const total = polys.reduce((n, rings) => n + rings.reduce((m, r) => m + r.length, 0), 0);
  if (total <= maxPoints) return g;
  const k = Math.ceil(total / maxPoints);
  const thinRing = (r: number[][]) => {
    if (r.length <= 8) return r;
    const out = r.filter((_, i) => i % k === 0);
    if (out.length < 4) return r.slice(0, 4).concat([r[0]]);
    out.push(out[0]);
    return out;
  };
  const thinned = polys.map((rings) => rings.map(thinRing));
  return g.type === 'Polygon' ? { type: 'Polygon', coordinates: thinned[0] } : { type: 'MultiPolygon', coordinates: thinned };
}
