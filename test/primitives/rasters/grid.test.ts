/**
 * The pieces of band_raster that need no upstream (docs/rasters.md): the grid file's exact bytes
 * (header fields at their offsets, one NaN pattern, +0 for -0, float32 rounding), the canonical
 * box and its aoi_cid, the window a box needs in a north-up grid, and the raster token grammar.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { anchorId } from '../../../src/protocol/cid.js';
import { SvcError } from '../../../src/protocol/errors.js';
import { parseRasterToken, rasterToken } from '../../../src/protocol/token-grammar.js';
import { decodeGrid, encodeGrid, GRID_HEADER_BYTES } from '../../../src/primitives/rasters/grid-format.js';
import { aoiCid, canonicalBox, windowGeotransform, windowOfBox } from '../../../src/primitives/rasters/geometry.js';

describe('grid file', () => {
  const g = { width: 3, height: 2, epsg: 32633, geotransform: [500000, 10, 0, 5000000, 0, -10] as const, values: [0.1, Number.NaN, -0, 1e-3, -2.5, 3] };

  it('writes the documented header and little-endian float32 rows', () => {
    const b = encodeGrid(g);
    assert.equal(b.length, GRID_HEADER_BYTES + 4 * 6);
    const dv = new DataView(b.buffer);
    assert.equal(Buffer.from(b.subarray(0, 8)).toString('latin1'), 'SVCGRID\u0000');
    assert.deepEqual([dv.getUint32(8, true), dv.getUint32(12, true), dv.getUint32(16, true), dv.getUint32(20, true)], [1, 3, 2, 32633]);
    assert.deepEqual(
      Array.from({ length: 6 }, (_, i) => dv.getFloat64(24 + 8 * i, true)),
      [500000, 10, 0, 5000000, 0, -10],
    );
    assert.deepEqual([dv.getUint32(72, true), dv.getUint32(76, true)], [0x7fc00000, 0]);
    assert.equal(dv.getFloat32(80, true), Math.fround(0.1));
    assert.equal(dv.getUint32(84, true), 0x7fc00000, 'nodata is the one NaN pattern');
    assert.equal(dv.getUint32(88, true), 0, '-0 is written as +0');
    assert.equal(dv.getFloat32(96, true), -2.5);
  });

  it('is deterministic and reads back', () => {
    assert.deepEqual(encodeGrid(g), encodeGrid({ ...g, values: Float64Array.from(g.values) }));
    const d = decodeGrid(encodeGrid(g));
    assert.deepEqual([d.width, d.height, d.epsg, [...d.geotransform]], [3, 2, 32633, [500000, 10, 0, 5000000, 0, -10]]);
    assert.ok(Number.isNaN(d.values[1]));
    assert.throws(() => decodeGrid(new Uint8Array(80)), RangeError);
    assert.throws(() => encodeGrid({ ...g, values: [1] }), RangeError);
  });
});

describe('box and window', () => {
  it('rounds the box to 7 decimals and anchors {kind: bbox, …}', () => {
    const b = canonicalBox({ min_lat: 45.000000049, min_lng: 15.00000005, max_lat: 45.01, max_lng: 15.02 });
    assert.deepEqual(b, { min_lat: 45, min_lng: 15.0000001, max_lat: 45.01, max_lng: 15.02 });
    assert.equal(aoiCid(b), anchorId({ kind: 'bbox', ...b }));
    assert.equal(aoiCid(b).length, 26);
    assert.throws(() => canonicalBox({ min_lat: 45, min_lng: 15, max_lat: 45, max_lng: 15.1 }), SvcError);
    assert.throws(() => canonicalBox({ min_lat: 45, min_lng: 179, max_lat: 45.1, max_lng: -179 }), SvcError);
    assert.throws(() => canonicalBox({ min_lat: -91, min_lng: 15, max_lat: 45, max_lng: 15.1 }), SvcError);
  });

  it('covers the box with the pixels its outline touches; the window geotransform starts at its corner', () => {
    const t = [400000, 10, 0, 5000000, 0, -10] as const; // affine [a, b, c, d, e, f]
    const affine = [t[1], t[2], t[0], t[4], t[5], t[3]] as const;
    const w = windowOfBox({ min_lat: 45.1, min_lng: 14.9, max_lat: 45.12, max_lng: 14.93 }, 32633, affine);
    assert.ok(w.width > 230 && w.width < 240 && w.height > 220 && w.height < 226, JSON.stringify(w));
    assert.deepEqual(windowGeotransform(affine, w), [400000 + 10 * w.col0, 10, 0, 5000000 - 10 * w.row0, 0, -10]);
  });
});

describe('raster token', () => {
  const t = { aoi_cid: 'a'.repeat(26), band: 's2.B04', tslot: 692, derivation_cid: 'b'.repeat(52) };
  it('round-trips and refuses every malformed part', () => {
    const text = rasterToken('svc', t);
    assert.equal(text, `svc:raster:${'a'.repeat(26)}:s2.B04:692:${'b'.repeat(52)}`);
    assert.deepEqual(parseRasterToken('svc', text), t);
    for (const bad of [text.replace(':692:', ':0692:'), text.replace(':692:', ':-1:'), text.replace('s2.B04', 's2:B04'), `${text}:x`, text.slice(0, -1), text.replace('svc:', 'memt:'), 42]) {
      assert.throws(
        () => parseRasterToken('svc', bad),
        (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument',
        String(bad),
      );
    }
  });
});
