/**
 * Writes validated against the band registry (docs/writes.md), over REST /v1/attest and
 * /v1/attest_cbor alike: each bad fact is refused with its typed code naming the fact index
 * and field, and a refused batch changes nothing (log, index, the fact, recall); the good forms
 * are accepted and stored exactly as signed; the per-attester daily quota; derivative parents.
 */
import { readFileSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { mintFacts, mintRefusal } from '../../../src/primitives/write/attest.js';
import { secondsToUtcMidnight } from '../../../src/primitives/write/attester-quota.js';
import { RegistryError, validateRegistry, type RawRegistry } from '../../../src/registry/registry.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester, type TestAttester } from '../../support/attester.js';
import { fakeConnector } from '../../support/fake-connector.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../../store/support/pg-env.js';

type Payload = ReturnType<TestAttester['batch']>;
type Via = 'json' | 'cbor';

let t: TestApp;
let op: TestAttester;
let device: TestAttester;
before(async () => {
  op = makeAttester('validation operator');
  device = makeAttester('validation device');
  // No materializers: a recall of an empty cell changes nothing, so it can witness a refusal.
  t = await build({ attesterKeys: [op.publicKey], deviceKeys: [device.publicKey] }, {}, { materializers: [] });
});
after(async () => t.close());

let n = 0;
const freshCell = () => P.cellOf(-20 + (n++ % 500) * 0.002, 60 + Math.floor(n / 500) * 0.01);
const FAST = P.currentTslot('fast');
const MEDIUM = P.currentTslot('medium');
const SLOW = P.currentTslot('slow');
const ENTITY = `svc:entity:${'q'.repeat(26)}`;

/** A valid fact of `band` at a fresh cell, with `over` applied. */
function fact(band: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, Record<string, unknown>> = {
    'copdem30m.elevation_mean': { tslot: 0, value: 118.5, unit: 'm_msl' },
    'indices.ndvi': { tslot: MEDIUM, value: 0.42, unit: 'unitless' },
    'weather.precipitation': { tslot: FAST, value: 3.2, unit: 'mm' },
    'weather.temperature_2m': { tslot: FAST, value: 21.5, unit: 'degC' },
    geotessera: { tslot: SLOW, value: Array.from({ length: 128 }, (_, i) => Math.fround(Math.sin(i))), unit: 'unitless' },
    'geotessera.bin128': { tslot: SLOW, value: Array.from({ length: 128 }, (_, i) => i % 2), unit: 'bit' },
    'landcover.esa_worldcover_2021': { tslot: 0, value: 40, unit: 'class' },
    'device.position_fixes': { tslot: FAST, value: 12, unit: 'count' },
    'reference.landcover_label': { tslot: SLOW, value: 10, unit: 'class' },
  };
  return { kind: 'primary', cell: freshCell(), band, ...base[band], signed_at: '2026-01-02T03:04:05Z', ...over };
}

const cbor = (p: Payload) =>
  Buffer.from(P.encodeCanonical({ batch_root: Uint8Array.from(p.batch_root), attester: P.b32decode(p.attester, 32), signature: P.b32decode(p.signature, 64), facts: p.facts as any }));

async function send(app: TestApp, via: Via, p: Payload) {
  const r =
    via === 'json'
      ? await app.app.inject({ method: 'POST', url: '/v1/attest', payload: p as any })
      : await app.app.inject({ method: 'POST', url: '/v1/attest_cbor', payload: cbor(p), headers: { 'content-type': 'application/cbor' } });
  return { status: r.statusCode, body: r.json(), headers: r.headers };
}

/** What a refused write must leave as it was: the log, the index, and what recall answers at the facts' cells. */
async function snapshot(app: TestApp, facts: Record<string, unknown>[]) {
  const s = app.service.store;
  const recalls = [];
  for (const f of facts) {
    if (!P.isCell(f.cell)) continue;
    const r = await app.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell: f.cell, bands: [f.band] } });
    recalls.push(r.statusCode === 200 ? r.json().facts.map((x: any) => x.fact_cid) : r.statusCode);
  }
  return { size: await s.log.size(), root: P.toHex(await s.log.root()), stats: await s.stats(), recalls };
}

