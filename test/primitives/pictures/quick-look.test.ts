import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { encodePngRgb, encodePngRgba } from '../../../src/lib/png.js';
import { glyph } from '../../../src/primitives/pictures/font5x7.js';
import { formatValue, gridStats, MIN_WIDTH, rampColour, renderQuickLook } from '../../../src/primitives/pictures/quick-look.js';
import { encodeGrid } from '../../../src/primitives/rasters/grid-format.js';
import { decodePng, distinctColours, near, pixel } from '../../support/png-decode.js';
import { GRID_H, GRID_W, gridFixture, gridValue, NODATA_BLOCK, artefactPath } from '../../support/pictures.js';

const UNIT = 's2.B04 surface reflectance (unitless)';
const VIRIDIS_START = [0x44, 0x01, 0x54];
const VIRIDIS_END = [0xfd, 0xe7, 0x25];

function grid(width: number, height: number, value: (c: number, r: number) => number): Uint8Array {
  const values = new Float32Array(width * height);
  for (let r = 0; r < height; r++) for (let c = 0; c < width; c++) values[r * width + c] = value(c, r);
  return encodeGrid({ width, height, epsg: 32633, geotransform: [0, 10, 0, 0, 0, -10], values });
}

/** Whether any pixel of rows [y0, y1) is close to `rgb`. */
function hasColour(png: ReturnType<typeof decodePng>, y0: number, y1: number, rgb: number[], tol = 6): boolean {
  for (let y = y0; y < y1; y++) for (let x = 0; x < png.width; x++) if (near(pixel(png, x, y).slice(0, 3), rgb, tol)) return true;
  return false;
}

describe('renderQuickLook on a grid of known values', () => {
  const ql = renderQuickLook(gridFixture(), { unit: UNIT, title: 'fixture' });
  const png = decodePng(ql.png);
  writeFileSync(artefactPath('quick-look-fixture.png'), ql.png);
  const k = 512 / GRID_W; // 64 columns → enlarged 8 times

  it('is an RGBA PNG: the grid enlarged by a whole factor, a legend strip beneath', () => {
    assert.equal(png.colourType, 6);
    assert.equal(ql.scale, k);
    assert.deepEqual(ql.map, { width: GRID_W * k, height: GRID_H * k });
    assert.equal(png.width, GRID_W * k);
    assert.equal(png.height, ql.height);
    assert.ok(png.height > GRID_H * k + 60, 'the legend strip adds rows');
    assert.equal(ql.legendTop, GRID_H * k);
  });

  it('stretches between the 2nd and 98th percentiles: the outliers do not flatten the ramp', () => {
    const s = ql.stats;
    assert.equal(s.valid, GRID_W * GRID_H - NODATA_BLOCK * NODATA_BLOCK);
    assert.equal(s.nodata, NODATA_BLOCK * NODATA_BLOCK);
    assert.equal(s.min, -1000);
    assert.equal(s.max, 1000);
    assert.ok(s.low! > 0 && s.low! < 0.05, `low ${s.low}`);
    assert.ok(s.high! > 0.55 && s.high! < 0.7, `high ${s.high}`);
    assert.equal(png.text['svc stretch'], `${s.low} ${s.high}`);
    assert.equal(png.text['svc range'], '-1000 1000');
    assert.equal(png.text['svc unit'], UNIT);
    assert.equal(png.text['svc grid'], `${GRID_W}x${GRID_H} EPSG:32633`);
    assert.equal(png.text.Title, 'fixture');
    assert.match(png.text.Software!, /^svc quick-look v1 \(viridis, p2-p98\)$/);
  });

  it('paints each sample in viridis by its value, no data transparent', () => {
    const s = ql.stats;
    for (const [c, r] of [
      [10, 10],
      [30, 20],
      [50, 39],
      [63, 0],
      [0, 39],
    ] as const) {
      const v = gridValue(c, r);
      const want = rampColour((v - s.low!) / (s.high! - s.low!));
      assert.deepEqual(pixel(png, c * k + k / 2, r * k + k / 2), [...want, 255], `sample (${c}, ${r}) = ${v}`);
    }
    assert.equal(pixel(png, 3 * k, 3 * k)[3], 0, 'no data is transparent');
    assert.deepEqual(pixel(png, (GRID_W - 1) * k + 1, (GRID_H - 1) * k + 1), [...VIRIDIS_END, 255], 'the hot outlier is clamped to the ramp end');
    assert.deepEqual(pixel(png, (GRID_W - 2) * k + 1, (GRID_H - 1) * k + 1), [...VIRIDIS_START, 255], 'the cold outlier is clamped to the ramp start');
    // Brighter eastwards along a row (viridis rises in lightness).
    const y = 20 * k;
    let prev = -1;
    for (let c = 8; c < GRID_W - 2; c += 4) {
      const [r, g, b] = pixel(png, c * k, y);
      const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
      assert.ok(lum >= prev, `lightness rises at column ${c}`);
      prev = lum;
    }
    assert.ok(distinctColours(png, 0, ql.legendTop) > 60, 'not uniform');
  });

  it('carries a legend strip: the ramp from end to end, and drawn labels', () => {
    const top = ql.legendTop;
    assert.ok(hasColour(png, top, png.height, VIRIDIS_START), 'ramp start in the legend');
    assert.ok(hasColour(png, top, png.height, VIRIDIS_END), 'ramp end in the legend');
    assert.ok(hasColour(png, top, png.height, [30, 30, 30], 0), 'label ink in the legend');
    for (let y = top; y < png.height; y++) assert.equal(pixel(png, 0, y)[3], 255, 'the strip is opaque');
    assert.ok(distinctColours(png, top, png.height) > 100);
  });

  it('is a function of the bytes: the same grid gives the same PNG', () => {
    assert.deepEqual(renderQuickLook(gridFixture(), { unit: UNIT, title: 'fixture' }).png, ql.png);
  });
});

