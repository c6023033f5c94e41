import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { writeFileSync } from 'node:fs';
import { binOf, CLASSES, LAND, NATURAL_EARTH_CREDIT, renderCoverageMap } from '../../../src/primitives/pictures/coverage-map.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { artefactPath, seedCoverage } from '../../support/pictures.js';
import { allElements, byId, insideEvenOdd, parseXml, pathPolygons, textOf } from '../../support/svg-parse.js';
import { attest } from './reads/helpers.js';

const op = makeAttester('coverage-map-operator');
const fact = (cell: string) => ({ kind: 'primary', cell, band: 'indices.ndvi', tslot: 680, value: 0.5, unit: 'unitless' });

const PARIS = P.cellOf(48.8566, 2.3522); // bin col 182, row 41
const NEAR_PARIS = P.cellOf(48.86, 2.36); // same bin, another cell
const CAPE_TOWN = P.cellOf(-33.9, 18.4); // bin col 198, row 123
const TOKYO = P.cellOf(35.68, 139.69); // bin col 319, row 54

interface Bin {
  x: number;
  y: number;
  count: number;
}

/** The one-degree bin rects of a map, in document order. */
function bins(svg: string): Bin[] {
  return [...svg.matchAll(/<rect x="(\d+)" y="(\d+)" width="1" height="1" [^>]*data-count="(\d+)"\/>/g)].map((m) => ({ x: Number(m[1]), y: Number(m[2]), count: Number(m[3]) }));
}

/** A root attribute of the map. */
function rootAttr(svg: string, name: string): string | undefined {
  const root = /<svg [^>]*>/.exec(svg)?.[0] ?? '';
  return new RegExp(` ${name}="([^"]*)"`).exec(root)?.[1];
}

async function getMap(t: TestApp) {
  return t.app.inject({ method: 'GET', url: '/v1/coverage_map.svg' });
}

describe('GET /v1/coverage_map.svg on an empty corpus', () => {
  let t: TestApp;
  before(async () => {
    t = await build();
  });
  after(async () => t.close());

  it('is an SVG that scales to its container, saying no cells are stored, with no bins', async () => {
    const r = await getMap(t);
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'image/svg+xml; charset=utf-8');
    assert.equal(r.headers['cache-control'], 'public, max-age=60');
    assert.match(r.body, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 360 206" width="100%" height="100%" preserveAspectRatio="xMidYMid meet"/);
    assert.match(r.body, /<\/svg>\n$/);
    assert.match(r.body, /<text [^>]*>no cells stored yet<\/text>/);
    assert.deepEqual(bins(r.body), []);
    assert.equal(rootAttr(r.body, 'data-cells'), '0');
    assert.equal(rootAttr(r.body, 'data-bins'), '0');
    assert.equal(rootAttr(r.body, 'data-truncated'), 'false');
  });
});

describe('GET /v1/coverage_map.svg with stored cells', () => {
  let t: TestApp;
  before(async () => {
    t = await build({ attesterKeys: [op.publicKey] });
    await attest(t, op, [fact(PARIS), fact(NEAR_PARIS), fact(CAPE_TOWN)]);
  });
  after(async () => t.close());

  it('shows public cells only: a scoped (private) fact leaves the map as it was', async () => {
    const before = await getMap(t);
    const SYDNEY = P.cellOf(-33.87, 151.21); // bin col 331, row 123
    await attest(t, op, [{ ...fact(SYDNEY), scope: { user_id: 'alice' } }]);
    const after = await getMap(t);
    assert.deepEqual(bins(after.body), bins(before.body));
    assert.equal(rootAttr(after.body, 'data-cells'), rootAttr(before.body, 'data-cells'));
    assert.ok(!bins(after.body).some((b) => b.x === 331 && b.y === 123));
  });

  it('draws exactly the occupied bins at their plate-carree positions with their cell counts', async () => {
    const r = await getMap(t);
    assert.equal(r.statusCode, 200);
    assert.deepEqual(bins(r.body), [
      { x: 182, y: 41, count: 2 },
      { x: 198, y: 123, count: 1 },
    ]);
    assert.equal(rootAttr(r.body, 'data-cells'), '3');
    assert.equal(rootAttr(r.body, 'data-bins'), '2');
    assert.equal(rootAttr(r.body, 'data-truncated'), 'false');
    assert.doesNotMatch(r.body, /no cells stored yet/);
  });

  it('an unchanged corpus is not rescanned; a fact attested after a request shows on the next', async () => {
    const store = t.service.store as { cellsWithPrefix: (...args: unknown[]) => Promise<unknown> };
    const scan = store.cellsWithPrefix;
    let scans = 0;
    store.cellsWithPrefix = (...args) => {
      scans++;
      return scan(...args);
    };
    try {
      const first = await getMap(t);
      const second = await getMap(t);
      assert.equal(second.body, first.body);
      assert.ok(scans <= 1, `${scans} scans for two requests on one corpus`);
      const seen = scans;
      await attest(t, op, [fact(TOKYO), fact(PARIS)]); // one new cell, one already mapped
      const next = await getMap(t);
      assert.equal(scans, seen + 1);
      assert.deepEqual(bins(next.body), [
        { x: 182, y: 41, count: 2 },
        { x: 319, y: 54, count: 1 },
        { x: 198, y: 123, count: 1 },
      ]);
      assert.equal(rootAttr(next.body, 'data-cells'), '4');
    } finally {
      store.cellsWithPrefix = scan;
    }
  });

  it('is documented in the OpenAPI document as image/svg+xml', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const op200 = doc.paths['/v1/coverage_map.svg'].get.responses['200'];
    assert.ok(op200.content['image/svg+xml']);
  });
});

