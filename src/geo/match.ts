/**
 * Offline name matching (docs/locate.md, "The cascade"): exact, alias, variant and class-stripped
 * look-ups in the gazetteer, "X, Region, Country" qualifiers, ranking by population or prominence,
 * and the confidence verdict with its reason. Fuzzy matching is a separate, last-resort step.
 */
import { boxAreaKm2, boxContains, haversineKm, type Box } from './geometry.js';
import { countryPoint } from './countries.js';
import type { Gazetteer, Ref } from './gazetteer.js';
import { detectClass, editDistance, nameHasClassWord, normalizeName, scriptLanguage, stripClassWords, variants, type FeatureClass } from './normalize.js';
import type { Admin1 } from './tables.js';
import type { LocateVia } from './types.js';

/** One offline candidate place. */
export interface Place {
  via: LocateVia;
  ref: Ref;
  /** city, country, admin1, or the table kind (desert, river, peak, …). */
  kind: string;
  name: string;
  label: string;
  lat: number;
  lng: number;
  /** Primary ISO alpha-2 country, when there is one. */
  country?: string;
  countries: string[];
  admin1?: Admin1;
  box?: Box;
  population?: number;
  /** Ranking score: log10 of population, or a prominence equivalent for tables. */
  score: number;
  /** Stable id of the row (GeoNames id, ISO code, table name). */
  id: string;
  localized: Record<string, string>;
}

/** The outcome of the offline tiers for one query. */
export interface OfflineMatch {
  selected: Place;
  alternatives: Place[];
  high: boolean;
  reason: string;
  fuzzy: boolean;
}

const CITY_BONUS: Record<string, number> = { PPLC: 0.5, PPLG: 0.4, PPLA: 0.2, PPLA2: 0.1, PPLX: -0.5, PPLH: -1, PPLQ: -1, PPLW: -1 };
const TIER_ORDER: LocateVia[] = ['wide_bbox_table', 'country', 'admin1', 'admin2', 'embedded', 'pois'];

function localizedOf(name: string, alts: readonly string[], country?: string): Record<string, string> {
  const out: Record<string, string> = { en: name };
  for (const a of alts) {
    const lang = scriptLanguage(a, country);
    if (lang && !out[lang]) out[lang] = a;
  }
  return out;
}

