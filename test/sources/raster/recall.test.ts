import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { startRasterUpstreams, type RasterUpstreams } from '../fixtures/raster-upstreams.js';
import { CHIRPS_TSLOT, s2Dn, S2_POINTS, S2_TSLOT, TESSERA_TSLOT, utmPixel } from '../fixtures/raster-scenes.js';

let up: RasterUpstreams;
let t: TestApp;

const recall = async (body: Record<string, unknown>) => {
  const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: body });
  return { status: r.statusCode, body: r.json() };
};
const verifies = (receipt: unknown) => P.verifyReceipt(receipt, { publicKey: t.service.keys.publicKeyB32 }).valid;
const byBand = (facts: any[]) => Object.fromEntries(facts.map((f) => [f.band, f]));

before(async () => {
  up = await startRasterUpstreams();
  t = await build({ upstreams: up.upstreams, materializerTimeoutSecs: 2 }, {}, {});
});
after(async () => {
  await t.close();
  await up.close();
});

describe('POST /v1/recall over the raster connectors', () => {
  it('materializes Sentinel-2 bands and an index of one cell from one scene search; receipts verify; the log grows', async () => {
    const cell = P.cellOf(S2_POINTS.west.lat, S2_POINTS.west.lng);
    const size = await t.service.store.log.size();
    up.reset();
    const r = await recall({ cell, bands: ['s2.B04', 's2.B08', 'indices.ndvi'], tslot: S2_TSLOT });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const f = byBand(r.body.facts);
    const c = P.cellCenter(cell);
    const [col, row] = utmPixel(c.lat, c.lng, 10);
    const red = Math.round((s2Dn(1, 'red', col, row) * 0.0001 - 0.1) * 1e6) / 1e6;
    const nir = Math.round((s2Dn(1, 'nir', col, row) * 0.0001 - 0.1) * 1e6) / 1e6;
    assert.equal(f['s2.B04'].value, red);
    assert.equal(f['s2.B08'].value, nir);
    assert.equal(f['indices.ndvi'].value, Math.round(((nir - red) / (nir + red)) * 1e6) / 1e6);
    for (const fact of r.body.facts) {
      assert.equal(fact.kind, 'primary');
      assert.equal(fact.tslot, S2_TSLOT);
      assert.equal(fact.provenance, 'earth_search_s2');
      assert.equal(fact.fact_cid, P.factCid(fact));
      assert.ok(verifies(fact.receipt), `${fact.band} receipt`);
    }
    assert.ok(verifies(r.body.receipt));
    assert.deepEqual(r.body.materialize_notes.map((n: any) => [n.band, n.status, n.ok]).sort(), [
      ['indices.ndvi', 'materialized', true],
      ['s2.B04', 'materialized', true],
      ['s2.B08', 'materialized', true],
    ]);
    // Facts minted in one turn may share a log entry (batched appends): the log grew, by at most one entry per fact.
    const grown = (await t.service.store.log.size()) - size;
    assert.ok(grown >= 1 && grown <= 3, `log grew by ${grown}`);
    assert.equal(up.count('/earth-search/v1/search'), 1, 'one scene search for the cell');
    assert.equal(r.body.receipt.source_versions?.earth_search_s2, '05.11');
  });

  it('SCL cloud in every scene: a signed absence with reason unavailable_capability', async () => {
    const r = await recall({ cell: P.cellOf(S2_POINTS.southeast.lat, S2_POINTS.southeast.lng), bands: ['s2.B02'], tslot: S2_TSLOT });
    const f = r.body.facts[0];
    assert.deepEqual([f.kind, f.value, f.absence_reason], ['absence', null, 'unavailable_capability']);
    assert.ok(verifies(f.receipt));
    const n = r.body.materialize_notes[0];
    assert.deepEqual([n.status, n.absence, n.fact_cid], ['materialized', true, f.fact_cid]);
  });

  it('static tile products, radar, rainfall and embeddings at one place', async () => {
    const cell = P.cellOf(45.05, 15.05);
    const statics = await recall({ cell, bands: ['landcover.esa_worldcover_2021', 'water.gsw_occurrence', 'forest.treecover2000', 'forest.lossyear', 'forest.gain', 'forest.jrc_gfc2020'] });
    assert.equal(statics.status, 200);
    const f = byBand(statics.body.facts);
    assert.equal(Object.keys(f).length, 6, JSON.stringify(statics.body.materialize_notes));
    for (const fact of statics.body.facts) {
      assert.equal(fact.kind, 'primary', fact.band);
      assert.equal(fact.tslot, 0);
      assert.ok(verifies(fact.receipt));
    }
    assert.equal(typeof f['landcover.esa_worldcover_2021'].value, 'number');
    const radar = await recall({ cell: P.cellOf(S2_POINTS.west.lat, S2_POINTS.west.lng), bands: ['s1.vv_db', 's1.vh_db'], tslot: S2_TSLOT });
    assert.deepEqual(radar.body.facts.map((x: any) => [x.band, x.kind, typeof x.value]).sort(), [
      ['s1.vh_db', 'primary', 'number'],
      ['s1.vv_db', 'primary', 'number'],
    ]);
    const rain = await recall({ cell: P.cellOf(44.98, 15.02), bands: ['precip.chirps_daily_mm'], tslot: CHIRPS_TSLOT });
    assert.equal(rain.body.facts[0].kind, 'primary');
    assert.equal(rain.body.facts[0].tslot, CHIRPS_TSLOT);
    const emb = await recall({ cell, bands: ['geotessera', 'geotessera.bin128'], tslot: TESSERA_TSLOT });
    const e = byBand(emb.body.facts);
    assert.equal(e.geotessera.value.length, 128);
    assert.ok(e['geotessera.bin128'].value.every((b: number) => b === 0 || b === 1));
    assert.ok(verifies(emb.body.receipt));
  });

  it('5xx upstream: skipped, upstream_error, retryable, nothing signed', async () => {
    const size = await t.service.store.log.size();
    up.switches = { fail: { status: 503, prefix: '/gsw/downloads2021/recurrence/' } };
    try {
      const r = await recall({ cell: P.cellOf(41.33, 18.77), bands: ['water.gsw_recurrence'] });
      assert.deepEqual(r.body.facts, []);
      const n = r.body.materialize_notes[0];
      assert.deepEqual([n.status, n.reason_class, n.retryable, n.absence, n.fact_cid], ['skipped', 'upstream_error', true, false, null]);
      assert.match(n.reason, /HTTP 503/);
      assert.equal(await t.service.store.log.size(), size);
    } finally {
      up.reset();
    }
  });

  it('an upstream slower than the materializer timeout: skipped, timeout, retryable', async () => {
    up.switches = { delay: { ms: 4000, prefix: '/chirps/' } };
    try {
      // Another block of the (cached) day COG: one request, which the fixture holds back.
      const r = await recall({ cell: P.cellOf(44.7, 11.3), bands: ['precip.chirps_daily_mm'], tslot: CHIRPS_TSLOT });
      const n = r.body.materialize_notes[0];
      assert.deepEqual([n.status, n.reason_class, n.retryable, n.absence], ['skipped', 'timeout', true, false]);
      assert.deepEqual(r.body.facts, []);
    } finally {
      up.reset();
    }
  });
});
