import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import proj4 from 'proj4';
import fc from 'fast-check';
import type { MaterializeOutcome } from '../../../src/sources/contract.js';
import { geoTesseraConnector, ROTATION_SIGNS, signBits, tesseraTile, tesseraYear, type GeoTesseraConnector } from '../../../src/sources/geotessera.js';
import { parseNpyHeader } from '../../../src/sources/cog/npy.js';
import { UpstreamError } from '../../../src/sources/http.js';
import { startRasterUpstreams, type RasterUpstreams } from '../fixtures/raster-upstreams.js';
import { npyFile, tesseraQ, tesseraScale, TESSERA_RES, TESSERA_TILES, TESSERA_TSLOT, utmPixel } from '../fixtures/raster-scenes.js';
import { depsFor, requestAt } from './harness.js';

let up: RasterUpstreams;
let gt: GeoTesseraConnector;
const at = (band: string, lat: number, lng: number, tslot = TESSERA_TSLOT) => gt.materialize(requestAt(band, lat, lng, tslot));
const value = (o: MaterializeOutcome) => {
  assert.equal(o.status, 'value', JSON.stringify(o).slice(0, 400));
  return o as Extract<MaterializeOutcome, { status: 'value' }>;
};
const utm33 = proj4('EPSG:4326', '+proj=utm +zone=33 +datum=WGS84 +units=m +no_defs');

/** Expected quantized values and vector at the cell centre of (lat, lng) in `tile`. */
function expected(tile: (typeof TESSERA_TILES)['flat'], lat: number, lng: number) {
  const { center } = requestAt('geotessera', lat, lng, TESSERA_TSLOT);
  const [c, r] = utmPixel(center.lat, center.lng, TESSERA_RES, tile.origin);
  const q = Array.from({ length: 128 }, (_, k) => tesseraQ(r, c, k));
  const v = q.map((x, k) => Math.fround(x * tesseraScale(r, c, k, tile.scales3d)));
  return { q, v, c, r };
}

before(async () => {
  up = await startRasterUpstreams(['tessera']);
});
after(async () => up.close());
beforeEach(() => {
  up.reset();
  gt = geoTesseraConnector(depsFor(up)) as GeoTesseraConnector;
});

describe('geoTesseraConnector', () => {
  describe('when the tile is published', () => {
    it('vector = int8 × scale (float32) of the pixel holding the cell centre, found on the landmask grid', async () => {
      const o = value(await at('geotessera', 45.05, 15.05));
      assert.deepEqual(o.value, expected(TESSERA_TILES.flat, 45.05, 15.05).v);
      assert.deepEqual(o.provenance, { source: 'geotessera', ref: '2025/grid_15.05_45.05', version: 'v1/2025' });
      assert.equal(o.fn, 'npy_embedding_dequantize@1');
    });

    it('reads only the .npy headers, the 128 bytes of the pixel and its 4-byte scale', async () => {
      await at('geotessera', 45.05, 15.05);
      const npyReads = up.requests.filter((r) => r.path.endsWith('.npy'));
      const spans = npyReads
        .map((r) =>
          r
            .range!.match(/bytes=(\d+)-(\d+)/)!
            .slice(1)
            .map(Number),
        )
        .map(([a, b]) => b - a + 1);
      assert.deepEqual(
        spans.sort((a, b) => a - b),
        [4, 128, 4096, 4096],
      );
      assert.equal(up.requests.length, 5, 'two npy headers, the landmask header, two element reads');
    });

    it('bin128 = sign bits of the fixed rotation, from the same pixel read (no new request)', async () => {
      const vec = value(await at('geotessera', 45.05, 15.05));
      const n = up.requests.length;
      const bits = value(await at('geotessera.bin128', 45.05, 15.05));
      assert.equal(up.requests.length, n);
      assert.deepEqual(bits.value, signBits(vec.value as number[]));
      assert.deepEqual(bits.value, signBits(expected(TESSERA_TILES.flat, 45.05, 15.05).q), 'the int8 values give the same bits (one positive scale)');
      assert.equal(bits.fn, 'sign_bits_rotation@1');
      assert.equal((bits.value as number[]).length, 128);
      assert.ok((bits.value as number[]).every((b) => b === 0 || b === 1));
    });

    it('per-channel (H, W, 128) scales', async () => {
      const o = value(await at('geotessera', 45.05, 15.15));
      assert.deepEqual(o.value, expected(TESSERA_TILES.channel, 45.05, 15.15).v);
    });
  });

  describe('when there is no embedding', () => {
    it('a tile that is not published is an outside_coverage absence', async () => {
      const o = await at('geotessera', 45.05, 15.25);
      assert.deepEqual([o.status, (o as any).reason], ['absence', 'outside_coverage']);
      const later = await at('geotessera.bin128', 45.05, 15.05, TESSERA_TSLOT + 1);
      assert.deepEqual([later.status, (later as any).reason], ['absence', 'outside_coverage'], 'the 2026 vintage is not published');
    });

    it('a pixel with scale 0 (not embedded) is an outside_coverage absence', async () => {
      const [lng, lat] = utm33.inverse([TESSERA_TILES.flat.origin[0] + 20.5 * TESSERA_RES, TESSERA_TILES.flat.origin[1] - 1.5 * TESSERA_RES]);
      const o = await at('geotessera', lat, lng);
      assert.deepEqual([o.status, (o as any).reason], ['absence', 'outside_coverage']);
    });
  });

  describe('when the upstream misbehaves', () => {
    it('bad npy magic: source_format_mismatch', async () => {
      up.switches = { corrupt: { prefix: '/tessera/v1/global_0.1_degree_representation/', mode: 'all' } };
      const o = await at('geotessera', 45.05, 15.05);
      assert.deepEqual([o.status, (o as any).format_mismatch], ['error', true]);
      assert.match((o as any).reason, /bad magic/);
    });
    it('5xx: upstream error; slow: timeout', async () => {
      up.switches = { fail: { status: 502, prefix: '/tessera/' } };
      assert.equal((await at('geotessera', 45.05, 15.05)).status, 'error');
      up.switches = { delay: { ms: 500, prefix: '/tessera/' } };
      const slow = geoTesseraConnector(depsFor(up, { timeoutMs: 120, retries: 0 }));
      assert.equal((await slow.materialize(requestAt('geotessera', 45.05, 15.05, TESSERA_TSLOT, 1500))).status, 'timeout');
    });
  });
});

