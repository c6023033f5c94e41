/**
 * POST /v1/hunt (spec 4.10) against scripted fixture connectors: anomalies placed by location
 * come back first, regions without them answer a signed empty list with a reason, and timeouts
 * and absences are reported per cell (never as zeros). Every answer passes verifyResponse.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import type { MaterializeOutcome, MaterializeRequest } from '../../../src/sources/contract.js';
import { build, type TestApp } from '../../support/app.js';
import { fakeConnector, type Script } from '../../support/fake-connector.js';

// A 0.02 x 0.02 degree box (about 2 km): big enough to be stratified, small enough to stay in the cap.
const BOX = { min_lat: 41.6, min_lng: -83.2, max_lat: 41.62, max_lng: -83.18 };
// The anomaly: the north-east quarter of BOX.
const inHot = (r: MaterializeRequest) => r.center.lat > 41.61 && r.center.lng > -83.19;
// A quiet box elsewhere, where no value reaches any threshold.
const QUIET = { min_lat: 10.0, min_lng: 10.0, max_lat: 10.02, max_lng: 10.02 };
// A box where the primary band times out (west half) or is a confirmed absence (east half).
const BROKEN = { min_lat: -20.02, min_lng: 30.0, max_lat: -20.0, max_lng: 30.02 };
const inBroken = (r: MaterializeRequest) => r.center.lat < -19.5;

const value = (v: number, unit?: string): MaterializeOutcome => ({ status: 'value', value: v, unit, provenance: { source: 'fake', captured_at: '2026-11-20T00:00:00Z' }, fn: 'fake@1' });
// Values grow towards the north-east corner, so the expected order is known from the position alone.
const grade = (r: MaterializeRequest) => (r.center.lat - 41.61 + (r.center.lng + 83.19)) * 10;

function primary(hot: number, quiet: number): Script {
  return (r) => {
    if (inBroken(r)) return r.center.lng < 30.01 ? { status: 'timeout', reason: 'fixture timeout' } : { status: 'absence', reason: 'outside_coverage', provenance: { source: 'fake' }, fn: 'fake@1' };
    return value(inHot(r) ? hot + grade(r) : quiet);
  };
}

const SCRIPTS: Record<string, Script> = {
  'indices.ndci': primary(0.3, 0.05),
  // Open water everywhere except a land strip along the south edge (the gate drops it).
  'indices.mndwi': (r) => value(r.center.lat < 41.603 ? -0.3 : 0.4),
  'indices.dnbr': primary(0.5, 0.02),
  's1.vv_db': (r) => (inBroken(r) ? primary(0, 0)(r) : value(inHot(r) ? -20 - grade(r) : -8)),
  'water.gsw_occurrence': () => value(5),
  'lst.day_8day': primary(40, 30),
  'landcover.esa_worldcover_2021': () => value(50),
  'precip.spi_3m': (r) => (inBroken(r) ? primary(0, 0)(r) : value(inHot(r) ? -1.6 - grade(r) : 0.3)),
};

let t: TestApp;
let bare: TestApp;
before(async () => {
  t = await build({}, {}, { materializers: [fakeConnector(Object.keys(SCRIPTS), SCRIPTS)] });
  // No connector for the SPI band, as on a responder without one.
  bare = await build({}, {}, { materializers: [fakeConnector(['indices.ndci'])] });
});
after(async () => {
  await t.close();
  await bare.close();
});

/** A verbose hunt: these tests read samples[] (the per-cell detail; hunt-size.test.ts covers the default reply). */
async function huntOf(app: TestApp, body: Record<string, unknown>) {
  const r = await app.app.inject({ method: 'POST', url: '/v1/hunt', payload: { ...body, verbose: true } });
  return { status: r.statusCode, body: r.json() };
}

function assertVerifies(app: TestApp, body: any) {
  const v = P.verifyResponse(body, { publicKey: app.service.keys.publicKeyB32 });
  assert.equal(v.valid, true, JSON.stringify([v.failures, v.errors.slice(0, 3)]));
  assert.ok(v.references.length > 0 || body.hotspots.length === 0);
  const bound = new Set(body.receipt.fact_cids);
  for (const h of body.hotspots) assert.ok(bound.has(h.fact_cid));
  // Each hotspot carries its fact's body, and the receipt lists the hotspots first, in rank order.
  assert.deepEqual(
    body.receipt.fact_cids.slice(0, body.hotspots.length),
    body.hotspots.map((h: any) => h.fact_cid),
  );
  for (const h of body.hotspots) {
    assert.equal(P.factCid(h.fact), h.fact_cid);
    assert.deepEqual([h.fact.cell, h.fact.value, h.fact.band], [h.cell64, h.value, body.algorithm.primary_band]);
    assert.equal(h.fact.receipt, undefined, 'the hunt receipt binds it: no per-fact receipt rides along');
  }
  if (body.hotspots.length > 0)
    assert.deepEqual(
      v.checks.map((c) => `${c.check}:${c.ok}`),
      ['hotspots:true'],
    );
}