/** Materialize a gazetteer entry as a candidate. */
export function placeOf(g: Gazetteer, ref: Ref): Place {
  const alias = ref.alias ? -0.05 : 0;
  switch (ref.kind) {
    case 'city': {
      const t = g.cities;
      const i = ref.index;
      const cc = t.country[i];
      const admin1 = g.admin1ByKey.get(`${cc}.${t.admin1[i]}`);
      const pop = t.population[i];
      return {
        via: 'embedded',
        ref,
        kind: 'city',
        name: t.name[i],
        lat: t.lat[i],
        lng: t.lng[i],
        country: cc,
        countries: [cc],
        admin1,
        population: pop,
        label: admin1 ? `${t.name[i]}, ${admin1.name}, ${cc}` : `${t.name[i]}, ${cc}`,
        score: Math.log10(pop + 1) + (CITY_BONUS[t.featureCode[i]] ?? 0) + alias,
        id: `geonames:${t.geonameId[i]}`,
        localized: g.cityLocalized.get(i) ?? { und: t.name[i] },
      };
    }
    case 'country': {
      const c = g.countries[ref.index];
      const pt = countryPoint(c);
      const pop = g.countryPop.get(c.alpha2) ?? 0;
      return {
        via: 'country',
        ref,
        kind: 'country',
        name: c.name,
        label: c.name,
        lat: pt.lat,
        lng: pt.lng,
        country: c.alpha2,
        countries: [c.alpha2],
        box: c.box,
        population: pop,
        score: Math.max(Math.log10(pop + 1), 4) + 1.5 + alias,
        id: `ne:country:${c.alpha3}`,
        localized: c.localized,
      };
    }
    case 'admin1': {
      const a = g.admin1[ref.index];
      const pop = g.admin1Pop.get(`${a.country}.${a.code}`) ?? 0;
      return {
        via: 'admin1',
        ref,
        kind: 'admin1',
        name: a.name,
        label: `${a.name}, ${a.country}`,
        lat: a.lat,
        lng: a.lng,
        country: a.country,
        countries: [a.country],
        admin1: a,
        box: a.box,
        population: pop,
        score: Math.max(Math.log10(pop + 1), 3) - 0.7 + alias,
        id: `geonames:admin1:${a.country}.${a.code}`,
        localized: localizedOf(a.name, a.alts, a.country),
      };
    }
    case 'admin2': {
      const a = g.admin2[ref.index];
      const admin1 = g.admin1ByKey.get(`${a.country}.${a.admin1}`);
      return {
        via: 'admin2',
        ref,
        kind: 'admin2',
        name: a.name,
        label: admin1 ? `${a.name}, ${admin1.name}, ${a.country}` : `${a.name}, ${a.country}`,
        lat: a.lat,
        lng: a.lng,
        country: a.country,
        countries: [a.country],
        admin1,
        box: a.box,
        population: a.population,
        score: Math.max(Math.log10(a.population + 1), 3) - 0.9 + alias,
        id: `geonames:admin2:${a.country}.${a.admin1}.${a.code}`,
        localized: { en: a.name },
      };
    }
    case 'wide': {
      const w = g.wide[ref.index];
      return {
        via: 'wide_bbox_table',
        ref,
        kind: w.kind,
        name: w.name,
        label: `${w.name} (${w.kind.replace(/_/g, ' ')})`,
        lat: w.lat,
        lng: w.lng,
        country: w.countries[0],
        countries: w.countries,
        box: w.box,
        score: 6 + 0.3 * Math.log10(boxAreaKm2(w.box) + 1) + alias,
        id: `wide:${w.name}`,
        localized: localizedOf(w.name, w.alts, w.countries[0]),
      };
    }
    case 'poi': {
      const p = g.pois[ref.index];
      return {
        via: 'pois',
        ref,
        kind: p.kind,
        name: p.name,
        label: p.countries.length ? `${p.name}, ${p.countries[0]}` : p.name,
        lat: p.lat,
        lng: p.lng,
        country: p.countries[0],
        countries: p.countries,
        score: 7 + alias,
        id: `poi:${p.name}`,
        localized: localizedOf(p.name, p.alts, p.countries[0]),
      };
    }
  }
}

function qualifierMatches(g: Gazetteer, p: Place, q: string): boolean {
  const qc = g.countryKeys.get(q) ?? [];
  if (p.countries.some((c) => qc.includes(c))) return true;
  const qa = g.admin1Keys.get(q) ?? [];
  if (p.admin1 && qa.includes(p.admin1)) return true;
  // US state abbreviations and other alphabetic GeoNames admin codes ("Springfield, IL").
  if (p.ref.kind === 'city' && /[a-z]/.test(q) && normalizeName(g.cities.admin1[p.ref.index]) === q) return true;
  return false;
}

/** Candidates other than `best` that are really other places (not the same spot, not nested). */
function distinctRivals(best: Place, others: Place[]): Place[] {
  return others.filter((o) => {
    if (o.id === best.id) return false;
    if (haversineKm(best.lat, best.lng, o.lat, o.lng) < 50) return false;
    // A city inside the region or park of the same name is the same answer at another scale.
    if (o.kind !== best.kind && o.box && boxContains(o.box, best.lat, best.lng, 0.2)) return false;
    if (o.kind !== best.kind && best.box && boxContains(best.box, o.lat, o.lng, 0.2)) return false;
    return true;
  });
}

function dedupe(places: Place[]): Place[] {
  const seen = new Map<string, Place>();
  for (const p of places) {
    const cur = seen.get(p.id);
    if (!cur || p.score > cur.score) seen.set(p.id, p);
  }
  return [...seen.values()];
}

function rank(places: Place[]): Place[] {
  return places.sort((a, b) => b.score - a.score || TIER_ORDER.indexOf(a.via) - TIER_ORDER.indexOf(b.via));
}

interface Attempt {
  places: Place[];
  key: string;
  classStripped: boolean;
}

/**
 * The places named `key`. GeoNames alternate names of cities are weaker evidence than names:
 * they answer when no name matches ("Chamonix"), and otherwise only for a place at least ten
 * times larger than every place of that name ("Madras" is Chennai, not the town in Oregon).
 */
