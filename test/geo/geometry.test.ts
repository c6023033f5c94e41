import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { boxContains, boxPolygon, coverIntervals, haversineKm, pointInPolygon, samplePoints, wrapLng } from '../../src/geo/geometry.js';
import { detectClass, editDistance, normalizeName, stripClassWords } from '../../src/geo/normalize.js';
import { countryAt, countryPoint, inCountry } from '../../src/geo/countries.js';
import { gazetteer } from '../../src/geo/gazetteer.js';

describe('haversineKm', () => {
  it('Paris–London is about 344 km; a degree of latitude about 111 km', () => {
    assert.ok(Math.abs(haversineKm(48.8566, 2.3522, 51.5074, -0.1278) - 343.5) < 2);
    assert.ok(Math.abs(haversineKm(0, 0, 1, 0) - 111.2) < 0.5);
  });
  it('is short across the antimeridian', () => {
    assert.ok(haversineKm(0, 179.9, 0, -179.9) < 25);
  });
});

describe('boxes across the antimeridian', () => {
  const fiji = { min_lat: -21, min_lng: 176, max_lat: -12, max_lng: -178 };
  it('contain points on both sides of ±180', () => {
    assert.ok(boxContains(fiji, -17, 179.5));
    assert.ok(boxContains(fiji, -17, -179.5));
    assert.ok(!boxContains(fiji, -17, 170));
  });
  it('coverIntervals picks the complement of the widest gap', () => {
    const b = coverIntervals(
      [
        [177, 180],
        [-180, -178],
      ],
      -20,
      -15,
    );
    assert.deepEqual([b.min_lng, b.max_lng], [177, -178]);
  });
  it('boxPolygon splits a crossing box in two', () => {
    assert.equal(boxPolygon(fiji).type, 'MultiPolygon');
    assert.equal(boxPolygon({ min_lat: 0, min_lng: 0, max_lat: 1, max_lng: 1 }).type, 'Polygon');
  });
  it('wrapLng folds into [-180, 180]', () => {
    assert.equal(wrapLng(190), -170);
    assert.equal(wrapLng(-190), 170);
    assert.equal(wrapLng(180), 180);
  });
});

describe('samplePoints', () => {
  const box = { min_lat: 10, min_lng: 20, max_lat: 12, max_lng: 23 };
  it('is deterministic per seed, inside the box, at most max', () => {
    const a = samplePoints(box, 'x', 64);
    assert.deepEqual(samplePoints(box, 'x', 64), a);
    assert.notDeepEqual(samplePoints(box, 'y', 64), a);
    assert.equal(a.length, 64);
    for (const p of a) assert.ok(boxContains(box, p.lat, p.lng));
  });
  it('keeps only accepted points and spreads them', () => {
    const tri = {
      type: 'Polygon' as const,
      coordinates: [
        [
          [20, 10],
          [23, 10],
          [20, 12],
          [20, 10],
        ],
      ],
    };
    const pts = samplePoints(box, 's', 64, (la, ln) => pointInPolygon(tri, la, ln));
    assert.ok(pts.length > 30 && pts.length <= 64);
    for (const p of pts) assert.ok(pointInPolygon(tri, p.lat, p.lng));
  });
});

describe('countries (Natural Earth)', () => {
  const g = gazetteer();
  it('point-in-country works across the antimeridian (Fiji, Chukotka) and at the south pole', () => {
    assert.equal(countryAt(g.countries, -16.8, -179.95)?.alpha2, 'FJ');
    assert.equal(countryAt(g.countries, 66.5, -179.5)?.alpha2, 'RU');
    assert.equal(countryAt(g.countries, -89, 0)?.alpha2, 'AQ');
    assert.equal(countryAt(g.countries, 48.85, 2.35)?.alpha2, 'FR');
    assert.equal(countryAt(g.countries, 0, -30), undefined);
  });
  it('every representative point lies inside its own country', () => {
    const outside = g.countries
      .filter((c) => {
        const p = countryPoint(c);
        return !inCountry(c, p.lat, p.lng);
      })
      .map((c) => c.alpha2);
    assert.deepEqual(outside, []);
  });
});

describe('normalizeName', () => {
  const cases: Array<[string, string]> = [
    ['São Paulo', 'sao paulo'],
    ['Köln', 'koln'],
    ['Łódź', 'lodz'],
    ["Côte d'Ivoire", 'cote divoire'],
    ['Arkhangel’sk', 'arkhangelsk'],
    ['  New-York,  NY ', 'new york ny'],
    ['Αθήνα', 'αθηνα'],
    ['Москва', 'москва'],
    ['मुंबई', 'मुंबई'],
    ['ירושלים', 'ירושלים'],
    ['Straße', 'strasse'],
  ];
  for (const [input, want] of cases) it(`${input} → ${want}`, () => assert.equal(normalizeName(input), want));
  it('does not mutate its input', () => {
    const s = 'Zürich';
    normalizeName(s);
    assert.equal(s, 'Zürich');
  });
});

describe('class words and edit distance', () => {
  it('detects the class and strips it', () => {
    assert.equal(detectClass('amazon river')?.label, 'river');
    assert.equal(detectClass('yellowstone national park')?.label, 'national park');
    assert.equal(detectClass('paris'), undefined);
    assert.equal(stripClassWords('river of the thames', detectClass('river of the thames')!), 'thames');
  });
  it('counts transpositions as one edit and stops early', () => {
    assert.equal(editDistance('paris', 'pairs', 2), 1);
    assert.equal(editDistance('london', 'londn', 2), 1);
    assert.equal(editDistance('abc', 'xyz', 1), 2);
  });
});
