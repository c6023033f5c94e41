import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellBbox, cellCenter, cellOf, isCell, neighbours, parseCell, pitchMetres, stencil, PITCH_LAT_DEG, PITCH_LNG_DEG, PITCH_M_EQUATOR } from '../../src/protocol/cell64.js';
import { SvcError } from '../../src/protocol/errors.js';
import { loadVectors } from '../support/vectors.js';

const KNOWN: Array<[number, number, string]> = [
  [0, 0, 'defi.zb400.bafi.baba'],
  [12.9716, 77.5946, 'defi.zb493.xoso.zcb6a'],
  [51.5074, -0.1278, 'defi.zb64a.cike.zfa2f'],
  [-33.8688, 151.2093, 'defi.zb27e.ziru.ze1b3'],
  [40.7128, -74.006, 'defi.zb5cf.jOzi.zd7e7'],
  [0, 180, 'defi.zb400.baba.baba'],
  [0, -180, 'defi.zb400.baba.baba'],
  [90, 45, 'defi.zb7ff.zffc0.baba'],
  [-90, 0, 'defi.zb000.baba.baba'],
  [-30, 179.99, 'defi.zb2aa.zOfe.zff8a'],
];

describe('cell64 (protocol.md §1)', () => {
  describe('known answers', () => {
    KNOWN.forEach(([lat, lng, cell], i) => {
      it(`#${i} (${lat}, ${lng}) → ${cell}`, () => {
        assert.equal(cellOf(lat, lng), cell, `known answer ${i}`);
        assert.ok(isCell(cell));
      });
    });
    it('every geographic cell starts with defi.zb', () => {
      for (const [lat, lng] of KNOWN) assert.ok(cellOf(lat, lng).startsWith('defi.zb'));
    });
  });

  describe('generated vectors', () => {
    const v = loadVectors('cell64/generated.json');
    it('recomputes every cell, centre and neighbour list', () => {
      v.cases.forEach((c: any, i: number) => {
        assert.equal(cellOf(c.lat, c.lng), c.cell, `vector ${i}`);
        assert.deepEqual(cellCenter(c.cell), c.center, `vector ${i}`);
        if (c.neighbours) assert.deepEqual(neighbours(c.cell), c.neighbours, `vector ${i}`);
      });
    });
  });

  describe('round trips', () => {
    it('10 000 random points: lat/lng → cell → centre stays within half a pitch', () => {
      let seed = 12345;
      const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      for (let i = 0; i < 10_000; i++) {
        const lat = rnd() * 179.99 - 89.995;
        const lng = rnd() * 360 - 180;
        const cell = cellOf(lat, lng);
        const c = cellCenter(cell);
        assert.ok(Math.abs(c.lat - lat) <= PITCH_LAT_DEG / 2 + 1e-12, `lat ${lat}`);
        let dLng = Math.abs(c.lng - lng);
        if (dLng > 180) dLng = 360 - dLng;
        assert.ok(dLng <= PITCH_LNG_DEG / 2 + 1e-12, `lng ${lng}`);
        assert.equal(cellOf(c.lat, c.lng), cell, `centre re-encodes to the same cell (${lat}, ${lng})`);
      }
    });
    it('bbox contains the centre and spans one pitch', () => {
      const cell = cellOf(48.8566, 2.3522);
      const b = cellBbox(cell);
      const c = cellCenter(cell);
      assert.ok(b.min_lat < c.lat && c.lat < b.max_lat && b.min_lng < c.lng && c.lng < b.max_lng);
      assert.ok(Math.abs(b.max_lat - b.min_lat - PITCH_LAT_DEG) < 1e-12);
    });
    it('pitch is about 9.55 m at the equator and shrinks with latitude', () => {
      assert.ok(Math.abs(PITCH_M_EQUATOR - 9.5546) < 0.001, String(PITCH_M_EQUATOR));
      assert.ok(pitchMetres(60).ew_m < pitchMetres(0).ew_m * 0.51);
    });
  });

  describe('neighbours and stencil', () => {
    it('gives 8 distinct neighbours in N, S, E, W, NE, NW, SE, SW order', () => {
      const cell = cellOf(10, 10);
      const n = neighbours(cell);
      assert.equal(n.length, 8);
      const c = cellCenter(cell);
      const at = (x: string) => cellCenter(x);
      assert.ok(at(n[0]).lat > c.lat && at(n[1]).lat < c.lat && at(n[2]).lng > c.lng && at(n[3]).lng < c.lng);
      assert.ok(at(n[4]).lat > c.lat && at(n[4]).lng > c.lng && at(n[7]).lat < c.lat && at(n[7]).lng < c.lng);
    });
    it('wraps longitude at the antimeridian', () => {
      const n = neighbours(cellOf(0, 180));
      assert.ok(n.some((x) => cellCenter(x).lng > 179.999));
      assert.ok(n.some((x) => Math.abs(cellCenter(x).lng + 180 - PITCH_LNG_DEG) < 1e-9));
    });
    it('de-duplicates at the pole', () => {
      const n = neighbours(cellOf(90, 0));
      assert.equal(new Set(n).size, n.length);
      assert.ok(n.length < 8);
      assert.ok(!n.includes(cellOf(90, 0)));
    });
    it('stencil is NW, N, NE, W, C, E, SW, S, SE with the centre in the middle', () => {
      const cell = cellOf(-12, 34);
      const s = stencil(cell);
      assert.equal(s.length, 9);
      assert.equal(s[4], cell);
      const n = neighbours(cell);
      assert.equal(s[1], n[0]);
      assert.equal(s[7], n[1]);
      assert.equal(s[0], n[5]);
      assert.equal(s[8], n[6]);
    });
  });

  describe('when the input is not a cell', () => {
    const bad: Array<[unknown, string]> = [
      ['', 'empty'],
      ['defi.zb400.bafi', 'three lanes'],
      ['DEFI.zb400.bafi.baba', 'upper-case consonant'],
      ['defi.zb400.bafi.baba.', 'trailing dot'],
      ['defi.zB400.bafi.baba', 'upper-case hex'],
      ['defi.z0001.bafi.baba', 'non-canonical z-lane below 44100'],
      ['baba.zb400.bafi.baba', 'fails the geographic prefix check'],
      ['defi.zb400.bafi.bab', 'short lane'],
      ['defi.zfc00.baba.baba', 'latitude index beyond the lattice'],
      [42, 'a number'],
      [null, 'null'],
      ['defi.zb7ff.zffc0.babe', 'a pole with a non-zero longitude'],
    ];
    for (const [input, why] of bad) {
      it(`refuses ${JSON.stringify(input)} (${why}) with invalid_cell`, () => {
        assert.throws(
          () => parseCell(input),
          (e: unknown) => e instanceof SvcError && e.code === 'invalid_cell' && /^cell: /.test(e.message),
        );
      });
    }
    for (const [lat, lng] of [
      [91, 0],
      [0, 180.5],
      [NaN, 0],
      [0, Infinity],
    ]) {
      it(`refuses coordinates (${lat}, ${lng}) with invalid_argument`, () => {
        assert.throws(
          () => cellOf(lat, lng),
          (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument',
        );
      });
    }
  });
});
