import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { PATHS, startJsonUpstreams, type JsonUpstreams } from '../../sources/fixtures/json-upstreams.js';

const DAY = 86_400;
const op = makeAttester('backfill-operator');
const stranger = makeAttester('backfill-stranger');
let fx: JsonUpstreams;
let t: TestApp;
let n = 0;
const freshCell = () => P.cellOf(35 + n++ * 0.011, -5.5);
const now = () => Math.floor(Date.now() / 1000);
const today = () => Math.floor(now() / DAY);
const dayOf = (tslot: number) => new Date(tslot * DAY * 1000).toISOString().slice(0, 10);

before(async () => {
  fx = await startJsonUpstreams();
  t = await build({ upstreams: fx.upstreams, attesterKeys: [op.publicKey], materializerTimeoutSecs: 2 });
});
after(async () => {
  await t.close();
  await fx.close();
});
beforeEach(() => fx.reset());

/**
 * The body with `attester` and the replay binding (this responder, a fresh nonce, an expiry; see
 * backfill-replay.test.ts) set, and `signature` over blake3(canonical CBOR of the rest).
 */
function signed(body: Record<string, unknown>, who = op): Record<string, unknown> {
  const binding = { responder: t.service.keys.publicKeyB32, nonce: P.b32encode(P.blake3(P.utf8(`nonce ${Math.random()} ${n++}`))), expires_unix: now() + 60 };
  const withKey = { ...binding, ...body, attester: who.publicKey };
  const sig = P.portableEd25519.sign(P.blake3(P.encodeCanonical(withKey as P.CborValue)), who.seed);
  return { ...withKey, signature: P.b32encode(sig) };
}
const post = async (payload: Record<string, unknown>) => {
  const r = await t.app.inject({ method: 'POST', url: '/v1/backfill', payload });
  return { status: r.statusCode, body: r.json() };
};
const verifies = (receipt: unknown) => P.verifyReceipt(receipt, { publicKey: t.service.keys.publicKeyB32 }).valid;