function attempt(g: Gazetteer, key: string, classStripped = false): Attempt | undefined {
  const named = g.lookup(key).map((r) => placeOf(g, r));
  const alternate = g.lookupAlternate(key).map((r) => placeOf(g, r));
  const top = Math.max(...named.map((p) => p.score));
  const places = named.length === 0 ? alternate : [...named, ...alternate.filter((p) => p.score >= top + 1)];
  if (places.length === 0) return undefined;
  return { places: dedupe(places), key, classStripped };
}

function confidence(best: Place, rivals: Place[], name: string, notes: string[]): { high: boolean; reason: string } {
  const lowNotes = notes.filter((n) => n.startsWith('!')).map((n) => n.slice(1));
  const info = notes.filter((n) => !n.startsWith('!'));
  const suffix = info.length ? ` (${info.join('; ')})` : '';
  if (lowNotes.length) return { high: false, reason: lowNotes.join('; ') + suffix };
  if (rivals.length === 0) return { high: true, reason: `exact name, unique${suffix}` };
  const n = rivals.length + 1;
  const sameCountry = rivals.every((r) => r.country === best.country) && best.country ? ` in ${best.country}` : '';
  const measure = best.population !== undefined && best.kind === 'city' ? 'most populous' : 'most prominent';
  const top = rivals[0];
  // Same kind: the pick must outweigh the runner-up ~2.5x (0.4 in log10 units); across kinds
  // (a region against a city) scores are less comparable, so 10x; a short form two places share
  // as an alternate name ("Congo") stays ambiguous whatever the sizes.
  const margin = top.kind === best.kind ? 0.4 : 1;
  const sharedAlias = best.ref.alias && top.ref.alias && top.kind === best.kind;
  if (!sharedAlias && best.score - top.score >= margin) return { high: true, reason: `exact name; ${n} places named ${name}${sameCountry}; picked the ${measure} by a clear margin${suffix}` };
  return { high: false, reason: `ambiguous: ${n} places named ${name}${sameCountry}; picked the ${measure}${suffix}` };
}

/** Resolve a place name against the offline tiers; undefined when no exact or variant match exists. */
export function matchOffline(g: Gazetteer, text: string): OfflineMatch | undefined {
  const raw = text.trim();
  // A bare ISO 3166-1 code in capitals ("FR", "DEU") is the country, whatever towns share the letters.
  if (/^[A-Z]{2,3}$/.test(raw)) {
    const a2 = g.countryKeys.get(raw.toLowerCase())?.find((c) => c === raw || g.countryByAlpha2.get(c)?.alpha3 === raw);
    const idx = a2 ? g.countries.findIndex((c) => c.alpha2 === a2) : -1;
    if (idx >= 0) {
      const p = placeOf(g, { kind: 'country', index: idx, alias: false });
      return { selected: p, alternatives: [], high: true, reason: `ISO 3166-1 alpha-${raw.length} code`, fuzzy: false };
    }
  }
  const parts = raw.split(',').map(normalizeName).filter(Boolean);
  if (parts.length === 0) return undefined;
  const head = parts[0];
  const quals = parts.slice(1);
  const cls = detectClass(head);

  let found: Attempt | undefined;
  let usedQuals = quals;
  if (quals.length > 0) {
    // "Washington, D.C." is one name that contains a comma.
    found = attempt(g, parts.join(' '));
    if (found) usedQuals = [];
  }
  found ??= attempt(g, head);
  if (!found) for (const v of variants(head)) if ((found = attempt(g, v))) break;
  if (!found && cls) {
    const core = stripClassWords(head, cls);
    if (core)
      found =
        attempt(g, core, true) ??
        variants(core)
          .map((v) => attempt(g, v, true))
          .find(Boolean);
  }
  // A code in lower case ("fr", "usa") is still a country code, but competes with names.
  if (parts.length === 1 && /^[a-z]{2,3}$/i.test(raw)) {
    const codes = (g.countryKeys.get(raw.toLowerCase()) ?? []).filter((c) => c.toLowerCase() === raw.toLowerCase() || g.countryByAlpha2.get(c)?.alpha3.toLowerCase() === raw.toLowerCase());
    const extra = codes.map((c) => placeOf(g, { kind: 'country', index: g.countries.findIndex((x) => x.alpha2 === c), alias: true }));
    if (extra.length) found = { places: dedupe([...(found?.places ?? []), ...extra]), key: head, classStripped: false };
  }
  if (!found) return undefined;
  return judge(g, found, usedQuals, cls, false, raw);
}