const hotByCell = (body: any) => body.samples.filter((s: any) => s.primary.value !== undefined && s.status !== 'gate_failed');

describe('POST /v1/hunt: known anomalies come first', () => {
  const cases: Array<[string, string, 'desc' | 'asc']> = [
    ['algal_bloom', 'indices.ndci', 'desc'],
    ['wildfire', 'indices.dnbr', 'desc'],
    ['flood_extent', 's1.vv_db', 'asc'],
    ['urban_heat_island', 'lst.day_8day', 'desc'],
    ['drought', 'precip.spi_3m', 'asc'],
  ];
  for (const [event, band, dir] of cases) {
    it(`${event}: the hotspots are the anomaly cells, ranked ${dir} by ${band}`, async () => {
      const r = await huntOf(t, { event, polygon_bbox: BOX });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const b = r.body;
      assert.equal(b.event, event);
      assert.equal(b.algorithm.primary_band, band);
      assert.equal(b.cells_sampled, b.samples.length);
      assert.equal(b.cells_sampled, event === 'urban_heat_island' || event === 'drought' ? 8 : 32);
      assert.ok(b.hotspots.length > 0, b.empty_reason);
      assert.ok(b.hotspots.length <= 8);
      const hotCells = b.samples.filter((s: any) => s.lat > 41.61 && s.lng > -83.19 && s.primary.value !== undefined && s.status !== 'gate_failed');
      // Every hotspot lies in the anomaly, and the best anomaly cells are exactly the top of the list.
      for (const h of b.hotspots) assert.ok(h.lat > 41.61 && h.lng > -83.19, `${h.cell64} at ${h.lat},${h.lng} is outside the anomaly`);
      const expected = [...hotCells]
        .sort((x: any, y: any) => (dir === 'desc' ? y.primary.value - x.primary.value : x.primary.value - y.primary.value))
        .slice(0, 8)
        .map((s: any) => s.cell64);
      assert.deepEqual(
        b.hotspots.map((h: any) => h.cell64),
        expected,
      );
      b.hotspots.forEach((h: any, i: number) => {
        assert.equal(h.rank, i + 1);
        assert.equal(h.scene_png, `/v1/cells/${h.cell64}/scene.png`);
        assert.equal(typeof h.value, 'number');
      });
      assertVerifies(t, b);
      assert.ok(hotByCell(b).length > 0);
    });
  }

  it('algal_bloom: cells on land fail the MNDWI gate and are reported with the reason', async () => {
    const b = (await huntOf(t, { event: 'Bloom', polygon_bbox: BOX })).body;
    const dropped = b.samples.filter((s: any) => s.status === 'gate_failed');
    assert.ok(dropped.length > 0);
    for (const s of dropped) {
      assert.ok(s.lat < 41.603);
      assert.equal(s.gate.status, 'fail');
      assert.match(s.reason, /MNDWI/);
      assert.ok(!b.hotspots.some((h: any) => h.cell64 === s.cell64));
    }
  });

  it('is deterministic for a region and day: two calls sample the same cells', async () => {
    const a = (await huntOf(t, { event: 'fire', polygon_bbox: BOX })).body;
    const c = (await huntOf(t, { event: 'BUSHFIRE', polygon_bbox: BOX })).body;
    assert.deepEqual(
      a.samples.map((s: any) => s.cell64),
      c.samples.map((s: any) => s.cell64),
    );
    assert.deepEqual(
      a.hotspots.map((s: any) => s.fact_cid),
      c.hotspots.map((s: any) => s.fact_cid),
    );
  });
});

