/**
 * A resolved place before it becomes a LocateResp: what every tier (tables, gazetteer, cache,
 * network) produces, JSON-serializable so the cache tier can store network answers verbatim.
 */
import { countryAt } from './countries.js';
import { subtypeOf, thinPolygon, type NetPlace } from './geocoders.js';
import { boxAround, haversineKm, type Box } from './geometry.js';
import type { Gazetteer } from './gazetteer.js';
import type { OfflineMatch, Place } from './match.js';
import { detectClass, nameHasClassWord, normalizeName, stripClassWords } from './normalize.js';
import type { BboxSource, GeoJsonPolygon, LocateCandidate, LocateVia, OvertureSubtype } from './types.js';

export const OVERTURE_DIVISION_SCHEMA = 'https://docs.overturemaps.org/schema/reference/divisions/division/';

/**
 * The extent of a city (docs/locate.md, "Extents"): no boundary set for cities ships with the
 * service, so a city is the square around its point whose half-side grows with the square root
 * of its GeoNames population: 0.015 km per sqrt(person), within [1.5, 30] km (Canberra, 368 000
 * people: about 9 km; a town of 10 000: 1.5 km; Mumbai: 30 km). An approximation of the built-up
 * area, not a municipal boundary; the answer says so (`extent_source: "population_scaled"`).
 */
export const CITY_EXTENT = { km_per_sqrt_person: 0.015, min_half_km: 1.5, max_half_km: 30 } as const;

/** Half-side in km of a city's population-scaled box. */
export function cityHalfSideKm(population: number): number {
  const { km_per_sqrt_person: k, min_half_km: lo, max_half_km: hi } = CITY_EXTENT;
  return Math.min(hi, Math.max(lo, k * Math.sqrt(Math.max(0, population))));
}

/** How polygon_sample_cells are drawn for this place. */
export type SampleShape = { shape: 'point' } | { shape: 'box' } | { shape: 'country'; alpha2: string } | { shape: 'geojson' };

export interface Resolution {
  via: LocateVia;
  label: string;
  lat: number;
  lng: number;
  kind: string;
  localized: Record<string, string>;
  box?: Box;
  boxSource?: BboxSource;
  geojson?: GeoJsonPolygon;
  sample: SampleShape;
  /** Seeds the deterministic sampling: the same place always yields the same cells. */
  seed: string;
  division?: { division_id: string; subtype: OvertureSubtype; country: string };
  selected: { label: string; kind: string; is_high_confidence: boolean; reason: string; score: number };
  alternatives: LocateCandidate[];
}

/** LocateCandidate of an offline place. */
export function candidateOf(p: Place): LocateCandidate {
  const c: LocateCandidate = { label: p.label, lat: p.lat, lng: p.lng, via: p.via, kind: p.kind, score: Math.round(p.score * 1000) / 1000 };
  if (p.country) c.country = p.country;
  return c;
}

/** Resolution of an offline match. */
export function fromOffline(g: Gazetteer, m: OfflineMatch): Resolution {
  const p = m.selected;
  const base = {
    via: p.via,
    label: p.label,
    lat: p.lat,
    lng: p.lng,
    kind: p.kind,
    localized: p.localized,
    seed: p.id,
    selected: { label: p.label, kind: p.kind, is_high_confidence: m.high, reason: m.reason, score: Math.round(p.score * 1000) / 1000 },
    alternatives: m.alternatives.map(candidateOf),
  };
  switch (p.ref.kind) {
    case 'country': {
      const c = g.countries[p.ref.index];
      return {
        ...base,
        box: c.box,
        boxSource: 'country_table',
        geojson: c.outline,
        sample: { shape: 'country', alpha2: c.alpha2 },
        division: { division_id: p.id, subtype: 'country', country: c.alpha2 },
      };
    }
    case 'admin1':
      return { ...base, box: p.box, boxSource: 'admin1_table', sample: { shape: 'box' }, division: { division_id: p.id, subtype: 'region', country: p.country! } };
    case 'admin2':
      return { ...base, box: p.box, boxSource: 'admin2_table', sample: { shape: 'box' }, division: { division_id: p.id, subtype: 'county', country: p.country! } };
    case 'wide':
      return { ...base, box: p.box, boxSource: 'wide_bbox_table', sample: { shape: 'box' } };
    case 'city':
      return {
        ...base,
        box: boxAround(p.lat, p.lng, cityHalfSideKm(p.population ?? 0)),
        boxSource: 'population_scaled',
        sample: { shape: 'box' },
        division: { division_id: p.id, subtype: 'locality', country: p.country! },
      };
    case 'poi':
      return { ...base, sample: { shape: 'point' } };
  }
}

