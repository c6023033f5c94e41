import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { fakeConnector, slow, type FakeConnector } from '../../support/fake-connector.js';
import { bearerFor } from '../../support/scopes.js';

let t: TestApp;
let fake: FakeConnector;
const op = makeAttester('recall-operator');
let n = 0;
const freshCell = () => P.cellOf(-10 + n++ * 0.01, 30);

before(async () => {
  fake = fakeConnector(['copdem30m.elevation_mean', 'weather.temperature_2m', 'air.pm2_5', 'air.ozone', 'indices.ndvi', 'soil.clay_0_30cm'], {
    'air.pm2_5': () => ({ status: 'absence', reason: 'outside_coverage', provenance: { source: 'fake' }, fn: 'fake@1', detail: 'no model grid here' }),
    'air.ozone': () => ({ status: 'error', reason: 'HTTP 503 from upstream' }),
    'soil.clay_0_30cm': slow(5_000, { status: 'value', value: 1, provenance: { source: 'fake' }, fn: 'fake@1' }),
    // The fake's default 42.5 is outside NDVI's physical range [-1, 1], which the write path refuses.
    'indices.ndvi': () => ({ status: 'value', value: 0.425, provenance: { source: 'fake' }, fn: 'fake@1' }),
  });
  t = await build({ attesterKeys: [op.publicKey], materializerTimeoutSecs: 2 }, {}, { materializers: [fake] });
});
after(async () => t.close());

const recall = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const r = await t.app.inject({ method: 'POST', url: '/v1/recall', payload: body, headers });
  return { status: r.statusCode, body: r.statusCode === 304 ? null : r.json(), headers: r.headers };
};
const verifies = (receipt: any) => P.verifyReceipt(receipt, { publicKey: t.service.keys.publicKeyB32 }).valid;