function judge(g: Gazetteer, found: Attempt, quals: string[], cls: FeatureClass | undefined, fuzzy: boolean, raw: string, fuzzyNote?: string): OfflineMatch {
  let places = found.places;
  const notes: string[] = [];
  if (fuzzyNote) notes.push(`!${fuzzyNote}`);
  if (quals.length > 0) {
    const counts = places.map((p) => quals.filter((q) => qualifierMatches(g, p, q)).length);
    const max = Math.max(...counts);
    const known = quals.filter((q) => places.some((p) => qualifierMatches(g, p, q)));
    const unknown = quals.filter((q) => !known.includes(q));
    if (max > 0) {
      places = places.filter((_, i) => counts[i] === max);
      notes.push(`narrowed by ${known.map((q) => `'${q}'`).join(', ')}`);
    }
    if (unknown.length) notes.push(`!qualifier ${unknown.map((q) => `'${q}'`).join(', ')} not recognised for any place named ${found.key}`);
  }
  if (cls) {
    const fits = (p: Place) => cls.kinds.includes(p.kind) || nameHasClassWord(normalizeName(p.name), cls);
    const fitting = places.filter(fits);
    if (fitting.length > 0) places = fitting;
    else {
      const top = rank([...places])[0];
      notes.push(`!class mismatch: asked for a ${cls.label}, resolved a ${top.kind === 'admin1' ? 'region' : top.kind === 'admin2' ? 'district' : top.kind.replace(/_/g, ' ')}`);
    }
  }
  if (found.classStripped && !notes.some((n) => n.startsWith('!class'))) notes.push(`matched '${found.key}' without the word '${cls?.label}'`);
  places = rank(places);
  const best = places[0];
  if (best.ref.alias && !fuzzy) notes.push(`alternate name '${raw}'`);
  const rivals = rank(distinctRivals(best, places.slice(1)));
  const verdict = confidence(best, rivals, `'${raw.split(',')[0].trim()}'`, notes);
  const alternatives = rank(places.slice(1)).slice(0, 5);
  return { selected: best, alternatives, high: verdict.high, reason: verdict.reason, fuzzy };
}

/** Last resort: the closest index key within an edit distance of 1 (2 for long names). */
export function matchFuzzy(g: Gazetteer, text: string): OfflineMatch | undefined {
  const parts = text.trim().split(',').map(normalizeName).filter(Boolean);
  if (parts.length === 0) return undefined;
  let head = parts[0];
  const cls = detectClass(head);
  if (cls) head = stripClassWords(head, cls) || head;
  const max = head.length >= 9 ? 2 : head.length >= 4 ? 1 : 0;
  if (max === 0) return undefined;
  let bestD = max + 1;
  let keys: string[] = [];
  for (const k of g.keysStartingWith(head[0])) {
    if (Math.abs(k.length - head.length) > max) continue;
    const d = editDistance(head, k, max);
    if (d < bestD) {
      bestD = d;
      keys = [k];
    } else if (d === bestD) keys.push(k);
  }
  if (bestD > max) return undefined;
  const places = dedupe(keys.flatMap((k) => g.lookup(k).map((r) => placeOf(g, r))));
  if (places.length === 0) return undefined;
  const key = rank([...places])[0];
  const note = `fuzzy match (edit distance ${bestD}): '${head}' → '${key.name}'`;
  return judge(g, { places, key: head, classStripped: false }, parts.slice(1), cls, true, text, note);
}

/** A label and context for a bare coordinate: the nearest significant embedded city within 25 km. */
export function describePoint(g: Gazetteer, lat: number, lng: number): { label: string; near?: Place } {
  const near = g.grid.within(lat, lng, 25);
  const coords = `${lat.toFixed(5)}, ${lng.toFixed(5)}`;
  if (near.length === 0) return { label: coords };
  // Prefer a real town over a section of a city (PPLX), and a large city within 15 km over a hamlet.
  const t = g.cities;
  const towns = near.filter((n) => t.featureCode[n.i] !== 'PPLX');
  const pool = towns.length ? towns : near;
  const big = pool.filter((n) => n.km <= 15 && t.population[n.i] >= 100_000).sort((a, b) => t.population[b.i] - t.population[a.i])[0];
  const pick = big ?? pool[0];
  const place = placeOf(g, { kind: 'city', index: pick.i, alias: false });
  return { label: `near ${t.name[pick.i]}, ${t.country[pick.i]}`, near: place };
}
