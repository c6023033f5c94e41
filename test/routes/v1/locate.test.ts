import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { tuneLocator } from '../../../src/primitives/locate/locate.js';
import { build, type TestApp } from '../../support/app.js';
import { fakeConnector } from '../../support/fake-connector.js';
import { closedPortUrl, startFakeGeocoders, type FakeGeocoders } from '../../geo/fake-geocoders.js';

let fake: FakeGeocoders;
let t: TestApp;

before(async () => {
  fake = await startFakeGeocoders();
  const conn = fakeConnector(['copdem30m.elevation_mean', 'weather.temperature_2m']);
  t = await build({ materializerTimeoutSecs: 2 }, { SVC_UPSTREAM_PHOTON_URL: fake.photonUrl, SVC_UPSTREAM_NOMINATIM_URL: fake.nominatimUrl }, { materializers: [conn] });
  tuneLocator(t.service, { nominatimIntervalMs: 20 });
});
after(async () => {
  await t.close();
  await fake.close();
});

const locate = async (body: unknown, app = t) => {
  const r = await app.app.inject({ method: 'POST', url: '/v1/locate', payload: body as object });
  return { status: r.statusCode, body: r.json() };
};

describe('POST /v1/locate', () => {
  describe('when given a place name known offline', () => {
    it('answers a complete LocateResp from the embedded gazetteer', async () => {
      const r = await locate({ place: 'Paris' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const b = r.body;
      assert.equal(b.via, 'embedded');
      assert.ok(P.isCell(b.cell64));
      assert.equal(b.cell64, P.cellOf(b.lat, b.lng));
      assert.equal(b.token, `svc:cell:${b.cell64}`, 'the cell token (spec 2.5) travels with the cell');
      assert.equal(b.neighborhood_cells.length, 8);
      for (const c of b.neighborhood_cells) assert.ok(P.isCell(c));
      // A city's extent is a square scaled by its population (no city boundaries ship offline).
      assert.equal(b.polygon_bbox.source, 'population_scaled');
      assert.equal(b.extent_source, 'population_scaled');
      assert.ok(b.polygon_bbox.min_lat < b.lat && b.lat < b.polygon_bbox.max_lat && b.polygon_bbox.min_lng < b.lng && b.lng < b.polygon_bbox.max_lng);
      assert.ok(b.polygon_sample_cells.length > 1 && b.polygon_sample_cells.length <= 64);
      assert.equal(b.polygon_geojson, undefined);
      assert.equal(b.overture_division.subtype, 'locality');
      assert.equal(b.overture_division.country, 'FR');
      assert.equal(b.overture_division.schema_url, 'https://docs.overturemaps.org/schema/reference/divisions/division/');
      assert.equal(b.selected.is_high_confidence, true);
      assert.ok(b.alternatives.length > 0 && b.alternatives.length <= 5);
      assert.equal(typeof b.data_at_this_cell, 'object');
    });

    it('a country carries its Natural Earth polygon, country_table box and up to 64 sample cells inside it', async () => {
      const r = await locate({ q: 'France' });
      assert.equal(r.body.via, 'country');
      assert.equal(r.body.polygon_bbox.source, 'country_table');
      assert.ok(['Polygon', 'MultiPolygon'].includes(r.body.polygon_geojson.type));
      const cells: string[] = r.body.polygon_sample_cells;
      assert.ok(cells.length > 10 && cells.length <= 64, `${cells.length} cells`);
      assert.equal(new Set(cells).size, cells.length);
      assert.deepEqual(r.body.overture_division, {
        division_id: 'ne:country:FRA',
        subtype: 'country',
        country: 'FR',
        schema_url: 'https://docs.overturemaps.org/schema/reference/divisions/division/',
      });
      assert.equal(r.body.localized_names.de, 'Frankreich');
      const again = await locate({ name: 'france' });
      assert.deepEqual(again.body.polygon_sample_cells, cells, 'sampling is deterministic');
    });

    it('an admin-1 region answers with its box as polygon and subtype region', async () => {
      const r = await locate({ query: 'Bavaria' });
      assert.equal(r.body.via, 'admin1');
      assert.equal(r.body.polygon_bbox.source, 'admin1_table');
      assert.equal(r.body.polygon_geojson.type, 'Polygon');
      assert.equal(r.body.overture_division.subtype, 'region');
      assert.equal(r.body.polygon_sample_cells.length, 64);
    });

    it('an admin-2 district answers with the box of its places, subtype county', async () => {
      const r = await locate({ place: 'Wayanad' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.via, 'admin2');
      assert.equal(r.body.label, 'Wayanad, Kerala, IN');
      assert.equal(r.body.polygon_bbox.source, 'admin2_table');
      assert.equal(r.body.extent_source, 'member_places');
      assert.equal(r.body.overture_division.subtype, 'county');
      assert.equal(r.body.selected.is_high_confidence, true);
      assert.ok(r.body.polygon_sample_cells.length > 10);
    });

    it('a wide feature answers from wide_bbox_table with its box', async () => {
      const r = await locate({ place: 'Lake Baikal' });
      assert.equal(r.body.via, 'wide_bbox_table');
      assert.equal(r.body.polygon_bbox.source, 'wide_bbox_table');
      assert.equal(r.body.polygon_geojson, undefined);
    });

    it('lists fetchable topic bands at an empty cell', async () => {
      const r = await locate({ place: 'Lake Baikal' });
      const topics = Object.values(r.body.data_at_this_cell) as Array<{ bands: string[]; availability: string }>;
      assert.ok(topics.length > 0, JSON.stringify(r.body.data_at_this_cell));
      for (const tp of topics) {
        assert.equal(tp.availability, 'fetchable');
        for (const b of tp.bands) assert.ok(['copdem30m.elevation_mean', 'weather.temperature_2m'].includes(b));
      }
    });
  });

  describe('when given coordinates', () => {
    it('answers direct_latlng labelled by the nearest embedded city', async () => {
      const r = await locate({ lat: 48.8566, lng: 2.3522 });
      assert.equal(r.status, 200);
      assert.equal(r.body.via, 'direct_latlng');
      assert.equal(r.body.label, 'near Paris, FR');
      assert.equal(r.body.cell64, P.cellOf(48.8566, 2.3522));
      assert.equal(r.body.token, `svc:cell:${r.body.cell64}`);
      assert.equal(r.body.selected.is_high_confidence, true);
    });

    it('labels open ocean with the coordinates', async () => {
      const r = await locate({ lat: -30, lng: -140 });
      assert.equal(r.body.label, '-30.00000, -140.00000');
    });
  });

  describe('when the input is wrong', () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['nothing', {}, /place, q, query, name, lat, lng/],
      ['two names', { place: 'Paris', q: 'Rome' }, /place, q/],
      ['a name and coordinates', { place: 'Paris', lat: 1, lng: 2 }, /place, lat, lng/],
      ['lat without lng', { lat: 10 }, /^lng/],
      ['lat out of range', { lat: 91, lng: 0 }, /^lat/],
      ['lng out of range', { lat: 0, lng: 181 }, /^lng/],
      ['lat not a number', { lat: '10', lng: 0 }, /lat/],
      ['an unknown field', { place: 'Paris', zoom: 3 }, /zoom/],
      ['an empty name', { place: '' }, /place/],
    ];
    for (const [what, body, re] of cases) {
      it(`refuses ${what} with invalid_argument naming the field`, async () => {
        const r = await locate(body);
        assert.equal(r.status, 422, JSON.stringify(r.body));
        assert.equal(r.body.code, 'invalid_argument');
        assert.match(r.body.message, re);
      });
    }
  });

  describe('when the name is unknown offline', () => {
    it('resolves through photon, then serves the same answer from cache', async () => {
      const before = fake.calls.photon.length;
      const r = await locate({ place: 'Hintertux' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.via, 'photon');
      assert.equal(r.body.polygon_bbox.source, 'nominatim_boundingbox');
      assert.equal(r.body.overture_division.country, 'AT');
      assert.equal(fake.calls.photon.length, before + 1);
      const again = await locate({ place: 'hintertux' });
      assert.equal(again.body.via, 'cache');
      assert.equal(again.body.cell64, r.body.cell64);
      assert.equal(fake.calls.photon.length, before + 1, 'no second upstream call');
    });

    it('falls through to nominatim when photon has nothing, with its polygon and a real User-Agent', async () => {
      const r = await locate({ place: 'Kinderdijk' });
      assert.equal(r.body.via, 'nominatim', JSON.stringify(r.body));
      assert.equal(r.body.polygon_geojson.type, 'Polygon');
      assert.ok(r.body.polygon_sample_cells.length > 1);
      const call = fake.calls.nominatim.at(-1)!;
      assert.match(call.userAgent ?? '', /svc/);
      assert.equal(call.query.get('format'), 'jsonv2');
      assert.equal(call.query.get('polygon_geojson'), '1');
      assert.equal(call.query.get('limit'), '5');
    });

    it('both empty → 404 no_geocoder_match with a hint (they were asked and neither knows it)', async () => {
      const r = await locate({ place: 'Qqqxyzzyplex' });
      assert.equal(r.status, 404, JSON.stringify(r.body));
      assert.equal(r.body.code, 'no_geocoder_match');
      assert.equal(r.body.schema, 'svc.error.v1');
      assert.match(r.body.details.hint, /lat and lng/);
      assert.equal(r.body.details.network, undefined);
    });

    it('both down → 502 source_fetch_failed', async () => {
      const [p, n] = [fake.photonMode, fake.nominatimMode];
      fake.photonMode = 'http500';
      fake.nominatimMode = 'down';
      try {
        const r = await locate({ place: 'Vvvwxyzzyplex' });
        assert.equal(r.status, 502, JSON.stringify(r.body));
        assert.equal(r.body.code, 'source_fetch_failed');
        assert.ok(r.body.details.failures.photon && r.body.details.failures.nominatim);
      } finally {
        fake.photonMode = p;
        fake.nominatimMode = n;
      }
    });
  });

  describe('when network geocoders are disabled or unreachable', () => {
    it('disabled: offline names still resolve; unknown names are 404 place_not_found without any upstream call', async () => {
      const off = await build({}, { SVC_UPSTREAM_PHOTON_URL: 'off:', SVC_UPSTREAM_NOMINATIM_URL: 'off:' });
      try {
        const calls = fake.calls.photon.length + fake.calls.nominatim.length;
        assert.equal((await locate({ place: 'Tokyo' }, off)).body.via, 'embedded');
        const r = await locate({ place: 'Hintertux' }, off);
        assert.equal(r.status, 404);
        // Nobody but the offline tables was asked, so this is not "every geocoder answered".
        assert.equal(r.body.code, 'place_not_found');
        assert.equal(r.body.schema, 'svc.error.v1');
        assert.equal(r.body.details.network, 'disabled');
        assert.match(r.body.details.hint, /lat and lng/);
        assert.equal(fake.calls.photon.length + fake.calls.nominatim.length, calls);
      } finally {
        await off.close();
      }
    });

    it('closed ports → 502 source_fetch_failed', async () => {
      const dead = await closedPortUrl();
      const down = await build({ materializerTimeoutSecs: 2 }, { SVC_UPSTREAM_PHOTON_URL: dead, SVC_UPSTREAM_NOMINATIM_URL: dead });
      tuneLocator(down.service, { nominatimIntervalMs: 10 });
      try {
        const r = await locate({ place: 'Hintertux' }, down);
        assert.equal(r.status, 502, JSON.stringify(r.body));
        assert.equal(r.body.code, 'source_fetch_failed');
      } finally {
        await down.close();
      }
    });
  });
});

describe('POST /v1/recall with a place name', () => {
  it('resolves "Paris" through locate and reports the confidence', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell: 'Paris', bands: ['copdem30m.elevation_mean'] } });
    assert.equal(r.statusCode, 200, r.body);
    const b = r.json();
    const loc = await locate({ place: 'Paris' });
    assert.equal(b.cell, loc.body.cell64);
    assert.equal(b.place.is_high_confidence, true);
  });

  it('a low-confidence name still resolves, flagged', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell: 'Springfield', bands: ['copdem30m.elevation_mean'] } });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json().place.is_high_confidence, false);
  });
});