/**
 * Send `facts` (a good fact first, so the offender is never index 0) and expect the refusal
 * `code`/`status` naming `field`; nothing may change, and no fact of the batch becomes readable.
 */
async function expectRefused(via: Via, who: TestAttester, bad: Record<string, unknown>, code: string, status: number, field: string, app = t) {
  const facts = [fact('weather.temperature_2m'), bad];
  const before = await snapshot(app, facts);
  const r = await send(app, via, who.batch(facts, app.service.manifests));
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.code, code, r.body.message);
  assert.equal(r.body.schema, 'svc.error.v1');
  assert.equal(r.body.details.field, field, r.body.message);
  assert.ok(r.body.message.startsWith(`${field}:`), r.body.message);
  assert.deepEqual(await snapshot(app, facts), before, 'a refusal changes nothing');
  for (const f of facts) assert.equal(await app.service.store.getFact(P.factCid(f)), null);
  return r.body;
}

async function expectAccepted(via: Via, who: TestAttester, facts: Record<string, unknown>[], app = t) {
  const r = await send(app, via, who.batch(facts, app.service.manifests));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(
    r.body.fact_cids,
    facts.map((f) => P.factCid(f)),
  );
  for (const f of facts) {
    const stored = await app.service.store.getFact(P.factCid(f));
    assert.deepEqual(stored?.body, f, 'stored exactly as signed');
  }
  return r.body;
}

const bits = (over: Record<number, unknown>) => Array.from({ length: 128 }, (_, i) => (i in over ? over[i] : 1));

