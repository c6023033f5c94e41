/**
 * POST /v1/ask (spec 4.5): answers built from signed facts, one receipt binding every fact_cid,
 * the routing explained, next steps that replay as valid requests, the 25 KB cap, the intents
 * (hunt, similar places, what changed, corpus), out of scope, and the MCP tool.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as P from '../../../src/protocol/index.js';
import { ASK_REPLY_CAP_BYTES } from '../../../src/primitives/ask/size.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { fakeConnector, slow, type Script } from '../../support/fake-connector.js';
import { attest, fails, post, vec, verifies, type Reply } from './reads/helpers.js';

const op = makeAttester('ask-route-operator');
/** Plausible values per band (the registry refuses values outside a band's range). */
const VALUES: Record<string, number> = {
  'indices.ndvi': 0.72,
  'indices.evi': 0.48,
  'indices.savi': 0.61,
  'indices.ndmi': 0.12,
  'indices.mndwi': -0.31,
  'indices.ndwi': -0.4,
  's1.vv_db': -18.2,
  's1.vh_db': -24.5,
  'water.gsw_occurrence': 6,
  'copdem30m.elevation_mean': 171,
  'precip.chirps_daily_mm': 12.4,
  'air.pm2_5': 31.5,
  'air.nitrogen_dioxide': 19,
  'air.ozone': 61,
  'weather.temperature_2m': 8.4,
  'weather.precipitation': 0.2,
  'weather.wind_speed_10m': 4.1,
  'weather.relative_humidity_2m': 81,
  'weather.cloud_cover': 64,
  'landcover.esa_worldcover_2021': 50,
  'river.discharge': 312.5,
  'river.discharge_mean_1991_2020': 410.2,
  'river.discharge_max_1991_2020': 3120,
};
const value =
  (band: string): Script =>
  () => ({ status: 'value', value: VALUES[band], provenance: { source: 'fake', ref: band, captured_at: '2026-11-20T10:00:00Z' }, fn: 'fake@1' });
// indices.ndbi fails upstream, so an answer has something missing to say.
const fake = fakeConnector([...Object.keys(VALUES), 'indices.ndbi'], {
  ...Object.fromEntries(Object.keys(VALUES).map((b) => [b, value(b)])),
  'indices.ndbi': () => ({ status: 'error', reason: 'upstream down' }),
});

let t: TestApp;
const replay: Array<{ from: string; step: any }> = [];

async function ask(body: Record<string, unknown>): Promise<Reply> {
  const r = await post(t, '/v1/ask', body);
  if (r.status === 200) for (const step of r.body.next_steps) replay.push({ from: String(body.q), step });
  if (r.status === 200) wholeAnswerVerifies(r.body);
  return r;
}

/** Every answer verifies as a whole: facts, receipt, and the text rendered from answer_parts. */
function wholeAnswerVerifies(body: any): void {
  const v = P.verifyResponse(body, { publicKey: t.service.keys.publicKeyB32 });
  assert.equal(v.valid, true, `${body.answer}\n${v.errors.join('; ')}`);
  assert.ok(v.checks.some((c) => c.check === 'answer' && c.ok));
}

/** Every answer: signed, its receipt binding exactly the facts and neighbours it used. */
function signedAnswer(body: any, q: string): void {
  assert.ok(verifies(t, body.receipt), 'receipt verifies offline');
  assert.equal(body.receipt.primitive, 'svc.ask');
  assert.equal(body.receipt.intent, q);
  for (const f of body.facts.facts) assert.ok(body.receipt.fact_cids.includes(f.fact_cid), `receipt binds ${f.band}`);
  for (const key of [
    'answer',
    'answer_md',
    'topic_routing',
    'facts',
    'algorithms_for_question',
    'caveats',
    'materialize_notes',
    'place_resolved',
    'foundation_embeddings',
    'next_steps',
    'state',
    'receipt',
  ]) {
    assert.ok(key in body, `response has ${key}`);
  }
  assert.equal(body.state.token, `svc:state:${body.state.cid}`);
  assert.equal(body.state.persisted, true);
  if (body.state.record === undefined) {
    // A reply trimmed to its cap leaves the record to state_resolve, and says so.
    assert.ok(
      body.trimmed.some((x: string) => x.startsWith('state.record')),
      JSON.stringify(body.trimmed),
    );
  } else {
    assert.equal(body.state.record_cid, P.contentId(body.state.record));
    assert.deepEqual(body.state.record.fact_cids, body.receipt.fact_cids);
    assert.equal(body.state.record.answer, body.answer);
  }
  for (const s of body.next_steps) assert.deepEqual(Object.keys(s).slice(0, 6), ['action', 'method', 'path', 'url', 'body', 'why']);
  wholeAnswerVerifies(body);
}

