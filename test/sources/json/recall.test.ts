/** End to end: POST /v1/recall on a responder whose SVC_UPSTREAM_* point at the fixture upstreams. */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { PATHS, startJsonUpstreams, type JsonUpstreams } from '../fixtures/json-upstreams.js';

const WEATHER = ['weather.temperature_2m', 'weather.precipitation', 'weather.wind_speed_10m', 'weather.relative_humidity_2m', 'weather.cloud_cover'];
const AIR = ['air.pm2_5', 'air.nitrogen_dioxide', 'air.ozone'];
const SOIL = ['soil.clay_0_30cm', 'soil.sand_0_30cm', 'soil.soc_0_30cm'];
const ALL = ['copdem30m.elevation_mean', ...WEATHER, ...AIR, ...SOIL, 'lst.day_8day'];

let fx: JsonUpstreams;
let t: TestApp;
let n = 0;
const freshCell = () => P.cellOf(-20 + n++ * 0.013, 25.5);

before(async () => {
  fx = await startJsonUpstreams();
  t = await build({ upstreams: fx.upstreams, materializerTimeoutSecs: 2 });
});
after(async () => {
  await t.close();
  await fx.close();
});
beforeEach(() => fx.reset());

const recall = async (body: Record<string, unknown>) => {
  const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: body });
  return { status: r.statusCode, body: r.json() };
};
const verifies = (receipt: unknown) => P.verifyReceipt(receipt, { publicKey: t.service.keys.publicKeyB32 }).valid;
const note = (body: any, band: string) => body.materialize_notes.find((x: any) => x.band === band);

