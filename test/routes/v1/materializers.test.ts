import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TEMPO_UNIT_S } from '../../../src/protocol/tslot.js';
import { OPERATIONS } from '../../../src/api/ops/index.js';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { attest as attestFacts } from './reads/helpers.js';
import { fakeConnector } from '../../support/fake-connector.js';
import { startJsonUpstreams, type JsonUpstreams } from '../../sources/fixtures/json-upstreams.js';

let fx: JsonUpstreams;
let t: TestApp;
before(async () => {
  fx = await startJsonUpstreams();
  t = await build({ upstreams: fx.upstreams, materializerTimeoutSecs: 7 });
});
after(async () => {
  await t.close();
  await fx.close();
});

const get = async (app: TestApp, url: string) => {
  const r = await app.app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.json() };
};

describe('GET /v1/materializers', () => {
  it('lists every wired connector with its bands, history flag, host and timeout', async () => {
    const r = await get(t, '/v1/materializers');
    assert.equal(r.status, 200);
    const wired = t.service.materializers.list();
    assert.deepEqual(
      r.body.materializers.map((m: any) => m.key),
      wired.map((m) => m.key),
    );
    const host = new URL(fx.url).host;
    // Two connectors share the open_meteo source (elevation and forecast): identify each by a band.
    const want: Array<[string, string, boolean]> = [
      ['open_meteo', 'copdem30m.elevation_mean', false],
      ['open_meteo', 'weather.temperature_2m', true],
      ['open_meteo_archive', 'weather.temperature_2m', true],
      ['open_meteo_air', 'air.ozone', false],
      ['soilgrids', 'soil.bdod_0_30cm', false],
      ['ornl_modis', 'lst.day_8day', true],
    ];
    for (const [key, band, history] of want) {
      const m = r.body.materializers.find((x: any) => x.key === key && x.bands.includes(band));
      assert.ok(m, `${key} (${band}) is wired`);
      assert.equal(m.history, history, `${key} history`);
      assert.equal(m.base_url_host, host, `${key} points at the configured base URL`);
      assert.equal(m.timeout_s, 7);
      assert.deepEqual(m.bands, [...wired.find((x) => x.key === key && x.bands.includes(band))!.bands]);
    }
    // The forecast owns the weather bands; the archive serves them only through it.
    assert.deepEqual(r.body.materializers.find((x: any) => x.key === 'open_meteo_archive').serves, []);
  });

  it('says truthfully, for every registry band, whether a connector is wired', async () => {
    const r = await get(t, '/v1/materializers');
    assert.equal(r.body.bands.length, t.service.registry.bandList.length);
    for (const b of r.body.bands) {
      const m = t.service.materializers.forBand(b.band);
      assert.equal(b.wired, m !== undefined, b.band);
      assert.equal(b.materializer, m?.key ?? null, b.band);
      assert.equal(b.history, m?.history ?? false, b.band);
    }
    const by = Object.fromEntries(r.body.bands.map((b: any) => [b.band, b]));
    assert.equal(by['weather.temperature_2m'].materializer, 'open_meteo');
    assert.equal(by['copdem30m.elevation_mean'].materializer, 'open_meteo');
    assert.equal(by['soil.clay_0_30cm'].materializer, 'soilgrids');
    assert.equal(by['lst.night_8day'].materializer, 'ornl_modis');
    assert.equal(r.body.counts.wired, r.body.bands.filter((b: any) => b.wired).length);
  });

  it('follows the actual wiring, not the registry (a responder with only a fake connector)', async () => {
    const fake = fakeConnector(['air.ozone']);
    const other = await build({}, {}, { materializers: [fake] });
    try {
      const r = await get(other, '/v1/materializers');
      assert.deepEqual(
        r.body.materializers.map((m: any) => [m.key, m.bands, m.base_url_host]),
        [['fake', ['air.ozone'], null]],
      );
      assert.deepEqual(
        r.body.bands.filter((b: any) => b.wired).map((b: any) => b.band),
        ['air.ozone'],
      );
      const a = await get(other, '/v1/data_availability');
      const ozone = a.body.bands.find((b: any) => b.band === 'air.ozone');
      assert.deepEqual([ozone.materializer, ozone.history, ozone.history_available_from_unix], ['fake', false, null]);
      assert.ok(a.body.bands.filter((b: any) => b.band !== 'air.ozone').every((b: any) => b.materializer === null));
    } finally {
      await other.close();
    }
  });

  it('takes no parameters', async () => {
    const r = await get(t, '/v1/materializers?verbose=1');
    assert.deepEqual([r.status, r.body.code], [422, 'invalid_argument']);
  });
});

