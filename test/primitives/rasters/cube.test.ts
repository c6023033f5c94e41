/**
 * The pieces of band_cube and raster_bundle that need no upstream (docs/rasters.md): the cube
 * file's exact bytes (header, slice entries, planes, one NaN pattern, +0 for -0), which scene
 * grids count as the cube's grid, the tslot range and its cap, and the cube and raster set token
 * grammar.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SvcError } from '../../../src/protocol/errors.js';
import { cubeToken, parseCubeToken, parseRastersetToken, rastersetToken } from '../../../src/protocol/token-grammar.js';
import { slotRange } from '../../../src/primitives/rasters/band-cube.js';
import { CUBE_ENTRY_BYTES, CUBE_HEADER_BYTES, decodeCube, encodeCube } from '../../../src/primitives/rasters/cube-format.js';
import { alignedWindow, cubeSourceVersions } from '../../../src/primitives/rasters/cube-recipe.js';
import { setCid } from '../../../src/primitives/rasters/raster-bundle.js';

const GT = [500000, 10, 0, 5000000, 0, -10] as const;

describe('cube file', () => {
  const cube = {
    width: 2,
    height: 2,
    epsg: 32633,
    geotransform: GT,
    slices: [
      { tslot: 688, captured_s: 1784541720, scene_id: 'S2B_33TWL_20260720_0_L2A', values: [0.1, Number.NaN, -0, 2] },
      { tslot: 692, captured_s: 1794391395, scene_id: `X${'y'.repeat(70)}`, values: [-0.05, 0.25, 1e-4, Number.NaN] },
    ],
  };

  it('writes the grid header with magic SVCCUBE and the slice count, one 80-byte entry per slice, then the planes', () => {
    const b = encodeCube(cube);
    assert.equal(b.length, CUBE_HEADER_BYTES + 2 * CUBE_ENTRY_BYTES + 2 * 4 * 4);
    const dv = new DataView(b.buffer);
    assert.equal(Buffer.from(b.subarray(0, 8)).toString('latin1'), 'SVCCUBE\u0000');
    assert.deepEqual([dv.getUint32(8, true), dv.getUint32(12, true), dv.getUint32(16, true), dv.getUint32(20, true)], [1, 2, 2, 32633]);
    assert.deepEqual(
      Array.from({ length: 6 }, (_, i) => dv.getFloat64(24 + 8 * i, true)),
      [...GT],
    );
    assert.deepEqual([dv.getUint32(72, true), dv.getUint32(76, true)], [0x7fc00000, 2]);
    assert.deepEqual([dv.getUint32(80, true), dv.getUint32(84, true), Number(dv.getBigInt64(88, true))], [688, 0, 1784541720]);
    assert.equal(Buffer.from(b.subarray(96, 160)).toString('latin1').replace(/\0+$/, ''), 'S2B_33TWL_20260720_0_L2A');
    assert.equal(dv.getUint32(160, true), 692);
    assert.equal(Buffer.from(b.subarray(176, 240)).toString('latin1'), `X${'y'.repeat(63)}`, 'an id is cut at 64 bytes');
    const planes = 240;
    assert.equal(dv.getFloat32(planes, true), Math.fround(0.1));
    assert.equal(dv.getUint32(planes + 4, true), 0x7fc00000, 'nodata is the one NaN pattern');
    assert.equal(dv.getUint32(planes + 8, true), 0, '-0 is written as +0');
    assert.equal(dv.getFloat32(planes + 16, true), Math.fround(-0.05), 'the second plane follows the first');
  });

  it('is a function of its inputs, and decodes back', () => {
    assert.deepEqual(encodeCube(cube), encodeCube(structuredClone(cube)));
    const d = decodeCube(encodeCube(cube));
    assert.deepEqual([d.width, d.height, d.epsg, [...d.geotransform]], [2, 2, 32633, [...GT]]);
    assert.deepEqual(
      d.slices.map((s) => [s.tslot, s.captured_s, s.scene_id.length]),
      [
        [688, 1784541720, 24],
        [692, 1794391395, 64],
      ],
    );
    assert.deepEqual(
      [...d.slices[1].values].map((v) => (Number.isNaN(v) ? 'NaN' : v)),
      [Math.fround(-0.05), 0.25, Math.fround(1e-4), 'NaN'],
    );
    assert.throws(() => decodeCube(encodeCube(cube).subarray(0, 100)), RangeError);
    assert.throws(() => encodeCube({ ...cube, slices: [] }), RangeError);
    assert.throws(() => encodeCube({ ...cube, slices: [{ ...cube.slices[0], values: [1] }] }), RangeError);
  });
});

describe('the cube grid', () => {
  const grid = { epsg: 32633, geotransform: [501000, 10, 0, 4999000, 0, -10] as const, width: 50, height: 40 };

  it('a scene of the same CRS and pixel size, a whole number of pixels away, is on the grid at its own window', () => {
    assert.deepEqual(alignedWindow(grid, 32633, [10, 0, 500000, 0, -10, 5000000]), { col0: 100, row0: 100 });
    assert.deepEqual(alignedWindow(grid, 32633, [10, 0, 499980, 0, -10, 5000040]), { col0: 102, row0: 104 });
  });

  it('another CRS, another pixel size, or a fraction of a pixel off is not', () => {
    assert.equal(alignedWindow(grid, 32634, [10, 0, 500000, 0, -10, 5000000]), null);
    assert.equal(alignedWindow(grid, 32633, [20, 0, 500000, 0, -20, 5000000]), null);
    assert.equal(alignedWindow(grid, 32633, [10, 0, 500005, 0, -10, 5000000]), null);
    assert.equal(alignedWindow(grid, 32633, [10, 0, 500000, 0, -10, 5000000.5]), null);
  });

  it("source versions list each source's baselines once, sorted", () => {
    const s = (b: string | null) => ({ scene: { source: 'earth_search_s2', processing_baseline: b } }) as never;
    assert.deepEqual(cubeSourceVersions([s('05.11'), s('05.10'), s('05.11')]), { earth_search_s2: '05.10,05.11' });
  });
});

describe('time slots', () => {
  const now = Date.parse('2026-11-22T12:00:00Z');

  it('from and to name the 30-day slots holding them, both ends included, at most 12', () => {
    assert.deepEqual(slotRange('2026-05-20', '2026-11-22', 'medium', now), { lo: 686, hi: 692 });
    assert.deepEqual(slotRange('2026-11-03', '2026-11-03', 'medium', now), { lo: 692, hi: 692 });
    assert.deepEqual(slotRange('2025-12-08', '2026-11-22', 'medium', now), { lo: 681, hi: 692 });
    const e = (() => {
      try {
        slotRange('2025-11-11', '2026-11-22', 'medium', now);
      } catch (x) {
        return x as SvcError;
      }
    })();
    assert.ok(e instanceof SvcError);
    assert.deepEqual([e.code, e.details.cap, e.details.max_slices, e.details.slices], ['invalid_argument', 'band_cube.max_slices', 12, 13]);
    assert.throws(() => slotRange('2026-11-23', '2026-11-23', 'medium', now), SvcError);
    assert.throws(() => slotRange('2026-11-02', '2026-11-01', 'medium', now), SvcError);
  });
});

describe('tokens', () => {
  const d = 'a'.repeat(52);
  const aoi = 'b'.repeat(26);

  it('svc:cube:<aoi_cid>:<band>:<lo>..<hi>:<derivation_cid> round-trips; malformed ones are invalid_argument', () => {
    const tk = cubeToken('svc', { aoi_cid: aoi, band: 's2.B04', lo: 686, hi: 692, derivation_cid: d });
    assert.equal(tk, `svc:cube:${aoi}:s2.B04:686..692:${d}`);
    assert.deepEqual(parseCubeToken('svc', tk), { aoi_cid: aoi, band: 's2.B04', lo: 686, hi: 692, derivation_cid: d });
    for (const bad of [
      tk.replace('686..692', '692..686'),
      tk.replace('686..692', '0686..692'),
      tk.replace('686..692', '686'),
      tk.replace(':cube:', ':raster:'),
      `${tk}:x`,
      tk.replace(aoi, 'B'.repeat(26)),
      42,
    ]) {
      assert.throws(
        () => parseCubeToken('svc', bad),
        (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument' && e.details.field === 'token',
        String(bad),
      );
    }
  });

  it('svc:rasterset:<set_cid>:<derivation_cid> round-trips; the set_cid ignores order and repeats', () => {
    const set = setCid([d, 'c'.repeat(52), d]);
    assert.equal(set, setCid(['c'.repeat(52), d]));
    assert.notEqual(set, setCid([d]));
    const tk = rastersetToken('svc', { set_cid: set, derivation_cid: d });
    assert.deepEqual(parseRastersetToken('svc', tk), { set_cid: set, derivation_cid: d });
    for (const bad of [`${tk}:x`, tk.replace(':rasterset:', ':cube:'), `svc:rasterset:${set}`, `svc:rasterset:x:${d}`]) {
      assert.throws(
        () => parseRastersetToken('svc', bad),
        (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument',
        bad,
      );
    }
  });
});