describe('POST /v1/hunt: empty and broken regions', () => {
  for (const event of ['algal_bloom', 'wildfire', 'flood_extent', 'urban_heat_island', 'drought']) {
    it(`${event}: a region without the anomaly answers a signed empty list with a reason`, async () => {
      const b = (await huntOf(t, { event, polygon_bbox: QUIET })).body;
      assert.deepEqual(b.hotspots, []);
      assert.match(b.empty_reason, /no hotspots/);
      assert.ok(b.samples.every((s: any) => s.status === 'below_threshold' || s.status === 'gate_failed'));
      assertVerifies(t, b);
      assert.ok(b.receipt.fact_cids.length > 0);
    });
  }

  it('timeouts and absences are reported per cell, never as values', async () => {
    const b = (await huntOf(t, { event: 'wildfire', polygon_bbox: BROKEN })).body;
    assert.deepEqual(b.hotspots, []);
    const statuses = new Set(b.samples.map((s: any) => s.status));
    assert.ok(statuses.has('timeout') && statuses.has('absence'), [...statuses].join());
    for (const s of b.samples) {
      assert.equal(s.primary.value, undefined);
      if (s.status === 'absence') assert.ok(s.primary.fact_cid && b.receipt.fact_cids.includes(s.primary.fact_cid));
      if (s.status === 'timeout') assert.equal(s.primary.fact_cid, undefined);
    }
    assert.ok(b.caveats.some((c: string) => /never counted as zero/.test(c)));
    assert.ok(b.next_steps.some((x: any) => x.action === 'recall_failed_cells'));
    assert.ok(b.next_steps.some((x: any) => x.action === 'hunt_denser'));
    assertVerifies(t, b);
  });

  it('drought without an SPI connector says no_materializer instead of inventing values', async () => {
    const b = (await huntOf(bare, { event: 'dry_spell', polygon_bbox: BOX })).body;
    assert.deepEqual(b.hotspots, []);
    assert.ok(b.samples.every((s: any) => s.status === 'no_materializer'));
    assert.ok(b.materialize_notes.some((n: any) => n.reason_class === 'no_materializer'));
    assert.match(b.empty_reason, /no connector/);
    assertVerifies(bare, b);
  });
});

describe('POST /v1/hunt: refusals', () => {
  it('an unknown event is invalid_argument listing the events', async () => {
    const r = await huntOf(t, { event: 'volcano', polygon_bbox: BOX });
    assert.equal(r.status, 422);
    assert.equal(r.body.code, 'invalid_argument');
    assert.equal(r.body.details.events.length, 12);
    assert.match(r.body.message, /algal_bloom/);
  });

  it('oil_slick is not_yet_implemented with the radar-darkening workaround', async () => {
    const r = await huntOf(t, { event: 'Oil_Spill', polygon_bbox: BOX });
    assert.equal(r.body.code, 'not_yet_implemented');
    assert.match(r.body.details.workaround, /s1\.vv_db/);
  });

  it('an area beyond the cap is refused naming the cap', async () => {
    const r = await huntOf(t, { event: 'flood', polygon_bbox: { min_lat: 30, min_lng: -100, max_lat: 40, max_lng: -90 } });
    assert.equal(r.body.code, 'invalid_argument');
    assert.match(r.body.message, /250,000 km²/);
  });

  it('region and polygon_bbox together are refused', async () => {
    const r = await huntOf(t, { event: 'flood', region: 'Lake Erie', polygon_bbox: BOX });
    assert.equal(r.body.code, 'invalid_argument');
  });
});

describe('POST /v1/ask with a hunt question', () => {
  it('runs the hunt over the named place and answers with its signed hotspots, bound by the ask receipt', async () => {
    const lake = await build(
      {},
      {},
      {
        materializers: [
          fakeConnector(['indices.ndci', 'indices.mndwi'], {
            // A bloom in the western basin of Lake Erie, open water everywhere.
            'indices.ndci': (r) => value(r.center.lng < -82.5 ? 0.35 + (-82.5 - r.center.lng) / 10 : 0.02),
            'indices.mndwi': () => value(0.5),
          }),
        ],
      },
    );
    try {
      const r = await lake.app.inject({ method: 'POST', url: '/v1/ask', payload: { q: 'where is the algal bloom in Lake Erie?' } });
      assert.equal(r.statusCode, 200, r.body);
      const a = r.json();
      assert.equal(a.topic_routing.routing.intent, 'hunt');
      assert.equal(a.hunt.event, 'algal_bloom');
      assert.ok(a.hunt.hotspots.length > 0, a.answer);
      assert.ok(a.hunt.hotspots.every((h: { lng: number; value: number }) => h.lng < -82.5 && h.value > 0.2));
      assert.match(a.answer, /hotspot\(s\) among \d+ sampled cells/);
      for (const h of a.hunt.hotspots) assert.ok(a.receipt.fact_cids.includes(h.fact_cid), 'each hotspot is bound by the ask receipt');
      assert.ok(!a.next_steps.some((s: { available?: boolean }) => s.available === false));
      const v = P.verifyResponse(a, { publicKey: lake.service.keys.publicKeyB32 });
      assert.equal(v.valid, true, v.errors.join('; '));
    } finally {
      await lake.close();
    }
  });
});