/** Resolution of a bare coordinate (direct_latlng). */
export function fromPoint(g: Gazetteer, lat: number, lng: number, label: string, near?: Place): Resolution {
  const country = countryAt(g.countries, lat, lng);
  const res: Resolution = {
    via: 'direct_latlng',
    label,
    lat,
    lng,
    kind: 'coordinates',
    localized: near ? near.localized : {},
    sample: { shape: 'point' },
    seed: `${lat},${lng}`,
    selected: {
      label,
      kind: 'coordinates',
      is_high_confidence: true,
      reason: near ? `coordinates given; nearest embedded place ${near.label}` : 'coordinates given; no embedded place within 25 km',
      score: 0,
    },
    alternatives: [],
  };
  if (country) res.division = { division_id: `ne:country:${country.alpha3}`, subtype: 'country', country: country.alpha2 };
  return res;
}

const SETTLEMENT = new Set(['city', 'town', 'village', 'hamlet', 'suburb', 'locality', 'isolated_dwelling', 'neighbourhood', 'quarter', 'administrative']);

/** Resolution of a network answer (places in the provider's order), with its own confidence verdict. */
export function fromNetwork(g: Gazetteer, places: NetPlace[], query: string): Resolution {
  const best = places[0];
  const head = normalizeName(query.split(',')[0] ?? query);
  const cls = detectClass(head);
  const bestName = normalizeName(best.name);
  const exact = bestName === head || (cls !== undefined && bestName === stripClassWords(head, cls));
  const rivals = places.slice(1).filter((p) => normalizeName(p.name) === bestName && haversineKm(p.lat, p.lng, best.lat, best.lng) > 50);
  const value = best.kind.split(':')[1] ?? '';
  const mismatch = cls !== undefined && !nameHasClassWord(bestName, cls) && SETTLEMENT.has(value);
  let high = exact && rivals.length === 0 && !mismatch;
  let reason: string;
  if (mismatch) reason = `class mismatch: asked for a ${cls!.label}, ${best.source} resolved a ${value}`;
  else if (!exact) reason = `${best.source}: best of ${places.length} result(s); its name '${best.name}' differs from the query`;
  else if (rivals.length) reason = `ambiguous: ${rivals.length + 1} places named '${best.name}' in ${best.source}'s answer; took its first`;
  else reason = `${best.source}: exact name, ${places.length === 1 ? 'single result' : 'first of ' + places.length + ' results'}`;
  if (high && best.importance !== undefined && best.importance < 0.2) {
    high = false;
    reason += `; low importance (${best.importance})`;
  }
  const country = best.country ?? countryAt(g.countries, best.lat, best.lng)?.alpha2;
  const box = best.box && best.box.max_lat > best.box.min_lat ? best.box : undefined;
  const geojson = best.geojson ? thinPolygon(best.geojson) : undefined;
  const subtype = best.subtype ?? subtypeOf(best.kind);
  const res: Resolution = {
    via: best.source,
    label: best.label,
    lat: best.lat,
    lng: best.lng,
    kind: best.kind,
    localized: { und: best.name },
    // Photon is built from Nominatim's OSM database; its extent is the same OSM bounding box.
    box,
    boxSource: box ? 'nominatim_boundingbox' : undefined,
    geojson,
    sample: geojson ? { shape: 'geojson' } : box ? { shape: 'box' } : { shape: 'point' },
    seed: best.osmId ?? `${best.source}:${best.lat},${best.lng}`,
    selected: { label: best.label, kind: best.kind, is_high_confidence: high, reason, score: best.importance ?? 1 },
    alternatives: places.slice(1, 6).map((p, i) => {
      const c: LocateCandidate = { label: p.label, lat: p.lat, lng: p.lng, via: p.source, kind: p.kind, score: p.importance ?? Math.round((0.9 - i * 0.1) * 100) / 100 };
      if (p.country) c.country = p.country;
      return c;
    }),
  };
  if (subtype && country) res.division = { division_id: best.osmId ?? `${best.source}:${best.lat},${best.lng}`, subtype, country };
  return res;
}