/** Each bad fact: [name, attester, fact, code, status, field]. */
const REFUSALS: Array<[string, () => TestAttester, () => Record<string, unknown>, string, number, string]> = [
  ['a scalar band given text', () => op, () => fact('copdem30m.elevation_mean', { value: 'banana' }), 'invalid_argument', 422, 'facts[1].value'],
  ['a scalar band given a vector', () => op, () => fact('copdem30m.elevation_mean', { value: [1, 2, 3] }), 'invalid_argument', 422, 'facts[1].value'],
  ['a scalar band given null on a primary', () => op, () => fact('copdem30m.elevation_mean', { value: null }), 'invalid_argument', 422, 'facts[1].value'],
  ['a unit other than the declared one', () => op, () => fact('copdem30m.elevation_mean', { unit: 'furlongs' }), 'invalid_argument', 422, 'facts[1].unit'],
  ['a null unit', () => op, () => fact('copdem30m.elevation_mean', { unit: null }), 'invalid_argument', 422, 'facts[1].unit'],
  [
    'an absence with an undeclared reason',
    () => op,
    () => fact('copdem30m.elevation_mean', { kind: 'absence', value: null, absence_reason: 'because_i_said_so' }),
    'invalid_argument',
    422,
    'facts[1].absence_reason',
  ],
  ['an absence without a reason', () => op, () => fact('copdem30m.elevation_mean', { kind: 'absence', value: null }), 'invalid_argument', 422, 'facts[1].absence_reason'],
  ['an absence with a value', () => op, () => fact('copdem30m.elevation_mean', { kind: 'absence', value: 3, absence_reason: 'outside_coverage' }), 'invalid_argument', 422, 'facts[1].value'],
  ['an absence reason on a primary', () => op, () => fact('copdem30m.elevation_mean', { absence_reason: 'outside_coverage' }), 'invalid_argument', 422, 'facts[1].absence_reason'],
  ['a vector of the wrong dimension', () => op, () => fact('geotessera', { value: [1, 2, 3] }), 'invalid_argument', 422, 'facts[1].value'],
  ['a vector with a text component', () => op, () => fact('geotessera', { value: bits({ 5: 'x' }) }), 'invalid_argument', 422, 'facts[1].value[5]'],
  ['a binary code with a 2 in it', () => op, () => fact('geotessera.bin128', { value: bits({ 7: 2 }) }), 'invalid_argument', 422, 'facts[1].value[7]'],
  ['a binary code one bit short', () => op, () => fact('geotessera.bin128', { value: bits({}).slice(1) }), 'invalid_argument', 422, 'facts[1].value'],
  ['a categorical value that is no class', () => op, () => fact('landcover.esa_worldcover_2021', { value: 15 }), 'invalid_argument', 422, 'facts[1].value'],
  ['a class id as text (materializers sign the number)', () => op, () => fact('landcover.esa_worldcover_2021', { value: '40' }), 'invalid_argument', 422, 'facts[1].value'],
  ['an elevation above any mountain', () => op, () => fact('copdem30m.elevation_mean', { value: 12_000 }), 'invalid_argument', 422, 'facts[1].value'],
  ['an NDVI above 1', () => op, () => fact('indices.ndvi', { value: 1.5 }), 'invalid_argument', 422, 'facts[1].value'],
  ['negative precipitation', () => op, () => fact('weather.precipitation', { value: -0.1 }), 'invalid_argument', 422, 'facts[1].value'],
  ['an air temperature of 80 degC', () => op, () => fact('weather.temperature_2m', { value: 80 }), 'invalid_argument', 422, 'facts[1].value'],
  ['a tslot off the band grid', () => op, () => fact('copdem30m.elevation_mean', { tslot: 3 }), 'tslot_mismatch', 422, 'facts[1].tslot'],
  // Times ahead of the responder's clock (docs/writes.md, "Times"; more in test/routes/timestamps.test.ts).
  ['a signed_at in 2099', () => op, () => fact('weather.temperature_2m', { signed_at: '2099-01-01T00:00:00Z' }), 'invalid_argument', 422, 'facts[1].signed_at'],
  [
    'a captured_at a day ahead',
    () => op,
    () => fact('indices.ndvi', { derivation: { fn: 'x@1', sources: ['s2'], captured_at: new Date(Date.now() + 86_400_000).toISOString() } }),
    'invalid_argument',
    422,
    'facts[1].derivation.captured_at',
  ],
  [
    'a captured_at that is no RFC 3339 time',
    () => op,
    () => fact('indices.ndvi', { derivation: { fn: 'x@1', sources: ['s2'], captured_at: '2099-01-01' } }),
    'invalid_argument',
    422,
    'facts[1].derivation.captured_at',
  ],
  ['an NDVI for the 30-day slot that has not begun', () => op, () => fact('indices.ndvi', { tslot: MEDIUM + 1 }), 'tslot_mismatch', 422, 'facts[1].tslot'],
  ['a derivative without a derivation', () => op, () => fact('indices.ndvi', { kind: 'derivative' }), 'invalid_argument', 422, 'facts[1].derivation'],
  [
    'a derivative naming no parents',
    () => op,
    () => fact('indices.ndvi', { kind: 'derivative', derivation: { fn: 'normalized_difference@1', parents: [] } }),
    'invalid_argument',
    422,
    'facts[1].derivation.parents',
  ],
  [
    'a derivative naming a malformed parent',
    () => op,
    () => fact('indices.ndvi', { kind: 'derivative', derivation: { fn: 'normalized_difference@1', parents: ['nope'] } }),
    'invalid_argument',
    422,
    'facts[1].derivation.parents[0]',
  ],
  [
    'a derivative whose parent is not stored here',
    () => op,
    () => fact('indices.ndvi', { kind: 'derivative', derivation: { fn: 'normalized_difference@1', parents: [P.factCid(fact('indices.ndvi'))] } }),
    'cid_not_found',
    404,
    'facts[1].derivation.parents[0]',
  ],
  ['an L3 band from an operator key (L2)', () => op, () => fact('reference.landcover_label'), 'level_too_low', 403, 'facts[1].band'],
  ['an L3 band from a device key (L2)', () => device, () => fact('reference.landcover_label'), 'level_too_low', 403, 'facts[1].band'],
  ['a restricted band at a cell from an operator key', () => op, () => fact('device.position_fixes'), 'privacy_refused', 403, 'facts[1].privacy_class'],
  ['a restricted band declared public', () => device, () => fact('device.position_fixes', { privacy_class: 'public' }), 'invalid_argument', 422, 'facts[1].privacy_class'],
];

