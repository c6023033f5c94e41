/**
 * The memory-index half of the storage contract (src/store/memory.ts), run by every driver
 * beside the fact contract suite: notes with full-text search, bi-temporal edges, aliases,
 * derivations and shared slots, each scope-exact.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cellOf } from '../../src/protocol/cell64.js';
import { anchorId, contentId, factCid } from '../../src/protocol/cid.js';
import type { Scope } from '../../src/protocol/receipt.js';
import type { Store } from '../../src/store/contract.js';
import { makeBatch, makeFact, steppingClock } from './support/facts.js';
import type { MakeStore } from './contract-suite.js';
import { searchText } from './support/note-search.js';

const FIELD = cellOf(52.1, 5.1);
const FAR = cellOf(-33.9, 18.4);
const SEED_B = new Uint8Array(32).fill(11);
const A: Scope = { agent_id: 'agent-a' };
const B: Scope = { agent_id: 'agent-b' };

/** A memory record body: filed under the svc:entity: subject derived from its value. */
function record(band: string, value: Record<string, unknown>, extra: { scope?: Scope; signed_at?: string } = {}): Record<string, unknown> {
  const body = makeFact({ cell: `svc:entity:${anchorId(value)}`, band, tslot: 0, value, unit: 'record', signed_at: extra.signed_at, scope: extra.scope });
  return body;
}
const note = (value: Record<string, unknown>, extra: { scope?: Scope; signed_at?: string } = {}) => record('memory.note', value, extra);

