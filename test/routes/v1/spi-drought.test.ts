/**
 * precip.spi_3m end to end: the ERA5 archive fixture answers a dry season; /v1/spi and a
 * drought hunt then carry signed SPI values from the connector, never `no_materializer`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { startJsonUpstreams, type JsonUpstreams } from '../../sources/fixtures/json-upstreams.js';

let fx: JsonUpstreams;
let t: TestApp;
before(async () => {
  fx = await startJsonUpstreams();
  // 3 mm a day in every year, but nothing in the last 120 days: a drought in every current window.
  const dryFrom = new Date(Date.now() - 120 * 86_400_000).toISOString().slice(0, 10);
  fx.data.daily = (day, v) => (v !== 'precipitation_sum' ? undefined : day >= dryFrom ? 0 : 2 + (Number(day.slice(0, 4)) % 7) / 3);
  t = await build({ upstreams: fx.upstreams, materializerTimeoutSecs: 10 });
});
after(async () => {
  await t?.close();
  await fx?.close();
});

describe('precip.spi_3m from the ERA5 archive', () => {
  it('a drought hunt ranks real, signed SPI values (all far below -1 here)', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/hunt', payload: { event: 'drought', polygon_bbox: { min_lat: 45.7, min_lng: 4.8, max_lat: 45.8, max_lng: 4.9 }, verbose: true } });
    assert.equal(r.statusCode, 200, r.body);
    const h = r.json();
    assert.ok(h.hotspots.length > 0, JSON.stringify(h.summary));
    assert.ok(
      h.hotspots.every((x: { value: number }) => x.value <= -1.5),
      JSON.stringify(h.hotspots.map((x: { value: number }) => x.value)),
    );
    assert.ok(!h.samples.some((s: { status: string }) => s.status === 'no_materializer'));
    assert.equal(P.verifyResponse(h, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
  });
});
