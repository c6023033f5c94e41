/**
 * The non-verbose hunt reply (docs/hunt.md, "Size"): a realistic hunt (32 cells, a gate band, 8
 * hotspots, Sentinel-2-like fact bodies with scene ids and reflectances) answers under 16 KB, and
 * still verifies offline with the whole-response verifier: same receipt as the verbose reply,
 * every fact_cid it binds shown, the kept hotspots checked against their facts and their order.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import type { MaterializeOutcome, MaterializeRequest } from '../../../src/sources/contract.js';
import { build, type TestApp } from '../../support/app.js';
import { fakeConnector } from '../../support/fake-connector.js';

const BOX = { min_lat: 41.6, min_lng: -83.2, max_lat: 41.62, max_lng: -83.18 };
let reads = 0;

/** A value shaped like the Sentinel-2 connector's: scene id, processing baseline, reflectances, pixel. */
function s2(value: number): MaterializeOutcome {
  const scene = `S2B_17TLG_20261119_${reads++}_L2A`;
  return {
    status: 'value',
    value: Math.round(value * 1e6) / 1e6,
    provenance: { source: 'earthsearch', ref: scene, captured_at: '2026-11-19T16:21:07Z', version: '05.11' },
    fn: 'sentinel2_index@1',
    args: { scene, reflectance: { red: 0.0412, re1: 0.0537 }, dn: { red: 1412, re1: 1537 }, offset_rule: 'earthsearch:boa_offset_applied', scl: 6, pixel: [5123, 8812], epsg: 32617 },
  };
}
// A bloom everywhere in the box, stronger to the north-east: every sample is a candidate.
const ndci = (r: MaterializeRequest) => s2(0.25 + (r.center.lat - 41.6) * 5 + (r.center.lng + 83.2));

let t: TestApp;
before(async () => {
  t = await build({}, {}, { materializers: [fakeConnector(['indices.ndci', 'indices.mndwi'], { 'indices.ndci': ndci, 'indices.mndwi': () => s2(0.4) })] });
});
after(async () => t.close());

async function hunt(body: Record<string, unknown>) {
  const r = await t.app.inject({ method: 'POST', url: '/v1/hunt', payload: body });
  assert.equal(r.statusCode, 200, r.body);
  return { bytes: Buffer.byteLength(r.body), body: r.json() };
}

describe('POST /v1/hunt: the default (non-verbose) reply', () => {
  it('a realistic hunt answers under 16 KB and still verifies offline', async () => {
    const cold = await hunt({ event: 'algal_bloom', polygon_bbox: BOX });
    const warm = await hunt({ event: 'algal_bloom', polygon_bbox: BOX });
    for (const { bytes, body } of [cold, warm]) {
      assert.ok(bytes < 16_384, `${bytes} bytes`);
      assert.equal(body.cells_sampled, 32);
      assert.equal(body.samples, undefined, 'per-cell detail is behind verbose');
      const v = P.verifyResponse(body, { publicKey: t.service.keys.publicKeyB32 });
      assert.equal(v.valid, true, JSON.stringify([v.failures, v.errors.slice(0, 3)]));
      assert.ok(v.trusted);
      assert.deepEqual(
        v.checks.map((c) => `${c.check}:${c.ok}`),
        ['hotspots:true'],
      );
      // The hotspots keep their signed bodies; 8 in all, the lowest-ranked maybe without theirs.
      const all = [...body.hotspots, ...(body.more_hotspots ?? [])];
      assert.equal(all.length, 8);
      assert.deepEqual(
        all.map((h: any) => h.rank),
        [1, 2, 3, 4, 5, 6, 7, 8],
      );
      assert.ok(body.hotspots.length >= 3);
      for (const h of body.hotspots) assert.equal(P.factCid(h.fact), h.fact_cid);
      assert.deepEqual(
        body.receipt.fact_cids.slice(0, 8),
        all.map((h: any) => h.fact_cid),
      );
      // 32 primary values and 32 gate readings: every one bound and shown.
      assert.equal(body.receipt.fact_cids.length, 64);
      const shown = new Set([...all.map((h: any) => h.fact_cid), ...body.hotspots.map((h: any) => h.gate?.fact_cid), ...body.fact_cids]);
      for (const c of body.receipt.fact_cids) assert.ok(shown.has(c), `${c} is shown`);
      assert.ok(body.trimmed.some((x: string) => x.startsWith('samples')));
    }
  });

  it('verbose: true is the whole reply over the same cells, hotspots and receipt bindings', async () => {
    const small = (await hunt({ event: 'algal_bloom', polygon_bbox: BOX })).body;
    const { bytes, body: full } = await hunt({ event: 'algal_bloom', polygon_bbox: BOX, verbose: true });
    assert.ok(bytes > 16_384, `${bytes} bytes: the case is realistic`);
    assert.equal(full.samples.length, 32);
    assert.equal(full.trimmed, undefined);
    assert.equal(full.fact_cids, undefined);
    assert.deepEqual(full.receipt.fact_cids, small.receipt.fact_cids);
    assert.deepEqual(full.receipt.cells, small.receipt.cells);
    assert.deepEqual(
      full.hotspots.map((h: any) => h.fact_cid),
      [...small.hotspots, ...(small.more_hotspots ?? [])].map((h: any) => h.fact_cid),
    );
    assert.equal(P.verifyResponse(full, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
  });
});