for (const via of ['json', 'cbor'] as const) {
  describe(`${via === 'json' ? 'POST /v1/attest' : 'POST /v1/attest_cbor'}: registry validation`, () => {
    describe('refuses, typed, naming the fact and field, changing nothing', () => {
      for (const [name, who, bad, code, status, field] of REFUSALS) {
        it(`${name} → ${code} at ${field}`, async () => {
          await expectRefused(via, who(), bad(), code, status, field);
        });
      }
    });

    describe('accepts the good forms, stored exactly as signed', () => {
      it('scalars with their declared unit, and on the physical bounds themselves', async () => {
        await expectAccepted(via, op, [
          fact('copdem30m.elevation_mean'),
          fact('copdem30m.elevation_mean', { value: -11_000 }),
          fact('copdem30m.elevation_mean', { value: 9000 }),
          fact('indices.ndvi', { value: -1 }),
          fact('indices.ndvi', { value: 1 }),
          fact('weather.precipitation', { value: 0 }),
        ]);
      });

      it('a fact without a unit (readers are shown the declared one; the signed body keeps none)', async () => {
        const f = fact('copdem30m.elevation_mean');
        delete f.unit;
        await expectAccepted(via, op, [f]);
        assert.equal('unit' in (await t.service.store.getFact(P.factCid(f)))!.body, false);
      });

      it('vectors, binary codes, class ids and typed absences', async () => {
        await expectAccepted(via, op, [
          fact('geotessera'),
          fact('geotessera.bin128'),
          fact('landcover.esa_worldcover_2021', { value: 95 }),
          fact('copdem30m.elevation_mean', { kind: 'absence', value: null, absence_reason: 'outside_coverage' }),
          fact('indices.ndvi', { kind: 'absence', value: null, absence_reason: 'upstream_timeout' }),
        ]);
      });

      it('a derivative whose parents are stored here', async () => {
        // A derivative and its parents share one cell (docs/writes.md, "Derivations").
        const cell = freshCell();
        const a = fact('indices.ndvi', { cell, value: 0.3 });
        const b = fact('indices.ndvi', { cell, value: 0.5, signed_at: '2026-01-02T03:04:06Z' });
        await expectAccepted(via, op, [a, b]);
        const d = fact('indices.ndvi', { cell, kind: 'derivative', value: 0.4, derivation: { fn: 'normalized_difference@1', sources: [], parents: [P.factCid(a), P.factCid(b)] } });
        await expectAccepted(via, op, [d]);
        assert.equal((await t.service.store.getFact(P.factCid(d)))!.provenance_class, 'deterministic_index');
      });

      it('times within the clock skew, a past capture time, and a model output for the next slot (forecasts may speak of it)', async () => {
        const soon = new Date(Date.now() + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
        await expectAccepted(via, op, [
          fact('weather.temperature_2m', { signed_at: soon }),
          fact('indices.ndvi', { derivation: { fn: 'x@1', sources: ['s2'], captured_at: '2026-01-01T10:00:00.5+01:00' } }),
          fact('weather.temperature_2m', { tslot: FAST + 1 }),
        ]);
      });

      it('a restricted band from a device key at a cell, and from an operator key on an entity', async () => {
        await expectAccepted(via, device, [fact('device.position_fixes')]);
        await expectAccepted(via, op, [fact('device.position_fixes', { cell: ENTITY, value: n })]);
      });
    });
  });
}

describe('registry bands that make level_too_low and privacy_refused reachable', () => {
  it('the responder key (L3) may sign a reference land-cover label', async () => {
    const f = fact('reference.landcover_label', { value: 80 });
    const res = await mintFacts(t.service, [f]);
    assert.equal((await t.service.store.getFact(res.fact_cids[0]))!.body.value, 80);
  });

  it('/v1/bands lists both, attest-only, with their level and privacy class', async () => {
    const bands = (await t.app.inject({ method: 'GET', url: '/v1/bands' })).json().bands;
    const by = Object.fromEntries(bands.map((b: any) => [b.key, b]));
    assert.deepEqual([by['reference.landcover_label'].min_level, by['reference.landcover_label'].function, by['reference.landcover_label'].source], ['L3', 'attested@1', 'attester']);
    assert.deepEqual([by['device.position_fixes'].privacy_class, by['device.position_fixes'].function, by['device.position_fixes'].source], ['restricted', 'attested@1', 'attester']);
    assert.deepEqual(by['indices.ndvi'].value_range, [-1, 1]);
  });
});

describe('registry: the new band fields are validated at load', () => {
  const raw = (): RawRegistry =>
    Object.fromEntries(
      ['bands', 'sources', 'functions', 'algorithms', 'topics', 'hunt_events'].map((k) => [k, JSON.parse(readFileSync(new URL(`../../../src/registry/data/${k}.json`, import.meta.url), 'utf8'))]),
    ) as unknown as RawRegistry;
  const refuses = (entry: string, field: string, mutate: (band: Record<string, unknown>) => void) => {
    const r = raw();
    mutate((r.bands as Record<string, unknown>[]).find((b) => b.key === entry)!);
    assert.throws(
      () => validateRegistry(r),
      (e: unknown) => e instanceof RegistryError && e.entryKey === entry && e.field === field,
    );
  };

  it('accepts the shipped data', () => assert.equal(validateRegistry(raw()).bands.get('weather.temperature_2m')!.value_range![1], 70));
  it('refuses a range whose min is above its max', () =>
    refuses('indices.ndvi', 'value_range', (b) => {
      b.value_range = [1, -1];
    }));
  it('refuses a range open on both sides', () =>
    refuses('indices.ndvi', 'value_range', (b) => {
      b.value_range = [null, null];
    }));
  it('refuses a range that is not two numbers', () =>
    refuses('indices.ndvi', 'value_range', (b) => {
      b.value_range = [0, 'x'];
    }));
  it('refuses a range on a categorical band', () =>
    refuses('forest.gain', 'value_range', (b) => {
      b.value_range = [0, 1];
    }));
  it('refuses the attester source on a band with a materializer function', () =>
    refuses('indices.ndvi', 'source', (b) => {
      b.source = 'attester';
    }));
  it('refuses a privacy class it does not know', () =>
    refuses('indices.ndvi', 'privacy_class', (b) => {
      b.privacy_class = 'secret';
    }));
});

describe('writes without a signature', () => {
  for (const field of ['signature', 'attester'] as const) {
    it(`/v1/attest_cbor without ${field} → unauthorized 401`, async () => {
      const p = op.batch([fact('weather.temperature_2m')], t.service.manifests);
      const env: Record<string, unknown> = { batch_root: Uint8Array.from(p.batch_root), attester: P.b32decode(p.attester, 32), signature: P.b32decode(p.signature, 64), facts: p.facts };
      delete env[field];
      const r = await t.app.inject({ method: 'POST', url: '/v1/attest_cbor', payload: Buffer.from(P.encodeCanonical(env as any)), headers: { 'content-type': 'application/cbor' } });
      assert.deepEqual([r.statusCode, r.json().code, r.json().details.field], [401, 'unauthorized', field]);
    });

    it(`/v1/attest without ${field} → unauthorized 401`, async () => {
      const p: Record<string, unknown> = op.batch([fact('weather.temperature_2m')], t.service.manifests);
      delete p[field];
      const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: p as any });
      assert.deepEqual([r.statusCode, r.json().code], [401, 'unauthorized']);
    });
  }

  it('an empty signature → unauthorized; a wrong one stays bad_signature', async () => {
    const p = op.batch([fact('weather.temperature_2m')], t.service.manifests);
    const empty = await send(t, 'json', { ...p, signature: '' });
    assert.deepEqual([empty.status, empty.body.code], [401, 'unauthorized']);
    const other = makeAttester('validation stranger-signer').batch(p.facts, t.service.manifests);
    const wrong = await send(t, 'json', { ...p, signature: other.signature });
    assert.deepEqual([wrong.status, wrong.body.code], [401, 'bad_signature']);
  });
});

