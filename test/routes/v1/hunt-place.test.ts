/**
 * A named city or district hunts over its extent (docs/locate.md, "Extents"; docs/hunt.md): the
 * region block states what the extent rests on, and every sampled cell lies inside it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MaterializeOutcome } from '../../../src/sources/contract.js';
import { build, type TestApp } from '../../support/app.js';
import { fakeConnector } from '../../support/fake-connector.js';

const value = (v: number): MaterializeOutcome => ({ status: 'value', value: v, provenance: { source: 'fake', captured_at: '2026-11-20T00:00:00Z' }, fn: 'fake@1' });
const BANDS = ['indices.dnbr', 'landcover.esa_worldcover_2021', 'indices.ndci', 'indices.mndwi'];

let t: TestApp;
before(async () => {
  t = await build({}, {}, { materializers: [fakeConnector(BANDS, { 'indices.dnbr': () => value(0.02), 'landcover.esa_worldcover_2021': () => value(10) })] });
});
after(async () => {
  await t.close();
});

async function post(url: string, payload: Record<string, unknown>) {
  const r = await t.app.inject({ method: 'POST', url, payload });
  return { status: r.statusCode, body: r.json() };
}

const inside = (b: { min_lat: number; min_lng: number; max_lat: number; max_lng: number }, lat: number, lng: number) =>
  // A sampled cell is reported by its centre, a few metres from the point drawn inside the box.
  lat >= b.min_lat - 1e-3 && lat <= b.max_lat + 1e-3 && lng >= b.min_lng - 1e-3 && lng <= b.max_lng + 1e-3;

describe('POST /v1/hunt over a named place', () => {
  it('"wildfire in Canberra" samples cells inside the city\'s population-scaled extent', async () => {
    const r = await post('/v1/hunt', { event: 'wildfire', region: 'Canberra', verbose: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const region = r.body.region;
    assert.equal(region.source, 'locate:population_scaled');
    assert.equal(region.extent_source, 'population_scaled');
    assert.match(region.label, /^Canberra/);
    assert.ok(region.area_km2 > 100 && region.area_km2 < 1000, `${region.area_km2} km²`);
    assert.ok(r.body.samples.length > 1, `${r.body.samples.length} samples`);
    assert.ok(new Set(r.body.samples.map((s: any) => s.cell64)).size > 1);
    for (const s of r.body.samples) assert.ok(inside(region.polygon_bbox, s.lat, s.lng), `${s.cell64} at ${s.lat},${s.lng} is outside ${JSON.stringify(region.polygon_bbox)}`);
  });

  it('a district (Wayanad) hunts over the box of its places', async () => {
    const r = await post('/v1/hunt', { event: 'wildfire', region: 'Wayanad', verbose: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.region.extent_source, 'member_places');
    assert.equal(r.body.region.source, 'locate:admin2:polygon');
    for (const s of r.body.samples) assert.ok(inside(r.body.region.polygon_bbox, s.lat, s.lng));
  });

  it('a landmark is still a point: refused with the reason', async () => {
    const r = await post('/v1/hunt', { event: 'wildfire', region: 'Eiffel Tower' });
    assert.equal(r.status, 422);
    assert.match(r.body.error?.message ?? JSON.stringify(r.body), /resolved to a point/);
  });
});

describe('POST /v1/ask over a named city', () => {
  it('the place block states the extent source, and the hunt it runs covers that extent', async () => {
    const r = await post('/v1/ask', { q: 'Where are wildfires in Canberra?' });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 600));
    const place = r.body.place_resolved;
    assert.equal(place.extent_source, 'population_scaled');
    assert.equal(place.polygon_bbox.source, 'population_scaled');
    if (r.body.hunt) {
      const { source: _s, ...box } = place.polygon_bbox;
      assert.deepEqual(r.body.hunt.region.polygon_bbox, box);
    }
  });
});

describe('POST /v1/locate states the extent source for a city', () => {
  it('Canberra: population_scaled, with the box its sample cells lie in', async () => {
    const r = await post('/v1/locate', { place: 'Canberra' });
    assert.equal(r.status, 200);
    assert.equal(r.body.extent_source, 'population_scaled');
    assert.equal(r.body.polygon_bbox.source, 'population_scaled');
    assert.ok(r.body.polygon_sample_cells.length > 1);
  });
});
