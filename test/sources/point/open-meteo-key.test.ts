import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import type { ConnectorDeps, Materializer } from '../../../src/sources/contract.js';
import { allowedUpstreams, sourceBaseUrl } from '../../../src/sources/index.js';
import { JSON_CONNECTORS } from '../../../src/sources/json-connectors.js';
import { openMeteoCustomerUrl, withOpenMeteoKey } from '../../../src/sources/open-meteo-key.js';
import { openMeteoFlood } from '../../../src/sources/open-meteo-flood.js';
import { openMeteoMarine } from '../../../src/sources/open-meteo-marine.js';
import { spiEra5 } from '../../../src/sources/spi.js';
import { fixtureDeps, requestFor, testRegistry } from '../fixtures/json-deps.js';
import { startJsonUpstreams, type JsonUpstreams } from '../fixtures/json-upstreams.js';
import { pointDeps, startPointUpstreams, type PointUpstreams } from '../fixtures/point-upstreams.js';

const KEY = 'cust-KEY_0123456789';
let fx: JsonUpstreams;
let px: PointUpstreams;
before(async () => {
  fx = await startJsonUpstreams();
  px = await startPointUpstreams();
});
after(async () => {
  await fx.close();
  await px.close();
});
beforeEach(() => {
  fx.reset();
  px.reset();
});

describe('SVC_OPEN_METEO_API_KEY', () => {
  it('is read from the environment; a key with spaces or control characters is a configuration error', () => {
    assert.equal(loadConfig({}).openMeteoApiKey, undefined);
    assert.equal(loadConfig({ SVC_OPEN_METEO_API_KEY: ` ${KEY} ` }).openMeteoApiKey, KEY);
    assert.throws(() => loadConfig({ SVC_OPEN_METEO_API_KEY: 'a b' }), ConfigError);
  });

  it('moves every public Open-Meteo host to its customer- twin; other sources and overrides stay', () => {
    assert.equal(openMeteoCustomerUrl('https://api.open-meteo.com'), 'https://customer-api.open-meteo.com');
    assert.equal(openMeteoCustomerUrl('https://flood-api.open-meteo.com/'), 'https://customer-flood-api.open-meteo.com');
    assert.equal(openMeteoCustomerUrl('https://customer-api.open-meteo.com'), 'https://customer-api.open-meteo.com');
    assert.equal(openMeteoCustomerUrl('http://127.0.0.1:8080'), 'http://127.0.0.1:8080');
    assert.equal(openMeteoCustomerUrl('https://open-meteo.com.evil.test'), 'https://open-meteo.com.evil.test');
    const reg = testRegistry();
    const keyed = loadConfig({ SVC_OPEN_METEO_API_KEY: KEY });
    const free = loadConfig({});
    const want: Record<string, string> = {
      open_meteo: 'https://customer-api.open-meteo.com',
      open_meteo_archive: 'https://customer-archive-api.open-meteo.com',
      open_meteo_air: 'https://customer-air-quality-api.open-meteo.com',
      open_meteo_flood: 'https://customer-flood-api.open-meteo.com',
      open_meteo_marine: 'https://customer-marine-api.open-meteo.com',
    };
    for (const [k, url] of Object.entries(want)) {
      assert.equal(sourceBaseUrl(keyed, reg, k), url, k);
      assert.equal(sourceBaseUrl(free, reg, k), url.replace('customer-', ''), k);
    }
    assert.equal(sourceBaseUrl(keyed, reg, 'nasa_power'), sourceBaseUrl(free, reg, 'nasa_power'));
    const over = loadConfig({ SVC_OPEN_METEO_API_KEY: KEY, SVC_UPSTREAM_OPEN_METEO_FLOOD_URL: 'http://127.0.0.1:7000' });
    assert.equal(sourceBaseUrl(over, reg, 'open_meteo_flood'), 'http://127.0.0.1:7000');
    const allowed = allowedUpstreams(keyed, reg);
    for (const url of Object.values(want)) assert.ok(allowed.includes(url), url);
    assert.ok(!allowed.includes('https://api.open-meteo.com'), 'the free host is not contacted once a key is set');
  });

  it('withOpenMeteoKey appends apikey only when a key is configured', () => {
    assert.equal(withOpenMeteoKey('http://h/v1/x?a=1', {}), 'http://h/v1/x?a=1');
    assert.equal(withOpenMeteoKey('http://h/v1/x?a=1', { openMeteoApiKey: 'k/1' }), 'http://h/v1/x?a=1&apikey=k%2F1');
  });

  it('every Open-Meteo connector sends the key the fixture insists on, and no signed ref carries it', async () => {
    fx.openMeteoKey = KEY;
    px.openMeteoKey = KEY;
    const withKey = <D extends ConnectorDeps>(d: D): D => ({ ...d, config: { ...d.config, openMeteoApiKey: KEY } });
    const jsonDeps = withKey(fixtureDeps(fx));
    const pointD = withKey(pointDeps(px));
    const today = currentTslot('fast');
    const cases: Array<[Materializer, string, number]> = [
      ...JSON_CONNECTORS.map((f) => f(jsonDeps))
        .filter((c) => c.key.startsWith('open_meteo'))
        .map((c) => [c, c.bands[0], c.key === 'open_meteo_archive' ? today - 10 : currentTslot(jsonDeps.registry.bands.get(c.bands[0])!.tempo)] as [Materializer, string, number]),
      [spiEra5(jsonDeps), 'precip.spi_3m', currentTslot('medium') - 2],
      [openMeteoFlood(pointD), 'river.discharge', today - 3],
      [openMeteoFlood(pointD), 'river.discharge_mean_1991_2020', 0],
      [openMeteoMarine(pointD), 'marine.wave_height', today],
    ];
    const seen = new Set<string>();
    for (const [c, band, tslot] of cases) {
      const out = await c.materialize(requestFor(cellOf(44.1, 4.2), band, { tslot }));
      assert.notEqual(out.status, 'error', `${c.key} ${band}: ${out.status === 'error' ? out.reason : ''}`);
      if (out.status === 'value' || out.status === 'absence')
        assert.ok(!JSON.stringify(out.provenance).includes(KEY) && !(out.provenance.ref ?? '').includes('apikey'), `${c.key}: ${out.provenance.ref}`);
      seen.add(c.key);
    }
    assert.deepEqual([...seen].sort(), ['open_meteo', 'open_meteo_air', 'open_meteo_archive', 'open_meteo_flood', 'open_meteo_marine']);
    const all = [...fx.requests, ...px.requests];
    assert.ok(all.length >= cases.length);
    for (const r of all) assert.equal(r.query.get('apikey'), KEY, r.path);
  });

  it('without the key configured the same fixture refuses (so the check above is real)', async () => {
    px.openMeteoKey = KEY;
    const out = await openMeteoMarine(pointDeps(px)).materialize(requestFor(cellOf(44.1, 4.3), 'marine.wave_height'));
    assert.ok(out.status === 'error' && /API key/.test(out.reason));
  });
});