describe('per-attester daily quota (SVC_ATTESTER_DAILY_FACTS)', () => {
  const LIMIT = 3;
  let q: TestApp;
  before(async () => {
    q = await build({ attesterKeys: [op.publicKey], attesterDailyFacts: LIMIT }, {}, { materializers: [fakeConnector(['copdem30m.elevation_mean'])] });
  });
  after(async () => {
    await q.close();
    rmSync(q.dataDir, { recursive: true, force: true });
  });

  it('counts seconds to the next UTC midnight', () => {
    assert.equal(secondsToUtcMidnight(Date.parse('2026-11-20T23:59:00Z')), 60);
    assert.equal(secondsToUtcMidnight(Date.parse('2026-11-20T00:00:00Z')), 86_400);
    assert.equal(secondsToUtcMidnight(Date.parse('2026-11-20T23:59:59.500Z')), 1);
  });

  it('accepts up to N facts a day, refuses the batch holding the (N+1)th with retry_after, over both transports', async () => {
    await expectAccepted('json', op, [fact('weather.temperature_2m'), fact('weather.temperature_2m')], q);
    // A batch that would pass the limit is refused whole, even though one of its facts would fit.
    for (const via of ['json', 'cbor'] as const) {
      const r = await expectRefused(via, op, fact('weather.temperature_2m'), 'compute_quota_exceeded', 429, 'facts', q);
      assert.ok(Number.isInteger(r.retry_after) && r.retry_after >= 1 && r.retry_after <= 86_400, JSON.stringify(r));
      assert.equal(r.details.retry_after, r.retry_after);
      assert.ok(Math.abs(r.retry_after - secondsToUtcMidnight(Date.now())) <= 5);
      assert.deepEqual([r.details.limit, r.details.used, r.details.requested], [LIMIT, 2, 2]);
    }
    await expectAccepted('cbor', op, [fact('weather.temperature_2m')], q); // the Nth
    const r = await send(q, 'json', op.batch([fact('weather.temperature_2m')], q.service.manifests)); // the (N+1)th
    assert.deepEqual([r.status, r.body.code, r.body.details.used], [429, 'compute_quota_exceeded', LIMIT]);
    assert.equal(r.headers['retry-after'], String(r.body.retry_after));
    // The store holds the count: exactly the N facts accepted.
    assert.equal(await q.service.store.attesterFactsOn(op.publicKey, new Date().toISOString().slice(0, 10)), LIMIT);
  });

  it("never counts the responder's own materialization or minted facts", async () => {
    for (let i = 0; i < LIMIT + 2; i++) {
      const r = await q.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell: freshCell(), bands: ['copdem30m.elevation_mean'] } });
      assert.equal(r.json().materialize_notes[0].status, 'materialized', r.body);
    }
    await mintFacts(
      q.service,
      Array.from({ length: LIMIT + 1 }, () => fact('weather.temperature_2m')),
    );
    const day = new Date().toISOString().slice(0, 10);
    assert.equal(await q.service.store.attesterFactsOn(op.publicKey, day), LIMIT);
    // The operator is still at its limit.
    const r = await send(q, 'json', op.batch([fact('weather.temperature_2m')], q.service.manifests));
    assert.equal(r.body.code, 'compute_quota_exceeded');
  });

  it('holds across a restart (counted from the store)', async () => {
    const dataDir = q.dataDir;
    // Close without removing the data directory (TestApp.close would), then reopen it.
    await q.app.close();
    await q.service.close();
    q = await build({ dataDir, attesterKeys: [op.publicKey], attesterDailyFacts: LIMIT }, {}, { materializers: [] });
    const r = await send(q, 'json', op.batch([fact('weather.temperature_2m')], q.service.manifests));
    assert.deepEqual([r.status, r.body.code], [429, 'compute_quota_exceeded']);
  });
});

