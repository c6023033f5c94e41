/**
 * The offline gazetteer, loaded once per process on first use: GeoNames cities, Natural Earth
 * countries, the curated admin-1, wide-feature, landmark and exonym tables, the GeoNames admin-2
 * divisions, one index from a normalized name to every place that carries it (so a look-up is a
 * single Map hit), and a second index of the cities' GeoNames alternate names (weaker evidence:
 * match.ts consults it when the first index misses, or when it names a far larger place).
 */
import { CityGrid, loadCities, type CityTable } from './cities.js';
import { loadCountries, type Country } from './countries.js';
import { normalizeName } from './normalize.js';
import { loadAdmin1, loadAdmin2, loadCityAlternates, loadExonyms, loadLandmarks, loadWideFeatures, type Admin1, type Admin2, type Landmark, type WideFeature } from './tables.js';

export type EntryKind = 'city' | 'country' | 'admin1' | 'wide' | 'poi' | 'admin2';

/** A decoded index entry: which table, which row, and whether it matched an alternate name. */
export interface Ref {
  kind: EntryKind;
  index: number;
  alias: boolean;
}

const KIND_BASE: Record<EntryKind, number> = { city: 0, country: 1 << 24, admin1: 2 << 24, wide: 3 << 24, poi: 4 << 24, admin2: 5 << 24 };
const KINDS: EntryKind[] = ['city', 'country', 'admin1', 'wide', 'poi', 'admin2'];

/** Load statistics (bench and docs report them). */
export interface GazetteerStats {
  load_ms: number;
  heap_delta_mb: number;
  cities: number;
  countries: number;
  admin1: number;
  admin2: number;
  wide_features: number;
  landmarks: number;
  exonym_cities: number;
  index_keys: number;
  /** GeoNames alternate names of cities, and the keys of their separate index. */
  city_alternates: number;
  alternate_keys: number;
}

export interface Gazetteer {
  readonly cities: CityTable;
  readonly grid: CityGrid;
  readonly countries: readonly Country[];
  readonly countryByAlpha2: ReadonlyMap<string, Country>;
  readonly admin1: readonly Admin1[];
  /** `${country}.${geonamesCode}` → region. */
  readonly admin1ByKey: ReadonlyMap<string, Admin1>;
  /** GeoNames admin-2 divisions (boxes around their populated places). */
  readonly admin2: readonly Admin2[];
  readonly wide: readonly WideFeature[];
  readonly pois: readonly Landmark[];
  /** City index → names by language (from the exonym table). */
  readonly cityLocalized: ReadonlyMap<number, Record<string, string>>;
  /** Normalized country name, alias or ISO code (alpha-2/alpha-3, lower case) → alpha-2 codes. */
  readonly countryKeys: ReadonlyMap<string, string[]>;
  /** Normalized region name, alternate name or code → regions (qualifier matching). */
  readonly admin1Keys: ReadonlyMap<string, Admin1[]>;
  /** Sum of GeoNames city populations: a population proxy for ranking countries and regions. */
  readonly countryPop: ReadonlyMap<string, number>;
  readonly admin1Pop: ReadonlyMap<string, number>;
  readonly stats: GazetteerStats;
  /** Every place whose name (or alternate name) normalizes to `key`. */
  lookup(key: string): Ref[];
  /** Cities whose GeoNames alternate names normalize to `key` (refs flagged as aliases). */
  lookupAlternate(key: string): Ref[];
  /** All index keys sharing a first character (built on first use; the fuzzy tier scans it). */
  keysStartingWith(ch: string): readonly string[];
}