describe('POST /v1/recall over the JSON connectors', () => {
  describe('when the upstreams answer', () => {
    it('materializes every band: signed, verifiable, in the log, fetched at the cell centre', async () => {
      const cell = freshCell();
      const r = await recall({ cell, bands: ALL });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(
        r.body.materialize_notes.filter((x: any) => x.status !== 'materialized'),
        [],
        'every band materialized',
      );
      assert.deepEqual(r.body.facts.map((f: any) => f.band).sort(), [...ALL].sort());
      assert.ok(verifies(r.body.receipt));
      const byBand = Object.fromEntries(r.body.facts.map((f: any) => [f.band, f]));
      assert.equal(byBand['weather.temperature_2m'].value, 21.4);
      assert.equal(byBand['soil.clay_0_30cm'].value, 28.217);
      assert.equal(byBand['lst.day_8day'].value, 18.19);
      assert.equal(byBand['air.pm2_5'].unit, 'ug_m3');
      const head = await t.service.store.log.latestTreeHead();
      const root = P.b32decode(head.root, 32);
      for (const f of r.body.facts) {
        assert.equal(f.signer, t.service.keys.publicKeyB32);
        assert.equal(f.fact_cid, P.factCid(f), `${f.band}: fact_cid binds the body`);
        assert.ok(verifies(f.receipt), `${f.band}: receipt verifies`);
        assert.deepEqual(f.receipt.fact_cids, [f.fact_cid]);
        // Its log entry is in the log, carries this exact body, and is included in the head.
        const stored = await t.service.store.getFact(f.fact_cid);
        const entry = (await t.service.store.log.entry(stored!.log_index))!;
        const decoded = P.decodeCanonical(entry) as { facts: Record<string, unknown>[] };
        assert.ok(
          decoded.facts.some((b) => P.factCid(b) === f.fact_cid),
          `${f.band}: body in its log entry`,
        );
        const path = await t.service.store.log.inclusionProof(stored!.log_index, head.tree_size);
        assert.ok(P.verifyInclusion(stored!.log_index, head.tree_size, P.leafHash(entry), path, root), `${f.band}: entry included in the head`);
      }
      // Every upstream was asked about the cell centre.
      const centre = P.cellCenter(cell);
      for (const req of fx.requests) {
        const lat = Number(req.query.get('latitude') ?? req.query.get('lat'));
        const lng = Number(req.query.get('longitude') ?? req.query.get('lon'));
        assert.ok(Math.abs(lat - centre.lat) < 1e-6 && Math.abs(lng - centre.lng) < 1e-6, `${req.path} asked at the centre`);
      }
      // Warm: nothing fetched again.
      const before = fx.requests.length;
      const again = await recall({ cell, bands: ALL });
      assert.deepEqual(again.body.materialize_notes, []);
      assert.equal(fx.requests.length, before);
    });

    it('coalesces: 10 concurrent recalls of one cold cell make one request per provider call', async () => {
      const cell = freshCell();
      const bands = ['copdem30m.elevation_mean', ...WEATHER, ...AIR, ...SOIL];
      const rs = await Promise.all(Array.from({ length: 10 }, () => recall({ cell, bands })));
      assert.ok(rs.every((r) => r.status === 200 && r.body.facts.length === bands.length));
      assert.equal(fx.count(PATHS.elevation), 1);
      assert.equal(fx.count(PATHS.forecast), 1, 'five weather bands, ten callers: one request');
      assert.equal(fx.count(PATHS.air), 1);
      assert.equal(fx.count(PATHS.soilgrids), 1);
      const cids = new Set(rs.flatMap((r) => r.body.facts.map((f: any) => f.fact_cid)));
      assert.equal(cids.size, bands.length, 'one minted fact per band, shared by every caller');
    });

    it('open water: elevation 0 is served as a signed absence outside_coverage', async () => {
      fx.data.elevation = () => 0;
      const r = await recall({ cell: freshCell(), bands: ['copdem30m.elevation_mean'] });
      const f = r.body.facts[0];
      assert.deepEqual([f.kind, f.value, f.absence_reason], ['absence', null, 'outside_coverage']);
      const nt = note(r.body, 'copdem30m.elevation_mean');
      assert.deepEqual([nt.status, nt.absence, nt.fact_cid], ['materialized', true, f.fact_cid]);
      assert.match(nt.reason, /open water/);
    });
  });

  describe('when the upstreams fail', () => {
    it('a timeout is skipped with reason_class timeout, retryable, nothing signed', async () => {
      fx.behave(PATHS.air, { delayMs: 3000 });
      const size = await t.service.store.log.size();
      const r = await recall({ cell: freshCell(), bands: ['air.ozone'] });
      const nt = note(r.body, 'air.ozone');
      assert.deepEqual([nt.status, nt.reason_class, nt.retryable, nt.absence, nt.fact_cid], ['skipped', 'timeout', true, false, null]);
      assert.deepEqual(r.body.facts, []);
      assert.equal(await t.service.store.log.size(), size);
    });

    it('a 5xx is retried, then skipped as upstream_error (retryable)', async () => {
      fx.behave(PATHS.forecast, { status: 503 });
      const r = await recall({ cell: freshCell(), bands: ['weather.temperature_2m'] });
      const nt = note(r.body, 'weather.temperature_2m');
      assert.deepEqual([nt.status, nt.reason_class, nt.retryable, nt.absence], ['skipped', 'upstream_error', true, false]);
      assert.match(nt.reason, /HTTP 503/);
      assert.equal(fx.count(PATHS.forecast), 3, 'one attempt and two retries');
      assert.deepEqual(r.body.facts, []);
    });

    it('a 5xx that clears within the retries yields the value', async () => {
      fx.behave(PATHS.soilgrids, { status: 500, statusTimes: 1 });
      const r = await recall({ cell: freshCell(), bands: ['soil.clay_0_30cm'] });
      assert.equal(note(r.body, 'soil.clay_0_30cm').status, 'materialized');
      assert.equal(fx.count(PATHS.soilgrids), 2);
    });

    it('bytes that are not JSON are skipped upstream_error with a source_format_mismatch reason, not retried', async () => {
      fx.behave(PATHS.elevation, { malformed: 'bytes' });
      const r = await recall({ cell: freshCell(), bands: ['copdem30m.elevation_mean'] });
      const nt = note(r.body, 'copdem30m.elevation_mean');
      assert.deepEqual([nt.status, nt.reason_class, nt.retryable], ['skipped', 'upstream_error', true]);
      assert.match(nt.reason, /^source_format_mismatch: /);
      assert.equal(fx.count(PATHS.elevation), 1);
    });

    it('JSON of the wrong shape is skipped with a source_format_mismatch reason', async () => {
      fx.behave(PATHS.modis, { malformed: 'shape' });
      const r = await recall({ cell: freshCell(), bands: ['lst.night_8day'] });
      const nt = note(r.body, 'lst.night_8day');
      assert.deepEqual([nt.status, nt.reason_class], ['skipped', 'upstream_error']);
      assert.match(nt.reason, /^source_format_mismatch: ornl_modis: subset is not an array/);
    });
  });
});
