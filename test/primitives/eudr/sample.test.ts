import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pointInPolygon } from '../../../src/geo/geometry.js';
import { cellBbox, cellCenter, cellOf, PITCH_LAT_DEG, PITCH_LNG_DEG } from '../../../src/protocol/cell64.js';
import { parsePlotGeometry, plotAreaHa } from '../../../src/primitives/eudr/geometry.js';
import { defaultCellsPerPlot, MAX_CELLS_PER_PLOT, samplePlotCells } from '../../../src/primitives/eudr/sample.js';

const F = 'geometry_geojson';
const square = (lng: number, lat: number, side: number) => [
  [lng, lat],
  [lng + side, lat],
  [lng + side, lat + side],
  [lng, lat + side],
  [lng, lat],
];
const polygon = (...rings: number[][][]) => parsePlotGeometry({ type: 'Polygon', coordinates: rings }, F);

describe('defaultCellsPerPlot', () => {
  it('uses one cell for a point and about 110 per hectare within 1..51 200', () => {
    assert.equal(defaultCellsPerPlot(null), 1);
    assert.equal(defaultCellsPerPlot(0), 1);
    assert.equal(defaultCellsPerPlot(0.001), 1);
    assert.equal(defaultCellsPerPlot(1), 110);
    assert.equal(defaultCellsPerPlot(2.5), 275);
    assert.equal(defaultCellsPerPlot(465), 51_150);
    assert.equal(defaultCellsPerPlot(466), MAX_CELLS_PER_PLOT);
    assert.equal(defaultCellsPerPlot(1e9), 51_200);
  });
});

describe('samplePlotCells', () => {
  const plot = polygon(square(-5.5, 6.8, 0.01)); // ≈ 123 ha in Côte d'Ivoire

  it('gives a point its own cell', () => {
    const g = parsePlotGeometry({ type: 'Point', coordinates: [-5.5, 6.8] }, F);
    const cells = samplePlotCells(g, 50, 'seed');
    assert.equal(cells.length, 1);
    assert.equal(cells[0].cell, cellOf(6.8, -5.5));
    assert.ok(Math.abs(cells[0].lat - 6.8) <= PITCH_LAT_DEG && Math.abs(cells[0].lng + 5.5) <= PITCH_LNG_DEG);
  });

  it('is deterministic, and the seed changes the sample', () => {
    const a = samplePlotCells(plot, 200, 'plot-1');
    assert.deepEqual(samplePlotCells(plot, 200, 'plot-1'), a);
    assert.notDeepEqual(samplePlotCells(plot, 200, 'plot-2'), a);
  });

  it('returns distinct cells, at most n and close to n', () => {
    for (const n of [1, 7, 100, 1000]) {
      const cells = samplePlotCells(plot, n, 's');
      assert.ok(cells.length <= n, `${cells.length} > ${n}`);
      assert.ok(cells.length >= Math.floor(n * 0.8), `${cells.length} ≪ ${n}`);
      assert.equal(new Set(cells.map((c) => c.cell)).size, cells.length);
    }
    assert.deepEqual(samplePlotCells(plot, 0, 's'), []);
  });

  it('gives each cell its centre, as cellCenter does', () => {
    for (const c of samplePlotCells(plot, 300, 'centre')) assert.deepEqual({ lat: c.lat, lng: c.lng }, cellCenter(c.cell));
    const south = polygon(square(-70.001, -45.001, 0.002));
    for (const c of samplePlotCells(south, 50, 'centre')) assert.deepEqual({ lat: c.lat, lng: c.lng }, cellCenter(c.cell));
  });

  it('orders cells row by row, south to north', () => {
    const cells = samplePlotCells(plot, 400, 's');
    const k = Math.ceil(Math.sqrt(400));
    const row = (lat: number) => Math.floor(((lat - 6.8) / 0.01) * k);
    for (let i = 1; i < cells.length; i++) assert.ok(row(cells[i].lat) >= row(cells[i - 1].lat) - 1);
  });

  it('keeps a small plot’s cells within its box', () => {
    // About 30 m × 30 m: a handful of cells.
    const small = polygon(square(-5.5, 6.8, 0.0003));
    const cells = samplePlotCells(small, defaultCellsPerPlot(plotAreaHa(small)), 'small');
    assert.ok(cells.length >= 1 && cells.length <= defaultCellsPerPlot(plotAreaHa(small)));
    for (const c of cells) {
      const b = cellBbox(c.cell);
      assert.ok(b.max_lat >= 6.8 && b.min_lat <= 6.8003 && b.max_lng >= -5.5 && b.min_lng <= -5.4997, `${c.cell} lies outside the plot's box`);
      assert.ok(c.lat >= b.min_lat && c.lat <= b.max_lat && c.lng >= b.min_lng && c.lng <= b.max_lng);
    }
  });

  it('samples no cell inside a hole', () => {
    const hole = square(-5.497, 6.803, 0.004).reverse();
    const holed = polygon(square(-5.5, 6.8, 0.01), hole);
    const cells = samplePlotCells(holed, 2000, 'hole');
    assert.ok(cells.length > 1500);
    // A cell whose point fell just outside the hole may have its centre half a pitch inside it.
    const inner = square(-5.497 + PITCH_LNG_DEG, 6.803 + PITCH_LAT_DEG, 0.004 - 2 * PITCH_LAT_DEG);
    for (const c of cells) assert.ok(!pointInPolygon({ type: 'Polygon', coordinates: [inner] }, c.lat, c.lng), `${c.cell} is inside the hole`);
  });

  it('follows the polygon, not its box (a triangle)', () => {
    const tri = polygon([
      [-5.5, 6.8],
      [-5.49, 6.8],
      [-5.5, 6.81],
      [-5.5, 6.8],
    ]);
    const cells = samplePlotCells(tri, 300, 't');
    assert.ok(cells.length >= 240 && cells.length <= 300, `${cells.length}`);
    const margin = 2 * PITCH_LNG_DEG;
    for (const c of cells) assert.ok(c.lat - 6.8 + (c.lng + 5.5) <= 0.01 + margin, `${c.cell} is beyond the hypotenuse`);
  });

  it('returns one cell inside a plot smaller than a cell', () => {
    const tiny = polygon(square(-5.5, 6.8, 0.00002)); // about 2 m × 2 m
    const cells = samplePlotCells(tiny, 5, 'x');
    assert.equal(cells.length, 1);
    assert.equal(cells[0].cell, cellOf(6.80001, -5.49999));
    // A thin L whose centroid falls outside it still gets a cell of its own.
    const ell = polygon([
      [0, 0],
      [0.00003, 0],
      [0.00003, 0.000001],
      [0.000001, 0.000001],
      [0.000001, 0.00003],
      [0, 0.00003],
      [0, 0],
    ]);
    const one = samplePlotCells(ell, 3, 'ell');
    assert.equal(one.length, 1);
    assert.deepEqual(samplePlotCells(ell, 3, 'ell'), one);
  });

  it('stays quick and bounded for a large plot', () => {
    const big = polygon(square(-55, -10, 0.1)); // ≈ 12 000 ha
    const n = defaultCellsPerPlot(plotAreaHa(big));
    assert.equal(n, MAX_CELLS_PER_PLOT);
    const t0 = Date.now();
    const cells = samplePlotCells(big, n, 'big');
    assert.ok(cells.length <= n && cells.length > 0.9 * n, `${cells.length}`);
    assert.ok(Date.now() - t0 < 5000);
  });
});