export function runMemoryContractSuite(driverName: string, makeStore: MakeStore): void {
  async function withStore(fn: (store: Store, clock: ReturnType<typeof steppingClock>) => Promise<void>): Promise<void> {
    const clock = steppingClock();
    const { store, cleanup } = await makeStore({ now: clock.now });
    try {
      await fn(store, clock);
    } finally {
      await cleanup();
    }
  }

  describe(`memory index contract (${driverName})`, () => {
    describe('notes', () => {
      it('ranks by the engine, filters by scope, tags, entity, box, time and author', () =>
        withStore(async (store, clock) => {
          const ent = anchorId({ kind: 'field', name: 'north field' });
          const n1 = note({ text: 'Irrigation pump at the north field failed; the maize is wilting', cell: FIELD, tags: ['pump', 'maize'], entity: ent, observed_at: '2026-02-01T00:00:00Z' });
          const n2 = note({ text: 'Maize looks healthy after rain', cell: FIELD, tags: ['maize'], observed_at: '2026-03-01T00:00:00Z' });
          const n3 = note({ text: 'Vineyard harvest started near the cape', cell: FAR, tags: ['grapes'] });
          const n4 = note({ text: 'pump pump pump irrigation pump replaced', tags: ['pump'] });
          const scoped = note({ text: 'secret irrigation pump plan', cell: FIELD, tags: ['pump'] }, { scope: A });
          await store.append(makeBatch([n1, n2, n3], { provenance_class: 'human_curated' }));
          clock.advance(60);
          const cut = clock.iso();
          clock.advance(60);
          await store.append(makeBatch([n4], { provenance_class: 'human_curated', attesterSeed: SEED_B }));
          await store.append(makeBatch([scoped], { provenance_class: 'human_curated' }));

          const pub = await searchText(store, { scope: null, text: 'irrigation pump', limit: 10 });
          assert.deepEqual(new Set(pub.map((h) => h.fact_cid)), new Set([factCid(n1), factCid(n4)]));
          assert.equal(pub[0].fact_cid, factCid(n4), 'the note saying pump four times ranks first');
          assert.ok(pub[0].text_score > pub[1].text_score && pub[1].text_score > 0);

          const inA = await searchText(store, { scope: A, text: 'irrigation pump', limit: 10 });
          assert.deepEqual(
            inA.map((h) => h.fact_cid),
            [factCid(scoped)],
          );
          assert.deepEqual(await searchText(store, { scope: B, text: 'irrigation pump', limit: 10 }), []);
          assert.deepEqual(await store.memory.searchNotes({ scope: B, limit: 10 }), []);

          const tagged = await store.memory.searchNotes({ scope: null, tags: ['maize', 'pump'], limit: 10 });
          assert.deepEqual(
            tagged.map((h) => h.fact_cid),
            [factCid(n1)],
          );
          const byEntity = await store.memory.searchNotes({ scope: null, entity: ent, limit: 10 });
          assert.deepEqual(
            byEntity.map((h) => h.fact_cid),
            [factCid(n1)],
          );
          const boxed = await store.memory.searchNotes({ scope: null, bbox: { min_lat: 52, min_lng: 5, max_lat: 52.2, max_lng: 5.2 }, limit: 10 });
          assert.deepEqual(new Set(boxed.map((h) => h.fact_cid)), new Set([factCid(n1), factCid(n2)]));
          assert.ok(boxed.every((h) => h.lat !== null && Math.abs(h.lat - 52.1) < 0.01));
          const window = await searchText(store, { scope: null, text: 'maize', observed_from: Date.parse('2026-02-15T00:00:00Z') / 1000, limit: 10 });
          assert.deepEqual(
            window.map((h) => h.fact_cid),
            [factCid(n2)],
          );
          const before = await searchText(store, { scope: null, text: 'pump', accepted_before: cut, limit: 10 });
          assert.deepEqual(
            before.map((h) => h.fact_cid),
            [factCid(n1)],
          );
          const byB = await searchText(store, { scope: null, text: 'pump', authors: [makeBatch([n4], { attesterSeed: SEED_B }).attester], limit: 10 });
          assert.deepEqual(
            byB.map((h) => h.fact_cid),
            [factCid(n4)],
          );
          assert.equal(byB[0].attester, makeBatch([n4], { attesterSeed: SEED_B }).attester);
          // Text and tags together: every tag must be on the note, in the searched scope only.
          const textTagged = await searchText(store, { scope: null, text: 'irrigation pump', tags: ['maize'], limit: 10 });
          assert.deepEqual(
            textTagged.map((h) => h.fact_cid),
            [factCid(n1)],
          );
          assert.deepEqual(
            (await searchText(store, { scope: null, text: 'irrigation pump', tags: ['pump', 'maize'], limit: 10 })).map((h) => h.fact_cid),
            [factCid(n1)],
          );
          assert.deepEqual(
            (await searchText(store, { scope: A, text: 'pump', tags: ['pump'], limit: 10 })).map((h) => h.fact_cid),
            [factCid(scoped)],
          );
          assert.deepEqual(await searchText(store, { scope: B, text: 'pump', tags: ['pump'], limit: 10 }), []);
          assert.deepEqual(await searchText(store, { scope: null, text: 'pump', tags: ['grapes'], limit: 10 }), []);

          // Without text: newest first, text_score 0.
          const all = await store.memory.searchNotes({ scope: null, limit: 2 });
          assert.equal(all.length, 2);
          assert.equal(all[0].fact_cid, factCid(n4));
        }));

      it("ranks a scope's notes by that scope's statistics alone: other scopes' notes move neither scores nor order", () =>
        withStore(async (store) => {
          const mine = [
            note({ text: 'pump valve replaced at the north well', speaker: 'Ana', thread: 't1' }, { scope: A }),
            note({ text: 'valve leaking again, pump fine', speaker: 'Ben', thread: 't1' }, { scope: A }),
            note({ text: 'the north well pump needs a new valve and a new pump seal', thread: 't2' }, { scope: A }),
          ];
          await store.append(makeBatch(mine, { provenance_class: 'human_curated', sign: false }));
          const before = await searchText(store, { scope: A, text: 'pump valve north', limit: 10 });
          const stats = await store.memory.noteStats({ scope: A, terms: ['pump', 'valv'] });
          assert.deepEqual(stats, { notes: 3, tokens: stats.tokens, df: [3, 3] });
          // Many notes elsewhere holding the same words, public and in another scope.
          for (const scope of [undefined, B]) {
            const bodies = Array.from({ length: 300 }, (_, i) => note({ text: `pump ${i} valve north pump pump`, speaker: 'Ana' }, scope ? { scope } : {}));
            await store.append(makeBatch(bodies, { provenance_class: 'human_curated', sign: false }));
          }
          const after = await searchText(store, { scope: A, text: 'pump valve north', limit: 10 });
          assert.deepEqual(
            after.map((h) => [h.fact_cid, h.text_score]),
            before.map((h) => [h.fact_cid, h.text_score]),
          );
          assert.deepEqual(await store.memory.noteStats({ scope: A, terms: ['pump', 'valv'] }), stats);
          assert.deepEqual((await store.memory.noteStats({ scope: B, terms: ['pump'] })).df, [300]);
        }));

      it('treats engine syntax in the text as plain words and never fails on it', () =>
        withStore(async (store) => {
          const n = note({ text: 'The "north" field: NEAR the AND gate, pump-house (old) * OR not' });
          await store.append(makeBatch([n], { provenance_class: 'human_curated' }));
          for (const text of ['"north', 'NEAR(pump', 'pump*', 'AND', 'OR OR', '-pump', 'title:pump', "o'brien", '((', '!@#$%^&', '', '   ']) {
            const hits = await searchText(store, { scope: null, text, limit: 5 });
            assert.ok(Array.isArray(hits), text);
          }
          const hits = await searchText(store, { scope: null, text: 'pump-house gate', limit: 5 });
          assert.deepEqual(
            hits.map((h) => h.fact_cid),
            [factCid(n)],
          );
        }));

      it('finds the old note holding a rare word even when a common word matches more notes than are ranked', () =>
        withStore(async (store) => {
          const oldest = note({ text: 'common pump zebra crossing' });
          await store.append(makeBatch([oldest], { provenance_class: 'human_curated', sign: false }));
          for (let b = 0; b < 9; b++) {
            const bodies = Array.from({ length: 500 }, (_, i) => note({ text: `common pump note ${b}-${i}` }));
            await store.append(makeBatch(bodies, { provenance_class: 'human_curated', sign: false }));
          }
          const hits = await searchText(store, { scope: null, text: 'pump zebra', limit: 5 });
          assert.equal(hits[0].fact_cid, factCid(oldest), 'the only note with both words ranks first');
          assert.equal(hits.length, 5);
          // A query of 32 words, common ones among them, is bounded per word, and still finds it.
          const long = ['common', 'pump', ...Array.from({ length: 29 }, (_, i) => `absent${i}`), 'zebra'].join(' ');
          const longHits = await searchText(store, { scope: null, text: long, limit: 5 });
          assert.equal(longHits[0].fact_cid, factCid(oldest), "the rare word's note ranks first in a long query too");
          assert.equal(longHits.length, 5);
        }));

      it('public notes holding letters a tokenizer may split never move a scoped search (results or scores)', async () => {
        // Letters to this service's word rule that FTS5's unicode61 took for separators: a public
        // word `x<letter>1qpump` would have lost its own scope prefix behind `1qpump`, a scoped
        // term. The control writes the same notes with a plain letter instead, so row count and
        // lengths are equal and only a planted word could make the two searches differ.
        const SPLIT = [...Array.from({ length: 17 }, (_, i) => String.fromCodePoint(0x19b0 + i)), '\u19c8', '\u19c9', '\u1cf2', '\u1cf3'];
        async function scopedSearch(letter: (i: number) => string) {
          const { store, cleanup } = await makeStore({ now: steppingClock().now });
          try {
            const s1 = note({ text: 'pump valve pump house' }, { scope: A });
            const s2 = note({ text: 'valve check at the house' }, { scope: A });
            await store.append(makeBatch([s1, s2], { provenance_class: 'human_curated', sign: false }));
            for (let b = 0; b < 9; b++) {
              const bodies = Array.from({ length: 460 }, (_, i) => {
                const planted = [1, 2, 3, 4].map((id) => `x${letter(b + i + id)}${id}qpump x${letter(b + i + id + 1)}${id}qvalve`);
                return note({ text: `public ${b}-${i} ${planted.join(' ')}` });
              });
              await store.append(makeBatch(bodies, { provenance_class: 'human_curated', sign: false }));
            }
            const hits = await searchText(store, { scope: A, text: 'pump valve', limit: 10 });
            return { cids: hits.map((h) => h.fact_cid), scores: hits.map((h) => h.text_score), expected: [factCid(s1), factCid(s2)] };
          } finally {
            await cleanup();
          }
        }
        const control = await scopedSearch(() => 'a');
        assert.deepEqual(control.cids, control.expected);
        const planted = await scopedSearch((i) => SPLIT[i % SPLIT.length]);
        assert.deepEqual(planted.cids, control.cids, 'the scope still finds its two notes');
        assert.deepEqual(planted.scores, control.scores, 'and scores them as without the planted words');
      });

      it('normalizes case the same way in notes and queries (İstanbul)', () =>
        withStore(async (store) => {
          const n = note({ text: 'Ferry from İstanbul to the Asian shore at dawn, then up ΟΔΟΣ ΑΘΗΝΑΣ' });
          const other = note({ text: 'Ferry timetable for the islands' });
          await store.append(makeBatch([n, other], { provenance_class: 'human_curated' }));
          // JavaScript lowercases İ to i + U+0307 and a final Σ to ς; a database (or FTS5) may not.
          for (const text of ['İstanbul', 'İSTANBUL', 'ferry İstanbul', 'ΟΔΟΣ']) {
            const hits = await searchText(store, { scope: null, text, limit: 5 });
            assert.equal(hits[0]?.fact_cid, factCid(n), text);
          }
          const byAlias = record('memory.alias', { entity: anchorId({ city: 'ist' }), phrase: 'İstanbul old town' });
          await store.append(makeBatch([byAlias], { provenance_class: 'human_curated' }));
          assert.deepEqual(
            (await store.memory.aliases({ scope: null, text: 'İstanbul', limit: 5 })).map((h) => h.fact_cid),
            [factCid(byAlias)],
          );
          if (driverName.startsWith('sqlite')) {
            // The embedded store folds case and diacritics itself (memory-text.ts): every spelling meets.
            for (const text of ['istanbul', 'ISTANBUL', 'Istanbul']) {
              assert.equal((await searchText(store, { scope: null, text, limit: 5 }))[0]?.fact_cid, factCid(n), text);
            }
          }
        }));

      it('returns agent-supplied vectors, and with_vector keeps only notes carrying one', () =>
        withStore(async (store) => {
          const v = note({ text: 'vector note', vector: [0.6, 0.8, 0] });
          const plain = note({ text: 'plain note' });
          await store.append(makeBatch([v, plain], { provenance_class: 'human_curated' }));
          const hits = await store.memory.searchNotes({ scope: null, with_vector: true, limit: 10 });
          assert.deepEqual(
            hits.map((h) => h.fact_cid),
            [factCid(v)],
          );
          assert.ok(hits[0].vector instanceof Float32Array);
          assert.deepEqual(
            Array.from(hits[0].vector!).map((x) => Math.round(x * 10) / 10),
            [0.6, 0.8, 0],
          );
        }));
    });

    describe('edges', () => {
      it('answers as-of queries in valid and transaction time; an exclusive edge closes the older one', () =>
        withStore(async (store, clock) => {
          const plot = anchorId({ kind: 'field', name: 'plot 7' });
          const farmX = anchorId({ kind: 'farm', name: 'X' });
          const farmY = anchorId({ kind: 'farm', name: 'Y' });
          const e1 = record('memory.edge', { type: 'part_of', from: plot, to: farmX, valid_from: '2026-01-01T00:00:00Z' });
          await store.append(makeBatch([e1], { provenance_class: 'human_curated' }));
          clock.advance(3600);
          const beforeSale = clock.iso();
          clock.advance(3600);
          const e2 = record('memory.edge', { type: 'part_of', from: plot, to: farmY, valid_from: '2026-06-01T00:00:00Z' });
          await store.append(makeBatch([e2], { provenance_class: 'human_curated' }));

          const t = (iso: string) => Date.parse(iso) / 1000;
          const march = await store.memory.edges({ scope: null, record: plot, direction: 'out', valid_at: t('2026-03-01T00:00:00Z'), limit: 10 });
          assert.deepEqual(
            march.map((e) => e.to),
            [farmX],
          );
          assert.equal(march[0].closed_at, t('2026-06-01T00:00:00Z'));
          assert.equal(march[0].closed_by, factCid(e2));
          assert.equal(march[0].edge_cid, factCid(e1));
          assert.equal(march[0].stated_by, factCid(e1));
          const july = await store.memory.edges({ scope: null, record: plot, direction: 'out', valid_at: t('2026-07-01T00:00:00Z'), limit: 10 });
          assert.deepEqual(
            july.map((e) => e.to),
            [farmY],
          );
          // As recorded before the sale was known: X still holds in July, unclosed.
          const julyThen = await store.memory.edges({ scope: null, record: plot, direction: 'out', valid_at: t('2026-07-01T00:00:00Z'), recorded_at: beforeSale, limit: 10 });
          assert.deepEqual(
            julyThen.map((e) => e.to),
            [farmX],
          );
          assert.equal(julyThen[0].closed_at, null);
          // Without a valid time, both edges, nothing erased.
          const every = await store.memory.edges({ scope: null, record: plot, direction: 'both', limit: 10 });
          assert.equal(every.length, 2);
          const into = await store.memory.edges({ scope: null, record: farmY, direction: 'in', limit: 10 });
          assert.deepEqual(
            into.map((e) => e.from),
            [plot],
          );
          assert.deepEqual(await store.memory.edges({ scope: null, record: farmY, direction: 'out', limit: 10 }), []);
          assert.deepEqual(await store.memory.edges({ scope: null, record: plot, direction: 'out', kinds: ['same_as'], limit: 10 }), []);
          assert.deepEqual(await store.memory.edges({ scope: A, record: plot, direction: 'both', limit: 10 }), []);
        }));

      it("one key never closes another key's edge: neither by an exclusive edge nor by invalidates", () =>
        withStore(async (store) => {
          const plot = anchorId({ kind: 'field', name: 'plot 9' });
          const farmX = anchorId({ kind: 'farm', name: 'X9' });
          const farmY = anchorId({ kind: 'farm', name: 'Y9' });
          const mine = record('memory.edge', { type: 'owned_by', from: plot, to: farmX, valid_from: '2026-01-01T00:00:00Z' });
          await store.append(makeBatch([mine], { provenance_class: 'human_curated' }));
          const theirs = record('memory.edge', { type: 'owned_by', from: plot, to: farmY, valid_from: '2026-06-01T00:00:00Z', invalidates: [factCid(mine)] });
          await store.append(makeBatch([theirs], { provenance_class: 'human_curated', attesterSeed: SEED_B }));
          const july = await store.memory.edges({ scope: null, record: plot, direction: 'out', valid_at: Date.parse('2026-07-01T00:00:00Z') / 1000, limit: 10 });
          assert.deepEqual(new Set(july.map((e) => e.to)), new Set([farmX, farmY]), 'both statements stand');
          assert.ok(july.every((e) => e.closed_at === null));
          // An earlier edge of the other key learned later does not close the first key's either.
          const early = record('memory.edge', { type: 'owned_by', from: plot, to: farmY, valid_from: '2025-06-01T00:00:00Z' });
          await store.append(makeBatch([early], { provenance_class: 'human_curated', attesterSeed: SEED_B }));
          const mineNow = (await store.memory.edges({ scope: null, record: plot, direction: 'out', limit: 10 })).find((e) => e.edge_cid === factCid(mine));
          assert.equal(mineNow?.closed_at, null);
        }));

      it('closes an edge named in invalidates, and lists derived_from edges of derivatives', () =>
        withStore(async (store) => {
          const a = anchorId({ n: 'a' });
          const b = anchorId({ n: 'b' });
          const e1 = record('memory.edge', { type: 'observed_with', from: a, to: b, valid_from: '2026-01-01T00:00:00Z' });
          await store.append(makeBatch([e1], { provenance_class: 'human_curated' }));
          const e2 = record('memory.edge', { type: 'related_to', from: a, to: b, valid_from: '2026-02-01T00:00:00Z', invalidates: [factCid(e1)] });
          await store.append(makeBatch([e2], { provenance_class: 'human_curated' }));
          const feb = await store.memory.edges({ scope: null, record: a, direction: 'out', valid_at: Date.parse('2026-02-10T00:00:00Z') / 1000, limit: 10 });
          assert.deepEqual(
            feb.map((e) => e.kind),
            ['related_to'],
          );

          const p1 = makeFact({ cell: FIELD, band: 'indices.ndvi', tslot: 100, value: 0.5, unit: 'ndvi' });
          const p2 = makeFact({ cell: FIELD, band: 'indices.ndvi', tslot: 200, value: 0.3, unit: 'ndvi' });
          await store.append(makeBatch([p1, p2]));
          const d = { ...makeFact({ cell: FIELD, band: 'derived.delta', tslot: 0, value: -0.2, kind: 'derivative' }), derivation: { fn: 'nd.delta@1', parents: [factCid(p2), factCid(p1)] } };
          await store.append(makeBatch([d], { provenance_class: 'deterministic_index' }));
          const out = await store.memory.edges({ scope: null, record: factCid(d), direction: 'out', limit: 10 });
          assert.deepEqual(new Set(out.map((e) => e.to)), new Set([factCid(p1), factCid(p2)]));
          assert.ok(out.every((e) => e.kind === 'derived_from' && e.stated_by === factCid(d)));
          assert.ok(out.every((e) => e.edge_cid === contentId({ kind: 'derived_from', from: factCid(d), to: e.to })));
          const derived = await store.memory.derivedBy({ scope: null, attester: makeBatch([d]).attester, limit: 10 });
          assert.deepEqual(
            derived.map((x) => x.fact_cid),
            [factCid(d)],
          );
          const next = await store.memory.derivedBy({ scope: null, attester: makeBatch([d]).attester, after: derived[0].seq, limit: 10 });
          assert.deepEqual(next, []);
          assert.deepEqual(await store.memory.derivedBy({ scope: A, attester: makeBatch([d]).attester, limit: 10 }), []);
        }));
    });

    describe('aliases', () => {
      it('finds entities by their names and aliases, scope-exact', () =>
        withStore(async (store) => {
          const identity = { kind: 'field', name: 'Hoeve Noord', geometry: { cell: FIELD } };
          const ent = anchorId(identity);
          const entity = record('memory.entity', identity);
          const alias = record('memory.alias', { entity: ent, phrase: 'the north field by the canal' });
          const other = record('memory.alias', { entity: anchorId({ x: 1 }), phrase: 'south orchard' });
          const hidden = record('memory.alias', { entity: ent, phrase: 'north field secret name' }, { scope: A });
          await store.append(makeBatch([entity, alias, other], { provenance_class: 'human_curated' }));
          await store.append(makeBatch([hidden], { provenance_class: 'human_curated' }));
          const hits = await store.memory.aliases({ scope: null, text: 'north field', limit: 10 });
          assert.deepEqual(
            hits.map((h) => h.entity),
            [ent],
          );
          assert.equal(hits[0].fact_cid, factCid(alias));
          const byName = await store.memory.aliases({ scope: null, text: 'hoeve noord', limit: 10 });
          assert.deepEqual(
            byName.map((h) => [h.entity, h.fact_cid]),
            [[ent, factCid(entity)]],
          );
          const inA = await store.memory.aliases({ scope: A, text: 'north field', limit: 10 });
          assert.deepEqual(
            inA.map((h) => h.fact_cid),
            [factCid(hidden)],
          );
          assert.deepEqual(await store.memory.aliases({ scope: B, text: 'north', limit: 10 }), []);
        }));
    });

    describe('shared slots', () => {
      it('lists keys two attesters wrote, not one attester twice, scope-exact', () =>
        withStore(async (store, clock) => {
          const band = 'weather.temperature_2m';
          const mine = makeFact({ cell: FIELD, band, tslot: 5, value: 20, unit: 'degC' });
          const again = makeFact({ cell: FIELD, band, tslot: 5, value: 21, unit: 'degC', signed_at: '2026-01-02T00:00:00Z' });
          const alone = makeFact({ cell: FAR, band, tslot: 5, value: 30, unit: 'degC' });
          await store.append(makeBatch([mine, alone]));
          clock.advance(10);
          await store.append(makeBatch([again]));
          assert.deepEqual(await store.memory.sharedSlots({ scope: null, limit: 10 }), []);
          const theirs = makeFact({ cell: FIELD, band, tslot: 5, value: 25, unit: 'degC', signed_at: '2026-01-03T00:00:00Z' });
          await store.append(makeBatch([theirs], { attesterSeed: SEED_B }));
          const slots = await store.memory.sharedSlots({ scope: null, limit: 10 });
          assert.deepEqual(slots, [{ cell: FIELD, band, tslot: 5 }]);
          assert.deepEqual(await store.memory.sharedSlots({ scope: null, cells: [FAR], limit: 10 }), []);
          assert.deepEqual(await store.memory.sharedSlots({ scope: null, bands: ['indices.ndvi'], limit: 10 }), []);
          assert.deepEqual(await store.memory.sharedSlots({ scope: null, cells: [FIELD], bands: [band], limit: 10 }), slots);
          assert.deepEqual(await store.memory.sharedSlots({ scope: null, after: slots[0], limit: 10 }), []);
          assert.deepEqual(await store.memory.sharedSlots({ scope: A, limit: 10 }), []);
          const sa = makeFact({ cell: FAR, band, tslot: 9, value: 1, unit: 'degC', scope: A });
          const sb = makeFact({ cell: FAR, band, tslot: 9, value: 2, unit: 'degC', scope: A, signed_at: '2026-01-05T00:00:00Z' });
          await store.append(makeBatch([sa]));
          await store.append(makeBatch([sb], { attesterSeed: SEED_B }));
          assert.deepEqual(await store.memory.sharedSlots({ scope: A, limit: 10 }), [{ cell: FAR, band, tslot: 9 }]);
          assert.deepEqual(await store.memory.sharedSlots({ scope: null, limit: 10 }), slots);
        }));
    });
  });
}