describe('POST /v1/recall', () => {
  describe('state machine (spec part 3)', () => {
    it('a miss with a materializer: fetched, signed, persisted, in the log and returned in the same response', async () => {
      const cell = freshCell();
      const r = await recall({ cell, bands: ['copdem30m.elevation_mean'] });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.facts.length, 1);
      const f = r.body.facts[0];
      assert.equal(f.value, 42.5);
      assert.equal(f.kind, 'primary');
      assert.equal(f.signer, t.service.keys.publicKeyB32);
      assert.equal(f.fact_cid, P.factCid(f));
      assert.ok(verifies(f.receipt));
      assert.ok(verifies(r.body.receipt));
      assert.deepEqual(r.body.receipt.fact_cids, [f.fact_cid]);
      assert.ok(r.body.receipt.merkle_proof, 'v2 receipt binds the inclusion proof');
      const note = r.body.materialize_notes[0];
      assert.deepEqual([note.status, note.ok, note.fact_cid, note.absence], ['materialized', true, f.fact_cid, false]);
      // The fetch used the cell centre, never caller coordinates.
      const call = fake.calls.at(-1)!;
      assert.deepEqual(call.center, P.cellCenter(cell));
      // Second read: warm, nothing materialized, same ETag.
      const again = await recall({ cell, bands: ['copdem30m.elevation_mean'] });
      assert.deepEqual(again.body.materialize_notes, []);
      assert.equal(again.body.facts[0].fact_cid, f.fact_cid);
      assert.equal(again.headers.etag, r.headers.etag);
      // The write bumped the cell's cache generation: the first read after it is honest about a miss.
      const third = await recall({ cell, bands: ['copdem30m.elevation_mean'] });
      assert.equal(third.body.receipt.cost.was_cached, true);
    });

    it('upstream confirms no data: a signed absence with its typed reason, served as such later', async () => {
      const cell = freshCell();
      const r = await recall({ cell, bands: ['air.pm2_5'] });
      const f = r.body.facts[0];
      assert.equal(f.kind, 'absence');
      assert.equal(f.value, null);
      assert.equal(f.absence_reason, 'outside_coverage');
      const note = r.body.materialize_notes[0];
      assert.deepEqual([note.status, note.absence, note.fact_cid], ['materialized', true, f.fact_cid]);
      const calls = fake.calls.length;
      const again = await recall({ cell, bands: ['air.pm2_5'] });
      assert.equal(again.body.facts[0].fact_cid, f.fact_cid);
      assert.equal(fake.calls.length, calls, 'a stored absence is not re-fetched within its cadence');
    });

    it('upstream error: skipped, retryable, nothing signed, no zero value', async () => {
      const cell = freshCell();
      const size = await t.service.store.log.size();
      const r = await recall({ cell, bands: ['air.ozone'] });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.facts, []);
      const note = r.body.materialize_notes[0];
      assert.deepEqual([note.status, note.ok, note.reason_class, note.retryable, note.absence, note.fact_cid], ['skipped', false, 'upstream_error', true, false, null]);
      assert.equal(await t.service.store.log.size(), size);
      assert.ok(verifies(r.body.receipt));
      assert.deepEqual(r.body.receipt.fact_cids, []);
    });

    it('a failing upstream is not asked again for every read: the skip stands for a short backoff', async () => {
      const cell = freshCell();
      await recall({ cell, bands: ['air.ozone'] });
      const calls = fake.calls.length;
      const again = await recall({ cell, bands: ['air.ozone'] });
      assert.equal(fake.calls.length, calls);
      const note = again.body.materialize_notes[0];
      assert.deepEqual([note.status, note.reason_class, note.retryable], ['skipped', 'upstream_error', true]);
      assert.match(note.reason, /recent failure; next attempt in \d+ s/);
    });

    it('upstream timeout: skipped with reason_class timeout, retryable', async () => {
      const r = await recall({ cell: freshCell(), bands: ['soil.clay_0_30cm'] });
      const note = r.body.materialize_notes[0];
      assert.deepEqual([note.status, note.reason_class, note.retryable, note.absence], ['skipped', 'timeout', true, false]);
      assert.deepEqual(r.body.facts, []);
    });

    it('a band with no materializer: skipped, no_materializer, not retryable', async () => {
      const r = await recall({ cell: freshCell(), bands: ['s1.vv_db'] });
      const note = r.body.materialize_notes[0];
      assert.deepEqual([note.status, note.reason_class, note.retryable], ['skipped', 'no_materializer', false]);
    });

    it('an unknown band among known ones: skipped unknown_band; all unknown: band_not_in_registry', async () => {
      const r = await recall({ cell: freshCell(), bands: ['copdem30m.elevation_mean', 'ndvi'] });
      assert.ok(r.body.materialize_notes.some((x: any) => x.band === 'ndvi' && x.reason_class === 'unknown_band' && !x.retryable));
      const bad = await recall({ cell: freshCell(), bands: ['ndvi'] });
      assert.equal(bad.status, 404);
      assert.equal(bad.body.code, 'band_not_in_registry');
      assert.deepEqual(bad.body.details.did_you_mean, ['indices.ndvi']);
    });

    it('no bands on an empty cell: the two default bands are attempted', async () => {
      const r = await recall({ cell: freshCell() });
      assert.deepEqual(r.body.materialize_notes.map((x: any) => x.band).sort(), ['copdem30m.elevation_mean', 'weather.temperature_2m']);
      assert.equal(r.body.facts.length, 2);
    });

    it('no bands on a cell that has facts: nothing materialized, everything attested returned', async () => {
      const cell = freshCell();
      await recall({ cell, bands: ['indices.ndvi'] });
      const calls = fake.calls.length;
      const r = await recall({ cell });
      assert.deepEqual(r.body.materialize_notes, []);
      assert.equal(fake.calls.length, calls);
      assert.deepEqual(
        r.body.facts.map((f: any) => f.band),
        ['indices.ndvi'],
      );
      assert.deepEqual(r.body.bands_already_attested_at_cell, ['indices.ndvi']);
    });

    it('concurrent recalls of one cold cell make one upstream request', async () => {
      const cell = freshCell();
      const calls = fake.calls.length;
      const rs = await Promise.all(Array.from({ length: 10 }, () => recall({ cell, bands: ['indices.ndvi'] })));
      assert.equal(fake.calls.length - calls, 1);
      assert.equal(new Set(rs.map((r) => r.body.facts[0].fact_cid)).size, 1);
    });
  });

  describe('HTTP caching', () => {
    it('ETag is stable, Cache-Control private max-age=60, If-None-Match → 304', async () => {
      const cell = freshCell();
      const a = await recall({ cell, bands: ['indices.ndvi'] });
      assert.equal(a.headers['cache-control'], 'private, max-age=60');
      const b = await recall({ cell, bands: ['indices.ndvi'] }, { 'if-none-match': a.headers.etag as string });
      assert.equal(b.status, 304);
      const weak = await recall({ cell, bands: ['indices.ndvi'] }, { 'if-none-match': `"other", W/${a.headers.etag as string}` });
      assert.equal(weak.status, 304, 'If-None-Match compares weakly: a weakened tag in a list still matches');
    });
  });

  describe('filters, bounds and scope', () => {
    it('as_of_signed_at replays what was known then; the receipt binds as_of', async () => {
      const cell = freshCell();
      const f1 = { kind: 'primary', cell, band: 'weather.temperature_2m', tslot: 20_000, value: 1, unit: 'degC' };
      const r1 = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch([f1], t.service.manifests) });
      assert.equal(r1.statusCode, 200, r1.body);
      const acceptedAt = r1.json().accepted_at;
      const beforeAny = new Date(Date.parse(acceptedAt) - 5000).toISOString();
      const bounded = await recall({ cell, bands: ['weather.temperature_2m'], as_of_signed_at: beforeAny });
      assert.deepEqual(bounded.body.facts, []);
      assert.deepEqual(bounded.body.materialize_notes, [], 'bounded reads never fetch');
      assert.ok(bounded.body.receipt.as_of);
      assert.ok(verifies(bounded.body.receipt));
      const now = await recall({ cell, bands: ['weather.temperature_2m'], as_of_signed_at: new Date(Date.now() + 1000).toISOString() });
      assert.equal(now.body.facts[0].value, 1);
      const vt = await recall({ cell, bands: ['weather.temperature_2m'], as_of_tslot: 19_999 });
      assert.deepEqual(vt.body.facts, []);
    });

    it('scope: a scoped read sees only its own facts and binds the scope; unscoped never sees them', async () => {
      const cell = freshCell();
      const scope = { user_id: 'alice', run_id: 'r1' };
      // A scope is read with a bearer for it (docs/scopes.md); the operator key claims both scopes.
      const scoped = await recall({ cell, bands: ['indices.ndvi'], scope }, { authorization: await bearerFor(t, op, scope) });
      assert.deepEqual(scoped.body.receipt.scope, scope);
      assert.ok(verifies(scoped.body.receipt));
      assert.deepEqual(scoped.body.facts[0].scope, scope);
      const other = await recall({ cell, scope: { user_id: 'bob' } }, { authorization: await bearerFor(t, op, { user_id: 'bob' }) });
      assert.equal(other.status, 200, JSON.stringify(other.body));
      assert.ok(other.body.facts.every((f: any) => f.scope?.user_id === 'bob'));
      const unscoped = await t.service.store.latest({ cell, scope: null });
      assert.ok(unscoped.every((f) => f.scope === null));
    });

    it('provenance and deterministic filter before signing', async () => {
      const cell = freshCell();
      await recall({ cell, bands: ['indices.ndvi', 'weather.temperature_2m'] });
      const det = await recall({ cell, deterministic: true });
      const classes = det.body.facts.map((f: any) => t.service.registry.bands.get(f.band)!.provenance_class);
      assert.ok(classes.every((c: string) => c === 'direct_sensor' || c === 'deterministic_index'));
      assert.deepEqual(
        det.body.receipt.fact_cids,
        det.body.facts.map((f: any) => f.fact_cid),
      );
    });

    it('include edges and freshness: a newer fact supersedes through a signed edge', async () => {
      const cell = freshCell();
      const base = { kind: 'primary', cell, band: 'weather.temperature_2m', tslot: 20_100, unit: 'degC' };
      await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch([{ ...base, value: 1 }], t.service.manifests) });
      const second = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch([{ ...base, value: 2 }], t.service.manifests) });
      assert.equal(second.statusCode, 200);
      const r = await recall({ cell, bands: ['weather.temperature_2m'], tslot: 20_100, include: ['edges', 'freshness'] });
      assert.equal(r.body.facts[0].value, 2);
      assert.equal(r.body.edges.length, 1);
      assert.equal(r.body.edges[0].to, P.factCid({ ...base, value: 1 }));
      assert.deepEqual(r.body.receipt.edge_cids, [r.body.edges[0].edge_cid]);
      assert.ok(verifies(r.body.receipt));
      assert.equal(r.body.freshness[0].fact_cid, r.body.facts[0].fact_cid);
    });
  });

  describe('bad input', () => {
    const cases: Array<[Record<string, unknown>, string, number]> = [
      [{}, 'invalid_argument', 422],
      [{ cell: 'defi.zb400.bafi' }, 'invalid_cell', 422],
      [{ cell: 'defi.zb400.bafi.bab' }, 'invalid_cell', 422],
      [{ cell: 'Xqzzyvv Nowhereland 12345' }, 'place_not_found', 404],
      [{ cell: P.cellOf(0, 0), bands: ['copdem30m.elevation_mean'], tslot: 5 }, 'tslot_mismatch', 422],
      [{ cell: P.cellOf(0, 0), tslot: -1 }, 'invalid_argument', 422],
      [{ cell: P.cellOf(0, 0), provenance: ['satellite'] }, 'invalid_argument', 422],
      [{ cell: P.cellOf(0, 0), as_of_signed_at: 'yesterday' }, 'invalid_argument', 422],
      [{ cell: P.cellOf(0, 0), surprise: 1 }, 'invalid_argument', 422],
      [{ cell: P.cellOf(0, 0), include: ['everything'] }, 'invalid_argument', 422],
    ];
    cases.forEach(([body, code, status], i) => {
      it(`#${i} ${JSON.stringify(body).slice(0, 60)} → ${code}`, async () => {
        const size = await t.service.store.log.size();
        const r = await recall(body);
        assert.equal(r.status, status, JSON.stringify(r.body));
        assert.equal(r.body.code, code);
        assert.ok(r.body.message.length > 0);
        assert.equal(await t.service.store.log.size(), size, 'bad input changes nothing');
      });
    });

    it('an unknown place name: the hint is one recall can follow (a cell64 from locate), not "pass lat and lng"', async () => {
      const r = await recall({ cell: 'Xqzzyvv Nowhereland 12345' });
      assert.equal(r.body.code, 'place_not_found');
      const hint = String(r.body.details?.hint);
      assert.doesNotMatch(hint, /pass lat and lng/);
      assert.match(hint, /cell64/);
      assert.match(hint, /\/v1\/locate/);
    });
  });
});
