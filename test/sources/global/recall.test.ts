/** The global-layer bands through the service: /v1/at with bands, /v1/sources, /v1/materializers. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { loadConfig } from '../../../src/config.js';
import { loadRegistry } from '../../../src/registry/registry.js';
import { materializerRegistry } from '../../../src/sources/contract.js';
import { buildMaterializers, sourceBaseUrl } from '../../../src/sources/index.js';
import { build, type TestApp } from '../../support/app.js';
import { startGlobalUpstreams, type GlobalUpstreams } from '../fixtures/global-upstreams.js';

const BANDS = [
  'builtup.wsf2019_fraction_1km',
  'carbon.agb_t_per_ha',
  'climate.koppen_geiger_1991_2020',
  'fire.active_count_10km',
  'fire.max_frp_10km',
  'fire.nearest_km',
  'gebco.elevation_m',
  'lights.viirs_annual_radiance',
  'population.count_1km',
  'population.worldpop_100m',
];
const SOURCES = ['dlr_wsf2019', 'esa_cci_biomass', 'gebco', 'koppen_geiger', 'nasa_firms', 'viirs_lights', 'worldpop'];

let up: GlobalUpstreams;
let t: TestApp;
const get = async (url: string) => {
  const r = await t.app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.json() };
};

before(async () => {
  up = await startGlobalUpstreams();
  t = await build({ upstreams: up.upstreams, materializerTimeoutSecs: 3 });
});
after(async () => {
  await t.close();
  await up.close();
});

describe('global layers through the service', () => {
  it('/v1/at with bands reads every new band at a cell: values where the fixtures hold data, typed absences elsewhere', async () => {
    // Inside the WSF tile and near the fixture fires; outside the biomass tile, the lights and the Köppen extent.
    const r = await get(`/v1/at?lat=45.05&lon=9.05&bands=${BANDS.join(',')}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const by = Object.fromEntries(r.body.facts.map((f: any) => [f.band, f]));
    assert.deepEqual(Object.keys(by).sort(), BANDS);
    for (const b of ['builtup.wsf2019_fraction_1km', 'fire.active_count_10km', 'fire.nearest_km', 'gebco.elevation_m', 'population.count_1km', 'population.worldpop_100m']) {
      assert.equal(by[b].kind, 'primary', `${b}: ${JSON.stringify(by[b])}`);
    }
    assert.equal(by['fire.active_count_10km'].value, 0, 'the fires lie 60 km away: a real 0');
    assert.ok(by['fire.nearest_km'].value > 50 && by['fire.nearest_km'].value < 70);
    assert.equal(by['fire.max_frp_10km'].absence_reason, 'unavailable_capability');
    assert.equal(by['carbon.agb_t_per_ha'].absence_reason, 'outside_coverage', 'no tile N50E000 (404)');
    assert.equal(by['lights.viirs_annual_radiance'].absence_reason, 'outside_coverage');
    assert.equal(by['climate.koppen_geiger_1991_2020'].absence_reason, 'outside_coverage');
    assert.ok(by['builtup.wsf2019_fraction_1km'].value > 0.3 && by['builtup.wsf2019_fraction_1km'].value < 0.7, String(by['builtup.wsf2019_fraction_1km'].value));
    assert.equal(by['carbon.agb_t_per_ha'].tslot, P.currentTslot('slow'));
    for (const f of r.body.facts) assert.ok(P.verifyReceipt(f.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid, f.band);
    assert.ok(
      r.body.materialize_notes.every((n: any) => n.status === 'materialized'),
      JSON.stringify(r.body.materialize_notes),
    );
  });

  it('a warm repeat asks no upstream (static and current slots are stored)', async () => {
    up.reset();
    const r = await get(`/v1/at?lat=45.05&lon=9.05&bands=${BANDS.join(',')}`);
    assert.equal(r.body.facts.length, BANDS.length);
    assert.equal(up.requests.length, 0, JSON.stringify(up.requests.map((q) => q.path)));
  });

  it('/v1/sources lists each provider with its licence and attribution', async () => {
    const r = await get('/v1/sources');
    const by = Object.fromEntries(r.body.sources.map((s: any) => [s.key, s]));
    for (const k of SOURCES) {
      assert.ok(by[k], k);
      assert.ok(by[k].license && by[k].attribution, k);
    }
    assert.match(JSON.stringify(by.nasa_firms), /LANCE FIRMS/);
    assert.match(by.viirs_lights.default_url ?? JSON.stringify(by.viirs_lights), /\.invalid/);
  });

  it('/v1/materializers: every new band is wired here (the operator-hosted ones because their URL is set)', async () => {
    const r = await get('/v1/materializers');
    const by = Object.fromEntries(r.body.bands.map((b: any) => [b.band, b]));
    for (const b of BANDS) assert.equal(by[b].wired, true, b);
    assert.equal(by['fire.active_count_10km'].history, false);
    assert.equal(by['carbon.agb_t_per_ha'].history, true);
  });
});

describe('operator-hosted layers without a configured URL', () => {
  it('are not wired: no band, no request, nothing signed (the registry default is a placeholder)', () => {
    const config = loadConfig({ SVC_LOG_LEVEL: 'silent' }, { dataDir: '/tmp/svc-global-unused' });
    const registry = loadRegistry();
    const { materializers } = buildMaterializers(config, registry);
    const wired = materializerRegistry(materializers);
    assert.equal(wired.forBand('lights.viirs_annual_radiance'), undefined);
    assert.equal(wired.forBand('climate.koppen_geiger_1991_2020'), undefined);
    assert.ok(wired.forBand('gebco.elevation_m'), 'public layers are wired by default');
    assert.match(sourceBaseUrl(config, registry, 'viirs_lights'), /^https:\/\/operator-provided\.invalid\//);
  });
});
