/**
 * The pure rules behind memory insight (docs/memory-insight.md): the registry's
 * agreement_tolerance, value agreement per band kind, the intent classes and maximum ages of
 * temporal_route, and the contradictions cursor.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { AGREEMENT_RELATIVE_DEFAULT, RegistryError, loadRegistry, validateRegistry, type BandEntry, type RawRegistry } from '../../src/registry/registry.js';
import { compareValues, decodeCursor, encodeCursor, VECTOR_AGREEMENT_COSINE } from '../../src/primitives/memory/contradictions.js';
import { classifyIntent, maxAgeFor } from '../../src/primitives/memory/temporal-route.js';
import { computeReputation } from '../../src/primitives/memory/reputation.js';
import type { ServiceContext } from '../../src/primitives/context/context.js';
import type { SharedSlot } from '../../src/store/memory.js';

const raw = (): RawRegistry =>
  Object.fromEntries(
    ['bands', 'sources', 'functions', 'algorithms', 'topics', 'hunt_events'].map((k) => [k, JSON.parse(readFileSync(new URL(`../../src/registry/data/${k}.json`, import.meta.url), 'utf8'))]),
  ) as unknown as RawRegistry;
const refuses = (entry: string, mutate: (band: Record<string, unknown>) => void) => {
  const r = raw();
  mutate((r.bands as Record<string, unknown>[]).find((b) => b.key === entry)!);
  assert.throws(
    () => validateRegistry(r),
    (e: unknown) => e instanceof RegistryError && e.entryKey === entry && e.field === 'agreement_tolerance',
  );
};
const band = (key: string): BandEntry => loadRegistry().bands.get(key)!;

describe('registry agreement_tolerance', () => {
  it('ships tolerances for the attestable scalar bands, in their own units', () => {
    assert.equal(band('weather.temperature_2m').agreement_tolerance, 0.5);
    assert.equal(band('copdem30m.elevation_mean').agreement_tolerance, 1);
    assert.equal(band('indices.ndvi').agreement_tolerance, 0.02);
    assert.equal(band('forest.lossyear').agreement_tolerance, undefined, 'a year code agrees only when equal');
  });
  it('is refused on a vector, categorical or record band, and when not a positive number', () => {
    refuses('geotessera', (b) => {
      b.agreement_tolerance = 0.1;
    });
    refuses('forest.gain', (b) => {
      b.agreement_tolerance = 1;
    });
    refuses('memory.edge', (b) => {
      b.agreement_tolerance = 1;
    });
    refuses('indices.ndvi', (b) => {
      b.agreement_tolerance = 0;
    });
    refuses('indices.ndvi', (b) => {
      b.agreement_tolerance = -0.1;
    });
    refuses('indices.ndvi', (b) => {
      b.agreement_tolerance = '0.02';
    });
  });
});

describe('agreement per band kind', () => {
  it('scalar: the band tolerance, inclusive; without one, 1e-6 of the larger magnitude', () => {
    assert.equal(compareValues(band('weather.temperature_2m'), 10, 10.5).agree, true);
    const far = compareValues(band('weather.temperature_2m'), 10, 10.6);
    assert.deepEqual([far.agree, far.measure], [false, { abs_diff: 0.6, tolerance: 0.5, tolerance_source: 'registry' }]);
    const year = band('forest.lossyear');
    assert.equal(compareValues(year, 12, 12).agree, true);
    assert.equal(compareValues(year, 12, 13).agree, false);
    assert.equal(compareValues(year, 1e6, 1e6 + 0.5).agree, true, `within ${AGREEMENT_RELATIVE_DEFAULT} relative`);
    assert.equal(compareValues(year, 0, 0).agree, true);
  });
  it(`vector: cosine ≥ ${VECTOR_AGREEMENT_COSINE}; a zero vector agrees only with an equal one`, () => {
    const g = band('geotessera');
    const v = Array.from({ length: 128 }, (_, i) => i + 1);
    assert.equal(
      compareValues(
        g,
        v,
        v.map((x) => x * 3),
      ).agree,
      true,
      'scale does not matter',
    );
    const w = v.map((x, i) => (i % 2 === 0 ? x : -x));
    const c = compareValues(g, v, w);
    assert.equal(c.agree, false);
    assert.equal(c.kind, 'vector');
    const zero = v.map(() => 0);
    assert.equal(compareValues(g, zero, zero).agree, true);
    assert.deepEqual(compareValues(g, zero, v).measure, { cosine: null, threshold: VECTOR_AGREEMENT_COSINE });
  });
  it('categorical: the same class id', () => {
    assert.deepEqual(compareValues(band('forest.gain'), 1, 1), { kind: 'categorical', agree: true, measure: { equal: true } });
    assert.deepEqual(compareValues(band('forest.gain'), 0, 1), { kind: 'categorical', agree: false, measure: { equal: false } });
  });
});

describe('temporal_route rules', () => {
  it('classifies intents by whole words; present-tense words win', () => {
    assert.deepEqual(classifyIntent('Is it raining right now?'), { class: 'fresh', matched: ['now'] });
    assert.deepEqual(classifyIntent('vegetation trend since 2019'), { class: 'historical', matched: ['trend', 'since'] });
    assert.deepEqual(classifyIntent('current trend'), { class: 'fresh', matched: ['current'] });
    assert.deepEqual(classifyIntent('knowledge of pasta'), { class: 'default', matched: [] }, 'no substring matches (now, past)');
    assert.deepEqual(classifyIntent(undefined), { class: 'default', matched: [] });
  });
  it('sets the maximum age by the first rule that applies', () => {
    const t = band('weather.temperature_2m');
    assert.deepEqual(maxAgeFor(t, 'fresh', 60), { max_age_s: 60, rule: 'max_age_s_override' });
    assert.deepEqual(maxAgeFor(band('copdem30m.elevation_mean'), 'fresh', undefined), { max_age_s: null, rule: 'static_band_any_age' });
    assert.deepEqual(maxAgeFor(t, 'fresh', undefined), { max_age_s: 900, rule: 'fresh_intent_one_cadence' });
    assert.deepEqual(maxAgeFor(t, 'historical', undefined), { max_age_s: null, rule: 'historical_intent_any_age' });
    assert.deepEqual(maxAgeFor(t, 'default', undefined), { max_age_s: 1350, rule: 'default_1_5_cadence' });
  });
});

describe('contradictions cursor', () => {
  it('round-trips a slot and refuses anything else', () => {
    const s = { cell: 'defi.zb623.pUyE.culU', band: 'weather.temperature_2m', tslot: 20_000 };
    assert.deepEqual(decodeCursor(encodeCursor(s)), s);
    for (const bad of ['', 'x y', Buffer.from('[1,2]').toString('base64url'), Buffer.from('["a","b",-1]').toString('base64url'), 42]) {
      assert.throws(
        () => decodeCursor(bad),
        (e: any) => e.code === 'invalid_argument' && e.details.field === 'after',
      );
    }
  });
});

describe('reputation scan', () => {
  // Slot i holds a fact of attesters p and q (they agree on even slots) and, on slot 0, r (who disagrees).
  const slots: SharedSlot[] = Array.from({ length: 7 }, (_, i) => ({ cell: `c${i}`, band: 'weather.temperature_2m', tslot: 1 }));
  const fact = (attester: string, value: number, i: number) => ({
    fact_cid: `${attester}${i}`,
    attester,
    kind: 'primary',
    body: { value, signed_at: `2026-01-01T0${i}:00:00Z` },
    accepted_at: '2026-01-02T00:00:00Z',
  });
  const ctx = {
    registry: loadRegistry(),
    now: () => new Date('2026-01-03T00:00:00Z'),
    store: {
      publicFactsByAttester: async () => [
        { attester: 'p', facts: 7 },
        { attester: 'q', facts: 7 },
        { attester: 'r', facts: 1 },
      ],
      history: async (q: { cell: string; scope: unknown }) => {
        assert.equal(q.scope, null, 'public facts only');
        const i = Number(q.cell.slice(1));
        return [fact('p', 10, i), fact('q', i % 2 === 0 ? 10.2 : 15, i), ...(i === 0 ? [fact('r', 30, i)] : [])];
      },
      memory: {
        sharedSlots: async (q: { scope: unknown; after?: SharedSlot; limit: number }) => {
          assert.equal(q.scope, null);
          const from = q.after ? slots.findIndex((s) => s.cell === q.after!.cell) + 1 : 0;
          return slots.slice(from, from + q.limit);
        },
      },
    },
  } as unknown as ServiceContext;

  it('counts the other keys that agree and disagree, not facts: one critic counts once however many facts it wrote', async () => {
    const t = await computeReputation(ctx, 3);
    // p and q disagree on three slots and agree on four: one key on each side of each other.
    assert.deepEqual(Object.fromEntries(t.by_attester), {
      p: { accepted: 7, corroborated: 1, contradicted: 2 },
      q: { accepted: 7, corroborated: 1, contradicted: 2 },
      r: { accepted: 1, corroborated: 0, contradicted: 2 },
    });
    assert.deepEqual([t.slots_scanned, t.truncated, t.available, t.log_size], [7, false, true, 3]);
  });

  it('stops at the slot bound and says so', async () => {
    const t = await computeReputation(ctx, 3, { maxSlots: 5 });
    assert.deepEqual([t.slots_scanned, t.truncated], [5, true]);
    const exact = await computeReputation(ctx, 3, { maxSlots: 7 });
    assert.deepEqual([exact.slots_scanned, exact.truncated], [7, false]);
  });
});
