/**
 * Two agents keep a memory of one field over simulated months (docs/memory.md): they name it,
 * note what they see, attest readings that disagree, derive a change (a wrong value refused),
 * record that the field changed hands (an edge invalidated, nothing erased), and read it all
 * back: entity resolution, as-of edge queries before and after the invalidation, contradictions,
 * ranked search, and a scope bearer that expires and is revoked. The responder's clock is
 * simulated, so transaction times are the months of the story.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { bearerRevokeRequest } from '../../support/devices.js';
import { bearerFor } from '../../support/scopes.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../../store/support/pg-env.js';

const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? '';
const redisSkip = REDIS_URL === '' && process.env.SVC_TEST_REQUIRE_SERVICES !== '1' ? 'SVC_TEST_REDIS_URL not set: the PostgreSQL + Redis run of the story needs both servers' : false;

const ana = makeAttester('memory-scenario-ana');
const ben = makeAttester('memory-scenario-ben');
const FIELD = P.cellOf(52.38012, 4.64011);
const ELSEWHERE = P.cellOf(52.41012, 4.70011);
const ANA_SCOPE = { agent_id: 'memory-scenario-ana' };
const TEMP = 'weather.temperature_2m';

/** The whole story on one deployment: the embedded store, or PostgreSQL with Redis in front. */
function story(driver: 'sqlite' | 'postgres+redis'): void {
  const schema = randomSchema();
  type Json = Record<string, any>;
  let t: TestApp;
  let clock = Date.parse('2026-01-10T09:00:00Z');
  const setClock = (iso: string) => {
    clock = Date.parse(iso);
  };
  const iso = () => new Date(clock).toISOString().slice(0, 19) + 'Z';
  const dayTslot = (isoDay: string) => P.tslotOf(Math.floor(Date.parse(isoDay) / 1000), 'fast');

  const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
    const r = await t.app.inject({ method: 'POST', url, payload: payload as object, headers });
    return { status: r.statusCode, body: r.json() as Json };
  };
  const ok = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
    const r = await post(url, payload, headers);
    assert.equal(r.status, 200, `${url}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const m = () => t.service.manifests;
  const note = (value: Record<string, unknown>, scope?: P.Scope) => P.recordBody('memory.note', value, { signed_at: iso(), ...(scope ? { scope } : {}) });
  const edge = (value: Record<string, unknown>) => P.recordBody('memory.edge', value, { signed_at: iso() });
  const alias = (entity: string, phrase: string) => P.recordBody('memory.alias', { entity, phrase }, { signed_at: iso() });
  const reading = (value: number, day: string) => ({ kind: 'primary', cell: FIELD, band: TEMP, tslot: dayTslot(day), value, unit: 'degC', signed_at: iso() });

  // What the story leaves behind, read by the checks below.
  const s: {
    field: string;
    decoy: string;
    pumpNote: string;
    maizeNote: string;
    farmX: string;
    farmY: string;
    soldRecordedAt: string;
    beforeSale: string;
    anaMarch: string;
    benMarch: string;
    anaApril: string;
    anaDelta: string;
  } = {} as never;

  before(async () => {
    const deployment = driver === 'postgres+redis' ? { databaseUrl: pgUrl(), databaseSchema: schema, redisUrl: REDIS_URL } : {};
    t = await build({ attesterKeys: [ana.publicKey, ben.publicKey], ...deployment }, {}, { now: () => new Date(clock) });

    // January: the field gets an identity; both agents say what they call it; Ana notes a failure.
    s.field = (await ok('/v1/entity', { kind: 'field', name: 'Hoeve Noord', geometry: { cell: FIELD }, attributes: { crop: 'maize' } })).entity_cid;
    s.decoy = (await ok('/v1/entity', { kind: 'field', name: 'Noordakker', geometry: { cell: ELSEWHERE } })).entity_cid;
    s.farmX = (await ok('/v1/entity', { kind: 'farm', name: 'Van Dijk farm', geometry: { cell: FIELD } })).entity_cid;
    s.farmY = (await ok('/v1/entity', { kind: 'farm', name: 'De Vries farm', geometry: { cell: ELSEWHERE } })).entity_cid;
    await ok('/v1/entity/alias', ana.batch([alias(s.field, 'the north field')], m()));
    await ok('/v1/entity/alias', ben.batch([alias(s.field, 'north field by the canal'), alias(s.decoy, 'north field')], m()));
    const pump = note({
      text: 'Irrigation pump at the north field failed; water standing by the pump house',
      entity: s.field,
      cell: FIELD,
      tags: ['pump', 'irrigation'],
      observed_at: '2026-01-09T16:00:00Z',
    });
    s.pumpNote = (await ok('/v1/memory/notes', ana.batch([pump], m()))).fact_cids[0];
    await ok('/v1/edges', ana.batch([edge({ type: 'part_of', from: s.field, to: s.farmX, valid_from: '2026-01-01T00:00:00Z' })], m()));

    // February: Ben notes the sowing.
    setClock('2026-02-15T10:00:00Z');
    const maize = note({ text: 'Maize sown on the north field; soil still wet near the irrigation ditch', entity: s.field, cell: FIELD, tags: ['maize'] });
    s.maizeNote = (await ok('/v1/memory/notes', ben.batch([maize], m()))).fact_cids[0];

    // March: both read the air temperature of one day at the field, and disagree.
    setClock('2026-03-21T08:00:00Z');
    s.anaMarch = (await ok('/v1/attest', ana.batch([reading(14.0, '2026-03-20T00:00:00Z')], m()))).fact_cids[0];
    setClock('2026-03-21T09:00:00Z');
    s.benMarch = (await ok('/v1/attest', ben.batch([reading(19.5, '2026-03-20T00:00:00Z')], m()))).fact_cids[0];

    // April: Ana reads again, then derives the change.
    setClock('2026-04-20T08:00:00Z');
    s.anaApril = (await ok('/v1/attest', ana.batch([reading(17.5, '2026-04-19T00:00:00Z')], m()))).fact_cids[0];

    // May passes; in June Ana records that the field now belongs to another farm (only the key that
    // stated an edge may close it).
    setClock('2026-05-15T12:00:00Z');
    s.beforeSale = iso();
    setClock('2026-06-05T12:00:00Z');
    s.soldRecordedAt = (await ok('/v1/edges', ana.batch([edge({ type: 'part_of', from: s.field, to: s.farmY, valid_from: '2026-06-01T00:00:00Z', reason: 'sold' })], m()))).accepted_at;
  });
  after(async () => {
    await t?.close();
    if (driver === 'postgres+redis') await dropSchema(schema);
  });

  const derivation = (value: number) => ({
    kind: 'derivative',
    cell: FIELD,
    band: 'derived.delta',
    value,
    signed_at: iso(),
    derivation: { fn: 'nd.delta@1', parents: [s.anaApril, s.anaMarch] },
  });

  describe(`two agents, one field, six months (${driver})`, () => {
    it('resolves "north field" to the field two agents independently named, with the evidence', async () => {
      const r = await ok('/v1/entity/resolve', { phrase: 'north field' });
      assert.equal(r.candidates[0].entity_cid, s.field);
      assert.equal(r.candidates[0].corroboration.distinct_attesters, 2);
      assert.deepEqual(new Set(r.candidates[0].corroboration.alias_attesters), new Set([ana.publicKey, ben.publicKey]));
      assert.ok(
        r.candidates.some((c: Json) => c.entity_cid === s.decoy),
        'the decoy is a candidate too, ranked lower',
      );
      assert.ok(r.candidates.findIndex((c: Json) => c.entity_cid === s.decoy) > 0);
      assert.equal(P.verifyResponse(r, { publicKey: t.service.keys.publicKeyB32 }).trusted, true);
    });

    it('answers as-of edge queries before and after the sale invalidated the old ownership', async () => {
      const march = await ok('/v1/edges/recall', { record: s.field, direction: 'out', types: ['part_of'], valid_at: '2026-03-01T00:00:00Z' });
      assert.deepEqual(
        march.edges.map((e: Json) => e.to),
        [s.farmX],
      );
      assert.equal(march.edges[0].effective_valid_to, '2026-06-01T00:00:00Z', 'closed by the later record, not erased');
      const july = await ok('/v1/edges/recall', { record: s.field, direction: 'out', types: ['part_of'], valid_at: '2026-07-01T00:00:00Z' });
      assert.deepEqual(
        july.edges.map((e: Json) => e.to),
        [s.farmY],
      );
      // What we believed in May about July: the sale was not recorded yet.
      const believed = await ok('/v1/edges/recall', { record: s.field, direction: 'out', types: ['part_of'], valid_at: '2026-07-01T00:00:00Z', recorded_at: s.beforeSale });
      assert.deepEqual(
        believed.edges.map((e: Json) => e.to),
        [s.farmX],
      );
      assert.equal(believed.edges[0].closed_at, null);
      const both = await ok('/v1/edges/recall', { record: s.field, types: ['part_of'] });
      assert.equal(both.edges.length, 2, 'both ownership edges remain');
    });

    it('lists the March disagreement with both fact_cids and attesters, and records it once as an edge', async () => {
      const r = await ok('/v1/memory_contradictions', { cell: FIELD });
      assert.equal(r.contradictions.length, 1);
      const c = r.contradictions[0];
      assert.equal(c.band, TEMP);
      assert.deepEqual(new Set([c.a.fact_cid, c.b.fact_cid]), new Set([s.anaMarch, s.benMarch]));
      assert.deepEqual(new Set([c.a.attester, c.b.attester]), new Set([ana.publicKey, ben.publicKey]));
      assert.equal(c.measure.abs_diff, 5.5);
      const rec = await ok('/v1/memory_contradictions', { cell: FIELD, record: true });
      assert.equal(rec.recorded.created, 1);
      const again = await ok('/v1/memory_contradictions', { cell: FIELD, record: true });
      assert.equal(again.recorded.created, 0);
      const e = await ok('/v1/edges/recall', { record: s.benMarch, types: ['contradicts'] });
      assert.equal(e.edges.length, 1);
      assert.deepEqual(new Set([e.edges[0].from, e.edges[0].to]), new Set([s.anaMarch, s.benMarch]));
    });

    it('refuses a derivation whose value does not recompute, writing nothing, and keeps the right one', async () => {
      const size = await t.service.store.log.size();
      const bad = await post('/v1/derive', ana.batch([derivation(4.0)], m()));
      assert.equal(bad.status, 422, JSON.stringify(bad.body));
      assert.equal(bad.body.details.reason, 'recomputation_mismatch');
      assert.equal(bad.body.details.expected, 3.5);
      assert.equal(await t.service.store.log.size(), size);
      const good = await ok('/v1/derive', ana.batch([derivation(3.5)], m()));
      assert.equal(good.derivation.recomputed, true);
      const listed = await t.app.inject({ method: 'GET', url: `/v1/derived?attester=${ana.publicKey}` });
      assert.deepEqual(
        listed.json().facts.map((f: Json) => f.fact_cid),
        [good.derivation.fact_cid],
      );
      const parents = await ok('/v1/edges/recall', { record: good.derivation.fact_cid, direction: 'out', types: ['derived_from'] });
      assert.deepEqual(new Set(parents.edges.map((x: Json) => x.to)), new Set([s.anaApril, s.anaMarch]));
      // Recall with include edges binds the memory edges touching the facts it returns.
      const r = await ok('/v1/recall', { cell: FIELD, bands: [TEMP], include: ['edges'] });
      assert.equal(r.facts[0].fact_cid, s.anaApril);
      const into = r.edges.filter((x: Json) => x.kind === 'derived_from' && x.to === s.anaApril);
      assert.equal(into.length, 1);
      assert.ok(r.receipt.edge_cids.includes(into[0].edge_cid));
      assert.equal(P.verifyResponse(r, { publicKey: t.service.keys.publicKeyB32 }).trusted, true);
    });

    it('ranks the note that says what was asked first', async () => {
      const pump = await ok('/v1/memory/search', { query: 'irrigation pump failed' });
      assert.equal(pump.results[0].fact_cid, s.pumpNote);
      assert.ok(
        pump.results.some((x: Json) => x.fact_cid === s.maizeNote),
        'the maize note mentions irrigation too, lower',
      );
      assert.ok(pump.results[0].score > pump.results[1].score);
      const maize = await ok('/v1/memory/search', { query: 'maize sown', entity: `svc:entity:${s.field}` });
      assert.equal(maize.results[0].fact_cid, s.maizeNote);
      const january = await ok('/v1/memory/search', { query: 'irrigation', as_of: '2026-01-31T00:00:00Z' });
      assert.deepEqual(
        january.results.map((x: Json) => x.fact_cid),
        [s.pumpNote],
        'as of January only the pump note existed',
      );
    });

    it("keeps Ana's private notes behind a bearer that expires and can be revoked", async () => {
      setClock('2026-06-10T08:00:00Z');
      const secret = note({ text: 'offer for the north field pump replacement: 4200 EUR', entity: s.field }, ANA_SCOPE);
      await ok('/v1/memory/notes', ana.batch([secret], m()));
      const ask = { query: 'pump replacement offer', scope: ANA_SCOPE };
      assert.deepEqual(
        (await ok('/v1/memory/search', { query: 'pump replacement offer' })).results.filter((x: Json) => x.fact_cid === P.factCid(secret)),
        [],
      );
      const bearer = await bearerFor(t, ana, ANA_SCOPE);
      const mine = await ok('/v1/memory/search', ask, { authorization: bearer });
      assert.equal(mine.results[0].fact_cid, P.factCid(secret));
      assert.equal((await post('/v1/memory/search', ask, { authorization: await bearerFor(t, ben, { agent_id: 'memory-scenario-ben' }) })).status, 403);

      // Expiry: the bearer lived 300 s.
      clock += 301_000;
      const expired = await post('/v1/memory/search', ask, { authorization: bearer });
      assert.equal(expired.status, 401);
      assert.equal(expired.body.code, 'unauthorized');

      // Revocation: a fresh bearer, then Ana voids every bearer issued before now.
      const fresh = await bearerFor(t, ana, ANA_SCOPE);
      assert.equal((await post('/v1/memory/search', ask, { authorization: fresh })).status, 200);
      clock += 2_000;
      await ok('/v1/memory/bearer/revoke', bearerRevokeRequest(t, ana, Math.floor(clock / 1000)));
      const revoked = await post('/v1/memory/search', ask, { authorization: fresh });
      assert.equal(revoked.status, 401);
      assert.equal(revoked.body.details.reason, 'bearer_revoked');
      clock += 1_000;
      assert.equal((await post('/v1/memory/search', ask, { authorization: await bearerFor(t, ana, ANA_SCOPE) })).status, 200, 'a bearer issued after the revocation works');
    });

    it("Ben cannot end Ana's ownership edge: both statements stand, and the disagreement is recorded", async () => {
      const july = await ok('/v1/edges/recall', { record: s.field, direction: 'out', types: ['part_of'], valid_at: '2026-07-01T00:00:00Z' });
      const anaEdge = july.edges[0];
      assert.equal(anaEdge.attester, ana.publicKey);
      setClock('2026-08-02T12:00:00Z');
      const w = await ok('/v1/edges', ben.batch([edge({ type: 'part_of', from: s.field, to: s.farmX, valid_from: '2026-08-01T00:00:00Z', invalidates: [anaEdge.edge_cid] })], m()));
      assert.equal(w.contradicts.length, 1, 'one contradicts edge recorded');
      const aug = await ok('/v1/edges/recall', { record: s.field, direction: 'out', types: ['part_of'], valid_at: '2026-08-15T00:00:00Z' });
      assert.deepEqual(new Set(aug.edges.map((e: Json) => e.attester)), new Set([ana.publicKey, ben.publicKey]), "Ana's edge is still open");
      assert.ok(aug.edges.every((e: Json) => e.closed_at === null));
      const c = await ok('/v1/edges/recall', { record: w.edges[0].edge_cid, direction: 'out', types: ['contradicts'] });
      assert.deepEqual(
        c.edges.map((e: Json) => e.to),
        [anaEdge.edge_cid],
      );
      assert.equal(c.edges[0].attester, t.service.keys.publicKeyB32, 'signed by the responder');
    });
  });
}

story('sqlite');
if (pgSkip || redisSkip) describe('two agents, one field, six months (postgres+redis)', { skip: pgSkip || redisSkip }, () => {});
else story('postgres+redis');