describe('POST /v1/backfill', () => {
  describe('authentication (spec part 5)', () => {
    it('refuses a request without attester or signature (unauthorized, 401) and writes nothing', async () => {
      const size = await t.service.store.log.size();
      const noKey = await post({ cell: freshCell(), band: 'weather.temperature_2m' });
      assert.deepEqual([noKey.status, noKey.body.code], [401, 'unauthorized']);
      assert.equal(noKey.body.details.field, 'attester');
      const noSig = await post({ cell: freshCell(), band: 'weather.temperature_2m', attester: op.publicKey });
      assert.deepEqual([noSig.status, noSig.body.code, noSig.body.details.field], [401, 'unauthorized', 'signature']);
      assert.equal(await t.service.store.log.size(), size);
      assert.equal(fx.requests.length, 0);
    });

    it('a signature over another body is bad_signature (401)', async () => {
      const body = signed({ cell: freshCell(), band: 'weather.temperature_2m', max_facts: 2 });
      const r = await post({ ...body, max_facts: 3 });
      assert.deepEqual([r.status, r.body.code], [401, 'bad_signature']);
      assert.equal(fx.requests.length, 0);
    });

    it('a key that is not listed is refused (403) even with a valid signature', async () => {
      const r = await post(signed({ cell: freshCell(), band: 'weather.temperature_2m' }, stranger));
      assert.deepEqual([r.status, r.body.code], [403, 'unauthorized']);
    });
  });

  describe('validation', () => {
    it('names the offending field', async () => {
      const cases: Array<[Record<string, unknown>, number, string, string]> = [
        [{ cell: freshCell(), band: 'ndvi' }, 404, 'band_not_in_registry', 'band'],
        [{ cell: freshCell(), band: 'weather.temperature_2m', max_facts: 2000 }, 422, 'invalid_argument', 'max_facts'],
        [{ cell: freshCell(), band: 'weather.temperature_2m', max_facts: 0 }, 422, 'invalid_argument', 'max_facts'],
        [{ cell: freshCell(), band: 'weather.temperature_2m', start_unix: now() - 10, end_unix: now() - 100 }, 422, 'invalid_argument', 'start_unix'],
        [{ cell: freshCell(), band: 'weather.temperature_2m', end_unix: now() + 10 * DAY }, 422, 'invalid_argument', 'end_unix'],
        [{ band: 'weather.temperature_2m' }, 422, 'invalid_argument', 'cell'],
        [{ cell: freshCell(), cells: [freshCell()], band: 'weather.temperature_2m' }, 422, 'invalid_argument', 'cells'],
        [{ cells: Array.from({ length: 65 }, freshCell), band: 'weather.temperature_2m' }, 422, 'invalid_argument', 'cells'],
        [{ cell: 'defi.zb400.nope', band: 'weather.temperature_2m' }, 422, 'invalid_cell', 'cell'],
      ];
      for (const [i, [body, status, code, field]] of cases.entries()) {
        const r = await post(signed(body));
        assert.deepEqual([r.status, r.body.code], [status, code], `#${i} ${JSON.stringify(r.body)}`);
        assert.equal(r.body.details.field, field, `#${i} names ${field}`);
        assert.match(r.body.message, new RegExp(`^${field}`), `#${i} message starts with the field`);
      }
      assert.equal(fx.requests.length, 0);
    });
  });

  describe('a band with history and a ranged source (weather via the ERA5 archive)', () => {
    it('walks newest first: today from the forecast, past days in ONE archive request, unpublished days skipped', async () => {
      const cell = freshCell();
      const unpublished = new Set([dayOf(today() - 1), dayOf(today() - 2)]);
      const base = fx.data.daily;
      fx.data.daily = (day, v) => (unpublished.has(day) ? null : base(day, v));
      const r = await post(signed({ cell, band: 'weather.temperature_2m', start_unix: (today() - 9) * DAY, end_unix: now() }));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const b = r.body;
      assert.deepEqual(
        b.steps.map((s: any) => s.tslot),
        Array.from({ length: 10 }, (_, i) => today() - i),
        'newest first',
      );
      assert.deepEqual(
        b.steps.map((s: any) => s.status),
        ['materialized', 'skipped', 'skipped', ...Array(7).fill('materialized')],
      );
      assert.match(b.steps[1].reason, /not yet published/);
      assert.equal(b.steps[1].reason_class, 'upstream_error');
      assert.deepEqual(b.counts, { present: 0, materialized: 8, skipped: 2, present_only: 0 });
      assert.deepEqual(b.progress, { done: 10, total: 10, complete: true });
      assert.equal(fx.count(PATHS.archive), 1, 'the past is one ranged request');
      assert.equal(fx.count(PATHS.forecast), 1, 'today comes from current conditions');
      const q = fx.requests.find((x) => x.path === PATHS.archive)!.query;
      assert.deepEqual([q.get('start_date'), q.get('end_date')], [dayOf(today() - 9), dayOf(today() - 1)]);
      const centre = P.cellCenter(cell);
      assert.ok(Math.abs(Number(q.get('latitude')) - centre.lat) < 1e-6 && Math.abs(Number(q.get('longitude')) - centre.lng) < 1e-6);
      // The receipt is signed over the cell and the steps' fact_cids; every fact is stored at its tslot.
      assert.ok(verifies(b.receipt));
      assert.equal(b.receipt.primitive, 'svc.backfill');
      assert.deepEqual(b.receipt.cells, [cell]);
      const cids = b.steps.filter((s: any) => s.fact_cid).map((s: any) => s.fact_cid);
      assert.deepEqual(b.receipt.fact_cids, cids);
      for (const s of b.steps.filter((x: any) => x.fact_cid)) {
        const f = await t.service.store.getFact(s.fact_cid);
        assert.equal(f!.tslot, s.tslot);
        assert.equal(f!.band, 'weather.temperature_2m');
        assert.equal(f!.body.signer, t.service.keys.publicKeyB32);
        if (s.tslot < today()) {
          assert.equal(f!.body.value, 10 + Number(dayOf(s.tslot).slice(8, 10)) / 10);
          assert.equal((f!.body.derivation as any).version, 'era5');
        }
      }

      // Again: stored days are present; only the skipped ones are asked again.
      fx.reset();
      const again = await post(signed({ cell, band: 'weather.temperature_2m', start_unix: (today() - 9) * DAY }));
      assert.deepEqual(again.body.counts, { present: 8, materialized: 2, skipped: 0, present_only: 0 });
      assert.equal(fx.count(PATHS.archive), 1);
      const q2 = fx.requests.find((x) => x.path === PATHS.archive)!.query;
      assert.deepEqual([q2.get('start_date'), q2.get('end_date')], [dayOf(today() - 2), dayOf(today() - 1)]);
      assert.equal(fx.count(PATHS.forecast), 0);
    });

    it('caps the walk at max_facts and says where to continue', async () => {
      const r = await post(signed({ cell: freshCell(), band: 'weather.precipitation', max_facts: 5 }));
      assert.equal(r.status, 200);
      assert.equal(r.body.steps.length, 5);
      assert.equal(r.body.progress.total, r.body.window.tslot_to - r.body.window.tslot_from + 1);
      assert.ok(r.body.progress.total >= 30, 'default window: 30 days for a fast band');
      assert.equal(r.body.progress.complete, false);
      assert.equal(r.body.next_end_unix, (today() - 4) * DAY - 1);
    });

    it('an archive failure leaves the past skipped and retryable, nothing signed for it', async () => {
      fx.behave(PATHS.archive, { status: 503 });
      const r = await post(signed({ cell: freshCell(), band: 'weather.cloud_cover', start_unix: (today() - 3) * DAY }));
      assert.deepEqual(
        r.body.steps.map((s: any) => s.status),
        ['materialized', 'skipped', 'skipped', 'skipped'],
      );
      assert.ok(r.body.steps.slice(1).every((s: any) => s.reason_class === 'upstream_error' && s.fact_cid === null));
    });
  });

  describe('a band without a historical source', () => {
    it('past tslots are present_only; the current one is materialized', async () => {
      const r = await post(signed({ cell: freshCell(), band: 'air.pm2_5', start_unix: (today() - 4) * DAY }));
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.steps.map((s: any) => s.status),
        ['materialized', 'present_only', 'present_only', 'present_only', 'present_only'],
      );
      assert.equal(fx.count(PATHS.air), 1);
    });

    it('a static band has the single tslot 0: materialized once, present afterwards', async () => {
      const cell = freshCell();
      const first = await post(signed({ cell, band: 'copdem30m.elevation_mean' }));
      assert.deepEqual(
        first.body.steps.map((s: any) => [s.tslot, s.status]),
        [[0, 'materialized']],
      );
      const second = await post(signed({ cell, band: 'copdem30m.elevation_mean' }));
      assert.deepEqual(second.body.steps, [{ tslot: 0, fact_cid: first.body.steps[0].fact_cid, status: 'present' }]);
    });
  });

  describe('a band with history but no ranged fetch (MODIS LST)', () => {
    it('fetches each past 30-day slot through the connector', async () => {
      const slot = 30 * DAY;
      const current = Math.floor(now() / slot);
      const r = await post(signed({ cell: freshCell(), band: 'lst.day_8day', start_unix: (current - 2) * slot }));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(
        r.body.steps.map((s: any) => [s.tslot, s.status]),
        [
          [current, 'materialized'],
          [current - 1, 'materialized'],
          [current - 2, 'materialized'],
        ],
      );
      assert.equal(
        fx.count(PATHS.modis, (q) => q.get('band') === 'LST_Day_1km'),
        3,
      );
    });
  });

  describe('area form', () => {
    it('walks every cell and signs one receipt over the cells and their facts', async () => {
      const cells = [freshCell(), freshCell(), freshCell()];
      const r = await post(signed({ cells, band: 'weather.temperature_2m', start_unix: (today() - 2) * DAY }));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.cells, cells);
      assert.deepEqual(r.body.pending, []);
      assert.deepEqual(r.body.progress, { done: 3, total: 3, complete: true });
      assert.deepEqual(r.body.counts, { present: 0, materialized: 9, skipped: 0, present_only: 0 });
      for (const c of cells) assert.equal(r.body.by_cell[c].steps.length, 3);
      assert.ok(verifies(r.body.receipt));
      assert.deepEqual(r.body.receipt.cells, cells);
      assert.equal(r.body.receipt.fact_cids.length, 9);
      assert.equal(fx.count(PATHS.archive), 3, 'one ranged request per cell');
    });

    it('stops at budget_ms: incomplete, with the cells not started listed in pending', async () => {
      fx.behave(PATHS.archive, { delayMs: 400 });
      const cells = Array.from({ length: 10 }, freshCell);
      const started = Date.now();
      const r = await post(signed({ cells, band: 'weather.relative_humidity_2m', start_unix: (today() - 2) * DAY, budget_ms: 150 }));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(Date.now() - started < 2000, 'the budget bounds the call');
      assert.equal(r.body.progress.complete, false);
      assert.ok(r.body.pending.length > 0);
      assert.deepEqual([...r.body.cells, ...r.body.pending].sort(), [...cells].sort());
      assert.equal(r.body.progress.done, r.body.cells.length);
      assert.ok(verifies(r.body.receipt));
    });
  });
});