class Index {
  private readonly map = new Map<string, number | number[]>();
  add(key: string, kind: EntryKind, index: number, alias: boolean): void {
    if (!key) return;
    const ref = KIND_BASE[kind] + index;
    const v = alias ? -ref - 1 : ref;
    const cur = this.map.get(key);
    // Most keys name one place: store a bare number and allocate an array only on the second.
    if (cur === undefined) this.map.set(key, v);
    else if (typeof cur === 'number') {
      if (cur !== v && cur !== -v - 1 && -cur - 1 !== v) this.map.set(key, [cur, v]);
    } else if (!cur.includes(v)) cur.push(v);
  }
  get(key: string): Ref[] {
    const cur = this.map.get(key);
    if (cur === undefined) return [];
    const list = typeof cur === 'number' ? [cur] : cur;
    return list.map((v) => {
      const alias = v < 0;
      const ref = alias ? -v - 1 : v;
      const kind = KINDS[ref >>> 24];
      return { kind, index: ref - KIND_BASE[kind], alias };
    });
  }
  keys(): IterableIterator<string> {
    return this.map.keys();
  }
  get size(): number {
    return this.map.size;
  }
}

function pushMap<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (!l) m.set(k, [v]);
  else if (!l.includes(v)) l.push(v);
}

/** Alternate names that are bare codes (CA, NSW) only qualify ("Springfield, IL"); they are not places on their own. */
function isBareCode(alt: string, alpha3s: Set<string>): boolean {
  if (/^[A-Z0-9.]{1,2}$/.test(alt.replace(/\./g, ''))) return true;
  return /^[A-Z]{3}$/.test(alt) && alpha3s.has(alt);
}

