/**
 * The curated tables checked against independent data: every admin-1 box is checked against the
 * GeoNames cities carrying its admin1 code (an independent source for the same region), every
 * exonym must name a real GeoNames city, and every wide feature and landmark must be well formed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gazetteer } from '../../src/geo/gazetteer.js';
import { boxContains } from '../../src/geo/geometry.js';
import { loadAdmin1, loadExonyms, loadLandmarks, loadWideFeatures } from '../../src/geo/tables.js';
import { GEO_ATTRIBUTION } from '../../src/geo/attribution.js';

const g = gazetteer();

describe('admin-1 table', () => {
  const members = new Map<string, number[]>();
  const t = g.cities;
  for (let i = 0; i < t.count; i++) {
    const k = `${t.country[i]}.${t.admin1[i]}`;
    if (!g.admin1ByKey.has(k)) continue;
    const l = members.get(k);
    if (l) l.push(i);
    else members.set(k, [i]);
  }

  it('covers the 20 largest countries by area', () => {
    const have = new Set(loadAdmin1().map((a) => a.country));
    for (const cc of ['RU', 'CA', 'CN', 'US', 'BR', 'AU', 'IN', 'AR', 'KZ', 'DZ', 'CD', 'SA', 'MX', 'ID', 'SD', 'LY', 'IR', 'MN', 'PE', 'TD']) assert.ok(have.has(cc), cc);
  });

  it('every region code is a real GeoNames admin1 code (it has member cities)', () => {
    const orphans = g.admin1.filter((a) => !members.has(`${a.country}.${a.code}`)).map((a) => `${a.country}.${a.code} ${a.name}`);
    assert.deepEqual(orphans, []);
  });

  it('every box holds at least 80% of its GeoNames member cities (regions with 5 or more)', () => {
    const bad: string[] = [];
    for (const a of g.admin1) {
      const m = members.get(`${a.country}.${a.code}`) ?? [];
      if (m.length < 5) continue;
      const inside = m.filter((i) => boxContains(a.box, t.lat[i], t.lng[i], 0.3)).length;
      if (inside / m.length < 0.8) bad.push(`${a.country}.${a.code} ${a.name}: ${inside}/${m.length}`);
    }
    assert.deepEqual(bad, []);
  });

  it("every region's GeoNames seat (PPLA) lies in its box", () => {
    const bad: string[] = [];
    for (const [k, m] of members) {
      const a = g.admin1ByKey.get(k)!;
      for (const i of m) if (t.featureCode[i] === 'PPLA' && !boxContains(a.box, t.lat[i], t.lng[i], 0.3)) bad.push(`${k} ${a.name}: seat ${t.name[i]}`);
    }
    assert.deepEqual(bad, []);
  });

  it('the representative point lies in the box', () => {
    for (const a of g.admin1) assert.ok(boxContains(a.box, a.lat, a.lng), `${a.country}.${a.code} ${a.name}`);
  });
});

describe('wide-feature and landmark tables', () => {
  const wide = loadWideFeatures();
  const pois = loadLandmarks();

  it('hold a few hundred rows each', () => {
    assert.ok(wide.length >= 300, `${wide.length} wide features`);
    assert.ok(pois.length >= 200, `${pois.length} landmarks`);
  });

  it('wide boxes are well formed and contain their representative point', () => {
    for (const w of wide) {
      assert.ok(w.box.min_lat <= w.box.max_lat && w.box.min_lat >= -90 && w.box.max_lat <= 90, w.name);
      assert.ok(Math.abs(w.box.min_lng) <= 180 && Math.abs(w.box.max_lng) <= 180, w.name);
      assert.ok(boxContains(w.box, w.lat, w.lng), `${w.name}: (${w.lat}, ${w.lng}) outside its box`);
      for (const c of w.countries) assert.match(c, /^[A-Z]{2}$/, w.name);
    }
  });

  it('names are unique within a table (a shared name needs different countries)', () => {
    const seen = new Map<string, string>();
    for (const w of wide) {
      const k = `${w.name}|${w.countries.join(',')}`;
      assert.ok(!seen.has(k), `duplicate ${w.name}`);
      seen.set(k, w.kind);
    }
    const names = pois.map((p) => p.name);
    assert.equal(new Set(names).size, names.length);
  });

  it('landmarks have valid coordinates and country codes', () => {
    for (const p of pois) {
      assert.ok(Math.abs(p.lat) <= 90 && Math.abs(p.lng) <= 180, p.name);
      for (const c of p.countries) assert.match(c, /^[A-Z]{2}$/, p.name);
    }
  });
});

describe('exonym table', () => {
  it('every row names a GeoNames city of that country', () => {
    const t = g.cities;
    const missing = loadExonyms()
      .filter((e) => !t.name.some((n, i) => n === e.geonamesName && t.country[i] === e.country))
      .map((e) => `${e.geonamesName}, ${e.country}`);
    assert.deepEqual(missing, []);
    assert.equal(g.stats.exonym_cities, loadExonyms().length);
  });
});

describe('GEO_ATTRIBUTION', () => {
  it('credits every dataset with a licence and a URL', () => {
    for (const a of GEO_ATTRIBUTION) {
      assert.ok(a.dataset && a.licence && a.use, JSON.stringify(a));
      assert.match(a.url, /^https:\/\//);
    }
    const all = GEO_ATTRIBUTION.map((a) => a.dataset + a.licence).join(' ');
    for (const must of ['GeoNames', 'CC BY 4.0', 'Natural Earth', 'OpenStreetMap', 'ODbL']) assert.ok(all.includes(must), must);
  });
});