before(async () => {
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [fake] });
});
after(async () => t.close());

describe('POST /v1/ask', () => {
  it('answers a topical question from signed facts: values with units in words, the routing explained', async () => {
    const q = 'Is it flooded at 45.76, 4.83?';
    const r = await ask({ q });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const b = r.body;
    signedAnswer(b, q);
    assert.ok(Buffer.byteLength(JSON.stringify(b)) <= 25_000, 'every flood band with its receipt, under the cap');
    assert.deepEqual(Object.keys(b.fact_meta).sort(), b.facts.facts.map((f: any) => f.fact_cid).sort(), 'fact_meta for every fact');
    assert.equal(b.matched_topic, 'flood');
    assert.deepEqual(b.topic_routing.matched_topics[0], 'flood');
    assert.ok(b.topic_routing.matched_keywords.some((m: any) => m.topic === 'flood' && m.matched === 'flooded'));
    assert.equal(b.topic_routing.out_of_scope, false);
    assert.equal(b.topic_routing.routing.method, 'lexical');
    assert.equal(b.place_resolved.cell64, P.cellOf(45.76, 4.83));
    assert.deepEqual(b.receipt.cells, [P.cellOf(45.76, 4.83)]);
    assert.match(b.answer, /Radar backscatter VV -18\.2 decibels \(very low radar backscatter/);
    assert.match(b.answer, /^Floods and inundation for 45\.76, 4\.83 \(near Lyon, FR; cell /);
    assert.match(b.answer, /Elevation 171 metres above mean sea level, observed 2026-11-20, source fake/);
    assert.match(b.answer, /flood_extent_sar_threshold@1: yes — flooded: VV -18\.2 dB < -15/);
    const alg = b.algorithms_for_question.find((a: any) => a.key === 'flood_extent_sar_threshold@1');
    assert.equal(alg.topic, 'flood');
    assert.equal(alg.output.value, true);
    assert.ok(alg.output.fact_cids.every((c: string) => b.receipt.fact_cids.includes(c)));
    assert.ok(b.materialize_notes.every((n: any) => n.status === 'materialized'));
    assert.deepEqual(b.foundation_embeddings, {});
  });

  it('a warm repeat reads the same facts without fetching again', async () => {
    const before = fake.calls.length;
    const r = await ask({ q: 'Is it flooded at 45.76, 4.83?' });
    assert.equal(fake.calls.length, before);
    assert.deepEqual(r.body.materialize_notes, []);
    assert.equal(r.body.receipt.fact_cids.length, r.body.facts.facts.length);
  });

  it('says plainly which bands are missing, and next_steps holds the recall that would fill them', async () => {
    const q = 'Is Lyon built-up or grassland?';
    const r = await ask({ q });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    signedAnswer(r.body, q);
    assert.equal(r.body.matched_topic, 'land_cover');
    assert.match(r.body.place_resolved.label, /^Lyon, /);
    assert.match(r.body.answer, /Built-up \(class 50\)/);
    assert.match(r.body.answer, /Not materialized yet: NDBI: the upstream failed; retryable/);
    const step = r.body.next_steps.find((s: any) => s.action === 'recall');
    assert.deepEqual(step.body, { cell: r.body.place_resolved.cell64, bands: ['indices.ndbi'] });
    assert.ok(r.body.materialize_notes.some((n: any) => n.band === 'indices.ndbi' && n.status === 'skipped' && n.retryable));
  });

  it('out of scope: matched_topic null, the full inventory, nothing read', async () => {
    const q = 'Who is the mayor of Lyon?';
    const r = await ask({ q });
    assert.equal(r.status, 200);
    signedAnswer(r.body, q);
    assert.equal(r.body.matched_topic, null);
    assert.equal(r.body.topic_routing.out_of_scope, true);
    assert.equal(r.body.topic_inventory.length, 26);
    assert.ok(r.body.topic_inventory.every((x: any) => x.key && x.title && x.description));
    assert.deepEqual([r.body.facts.facts, r.body.receipt.fact_cids, r.body.receipt.cells], [[], [], []]);
    assert.match(r.body.answer, /outside what this service answers/);
  });

  it('arithmetic is out of scope even beside topic words, and says why', async () => {
    const q = 'Convert 30 degrees Celsius to Fahrenheit';
    const r = await ask({ q });
    assert.equal(r.status, 200);
    assert.equal(r.body.matched_topic, null);
    assert.equal(r.body.topic_routing.routing.off_topic, 'Convert');
    assert.deepEqual(r.body.receipt.fact_cids, []);
  });

  it('a composite question reads the telling bands of every topic it spans under one receipt, and offers the rest as recalls at the same cell', async () => {
    const q = 'What is the climate risk for my home in Lyon, France?';
    const r = await ask({ q });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    signedAnswer(r.body, q);
    assert.equal(r.body.matched_topic, 'flood');
    const c = r.body.topic_routing.routing.composite;
    assert.equal(c.frame, 'hazard');
    assert.ok(c.topics.length > 0 && !c.topics.includes('flood'));
    assert.match(r.body.answer, /spans several topics \(hazard\): this answer reads the telling bands of floods and inundation; .+, all under one receipt; next_steps reads the rest/);
    // Each other topic is answered in the text: its readings, or why it has none yet.
    for (const key of c.topics) {
      const title = t.service.registry.topics.get(key)!.title;
      assert.ok(r.body.answer.includes(`${title}: `), `${title} is answered`);
    }
    // One receipt binds every fact served, across topics; the flood topic read its telling bands only.
    const bands = r.body.facts.facts.map((f: any) => f.band);
    assert.deepEqual(new Set(r.body.receipt.fact_cids), new Set(r.body.facts.facts.map((f: any) => f.fact_cid)));
    assert.ok(bands.includes('water.gsw_occurrence') && !bands.includes('s1.vh_db'), bands.join(','));
    assert.ok(Buffer.byteLength(JSON.stringify(r.body)) <= 25_000);
    const cell = r.body.place_resolved.cell64;
    for (const key of c.topics) {
      const step = r.body.next_steps.find((s: any) => s.action === 'recall' && s.why.includes(`(topic ${key})`));
      assert.ok(step, `a recall for ${key}`);
      assert.equal(step.body.cell, cell);
      assert.ok(step.body.bands.length > 0);
    }
  });

  it('a hunt question over a large place runs the hunt over its central part: every sample reported, no invented hotspots', async () => {
    const q = 'Where are the floods in Bangladesh?';
    const r = await ask({ q });
    assert.equal(r.status, 200);
    signedAnswer(r.body, q);
    assert.equal(r.body.topic_routing.routing.intent, 'hunt');
    assert.equal(r.body.topic_routing.routing.hunt_event.event, 'flood_extent');
    assert.equal(r.body.hunt.event, 'flood_extent');
    assert.ok(r.body.hunt.cells_sampled > 0);
    assert.ok(r.body.caveats.some((c: string) => /larger than a hunt covers/.test(c)));
    // Radar reads fail on this test responder: no value, so no hotspot, and the answer says why.
    for (const h of r.body.hunt.hotspots) assert.ok(r.body.receipt.fact_cids.includes(h.fact_cid));
    if (r.body.hunt.hotspots.length === 0) assert.match(r.body.answer, /no hotspot among \d+ sampled cells/);
    assert.deepEqual(r.body.facts.facts, []);
  });

  it("an oil slick hunt carries the registry's radar workaround", async () => {
    const r = await ask({ q: 'Find oil_spill hotspots near Mauritius' });
    assert.equal(r.body.topic_routing.routing.hunt_event.event, 'oil_slick');
    assert.match(r.body.answer, /radar darkening/);
  });

  it('similar places: neighbours by embedding in foundation_embeddings, each bound by the receipt', async () => {
    const slowT = P.currentTslot('slow');
    const cells = [P.cellOf(10.1, 20.1), P.cellOf(10.2, 20.2), P.cellOf(10.3, 20.3), P.cellOf(10.4, 20.4)];
    await attest(
      t,
      op,
      cells.map((cell, i) => ({ kind: 'primary', cell, band: 'geotessera', tslot: slowT, value: vec(i + 1), unit: 'unitless' })),
    );
    const q = 'Find places like 10.1, 20.1';
    const r = await ask({ q });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    signedAnswer(r.body, q);
    assert.equal(r.body.topic_routing.routing.intent, 'similar');
    const e = r.body.foundation_embeddings.geotessera;
    assert.equal(e.kind, 'neighbors');
    assert.deepEqual(e.neighbors.map((n: any) => n.cell).sort(), cells.slice(1).sort());
    for (const n of e.neighbors) {
      assert.ok(r.body.receipt.cells.includes(n.cell));
      assert.ok(r.body.receipt.fact_cids.includes(n.fact_cid));
    }
    assert.match(r.body.answer, /Places most similar to .* by the GeoTessera embedding/);
  });

  it('what changed since a year: the embedding change between the two slots, both vectors bound', async () => {
    const cell = P.cellOf(11.5, 21.5);
    const a = P.tslotOf(Date.parse('2020-01-01T00:00:00Z') / 1000, 'slow');
    const b = P.currentTslot('slow');
    await attest(t, op, [
      { kind: 'primary', cell, band: 'geotessera', tslot: a, value: vec(7), unit: 'unitless' },
      { kind: 'primary', cell, band: 'geotessera', tslot: b, value: vec(8), unit: 'unitless' },
    ]);
    const q = 'What changed at 11.5, 21.5 since 2020?';
    const r = await ask({ q });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    signedAnswer(r.body, q);
    const e = r.body.foundation_embeddings.geotessera;
    assert.deepEqual([e.kind, e.tslot_a, e.tslot_b], ['change', a, b]);
    assert.equal(typeof e.cosine, 'number');
    assert.ok(Math.abs(e.change - (1 - e.cosine)) < 1e-6);
    assert.ok(r.body.receipt.fact_cids.includes(e.fact_cid_a) && r.body.receipt.fact_cids.includes(e.fact_cid_b));
    assert.match(r.body.answer, /What changed at .* between 2020 and \d{4}: the GeoTessera embeddings have cosine/);
    assert.ok(r.body.next_steps.some((s: any) => s.path === '/v1/state_diff' && s.body.tslot_a === a));
  });

  it('a corpus question goes to the coverage surfaces', async () => {
    const q = 'Where do you have data?';
    const r = await ask({ q });
    signedAnswer(r.body, q);
    assert.equal(r.body.topic_routing.routing.intent, 'corpus');
    assert.ok(r.body.corpus.facts_scanned > 0);
    assert.match(r.body.answer, /This responder holds \d+ signed public facts over \d+ cells/);
    assert.deepEqual(
      r.body.next_steps.map((s: any) => s.path),
      ['/v1/coverage_matrix', '/v1/corpus_state_stats', '/v1/coverage_map.svg', '/v1/data_availability'],
    );
  });

  it('a past window reads stored history and never fetches; missing slots become next steps', async () => {
    const cell = P.cellOf(12.5, 22.5);
    const tslot = P.tslotOf(Date.parse('2021-06-15T00:00:00Z') / 1000, 'medium');
    await attest(t, op, [{ kind: 'primary', cell, band: 'indices.ndvi', tslot, value: 0.33, unit: 'unitless' }]);
    const calls = fake.calls.length;
    const q = 'What was the NDVI at 12.5, 22.5 in 2021?';
    const r = await ask({ q });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    signedAnswer(r.body, q);
    assert.equal(fake.calls.length, calls, 'nothing fetched for a past window');
    assert.deepEqual([r.body.time.kind, r.body.time.read_as], ['year', 'history']);
    const y = (iso: string) => Date.parse(iso) / 1000;
    assert.deepEqual(r.body.time.tslots, { medium: [P.tslotOf(y('2021-01-01T00:00:00Z'), 'medium'), P.tslotOf(y('2021-12-31T23:59:59Z'), 'medium')] });
    assert.match(r.body.answer, /NDVI 0\.33 \(sparse vegetation or crops\)/);
    assert.match(r.body.answer, /Time: "in 2021" read as 2021-01-01 to 2021-12-31 \(UTC\)/);
    assert.ok(r.body.next_steps.some((s: any) => s.path === '/v1/trajectory' && s.body.band === 'indices.evi'));
  });

  it("verbose:false keeps a country's answer under 25 KB with the receipt intact; verbose:true carries the boundary", async () => {
    const q = 'What is the air quality in France?';
    const short = await ask({ q });
    const shortBytes = Buffer.byteLength(JSON.stringify(short.body));
    assert.ok(shortBytes < ASK_REPLY_CAP_BYTES, `${shortBytes} bytes`);
    signedAnswer(short.body, q);
    assert.equal(short.body.place_resolved.polygon_geojson, undefined);
    assert.ok(short.body.trimmed.length > 0);
    const long = await post(t, '/v1/ask', { q, verbose: true });
    assert.ok(long.body.place_resolved.polygon_geojson);
    assert.ok(long.body.facts.band_info['air.pm2_5'].title);
    assert.ok(Buffer.byteLength(JSON.stringify(long.body)) > shortBytes);
    assert.deepEqual(long.body.receipt.fact_cids, short.body.receipt.fact_cids);
    assert.match(short.body.answer, /has extent: this reads its centre cell only/);
    assert.ok(short.body.next_steps.some((s: any) => s.path === '/v1/recall_polygon' && s.body.cells.length === 16));
  });

  it("include_image adds the cell's scene.png URL", async () => {
    const r = await ask({ q: 'What is the weather like?', lat: 45.76, lng: 4.83, include_image: true });
    assert.equal(r.body.image_url, `/v1/cells/${P.cellOf(45.76, 4.83)}/scene.png`);
    assert.ok(r.body.next_steps.some((s: any) => s.method === 'GET' && s.url === r.body.image_url));
    assert.equal(r.body.topic_routing.routing.place_source, 'latlng');
  });

  it('an ambiguous place is stated, and the other candidates are offered as asks', async () => {
    const q = 'What is the soil like in Springfield?';
    const r = await ask({ q });
    assert.equal(r.body.place_resolved.selected.is_high_confidence, false);
    assert.match(r.body.answer, /"Springfield" resolved with low confidence \(ambiguous/);
    const asks = r.body.next_steps.filter((s: any) => s.path === '/v1/ask');
    assert.equal(asks.length, 2);
    assert.equal(asks[0].body.q, q);
  });

  it('a question naming no place reads nothing and says so', async () => {
    const r = await ask({ q: 'How green is the vegetation?' });
    assert.equal(r.body.place_resolved, null);
    assert.match(r.body.answer, /names no place, so no facts were read/);
    assert.deepEqual(r.body.receipt.fact_cids, []);
  });

  it('the place fields: cell (or its token), lat+lng, place; one way at most, each checked', async () => {
    const cell = P.cellOf(45.76, 4.83);
    const byToken = await ask({ q: 'elevation here', cell: `svc:cell:${cell}` });
    assert.equal(byToken.body.place_resolved.cell64, cell);
    fails(await post(t, '/v1/ask', { q: 'x', place: 'Lyon', lat: 1, lng: 2 }), 422, 'invalid_argument', 'cell|lat');
    fails(await post(t, '/v1/ask', { q: 'x', lat: 1 }), 422, 'invalid_argument', 'lng');
    fails(await post(t, '/v1/ask', { q: 'x', cell: 'defi.zb400' }), 422, 'invalid_cell', 'cell');
    fails(await post(t, '/v1/ask', { q: '' }), 422, 'invalid_argument', 'q');
    fails(await post(t, '/v1/ask', {}), 422, 'invalid_argument', 'q');
  });

  it('every next step, replayed as given, is a valid request', async () => {
    assert.ok(replay.length >= 15, `${replay.length} steps collected`);
    const actions = new Set(replay.map((x) => x.step.action));
    for (const a of ['recall', 'hunt', 'recall_area', 'find_similar', 'state_diff', 'coverage_matrix', 'trajectory', 'scene_image', 'ask_other_place', 'topics'])
      assert.ok(actions.has(a), `a ${a} step was offered`);
    for (const { from, step } of replay) {
      const r = await t.app.inject({ method: step.method, url: step.url, ...(step.body ? { payload: step.body } : {}) });
      const label = `${from} → ${step.method} ${step.url} ${JSON.stringify(step.body)?.slice(0, 120)}: ${r.statusCode} ${r.body.slice(0, 200)}`;
      if (step.available === false) {
        assert.deepEqual([r.statusCode, r.json().code], [404, 'not_found'], label); // no such route yet, as the step says
        continue;
      }
      if (step.auth === 'attester_signature') {
        assert.equal(r.statusCode, 401, label);
        assert.equal(r.json().code, 'unauthorized', label);
        continue;
      }
      // Valid: never a schema or argument failure nor a missing route. A typed "no data" (404
      // cid_not_found: no scene connector here) or an upstream failure of the closed test upstreams is an answer.
      assert.ok(![400, 405, 413, 415, 422].includes(r.statusCode), label);
      if (r.statusCode === 404) assert.notEqual(r.json().code, 'not_found', label);
    }
  });
});

describe('POST /v1/ask with arbitrary questions', () => {
  it('answers 200 with a verifying receipt, whatever the text', async () => {
    const pieces = fc.constantFrom('flood', 'in', 'Lyon', ',', 'France', 'since 2020', 'places like', 'where', 'not', '東京', '12.5, 22.5', "isn't", '?', 'Springfield', 'Kuujjuaq', 'who is');
    const q = fc.oneof(
      fc.string({ minLength: 1, maxLength: 120 }).filter((x) => x.trim() !== ''),
      fc.array(pieces, { minLength: 1, maxLength: 10 }).map((a) => a.join(' ')),
    );
    await fc.assert(
      fc.asyncProperty(q, async (text) => {
        const r = await post(t, '/v1/ask', { q: text });
        assert.equal(r.status, 200, `${JSON.stringify(text)}: ${JSON.stringify(r.body).slice(0, 300)}`);
        assert.ok(verifies(t, r.body.receipt));
        wholeAnswerVerifies(r.body);
      }),
      { numRuns: 60 },
    );
  });

  it('words that name Object.prototype members ("constructor", "__proto__") are plain words', async () => {
    for (const q of ['constructor', '__proto__', 'toString of the flood in Lyon', 'hasOwnProperty valueOf']) {
      const r = await post(t, '/v1/ask', { q });
      assert.equal(r.status, 200, `${q}: ${JSON.stringify(r.body).slice(0, 300)}`);
    }
  });
});

describe('POST /v1/ask on a cold cell', () => {
  it('fetches every band of the topic in parallel', async () => {
    const bands = ['weather.temperature_2m', 'weather.precipitation', 'weather.wind_speed_10m', 'weather.relative_humidity_2m', 'weather.cloud_cover'];
    const started: number[] = [];
    const finished: number[] = [];
    const scripts = Object.fromEntries(
      bands.map((b) => [
        b,
        (req: any) => {
          started.push(performance.now());
          return Promise.resolve(slow(200, { status: 'value', value: VALUES[b], provenance: { source: 'fake' }, fn: 'fake@1' })(req)).then((o) => {
            finished.push(performance.now());
            return o;
          });
        },
      ]),
    );
    const cold = await build({}, {}, { materializers: [fakeConnector(bands, scripts as Record<string, Script>)] });
    try {
      const r = await cold.app.inject({ method: 'POST', url: '/v1/ask', payload: { q: 'What is the weather at 33.3, 44.4?' } });
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(started.length, bands.length);
      // Parallel: every fetch began before the first one ended.
      assert.ok(Math.max(...started) < Math.min(...finished), 'all bands in flight together');
      assert.equal(r.json().facts.facts.length, bands.length);
    } finally {
      await cold.close();
    }
  });
});

describe('MCP svc_ask', () => {
  const rpc = async (body: unknown) => {
    const r = await t.app.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, payload: JSON.stringify(body) });
    return r.json();
  };
  it('is listed on /mcp (core) with a description written for a model, and answers as REST does', async () => {
    const list = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const tool = list.result.tools.find((x: any) => x.name === 'svc_ask');
    assert.ok(tool, 'svc_ask in tools/list of /mcp');
    assert.match(tool.description, /Use this first when you have a question in plain words/);
    assert.match(tool.description, /next_steps/);
    // keep has a default (transient), which the validator fills in: a model may leave it out.
    assert.deepEqual(tool.inputSchema.required, ['q', 'keep']);
    assert.equal(tool.inputSchema.properties.keep.default, 'transient');
    const call = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'svc_ask', arguments: { q: 'Is it flooded at 45.76, 4.83?' } } });
    const sc = call.result.structuredContent;
    const rest = await post(t, '/v1/ask', { q: 'Is it flooded at 45.76, 4.83?' });
    assert.equal(sc.answer, rest.body.answer);
    assert.deepEqual(sc.receipt.fact_cids, rest.body.receipt.fact_cids);
  });
});
