import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { terrainMetrics } from '../../../../src/primitives/shortcuts/terrain.js';
import { build, type TestApp } from '../../../support/app.js';
import { fakeConnector } from '../../../support/fake-connector.js';
import { fails, post, verifies } from '../reads/helpers.js';

let t: TestApp;

// A tilted plane z = 250 + A·x + B·y, x metres east and y metres north of the plane's origin,
// with the same metres-per-degree the responder uses (protocol pitch at the centre latitude).
const A = 0.3;
const B = 0.4;
const PLANE = { lat: 10.00005, lng: 20.00005 };
const centre = P.cellCenter(P.cellOf(PLANE.lat, PLANE.lng));
const M_PER_DEG_LAT = P.pitchMetres(centre.lat).ns_m / P.PITCH_LAT_DEG;
const M_PER_DEG_LNG = P.pitchMetres(centre.lat).ew_m / P.PITCH_LNG_DEG;
const plane = (lat: number, lng: number) => 250 + A * (lng - centre.lng) * M_PER_DEG_LNG + B * (lat - centre.lat) * M_PER_DEG_LAT;

// Another site where the east neighbour has no elevation (a signed absence).
const GAP = { lat: -33.44444, lng: 151.22222 };
const gapEast = P.stencil(P.cellOf(GAP.lat, GAP.lng))[5];

before(async () => {
  const fake = fakeConnector(['copdem30m.elevation_mean'], {
    'copdem30m.elevation_mean': (req) => {
      if (req.cell === gapEast) return { status: 'absence', reason: 'outside_coverage', provenance: { source: 'fake' }, fn: 'fake@1' };
      const near = Math.abs(req.center.lat - centre.lat) < 1e-3;
      return { status: 'value', value: near ? plane(req.center.lat, req.center.lng) : 12, provenance: { source: 'fake' }, fn: 'fake@1' };
    },
  });
  t = await build({}, {}, { materializers: [fake] });
});
after(async () => t.close());

describe('POST /v1/terrain', () => {
  it('recovers the slope of a synthetic tilted plane within 0.5°; aspect, TRI and TPI follow', async () => {
    const r = await post(t, '/v1/terrain', PLANE);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const expected = (Math.atan(Math.hypot(A, B)) * 180) / Math.PI; // 26.565°
    assert.equal(r.body.status, 'ok');
    assert.ok(Math.abs(r.body.slope_deg - expected) < 0.5, `slope ${r.body.slope_deg} vs ${expected}`);
    assert.ok(Math.abs(r.body.aspect_deg - 216.8699) < 0.5, 'faces south-west (downslope of a NE-rising plane)');
    assert.ok(Math.abs(r.body.tpi_m) < 1e-6, 'a plane has no topographic position');
    const z = r.body.neighbourhood.map((n: any) => n.elevation_m);
    const tri = Math.sqrt(z.filter((_: number, i: number) => i !== 4).reduce((s: number, x: number) => s + (x - z[4]) ** 2, 0));
    assert.ok(Math.abs(r.body.tri_m - tri) < 1e-6);
    assert.deepEqual(
      r.body.neighbourhood.map((n: any) => n.position),
      ['NW', 'N', 'NE', 'W', 'C', 'E', 'SW', 'S', 'SE'],
    );
    const cells = P.stencil(P.cellOf(PLANE.lat, PLANE.lng));
    assert.deepEqual(
      r.body.neighbourhood.map((n: any) => n.cell),
      cells,
    );
    // The receipt signs the 9 cells and the 9 elevation facts the numbers come from.
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(r.body.receipt.primitive, 'svc.terrain');
    assert.deepEqual(r.body.receipt.cells, cells);
    assert.deepEqual(
      r.body.receipt.fact_cids,
      r.body.neighbourhood.map((n: any) => n.fact_cid),
    );
    assert.deepEqual(
      r.body.receipt.fact_cids,
      r.body.facts.map((f: any) => f.fact_cid),
    );
    assert.ok(r.body.caveats.some((c: string) => /coarser/.test(c)));
  });

  it('a missing neighbour gives null metrics with a reason, never a made-up slope', async () => {
    const r = await post(t, '/v1/terrain', GAP);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'incomplete');
    assert.equal(r.body.slope_deg, null);
    assert.equal(r.body.tri_m, null);
    assert.equal(r.body.tpi_m, null);
    assert.match(r.body.reason, /\bE\b/);
    const e = r.body.neighbourhood[5];
    assert.equal(e.kind, 'absence');
    assert.equal(e.elevation_m, null);
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(r.body.receipt.fact_cids.length, 9, 'the absence is signed evidence too');
  });

  it('takes a cell64; needs a location', async () => {
    const r = await post(t, '/v1/terrain', { cell64: P.cellOf(PLANE.lat, PLANE.lng) });
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'ok');
    fails(await post(t, '/v1/terrain', {}), 422, 'invalid_argument', 'place');
  });
});

describe('terrainMetrics', () => {
  it('flat ground: slope 0, aspect null; a pit has negative TPI', () => {
    const flat = terrainMetrics([5, 5, 5, 5, 5, 5, 5, 5, 5], 10, 10);
    assert.equal(flat.slope_deg, 0);
    assert.equal(flat.aspect_deg, null);
    const pit = terrainMetrics([5, 5, 5, 5, 1, 5, 5, 5, 5], 10, 10);
    assert.equal(pit.tpi_m, -4);
    assert.ok(Math.abs(pit.tri_m! - Math.sqrt(8 * 16)) < 1e-9);
  });

  it('east-rising plane: 45° at dz = spacing, aspect west', () => {
    const m = terrainMetrics([0, 10, 20, 0, 10, 20, 0, 10, 20], 10, 10);
    assert.ok(Math.abs(m.slope_deg! - 45) < 1e-9);
    assert.ok(Math.abs(m.aspect_deg! - 270) < 1e-9);
  });
});