function build(): Gazetteer {
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const cities = loadCities();
  const countries = loadCountries();
  const admin1 = loadAdmin1();
  const wide = loadWideFeatures();
  const pois = loadLandmarks();
  const exonyms = loadExonyms();
  const admin2 = loadAdmin2();
  const alternates = loadCityAlternates();
  const index = new Index();
  const altIndex = new Index();

  const countryPop = new Map<string, number>();
  const admin1Pop = new Map<string, number>();
  for (let i = 0; i < cities.count; i++) {
    const cc = cities.country[i];
    const p = cities.population[i];
    countryPop.set(cc, (countryPop.get(cc) ?? 0) + p);
    const k = `${cc}.${cities.admin1[i]}`;
    admin1Pop.set(k, (admin1Pop.get(k) ?? 0) + p);
    index.add(normalizeName(cities.name[i]), 'city', i, false);
  }

  let alternateNames = 0;
  if (alternates.size > 0)
    for (let i = 0; i < cities.count; i++) {
      const alts = alternates.get(cities.geonameId[i]);
      if (!alts) continue;
      alternateNames += alts.length;
      for (const a of alts) altIndex.add(normalizeName(a), 'city', i, true);
    }

  const cityLocalized = new Map<number, Record<string, string>>();
  for (const ex of exonyms) {
    let best = -1;
    for (const r of index.get(normalizeName(ex.geonamesName))) {
      if (r.kind !== 'city' || cities.country[r.index] !== ex.country || cities.name[r.index] !== ex.geonamesName) continue;
      if (best < 0 || cities.population[r.index] > cities.population[best]) best = r.index;
    }
    if (best < 0) continue;
    cityLocalized.set(best, ex.localized);
    for (const n of [...Object.values(ex.localized), ...ex.alts]) index.add(normalizeName(n), 'city', best, true);
  }

  const countryByAlpha2 = new Map<string, Country>();
  const countryKeys = new Map<string, string[]>();
  const alpha3s = new Set<string>();
  countries.forEach((c, i) => {
    countryByAlpha2.set(c.alpha2, c);
    alpha3s.add(c.alpha3);
    index.add(normalizeName(c.name), 'country', i, false);
    for (const n of c.names) {
      const key = normalizeName(n);
      index.add(key, 'country', i, true);
      pushMap(countryKeys, key, c.alpha2);
    }
    pushMap(countryKeys, c.alpha2.toLowerCase(), c.alpha2);
    pushMap(countryKeys, c.alpha3.toLowerCase(), c.alpha2);
  });
  // Common short forms people write after a comma that the i18n aliases lack.
  for (const [alias, a2] of [
    ['uk', 'GB'],
    ['england', 'GB'],
    ['scotland', 'GB'],
    ['wales', 'GB'],
    ['britain', 'GB'],
    ['america', 'US'],
    ['u s a', 'US'],
    ['holland', 'NL'],
    ['czech republic', 'CZ'],
    ['ivory coast', 'CI'],
    ['burma', 'MM'],
    ['persia', 'IR'],
    ['drc', 'CD'],
    ['dr congo', 'CD'],
    ['uae', 'AE'],
    ['korea', 'KR'],
    ['swaziland', 'SZ'],
    ['macedonia', 'MK'],
    ['east timor', 'TL'],
    ['turkiye', 'TR'],
    ['cape verde', 'CV'],
    ['vatican', 'VA'],
  ] as const) {
    pushMap(countryKeys, alias, a2);
    const idx = countries.findIndex((c) => c.alpha2 === a2);
    // Standalone too, except the constituent countries of GB, which are admin-1 regions here.
    if (idx >= 0 && !['england', 'scotland', 'wales'].includes(alias)) index.add(alias, 'country', idx, true);
  }

  const admin1ByKey = new Map<string, Admin1>();
  const admin1Keys = new Map<string, Admin1[]>();
  admin1.forEach((a, i) => {
    admin1ByKey.set(`${a.country}.${a.code}`, a);
    index.add(normalizeName(a.name), 'admin1', i, false);
    pushMap(admin1Keys, normalizeName(a.name), a);
    for (const alt of a.alts) {
      pushMap(admin1Keys, normalizeName(alt), a);
      if (!isBareCode(alt, alpha3s)) index.add(normalizeName(alt), 'admin1', i, true);
    }
    pushMap(admin1Keys, normalizeName(a.code), a);
    // "Bavaria, Germany" style qualifiers often drop the generic word ("Oran" for Oran Province).
    const bare = a.name.replace(/ (Province|Region|State|Oblast|Krai|District|Municipality|City|Federal City|Union Territory)$/i, '');
    if (bare !== a.name) pushMap(admin1Keys, normalizeName(bare), a);
  });

  // Admin-2 names are indexed as written only: without their generic word many are common words
  // ("Will", "Story", "Hunt" County), so "Will County" finds the county and "will" does not.
  admin2.forEach((a, i) => index.add(normalizeName(a.name), 'admin2', i, false));

  wide.forEach((w, i) => {
    index.add(normalizeName(w.name), 'wide', i, false);
    for (const alt of w.alts) index.add(normalizeName(alt), 'wide', i, true);
  });
  pois.forEach((p, i) => {
    index.add(normalizeName(p.name), 'poi', i, false);
    for (const alt of p.alts) index.add(normalizeName(alt), 'poi', i, true);
  });

  const grid = new CityGrid(cities);
  let byFirst: Map<string, string[]> | undefined;
  const stats: GazetteerStats = {
    load_ms: Math.round(performance.now() - t0),
    heap_delta_mb: Math.round(((process.memoryUsage().heapUsed - heap0) / 1e6) * 10) / 10,
    cities: cities.count,
    countries: countries.length,
    admin1: admin1.length,
    admin2: admin2.length,
    wide_features: wide.length,
    landmarks: pois.length,
    exonym_cities: cityLocalized.size,
    index_keys: index.size,
    city_alternates: alternateNames,
    alternate_keys: altIndex.size,
  };
  return {
    cities,
    grid,
    countries,
    countryByAlpha2,
    admin1,
    admin1ByKey,
    admin2,
    wide,
    pois,
    cityLocalized,
    countryKeys,
    admin1Keys,
    countryPop,
    admin1Pop,
    stats,
    lookup: (key) => index.get(key),
    lookupAlternate: (key) => altIndex.get(key),
    keysStartingWith(ch) {
      if (!byFirst) {
        byFirst = new Map();
        for (const k of index.keys()) {
          const l = byFirst.get(k[0]);
          if (l) l.push(k);
          else byFirst.set(k[0], [k]);
        }
      }
      return byFirst.get(ch) ?? [];
    },
  };
}

let loaded: Gazetteer | undefined;

/** The process-wide gazetteer (built on first call, about half a second). */
export function gazetteer(): Gazetteer {
  loaded ??= build();
  return loaded;
}
