/**
 * The Overture bands through the service, against the 127.0.0.1 stand-in: /v1/at with bands, the
 * /v1/buildings shortcut, /v1/sources and /v1/materializers. Values are signed with the release
 * as their source version; a warm repeat asks no upstream.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { build, type TestApp } from '../support/app.js';
import { CENTRE, EXPECTED, RELEASES, releaseArchives } from './fixtures/overture-scene.js';
import { startOvertureUpstreams, type OvertureUpstreams } from './fixtures/overture-upstreams.js';

const BANDS = ['overture.building_count_1km', 'overture.building_footprint_fraction_1km', 'overture.place_count_1km', 'overture.road_length_km_1km'];
const [LATEST] = RELEASES;

let up: OvertureUpstreams;
let t: TestApp;
const get = async (url: string) => {
  const r = await t.app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.json() };
};

before(async () => {
  up = await startOvertureUpstreams(releaseArchives(LATEST), RELEASES);
  t = await build({ upstreams: up.upstreams, materializerTimeoutSecs: 3 });
});
after(async () => {
  await t.close();
  await up.close();
});

describe('Overture bands through the service', () => {
  it('/v1/at with bands signs the four window values, the release as the derivation version', async () => {
    const r = await get(`/v1/at?lat=${CENTRE.lat}&lon=${CENTRE.lng}&bands=${BANDS.join(',')}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const by = Object.fromEntries(r.body.facts.map((f: any) => [f.band, f]));
    assert.deepEqual(Object.keys(by).sort(), BANDS);
    for (const b of BANDS) assert.equal(by[b].kind, 'primary', `${b}: ${JSON.stringify(by[b])}`);
    assert.equal(by['overture.building_count_1km'].value, EXPECTED.buildings);
    assert.equal(by['overture.building_footprint_fraction_1km'].value, EXPECTED.footprint_fraction);
    assert.equal(by['overture.place_count_1km'].value, EXPECTED.places);
    assert.ok(Math.abs(by['overture.road_length_km_1km'].value - EXPECTED.road_km) <= 0.002);
    assert.equal(by['overture.place_count_1km'].tslot, P.currentTslot('slow'));
    for (const f of r.body.facts) {
      assert.ok(P.verifyReceipt(f.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid, f.band);
      assert.equal(f.derivation.version, LATEST, f.band);
      assert.match(f.derivation.sources[0], new RegExp(`^overture:${LATEST}/(buildings|places|transportation).pmtiles$`));
    }
    assert.ok(
      r.body.materialize_notes.every((n: any) => n.status === 'materialized'),
      JSON.stringify(r.body.materialize_notes),
    );
  });

  it('a warm repeat asks no upstream', async () => {
    up.reset();
    const r = await get(`/v1/at?lat=${CENTRE.lat}&lon=${CENTRE.lng}&bands=${BANDS.join(',')}`);
    assert.equal(r.body.facts.length, BANDS.length);
    assert.equal(up.requests.length, 0, JSON.stringify(up.requests));
  });

  it('/v1/buildings reads the four bands at a point, signed by one envelope receipt', async () => {
    const r = await get(`/v1/buildings?lat=${CENTRE.lat}&lon=${CENTRE.lng}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.shortcut, 'buildings');
    assert.equal(r.body.mode, 'point');
    assert.deepEqual(r.body.bands, BANDS);
    const by = Object.fromEntries(r.body.facts.map((f: any) => [f.band, f.value]));
    assert.equal(by['overture.building_count_1km'], EXPECTED.buildings);
    assert.ok(P.verifyReceipt(r.body.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid);
  });

  it('/v1/sources lists Overture and its catalogue with licences and attribution; /v1/materializers wires the bands', async () => {
    const s = await get('/v1/sources');
    const by = Object.fromEntries(s.body.sources.map((x: any) => [x.key, x]));
    assert.match(by.overture.license, /ODbL-1\.0.*CDLA-Permissive-2\.0/);
    assert.match(by.overture.attribution, /OpenStreetMap contributors, Overture Maps Foundation/);
    assert.ok(by.overture_stac.license && by.overture_stac.attribution);
    const m = await get('/v1/materializers');
    const wired = Object.fromEntries(m.body.bands.map((b: any) => [b.band, b]));
    for (const b of BANDS) {
      assert.equal(wired[b].wired, true, b);
      assert.equal(wired[b].history, false, b);
    }
  });
});