describe('GeoTessera naming', () => {
  it('tiles are named by their centre with two decimals; a 365-day tslot maps to the year of its midpoint', () => {
    assert.deepEqual([tesseraTile(45.05, 15.05), tesseraTile(-0.03, -0.07), tesseraTile(52.01, 0.19)], ['grid_15.05_45.05', 'grid_-0.05_-0.05', 'grid_0.15_52.05']);
    assert.deepEqual([tesseraYear(55), tesseraYear(56), tesseraYear(47)], [2025, 2026, 2017]);
  });
});

describe('signBits', () => {
  it('equals the explicit Sylvester–Hadamard product H·D·v', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -127, max: 127 }), { minLength: 128, maxLength: 128 }), (v) => {
        const y = Array.from({ length: 128 }, (_, i) => {
          let s = 0;
          for (let j = 0; j < 128; j++) {
            let parity = 0;
            for (let b = i & j; b; b &= b - 1) parity ^= 1;
            s += (parity ? -1 : 1) * ROTATION_SIGNS[j] * v[j];
          }
          return s;
        });
        assert.deepEqual(
          signBits(v),
          y.map((x) => (x > 0 ? 1 : 0)),
        );
      }),
      { numRuns: 50 },
    );
  });

  it('is scale-invariant and does not mutate its input', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -127, max: 127 }), { minLength: 128, maxLength: 128 }), fc.double({ min: 0.001, max: 10, noNaN: true }), (v, s) => {
        const copy = [...v];
        const a = signBits(v);
        assert.deepEqual(v, copy);
        // Integer inputs scaled by a power of two stay exact in floating point.
        assert.deepEqual(signBits(v.map((x) => x * 2 ** Math.round(Math.log2(s)))), a);
      }),
      { numRuns: 50 },
    );
  });

  it('the rotation signs are a fixed constant (BLAKE3-seeded; pinned)', () => {
    assert.equal(ROTATION_SIGNS.length, 128);
    assert.deepEqual(
      ROTATION_SIGNS.slice(0, 16)
        .map((s) => (s < 0 ? 1 : 0))
        .join(''),
      PINNED_FIRST_16,
    );
    assert.equal(ROTATION_SIGNS.filter((s) => s < 0).length, 56);
  });
});

describe('parseNpyHeader', () => {
  it('reads v1.0 and v2.0 headers; refuses Fortran order and non-numeric dtypes', () => {
    const v1 = parseNpyHeader(npyFile('<f4', [3, 4], new Uint8Array(48)));
    assert.deepEqual([v1.shape, v1.itemSize, v1.kind, v1.dataOffset % 64], [[3, 4], 4, 'f', 0]);
    const v2 = npyFile('|i1', [2, 2, 128], new Uint8Array(512));
    v2[6] = 2; // same header, declared as format 2.0 (u32 header length)
    const len = new DataView(v2.buffer).getUint16(8, true);
    const as2 = new Uint8Array(v2.length + 2);
    as2.set(v2.subarray(0, 8));
    new DataView(as2.buffer).setUint32(8, len, true);
    as2.set(v2.subarray(10), 12);
    assert.deepEqual(parseNpyHeader(as2).shape, [2, 2, 128]);
    // The same file with fortran_order True (same header length: 'True ' replaces 'False').
    const c = npyFile('|i1', [2, 2, 128], new Uint8Array(512));
    const text = Array.from(c.subarray(0, 128), (b) => String.fromCharCode(b)).join('');
    const at = text.indexOf('False');
    const fortran = Uint8Array.from(c);
    fortran.set(new TextEncoder().encode('True '), at);
    assert.throws(
      () => parseNpyHeader(fortran),
      (e: unknown) => e instanceof UpstreamError && e.kind === 'format' && /Fortran/.test(e.message),
    );
    assert.throws(
      () => parseNpyHeader(npyFile('|O', [2], new Uint8Array(16))),
      (e: unknown) => e instanceof UpstreamError && e.kind === 'format',
    );
  });
});

const PINNED_FIRST_16 = '0000100010100100';
