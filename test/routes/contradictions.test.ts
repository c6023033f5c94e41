/**
 * POST /v1/memory_contradictions and attester reputation at GET /v1/contributors
 * (docs/memory-insight.md): disagreeing and agreeing values of listed attesters at shared slots,
 * per band kind; pages; scope isolation; record: true writes each contradicts edge once (REST
 * only, refused over MCP); reputation counts public facts only.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';
import { bearerFor } from '../support/scopes.js';

const a = makeAttester('insight-contradictions-a');
const b = makeAttester('insight-contradictions-b');
const c = makeAttester('insight-contradictions-c');
const X = P.cellOf(46.2001, 6.1401);
const Y = P.cellOf(46.2101, 6.1501);
const Z = P.cellOf(46.2201, 6.1601);
const SCOPE = { org_id: 'insight-contradictions-acme' };
const OTHER = { org_id: 'insight-contradictions-other' };
const DAY = Math.floor(Date.now() / 86_400_000) - 2; // a fast tslot two days ago
const MONTH = Math.floor(Date.now() / 2_592_000_000) - 1; // a medium tslot
const YEAR = Math.floor(Date.now() / 31_536_000_000) - 1; // a slow tslot
const unit = (i: number) => Array.from({ length: 128 }, (_, k) => (k === i ? 1 : 0));

type Json = Record<string, any>;
let t: TestApp;
const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
  const r = await t.app.inject({ method: 'POST', url, payload: payload as object, headers });
  return { status: r.statusCode, body: r.json() as Json };
};
const temp = (cell: string, value: number, at: string, scope?: P.Scope) => ({
  kind: 'primary',
  cell,
  band: 'weather.temperature_2m',
  tslot: DAY,
  value,
  unit: 'degC',
  signed_at: `2026-01-0${at}Z`,
  ...(scope ? { scope } : {}),
});
const fact = (cell: string, band: string, tslot: number, value: unknown, at: string) => ({ kind: 'primary', cell, band, tslot, value, signed_at: `2026-01-0${at}Z` });

before(async () => {
  t = await build(
    {
      attesterKeys: [a.publicKey, b.publicKey, c.publicKey],
      scopeKeys: { 'org_id:insight-contradictions-acme': [a.publicKey, b.publicKey], 'org_id:insight-contradictions-other': [c.publicKey] },
    },
    {},
    { materializers: [] },
  );
  const m = t.service.manifests;
  const attest = async (who: typeof a, facts: Json[]) => {
    const r = await post('/v1/attest', who.batch(facts, m));
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };
  await attest(a, [
    temp(X, 10.0, '1T10:00:00'),
    temp(Y, 5, '1T10:00:00'),
    fact(X, 'indices.ndvi', MONTH, 0.5, '1T10:00:00'),
    fact(X, 'landcover.esa_worldcover_2021', 0, 10, '1T10:00:00'),
    fact(X, 'geotessera', YEAR, unit(0), '1T10:00:00'),
  ]);
  await attest(b, [
    temp(X, 10.3, '1T11:00:00'),
    temp(Y, 5, '1T11:00:00'),
    fact(X, 'indices.ndvi', MONTH, 0.51, '1T11:00:00'),
    fact(X, 'landcover.esa_worldcover_2021', 0, 20, '1T11:00:00'),
    fact(X, 'geotessera', YEAR, unit(1), '1T11:00:00'),
  ]);
  await attest(c, [temp(X, 12.0, '1T12:00:00')]);
  // A disagreement only the scope holds.
  await attest(a, [temp(Z, 1, '1T10:00:00', SCOPE)]);
  await attest(b, [temp(Z, 3, '1T11:00:00', SCOPE)]);
});
after(async () => t?.close());

const key = (x: Json) => `${x.band}|${x.a.attester}|${x.b.attester}`;

describe('POST /v1/memory_contradictions', () => {
  it('lists every disagreeing attester pair per band kind, newer fact first, with a receipt binding every cited fact', async () => {
    const r = await post('/v1/memory_contradictions', { cell: X });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const got = r.body.contradictions as Json[];
    assert.deepEqual(
      got.map(key).sort(),
      [
        `geotessera|${b.publicKey}|${a.publicKey}`,
        `landcover.esa_worldcover_2021|${b.publicKey}|${a.publicKey}`,
        `weather.temperature_2m|${c.publicKey}|${a.publicKey}`,
        `weather.temperature_2m|${c.publicKey}|${b.publicKey}`,
      ].sort(),
      'a and b agree on temperature (0.3 ≤ 0.5 degC) and ndvi (0.01 ≤ 0.02); c disagrees with both',
    );
    const byKey = Object.fromEntries(got.map((x) => [key(x), x]));
    const ca = byKey[`weather.temperature_2m|${c.publicKey}|${a.publicKey}`];
    assert.equal(ca.kind, 'scalar');
    assert.equal(ca.cell, X);
    assert.equal(ca.tslot, DAY);
    assert.deepEqual([ca.a.value, ca.b.value], [12, 10]);
    assert.deepEqual([ca.measure.abs_diff, ca.measure.tolerance, ca.measure.tolerance_source], [2, 0.5, 'registry']);
    assert.equal(ca.a.signed_at, '2026-01-01T12:00:00Z');
    const cat = byKey[`landcover.esa_worldcover_2021|${b.publicKey}|${a.publicKey}`];
    assert.deepEqual([cat.kind, cat.measure], ['categorical', { equal: false }]);
    const vec = byKey[`geotessera|${b.publicKey}|${a.publicKey}`];
    assert.deepEqual([vec.kind, vec.measure], ['vector', { cosine: 0, threshold: 0.95 }]);
    assert.equal(r.body.next_after, null);
    const cids = new Set(got.flatMap((x) => [x.a.fact_cid, x.b.fact_cid]));
    assert.deepEqual([...r.body.receipt.fact_cids].sort(), [...cids].sort());
    assert.deepEqual(r.body.receipt.cells, [X]);
    assert.equal(r.body.receipt.scope, undefined);
    const v = P.verifyResponse(r.body, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, v.errors.join('; '));
  });

  it('filters by band and by area; an agreeing band lists nothing', async () => {
    const ndvi = await post('/v1/memory_contradictions', { cell: X, bands: ['indices.ndvi'] });
    assert.deepEqual(ndvi.body.contradictions, []);
    const y = await post('/v1/memory_contradictions', { cells: [Y] });
    assert.deepEqual(y.body.contradictions, [], 'equal values at Y');
    const box = await post('/v1/memory_contradictions', { bbox: [6.13, 46.19, 6.17, 46.23], bands: ['weather.temperature_2m'] });
    assert.equal(box.status, 200, JSON.stringify(box.body));
    assert.equal(box.body.contradictions.length, 2, 'the public temperature pairs at X; Z is scoped');
    const rec = await post('/v1/memory_contradictions', { bands: ['memory.edge'] });
    assert.equal(rec.status, 422);
    assert.equal(rec.body.details.field, 'bands[0]');
  });

  it('pages by slot with next_after until done, never splitting a slot', async () => {
    const whole = (await post('/v1/memory_contradictions', {})).body.contradictions as Json[];
    const seen: Json[] = [];
    let after: string | undefined;
    for (let i = 0; i < 10; i++) {
      const r = await post('/v1/memory_contradictions', { limit: 1, ...(after ? { after } : {}) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      seen.push(...r.body.contradictions);
      if (r.body.next_after === null) break;
      after = r.body.next_after;
    }
    assert.deepEqual(seen.map(key).sort(), whole.map(key).sort());
    const bad = await post('/v1/memory_contradictions', { after: 'not a cursor' });
    assert.equal(bad.status, 422);
  });

  it('a scoped disagreement is invisible without its bearer and to another scope', async () => {
    const pub = await post('/v1/memory_contradictions', { cell: Z });
    assert.deepEqual(pub.body.contradictions, []);
    const anon = await post('/v1/memory_contradictions', { cell: Z, scope: SCOPE });
    assert.equal(anon.status, 401);
    const cBearer = await bearerFor(t, c, OTHER);
    const wrong = await post('/v1/memory_contradictions', { cell: Z, scope: SCOPE }, { authorization: cBearer });
    assert.equal(wrong.status, 403);
    const other = await post('/v1/memory_contradictions', { scope: OTHER }, { authorization: cBearer });
    assert.deepEqual(other.body.contradictions, []);
    const own = await post('/v1/memory_contradictions', { cell: Z, scope: SCOPE }, { authorization: await bearerFor(t, a, SCOPE) });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.body.contradictions.length, 1);
    assert.deepEqual([own.body.contradictions[0].a.value, own.body.contradictions[0].b.value], [3, 1]);
    assert.deepEqual(own.body.receipt.scope, SCOPE);
  });

  it("record: true writes one contradicts edge per pair, once, in the facts' scope", async () => {
    const first = await post('/v1/memory_contradictions', { cell: X, record: true });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const pairs = first.body.contradictions as Json[];
    assert.equal(first.body.recorded.created, pairs.length);
    assert.equal(first.body.recorded.edge_fact_cids.length, pairs.length);
    assert.deepEqual([...first.body.receipt.edge_cids].sort(), [...first.body.recorded.edge_fact_cids].sort());
    for (const [i, e] of (first.body.recorded.edges as Json[]).entries()) {
      assert.deepEqual([e.from, e.to, e.created], [pairs[i].a.fact_cid, pairs[i].b.fact_cid, true]);
      const stored = await t.service.store.getFact(e.edge_cid);
      assert.ok(stored, 'the edge record is stored');
      assert.equal(stored.band, 'memory.edge');
      assert.equal(stored.attester, t.service.keys.publicKeyB32);
      assert.equal(stored.scope, null);
      const value = stored.body.value as Json;
      assert.deepEqual([value.type, value.from, value.to, value.valid_from], ['contradicts', pairs[i].a.fact_cid, pairs[i].b.fact_cid, pairs[i].a.signed_at]);
      assert.match(value.reason, new RegExp(pairs[i].band.replace('.', '\\.')));
      assert.equal(stored.cell, `svc:entity:${P.anchorId(value)}`);
    }
    const out = await t.service.store.memory.edges({ scope: null, record: pairs[0].a.fact_cid, direction: 'out', kinds: ['contradicts'], limit: 10 });
    assert.ok(out.some((e) => e.to === pairs[0].b.fact_cid));
    const size = await t.service.store.log.size();
    const again = await post('/v1/memory_contradictions', { cell: X, record: true });
    assert.equal(again.body.recorded.created, 0);
    assert.deepEqual(again.body.recorded.edge_fact_cids, first.body.recorded.edge_fact_cids);
    assert.ok(again.body.recorded.edges.every((e: Json) => e.created === false));
    assert.equal(await t.service.store.log.size(), size, 'nothing written the second time');

    const scoped = await post('/v1/memory_contradictions', { cell: Z, scope: SCOPE, record: true }, { authorization: await bearerFor(t, a, SCOPE) });
    assert.equal(scoped.status, 200, JSON.stringify(scoped.body));
    assert.equal(scoped.body.recorded.created, 1);
    const edge = await t.service.store.getFact(scoped.body.recorded.edge_fact_cids[0]);
    assert.deepEqual(edge?.scope, SCOPE);
    assert.deepEqual(await t.service.store.memory.edges({ scope: null, record: scoped.body.contradictions[0].a.fact_cid, direction: 'both', limit: 10 }), [], 'not visible publicly');
  });

  it('over MCP it lists, and refuses record (a write: REST only)', async () => {
    const call = (args: Json) =>
      t.app.inject({
        method: 'POST',
        url: '/mcp/full',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_memory_contradictions', arguments: args } },
      });
    const list = (await call({ cell: X })).json().result;
    assert.equal(list.isError, undefined, JSON.stringify(list).slice(0, 300));
    assert.equal(list.structuredContent.contradictions.length, 4);
    const size = await t.service.store.log.size();
    const rec = (await call({ cell: Y, record: true })).json().result;
    assert.equal(rec.isError, true);
    assert.equal(rec.structuredContent.code, 'invalid_argument');
    assert.equal(rec.structuredContent.details.field, 'record');
    assert.equal(await t.service.store.log.size(), size);
  });
});

describe('GET /v1/contributors reputation', () => {
  it('counts accepted, corroborated and contradicted facts per attester, public facts only', async () => {
    const body = (await t.app.inject({ method: 'GET', url: '/v1/contributors' })).json();
    const rep = Object.fromEntries(body.attesters.map((x: Json) => [x.attester, x.reputation]));
    // a: temperature X (agrees with b, contradicts c), ndvi (agrees), landcover and geotessera (contradict b), temperature Y (agrees):
    // agreed with by one other key (b), contradicted by two (b and c). Keys are counted, not facts.
    assert.deepEqual(rep[a.publicKey], { accepted: 5, corroborated: 1, contradicted: 2 });
    assert.deepEqual(rep[b.publicKey], { accepted: 5, corroborated: 1, contradicted: 2 });
    assert.deepEqual(rep[c.publicKey], { accepted: 1, corroborated: 0, contradicted: 2 });
    assert.equal(body.reputation.available, true);
    assert.equal(body.reputation.truncated, false);
    assert.ok(body.reputation.slots_scanned >= 5);
    assert.match(body.reputation.note, /public facts only/);
  });

  it('is recomputed once the log grows (the previous counts are served meanwhile, with their log_size)', async () => {
    const r = await post('/v1/attest', c.batch([temp(Y, 5.2, '1T12:00:00')], t.service.manifests));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const size = await t.service.store.log.size();
    let body: Json = {};
    for (let i = 0; i < 100; i++) {
      body = (await t.app.inject({ method: 'GET', url: '/v1/contributors' })).json();
      if (body.reputation.log_size === size) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    assert.equal(body.reputation.log_size, size);
    const rep = Object.fromEntries(body.attesters.map((x: Json) => [x.attester, x.reputation]));
    assert.deepEqual(rep[c.publicKey], { accepted: 2, corroborated: 2, contradicted: 2 });
    assert.deepEqual(rep[a.publicKey], { accepted: 5, corroborated: 2, contradicted: 2 });
  });

  it("one batch of 20 disagreeing facts moves another key's contradicted count by one", async () => {
    const before_ = (await t.app.inject({ method: 'GET', url: '/v1/contributors' })).json();
    const was = Object.fromEntries(before_.attesters.map((x: Json) => [x.attester, x.reputation]))[b.publicKey];
    // b and a already disagree; now a writes 20 more disagreeing facts at slots b also wrote.
    const cells = Array.from({ length: 20 }, (_, i) => P.cellOf(46.3 + i / 1000, 6.2));
    const wb = await post(
      '/v1/attest',
      b.batch(
        cells.map((cell) => temp(cell, 20, '1T11:00:00')),
        t.service.manifests,
      ),
    );
    assert.equal(wb.status, 200, JSON.stringify(wb.body));
    const wc = await post(
      '/v1/attest',
      c.batch(
        cells.map((cell) => temp(cell, 35, '1T12:00:00')),
        t.service.manifests,
      ),
    );
    assert.equal(wc.status, 200, JSON.stringify(wc.body));
    const size = await t.service.store.log.size();
    let body: Json = {};
    for (let i = 0; i < 200; i++) {
      body = (await t.app.inject({ method: 'GET', url: '/v1/contributors' })).json();
      if (body.reputation.log_size === size) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    const now = Object.fromEntries(body.attesters.map((x: Json) => [x.attester, x.reputation]))[b.publicKey];
    // c already disagreed with b at X: twenty more disagreements from c change nothing.
    assert.equal(now.contradicted, was.contradicted);
    assert.equal(now.accepted, was.accepted + 20);
  });
});

describe('record: true is metered per client address', () => {
  it('the responder signs at most SVC_SIGNING_QUOTA_COUNT records per window for one address: all of a request or none', async () => {
    const m = await build({ attesterKeys: [a.publicKey, b.publicKey], signingQuota: { count: 2, windowSecs: 3600 } }, {}, { materializers: [] });
    try {
      const cells = [0, 1, 2].map((i) => P.cellOf(47.1 + i / 1000, 7.1));
      for (const [who, v] of [
        [a, 10],
        [b, 30],
      ] as const) {
        const r = await m.app.inject({
          method: 'POST',
          url: '/v1/attest',
          payload: who.batch(
            cells.map((cell) => temp(cell, v, '1T10:00:00')),
            m.service.manifests,
          ),
        });
        assert.equal(r.statusCode, 200, r.body);
      }
      const size = await m.service.store.log.size();
      const three = await m.app.inject({ method: 'POST', url: '/v1/memory_contradictions', payload: { cells, record: true } });
      assert.equal(three.statusCode, 429, three.body);
      assert.equal(three.json().code, 'rate_limited');
      assert.ok(three.json().details.retry_after > 0);
      assert.equal(await m.service.store.log.size(), size, 'nothing signed');
      const listed = await m.app.inject({ method: 'POST', url: '/v1/memory_contradictions', payload: { cells } });
      assert.equal(listed.json().contradictions.length, 3, 'listing is not metered');
      const two = await m.app.inject({ method: 'POST', url: '/v1/memory_contradictions', payload: { cells: cells.slice(0, 2), record: true } });
      assert.equal(two.statusCode, 200, two.body);
      assert.equal(two.json().recorded.created, 2);
    } finally {
      await m.close();
    }
  });
});
