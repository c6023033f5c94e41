/**
 * POST /v1/temporal_route (docs/memory-insight.md): cite_now or fetch_for_intent per band, from
 * the band's cadence, the newest fact's age and the stated intent, with the reasoning as data.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';
import { fakeConnector } from '../support/fake-connector.js';
import { bearerFor } from '../support/scopes.js';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const iso = (msAgo: number) => new Date(NOW - msAgo).toISOString().replace(/\.\d{3}Z$/, 'Z');
const a = makeAttester('insight-temporal-a');
const A = P.cellOf(47.01, 8.01);
const B = P.cellOf(47.02, 8.02);
const C = P.cellOf(47.03, 8.03);
const D = P.cellOf(47.04, 8.04);
const SCOPE = { org_id: 'insight-temporal-acme' };
const DAY = Math.floor(NOW / 86_400_000);
const MONTH = Math.floor(NOW / 2_592_000_000);

type Json = Record<string, any>;
let t: TestApp;
const post = async (payload: unknown, headers: Record<string, string> = {}) => {
  const r = await t.app.inject({ method: 'POST', url: '/v1/temporal_route', payload: payload as object, headers });
  return { status: r.statusCode, body: r.json() as Json };
};
const route = (body: Json, band: string) => (body.routes as Json[]).find((x) => x.band === band)!;

before(async () => {
  t = await build(
    { attesterKeys: [a.publicKey] },
    {},
    {
      materializers: [fakeConnector(['weather.temperature_2m', 'weather.precipitation', 'indices.ndvi'])],
      now: () => new Date(NOW),
    },
  );
  const facts = [
    { kind: 'primary', cell: A, band: 'weather.temperature_2m', tslot: DAY, value: 11.5, unit: 'degC', signed_at: iso(600_000) }, // 10 minutes old
    { kind: 'primary', cell: A, band: 'indices.ndvi', tslot: MONTH, value: 0.61, signed_at: iso(6 * 86_400_000) }, // 6 days old
    { kind: 'primary', cell: A, band: 'copdem30m.elevation_mean', tslot: 0, value: 412, signed_at: '2020-01-01T00:00:00Z' },
  ];
  const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: a.batch(facts, t.service.manifests) });
  assert.equal(r.statusCode, 200, r.body);
  const s = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: a.batch([{ ...facts[0], cell: C, scope: SCOPE }], t.service.manifests) });
  assert.equal(s.statusCode, 200, s.body);
  // A year-old observation signed a second ago: a temperature for the day a year back, and an NDVI
  // for the 30-day slot a year back, the latter with its capture time.
  const stale = [
    { kind: 'primary', cell: D, band: 'weather.temperature_2m', tslot: DAY - 365, value: 3.5, unit: 'degC', signed_at: iso(1000) },
    { kind: 'primary', cell: D, band: 'indices.ndvi', tslot: MONTH - 12, value: 0.4, signed_at: iso(1000), derivation: { fn: 'x@1', sources: ['s2'], captured_at: iso(370 * 86_400_000) } },
  ];
  const u = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: a.batch(stale, t.service.manifests) });
  assert.equal(u.statusCode, 200, u.body);
});
after(async () => t?.close());

describe('POST /v1/temporal_route', () => {
  it('an intent about the present: cite within one cadence, fetch older values; static bands are cited at any age', async () => {
    const r = await post({ cell: A, bands: ['weather.temperature_2m', 'indices.ndvi', 'copdem30m.elevation_mean'], intent: 'What are the current conditions right now?' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.intent, { text: 'What are the current conditions right now?', class: 'fresh', matched: ['now', 'current'] });
    const temp = route(r.body, 'weather.temperature_2m');
    assert.equal(temp.decision, 'cite_now');
    assert.deepEqual(
      [temp.reasoning.cadence_s, temp.reasoning.newest_age_s, temp.reasoning.age_from, temp.reasoning.max_age_s, temp.reasoning.rule, temp.reasoning.intent_class],
      [900, 600, 'signed_at', 900, 'fresh_intent_one_cadence', 'fresh'],
    );
    assert.equal(temp.follow_up, null);
    const ndvi = route(r.body, 'indices.ndvi');
    assert.equal(ndvi.decision, 'fetch_for_intent');
    assert.deepEqual([ndvi.reasoning.newest_age_s, ndvi.reasoning.max_age_s], [6 * 86_400, 432_000]);
    assert.deepEqual(ndvi.follow_up, { ...ndvi.follow_up, method: 'POST', path: '/v1/fetch', body: { cell: A, band: 'indices.ndvi' } });
    assert.match(ndvi.reasoning.because, /Fetch before citing/);
    const dem = route(r.body, 'copdem30m.elevation_mean');
    assert.deepEqual([dem.decision, dem.reasoning.rule, dem.reasoning.max_age_s], ['cite_now', 'static_band_any_age', null]);
    // The facts to cite are served signed; the receipt binds every fact the routes name.
    assert.deepEqual(r.body.facts.map((f: Json) => f.band).sort(), ['copdem30m.elevation_mean', 'weather.temperature_2m']);
    assert.deepEqual([...r.body.receipt.fact_cids].sort(), r.body.routes.map((x: Json) => x.reasoning.newest_fact_cid).sort());
    assert.deepEqual(r.body.receipt.cells, [A]);
    const v = P.verifyResponse(r.body, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, v.errors.join('; '));
  });

  it('an intent about the past cites any age; no intent allows 1.5 cadences', async () => {
    const hist = await post({ cell: A, bands: ['indices.ndvi'], intent: 'NDVI trend since 2015' });
    assert.deepEqual([route(hist.body, 'indices.ndvi').decision, route(hist.body, 'indices.ndvi').reasoning.rule], ['cite_now', 'historical_intent_any_age']);
    const plain = await post({ cell: A, bands: ['indices.ndvi'] });
    const n = route(plain.body, 'indices.ndvi');
    assert.deepEqual([n.decision, n.reasoning.rule, n.reasoning.max_age_s, n.reasoning.intent_class], ['cite_now', 'default_1_5_cadence', 648_000, 'default']);
    assert.equal(plain.body.intent.text, null);
  });

  it('max_age_s overrides the rules, for every band or per band', async () => {
    const all = await post({ cell: A, bands: ['weather.temperature_2m', 'copdem30m.elevation_mean'], max_age_s: 60 });
    assert.deepEqual(
      all.body.routes.map((x: Json) => [x.decision, x.reasoning.rule]),
      [
        ['fetch_for_intent', 'max_age_s_override'],
        ['fetch_for_intent', 'max_age_s_override'],
      ],
    );
    const dem = route(all.body, 'copdem30m.elevation_mean');
    assert.equal(dem.follow_up.path, '/v1/attest', 'no connector serves the elevation band here: only an attester can write it');
    assert.equal(dem.follow_up.materializes, false);
    const one = await post({ cell: A, bands: ['weather.temperature_2m', 'indices.ndvi'], max_age_s: { 'indices.ndvi': 86_400 * 30 } });
    assert.deepEqual(
      one.body.routes.map((x: Json) => x.reasoning.rule),
      ['default_1_5_cadence', 'max_age_s_override'],
    );
    const bad = await post({ cell: A, bands: ['indices.ndvi'], max_age_s: { 'weather.temperature_2m': 5 } });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.details.field, 'max_age_s.weather.temperature_2m');
  });

  it('defaults to the bands stored at the cell; a band with nothing stored gets the call that fetches it', async () => {
    const r = await post({ cell: A });
    assert.deepEqual(
      r.body.routes.map((x: Json) => x.band),
      ['copdem30m.elevation_mean', 'indices.ndvi', 'weather.temperature_2m'],
    );
    const missing = await post({ cell: B, bands: ['weather.precipitation'], intent: 'is it raining now' });
    const p = route(missing.body, 'weather.precipitation');
    assert.equal(p.decision, 'fetch_for_intent');
    assert.deepEqual([p.reasoning.newest_fact_cid, p.reasoning.newest_age_s], [null, null]);
    assert.deepEqual([p.follow_up.path, p.follow_up.body, p.follow_up.materializes], ['/v1/fetch', { cell: B, band: 'weather.precipitation' }, true]);
    assert.deepEqual(missing.body.receipt.fact_cids, []);
    const empty = await post({ cell: B });
    assert.deepEqual(empty.body.routes, []);
    assert.ok(empty.body.caveats.some((c: string) => c.includes('No band is stored')));
  });

  it('measures a materialized value from its capture time, and says when a fetch would bring nothing newer', async () => {
    const rec = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell: B, bands: ['weather.temperature_2m'] } });
    assert.equal(rec.statusCode, 200, rec.body);
    const r = await post({ cell: B, bands: ['weather.temperature_2m'], intent: 'live temperature' });
    const x = route(r.body, 'weather.temperature_2m');
    assert.equal(x.reasoning.age_from, 'captured_at');
    assert.equal(x.reasoning.newest_age_s, (NOW - Date.parse('2026-11-20T00:00:00Z')) / 1000);
    assert.equal(x.decision, 'fetch_for_intent');
    assert.equal(x.follow_up.materializes, false, 'the stored fact is in the current slot: a fetch answers it unchanged');
  });

  it('measures a value from the observation it describes, not from when it was signed: a year-old slot signed now is a year old', async () => {
    for (const intent of ['current temperature', undefined]) {
      const r = await post({ cell: D, bands: ['weather.temperature_2m', 'indices.ndvi'], ...(intent ? { intent } : {}) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const temp = route(r.body, 'weather.temperature_2m');
      // The slot of the day a year back ended 364 days before NOW's day began, plus NOW's 12 hours.
      const slotEnd = (DAY - 364) * 86_400_000;
      assert.deepEqual([temp.reasoning.newest_age_s, temp.reasoning.age_from], [(NOW - slotEnd) / 1000, 'tslot_end']);
      assert.ok(temp.reasoning.newest_age_s > 364 * 86_400, 'about a year');
      assert.equal(temp.reasoning.newest_signed_age_s, 1, 'the signing age is shown apart and decides nothing');
      assert.equal(temp.decision, 'fetch_for_intent');
      assert.match(temp.reasoning.because, /observation \d+ s old \(from the end of its tslot\); it was signed 1 s ago/);
      const ndvi = route(r.body, 'indices.ndvi');
      assert.deepEqual([ndvi.reasoning.newest_age_s, ndvi.reasoning.age_from, ndvi.reasoning.newest_signed_age_s], [370 * 86_400, 'captured_at', 1]);
      assert.equal(ndvi.decision, 'fetch_for_intent');
      assert.deepEqual(r.body.facts, [], 'nothing is offered for citing');
    }
    // Asked about the past, the same value may be cited, with its true age.
    const hist = await post({ cell: D, bands: ['weather.temperature_2m'], intent: 'temperature history' });
    const h = route(hist.body, 'weather.temperature_2m');
    assert.deepEqual([h.decision, h.reasoning.age_from], ['cite_now', 'tslot_end']);
  });

  it("a scope's facts route only with its bearer", async () => {
    const pub = await post({ cell: C, bands: ['weather.temperature_2m'] });
    assert.equal(route(pub.body, 'weather.temperature_2m').reasoning.newest_fact_cid, null);
    assert.equal((await post({ cell: C, bands: ['weather.temperature_2m'], scope: SCOPE })).status, 401);
    const own = await post({ cell: C, bands: ['weather.temperature_2m'], scope: SCOPE }, { authorization: await bearerFor(t, a, SCOPE) });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(route(own.body, 'weather.temperature_2m').decision, 'cite_now');
    assert.deepEqual(own.body.receipt.scope, SCOPE);
  });

  it('refuses record bands and unknown bands, naming the field', async () => {
    const rec = await post({ cell: A, bands: ['memory.note'] });
    assert.equal(rec.status, 422);
    assert.equal(rec.body.details.field, 'bands[0]');
    const unknown = await post({ cell: A, bands: ['ndvi'] });
    assert.equal(unknown.body.code, 'band_not_in_registry');
  });
});