const op = makeAttester('availability-operator');

describe('GET /v1/data_availability', () => {
  it('reports per band the history span, tempo seconds and materializer', async () => {
    const r = await get(t, '/v1/data_availability');
    assert.equal(r.status, 200);
    assert.equal(r.body.bands.length, t.service.registry.bandList.length);
    for (const b of r.body.bands) {
      const entry = t.service.registry.bands.get(b.band)!;
      const m = t.service.materializers.forBand(b.band);
      assert.equal(b.tempo_seconds, TEMPO_UNIT_S[entry.tempo], b.band);
      assert.equal(b.materializer, m?.key ?? null, b.band);
      assert.equal(b.history, m?.history ?? false, b.band);
      assert.equal(b.history_available_from_unix, b.history ? entry.history_from_unix : null, b.band);
      assert.equal(b.history_available_to_unix, b.history ? entry.history_to_unix : null, b.band);
    }
    const by = Object.fromEntries(r.body.bands.map((b: any) => [b.band, b]));
    assert.deepEqual([by['weather.precipitation'].history, by['weather.precipitation'].history_available_from_unix, by['weather.precipitation'].tempo_seconds], [true, 0, 86_400]);
    assert.deepEqual([by['lst.day_8day'].history, by['lst.day_8day'].history_available_from_unix], [true, 952_214_400]);
    assert.deepEqual([by['air.pm2_5'].history, by['air.pm2_5'].history_available_from_unix], [false, null]);
    assert.equal(by['copdem30m.elevation_mean'].tempo_seconds, 0);
  });

  it('band narrows to one band; cell (cell64 or a place name) marks the bands stored there, public facts only', async () => {
    const one = await get(t, '/v1/data_availability?band=air.pm2_5');
    assert.equal(one.status, 200);
    assert.deepEqual(
      one.body.bands.map((b: any) => b.band),
      ['air.pm2_5'],
    );
    const bad = await get(t, '/v1/data_availability?band=no.such_band');
    assert.deepEqual([bad.status, bad.body.code], [404, 'band_not_in_registry']);
    const x = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [] });
    try {
      const cell = P.cellOf(12.5, 41.9);
      await attestFacts(x, op, [{ kind: 'primary', cell, band: 'air.pm2_5', tslot: P.currentTslot('fast'), value: 7.5, unit: 'ug_m3' }]);
      await attestFacts(x, op, [{ kind: 'primary', cell, band: 'air.ozone', tslot: P.currentTslot('fast'), value: 40, unit: 'ug_m3', scope: { user_id: 'alice' } }]);
      const at = await get(x, `/v1/data_availability?cell=${cell}`);
      assert.equal(at.status, 200, JSON.stringify(at.body));
      assert.equal(at.body.cell, cell);
      const by = Object.fromEntries(at.body.bands.map((b: any) => [b.band, b.attested_at_cell]));
      assert.equal(by['air.pm2_5'], true);
      assert.equal(by['air.ozone'], false, 'a scoped fact is not counted');
      assert.equal(Object.values(by).filter(Boolean).length, 1);
      const junk = await get(x, '/v1/data_availability?cell=defi.nope');
      assert.deepEqual([junk.status, junk.body.code], [422, 'invalid_cell']);
    } finally {
      await x.close();
    }
  });
});

describe('operation table', () => {
  it('exposes the catalogues in /mcp/full and keeps backfill (a write) REST-only', () => {
    const byPath = Object.fromEntries(OPERATIONS.map((o) => [o.path, o]));
    assert.equal(byPath['/v1/materializers'].mcp, 'full');
    assert.equal(byPath['/v1/data_availability'].mcp, 'full');
    assert.equal(byPath['/v1/backfill'].mcp, false);
    // As JSON Schema (what REST, MCP and OpenAPI see): TypeBox adds a symbol-keyed kind in memory.
    assert.deepEqual(JSON.parse(JSON.stringify(byPath['/v1/materializers'].input)), { type: 'object', properties: {}, additionalProperties: false });
  });

  it('documents the three routes in /openapi.json; the backfill body schema carries no default (it would alter the signed body)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.ok(doc.paths['/v1/materializers']?.get);
    assert.ok(doc.paths['/v1/data_availability']?.get);
    const body = doc.paths['/v1/backfill'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(body.required, ['band']);
    assert.equal(body.additionalProperties, false);
    assert.ok(Object.values<any>(body.properties).every((p) => !('default' in p)));
  });
});