describe('GET /v1/coverage_map.svg past the scan cap', () => {
  let t: TestApp;
  before(async () => {
    t = await build({ attesterKeys: [op.publicKey] }, { SVC_SCAN_CELL_LIMIT: '2' });
    await attest(t, op, [fact(PARIS), fact(NEAR_PARIS), fact(CAPE_TOWN)]);
  });
  after(async () => t.close());

  it('maps only the scanned cells and says the map is partial', async () => {
    const r = await getMap(t);
    assert.equal(r.statusCode, 200);
    assert.equal(rootAttr(r.body, 'data-truncated'), 'true');
    assert.equal(rootAttr(r.body, 'data-cells'), '2');
    assert.equal(
      bins(r.body).reduce((n, b) => n + b.count, 0),
      2,
    );
    assert.match(r.body, /scan cap reached/);
  });
});

describe('GET /v1/coverage_map.svg over a few hundred stored cells', () => {
  let t: TestApp;
  let cells: string[];
  let svg: string;
  before(async () => {
    t = await build({ attesterKeys: [op.publicKey] });
    cells = await seedCoverage(t, op);
    svg = (await getMap(t)).body;
    writeFileSync(artefactPath('coverage-map.svg'), svg);
  });
  after(async () => t.close());

  it('parses as XML, stays small and scales to its container', () => {
    const root = parseXml(svg);
    assert.equal(root.name, 'svg');
    assert.equal(root.attrs.viewBox, '0 0 360 206');
    assert.equal(root.attrs.width, '100%');
    assert.equal(root.attrs.preserveAspectRatio, 'xMidYMid meet');
    assert.ok(Buffer.byteLength(svg) < 300_000, `${Buffer.byteLength(svg)} bytes`);
  });

  it('counts exactly the stored cells, bin by bin, in several colour classes', () => {
    const expected = new Map<string, number>();
    for (const c of cells) {
      const { col, row } = binOf(P.cellCenter(c));
      expected.set(`${col},${row}`, (expected.get(`${col},${row}`) ?? 0) + 1);
    }
    const drawn = bins(svg);
    assert.deepEqual(new Map(drawn.map((b) => [`${b.x},${b.y}`, b.count])), expected);
    assert.equal(rootAttr(svg, 'data-cells'), String(cells.length));
    assert.equal(rootAttr(svg, 'data-bins'), String(expected.size));
    const fills = new Set([...svg.matchAll(/width="1" height="1" fill="([^"]+)" data-count/g)].map((m) => m[1]));
    assert.deepEqual([...fills].sort(), ['#ffffb2', '#fed976', '#feb24c', '#fd8d3c', '#f03b20'].sort(), 'five of the six classes are in the fixture');
  });

  it('draws Natural Earth land where land is (across ±180° and round the pole) and water where it is not', () => {
    const root = parseXml(svg);
    const land = byId(root, 'land')!;
    assert.equal(land.attrs.fill, LAND);
    const polys = pathPolygons(land.attrs.d!);
    const points = polys.reduce((n, p) => n + p.length, 0);
    assert.ok(points > 5_000 && points < 30_000, `${points} land vertices`);
    const at = (lat: number, lng: number) => insideEvenOdd(polys, lng + 180, 90 - lat);
    const landAt = {
      Paris: [48.86, 2.35],
      Sahara: [25, 20],
      'central Australia': [-25, 133.5],
      'inner Brazil': [-10, -50],
      Antarctica: [-85, 0],
      'Chukotka west of 180°': [66.5, 179.5],
      'Chukotka east of 180°': [66, -175],
    };
    for (const [name, [lat, lng]] of Object.entries(landAt)) assert.ok(at(lat!, lng!), `${name} is land`);
    const waterAt = { 'central Pacific': [0, -150], 'North Atlantic': [30, -30], 'Indian Ocean': [-30, 80], Mediterranean: [34.5, 18], 'Caspian Sea': [42, 51] };
    for (const [name, [lat, lng]] of Object.entries(waterAt)) assert.ok(!at(lat!, lng!), `${name} is water`);
    const borders = pathPolygons(byId(root, 'borders')!.attrs.d!);
    assert.ok(borders.length > 150, `${borders.length} border lines`);
    // The basemap is drawn beneath the bins.
    const order = allElements(root)
      .map((e) => e.attrs.id)
      .filter(Boolean);
    assert.ok(order.indexOf('basemap') < order.indexOf('bins'));
  });

  it('carries a legend: title, every colour class with its label, the counts and the Natural Earth credit', () => {
    const legend = byId(parseXml(svg), 'legend')!;
    const swatches = allElements(legend).filter((e) => e.attrs.class === 'swatch');
    assert.deepEqual(
      swatches.map((e) => e.attrs.fill),
      CLASSES.map((c) => c.fill),
    );
    const texts = allElements(legend)
      .filter((e) => e.name === 'text')
      .map(textOf);
    for (const c of CLASSES) assert.ok(texts.includes(c.label), `label ${c.label}`);
    assert.ok(texts.includes('Stored cells per 1° bin'));
    assert.ok(texts.includes(`${cells.length} cells in ${rootAttr(svg, 'data-bins')} bins`));
    assert.ok(texts.includes(NATURAL_EARTH_CREDIT));
    assert.match(NATURAL_EARTH_CREDIT, /Natural Earth/);
  });
});

describe('renderCoverageMap', () => {
  const meta = { truncated: false, scanned: 0, prefix: 'svc' };

  it('the map edges land in valid bins: poles in the first and last rows, ±180° in the end columns', () => {
    assert.deepEqual(binOf({ lat: 90, lng: 0 }), { col: 180, row: 0 });
    assert.deepEqual(binOf({ lat: -90, lng: 0 }), { col: 180, row: 179 });
    assert.deepEqual(binOf({ lat: 0, lng: 180 }), { col: 359, row: 90 });
    assert.deepEqual(binOf({ lat: 0, lng: -180 }), { col: 0, row: 90 });
    assert.deepEqual(binOf({ lat: 89.5, lng: 179.5 }), { col: 359, row: 0 });
    const svg = renderCoverageMap(
      [
        { lat: 90, lng: 0 },
        { lat: -90, lng: 0 },
        { lat: 0, lng: 180 },
        { lat: 0, lng: -180 },
        { lat: -90, lng: -180 },
      ],
      { ...meta, scanned: 5 },
    );
    assert.deepEqual(bins(svg), [
      { x: 180, y: 0, count: 1 },
      { x: 0, y: 90, count: 1 },
      { x: 359, y: 90, count: 1 },
      { x: 0, y: 179, count: 1 },
      { x: 180, y: 179, count: 1 },
    ]);
  });

  it('decoded pole and antimeridian cells stay on the map', () => {
    // Each pole is one cell (centre longitude −180°); +180° and −180° are one cell too.
    const cells = [P.cellOf(90, 0), P.cellOf(-90, 0), P.cellOf(0.5, 180), P.cellOf(0.5, -180), P.cellOf(0.5, 179.9999)];
    assert.equal(cells[2], cells[3]);
    const svg = renderCoverageMap(
      [...new Set(cells)].map((c) => P.cellCenter(c)),
      { ...meta, scanned: 4 },
    );
    assert.deepEqual(bins(svg), [
      { x: 0, y: 0, count: 1 },
      { x: 0, y: 89, count: 1 },
      { x: 359, y: 89, count: 1 },
      { x: 0, y: 179, count: 1 },
    ]);
  });

  it('is deterministic, colours by a log scale of the count, and escapes its text', () => {
    const many = [...Array.from({ length: 300 }, () => ({ lat: 10.5, lng: 10.5 })), { lat: -10.5, lng: -10.5 }];
    const a = renderCoverageMap(many, { ...meta, scanned: 301, prefix: 'a<b&"c' });
    assert.equal(renderCoverageMap(many, { ...meta, scanned: 301, prefix: 'a<b&"c' }), a);
    const fills = [...a.matchAll(/width="1" height="1" fill="([^"]+)" data-count="(\d+)"/g)].map((m) => [m[2], m[1]]);
    assert.equal(fills.length, 2);
    assert.notEqual(fills[0]![1], fills[1]![1]);
    assert.match(a, /<title>a&lt;b&amp;&quot;c coverage map: 301 cells in 2 one-degree bins<\/title>/);
    assert.doesNotMatch(a, /a<b/);
  });

  it('skips points that are not finite numbers rather than inventing a bin', () => {
    const svg = renderCoverageMap(
      [
        { lat: Number.NaN, lng: 0 },
        { lat: 0, lng: Number.POSITIVE_INFINITY },
      ],
      { ...meta, scanned: 2 },
    );
    assert.deepEqual(bins(svg), []);
    assert.equal(rootAttr(svg, 'data-cells'), '0');
  });
});