describe('daily quota across two responders on one PostgreSQL schema', { skip: pgSkip }, () => {
  const schema = randomSchema();
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    const config = { databaseUrl: pgUrl(), databaseSchema: schema, attesterKeys: [op.publicKey], attesterDailyFacts: 2 };
    a = await build(config, {}, { materializers: [] });
    b = await build(config, {}, { materializers: [] });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await dropSchema(schema).catch(() => undefined);
  });

  it('facts accepted through one count against the other', async () => {
    await expectAccepted('json', op, [fact('weather.temperature_2m'), fact('weather.temperature_2m')], a);
    const r = await send(b, 'cbor', op.batch([fact('weather.temperature_2m')], b.service.manifests));
    assert.deepEqual([r.status, r.body.code, r.body.details.used], [429, 'compute_quota_exceeded', 2]);
  });
});

describe('a materialized value the registry refuses', () => {
  let m: TestApp;
  before(async () => {
    const fake = fakeConnector(['indices.ndvi', 'copdem30m.elevation_mean'], {
      // Physically impossible: |NDVI| > 1 (what a negative surface reflectance can produce).
      'indices.ndvi': () => ({ status: 'value', value: 1.7, provenance: { source: 'fake', ref: 'scene-1' }, fn: 'normalized_difference@1' }),
    });
    m = await build({}, {}, { materializers: [fake] });
  });
  after(async () => m.close());

  it('is named by mintRefusal before it is queued (the hook a materializer uses), valid bodies pass', () => {
    const bad = mintRefusal(m.service, fact('indices.ndvi', { value: 1.7 }));
    assert.deepEqual([bad?.code, bad?.details.field], ['invalid_argument', 'fact.value']);
    assert.match(bad!.message, /physically possible range \[-1, 1\]/);
    assert.equal(mintRefusal(m.service, fact('indices.ndvi', { value: 0.7 })), null);
  });

  it('becomes a skipped note with the reason, never a 500, signs nothing of it, and leaves the other bands of the read alone', async () => {
    const size = await m.service.store.log.size();
    const r = await m.app.inject({ method: 'POST', url: '/v1/recall', payload: { cell: freshCell(), bands: ['indices.ndvi', 'copdem30m.elevation_mean'] } });
    assert.equal(r.statusCode, 200, r.body);
    const notes = Object.fromEntries(r.json().materialize_notes.map((n: { band: string }) => [n.band, n]));
    const note = notes['indices.ndvi'];
    assert.deepEqual([note.status, note.ok, note.fact_cid, note.absence], ['skipped', false, null, false]);
    assert.match(note.reason, /physically possible range/);
    assert.equal(notes['copdem30m.elevation_mean'].status, 'materialized');
    assert.deepEqual(
      r.json().facts.map((f: { band: string }) => f.band),
      ['copdem30m.elevation_mean'],
    );
    assert.equal(await m.service.store.log.size(), size + 1);
  });
});