describe('renderQuickLook edge cases', () => {
  it('a constant grid is one colour with its value in the legend', () => {
    const ql = renderQuickLook(
      grid(10, 10, () => 2.5),
      { unit: 'unit not recorded' },
    );
    const png = decodePng(ql.png);
    assert.deepEqual([ql.stats.low, ql.stats.high], [2.5, 2.5]);
    assert.equal(png.width, 510);
    assert.equal(distinctColours(png, 0, ql.legendTop), 1);
    assert.deepEqual(pixel(png, 5, 5), [...rampColour(0.5), 255]);
  });

  it('a grid with no data at all is transparent and says so', () => {
    const ql = renderQuickLook(
      grid(4, 3, () => Number.NaN),
      { unit: 'unit not recorded' },
    );
    const png = decodePng(ql.png);
    assert.equal(ql.stats.valid, 0);
    assert.equal(ql.stats.low, null);
    for (let y = 0; y < ql.legendTop; y++) for (let x = 0; x < ql.map.width; x++) assert.equal(pixel(png, x, y)[3], 0);
    assert.equal(png.text['svc stretch'], 'none');
  });

  it('a narrow grid is padded to the legend width; a long one is thinned to at most 1024 pixels', () => {
    const narrow = renderQuickLook(
      grid(5, 200, (c, r) => c + r),
      { unit: 'X' },
    );
    assert.equal(narrow.width, MIN_WIDTH);
    assert.deepEqual(narrow.map, { width: 10, height: 400 });
    const long = renderQuickLook(
      grid(1500, 3, (c) => c),
      { unit: 'X' },
    );
    assert.deepEqual(long.map, { width: 750, height: 2 });
    assert.equal(long.scale, 0.5);
  });

  it('refuses bytes that are not a grid file', () => {
    assert.throws(() => renderQuickLook(new Uint8Array(100), { unit: 'X' }), RangeError);
  });

  it('labels values briefly', () => {
    assert.equal(formatValue(0), '0');
    assert.equal(formatValue(0.0123456), '0.01235');
    assert.equal(formatValue(-1000), '-1000');
    assert.equal(formatValue(1.5e-5), '1.50e-5');
    assert.equal(formatValue(2.5e7), '2.50e+7');
  });

  it('gridStats counts only finite samples', () => {
    const s = gridStats([Number.NaN, 1, 2, 3, Number.POSITIVE_INFINITY]);
    assert.deepEqual([s.valid, s.nodata, s.min, s.max], [3, 2, 1, 3]);
  });
});

describe('font and PNG writer', () => {
  it('every glyph is seven rows of five bits; unknown characters are drawn as ?', () => {
    for (const ch of " 0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.,-+:;/%()[]=<>?!_'*°µ²×≥≤–−") {
      const rows = glyph(ch);
      assert.equal(rows.length, 7, ch);
      assert.ok(
        rows.every((r) => r < 32),
        ch,
      );
    }
    assert.deepEqual(glyph('a'), glyph('A'));
    assert.deepEqual(glyph('€'), glyph('?'));
  });

  it('encodePngRgba round-trips pixels, alpha and tEXt; encodePngRgb is unchanged RGB', () => {
    const rgba = Uint8Array.from({ length: 3 * 2 * 4 }, (_, i) => (i * 37) & 0xff);
    const png = decodePng(encodePngRgba(3, 2, rgba, { Comment: 'hello', 'svc unit': 'm' }));
    assert.deepEqual([png.width, png.height, png.colourType], [3, 2, 6]);
    assert.deepEqual(png.rgba, rgba);
    assert.deepEqual(png.text, { Comment: 'hello', 'svc unit': 'm' });
    const rgb = Uint8Array.from({ length: 2 * 2 * 3 }, (_, i) => i * 20);
    const p2 = decodePng(encodePngRgb(2, 2, rgb));
    assert.equal(p2.colourType, 2);
    assert.deepEqual(pixel(p2, 1, 1), [180, 200, 220, 255]);
    assert.throws(() => encodePngRgba(1, 1, new Uint8Array(4), { '': 'x' }), RangeError);
  });
});
