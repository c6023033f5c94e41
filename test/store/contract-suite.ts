/**
 * The storage contract (src/store/contract.ts) as one suite that every driver runs
 * (Kysely-style: the driver's name in the describe). Each test gets a fresh, empty store.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { b32decode } from '../../src/protocol/base32.js';
import { equalBytes } from '../../src/protocol/bytes.js';
import { cellOf } from '../../src/protocol/cell64.js';
import { SvcError } from '../../src/protocol/errors.js';
import { leafHash, verifyInclusion } from '../../src/protocol/log-tree.js';
import { batchRootFromProof, proofFromJson, verifyBatchProof } from '../../src/protocol/merkle-batch.js';
import type { Store } from '../../src/store/contract.js';
import { decodeLogEntry } from '../../src/store/entry.js';
import { makeBatch, makeFact, steppingClock } from './support/facts.js';

/** Driver-factory options the suite needs beyond StoreConfig. */
export interface SuiteStoreOptions {
  /** Clock for accepted_at. */
  now?: () => Date;
  /** While it returns true, the driver's durable write (log append / COMMIT) fails. */
  failLogAppend?: () => boolean;
}

export type MakeStore = (opts?: SuiteStoreOptions) => Promise<{ store: Store; cleanup: () => Promise<void> }>;

const HERE = cellOf(51.5, -0.12);
const NORTH = cellOf(51.5001, -0.12);
const EAST = cellOf(51.5, -0.1199);
const PARIS = cellOf(48.85, 2.35);
const ELEV = 'copdem30m.elevation_mean';
const NDVI = 'indices.ndvi';

const cids = (facts: readonly { fact_cid: string }[]) => facts.map((f) => f.fact_cid);

/** Run the shared contract suite against one driver. */
export function runContractSuite(driverName: string, makeStore: MakeStore): void {
  async function withStore(fn: (store: Store) => Promise<void>, opts?: SuiteStoreOptions): Promise<void> {
    const { store, cleanup } = await makeStore(opts);
    try {
      await fn(store);
    } finally {
      await cleanup();
    }
  }

  describe(`store contract (${driverName})`, () => {
    describe('append and getFact', () => {
      it('returns the exact body under its cid, with the index columns', () => {
        const clock = steppingClock();
        return withStore(
          async (store) => {
            const body = makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 918.5, unit: 'm_msl' });
            const batch = makeBatch([body], { provenance_class: 'direct_sensor' });
            const res = await store.append(batch);
            assert.equal(res.log_index, 0);
            assert.equal(res.tree_size, 1);
            assert.deepEqual(res.duplicates, []);
            assert.equal(res.accepted_at, clock.iso());
            const got = await store.getFact(batch.facts[0].fact_cid);
            assert.ok(got);
            assert.deepEqual(got.body, body);
            assert.equal(got.fact_cid, batch.facts[0].fact_cid);
            assert.equal(got.cell, HERE);
            assert.equal(got.band, ELEV);
            assert.equal(got.tslot, 0);
            assert.equal(got.kind, 'primary');
            assert.equal(got.provenance_class, 'direct_sensor');
            assert.equal(got.attester, batch.attester);
            assert.equal(got.scope, null);
            assert.equal(got.accepted_at, res.accepted_at);
            assert.equal(got.log_index, 0);
            assert.equal(got.supersedes, null);
            assert.equal(await store.getFact('a'.repeat(52)), null);
          },
          { now: clock.now },
        );
      });

      it('gives each batch the next log index and one log entry', () =>
        withStore(async (store) => {
          const a = await store.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 }), makeFact({ cell: NORTH, band: ELEV, tslot: 0, value: 2 })]));
          const b = await store.append(makeBatch([makeFact({ cell: EAST, band: ELEV, tslot: 0, value: 3 })]));
          assert.deepEqual([a.log_index, b.log_index], [0, 1]);
          assert.equal(await store.log.size(), 2);
          assert.equal(b.tree_size, 2);
        }));

      it('acknowledges concurrent appends with distinct indices, all readable', () =>
        withStore(async (store) => {
          const batches = Array.from({ length: 24 }, (_, i) => makeBatch([makeFact({ cell: HERE, band: `test.b${i}`, tslot: 0, value: i })], { sign: false }));
          const results = await Promise.all(batches.map((b) => store.append(b)));
          assert.deepEqual(
            results.map((r) => r.log_index).sort((x, y) => x - y),
            Array.from({ length: 24 }, (_, i) => i),
          );
          assert.equal(await store.log.size(), 24);
          for (const b of batches) assert.ok(await store.getFact(b.facts[0].fact_cid));
          assert.equal((await store.latest({ cell: HERE })).length, 24);
        }));
    });

    describe('duplicates', () => {
      it('reports an all-duplicate batch without touching the log', () =>
        withStore(async (store) => {
          const batch = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 }), makeFact({ cell: HERE, band: NDVI, tslot: 3, value: 0.4 })]);
          const first = await store.append(batch);
          const again = await store.append(batch);
          assert.deepEqual(again.duplicates.sort(), cids(batch.facts).sort());
          assert.equal(again.log_index, first.log_index);
          assert.equal(await store.log.size(), 1);
          assert.equal((await store.stats()).facts, 2);
        }));

      it('stores the new facts of a partly duplicate batch and keeps the old placement', () =>
        withStore(async (store) => {
          const a = makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 });
          const b = makeFact({ cell: NORTH, band: ELEV, tslot: 0, value: 2 });
          const c = makeFact({ cell: EAST, band: ELEV, tslot: 0, value: 3 });
          await store.append(makeBatch([a, b]));
          const second = makeBatch([b, c]);
          const res = await store.append(second);
          assert.deepEqual(res.duplicates, [second.facts[0].fact_cid]);
          assert.equal(res.log_index, 1);
          assert.equal((await store.getFact(second.facts[0].fact_cid))!.log_index, 0);
          assert.equal((await store.getFact(second.facts[1].fact_cid))!.log_index, 1);
          assert.equal((await store.stats()).facts, 3);
        }));
    });

    describe('latest', () => {
      it('picks the newest tslot, then the newest accepted version, one fact per band', () => {
        const clock = steppingClock();
        return withStore(
          async (store) => {
            const t7 = makeBatch([makeFact({ cell: HERE, band: NDVI, tslot: 7, value: 0.7 })]);
            await store.append(t7);
            clock.advance(5);
            await store.append(makeBatch([makeFact({ cell: HERE, band: NDVI, tslot: 5, value: 0.5 })])); // later, but older tslot
            await store.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 100 })]));
            let got = await store.latest({ cell: HERE });
            assert.deepEqual(
              got.map((f) => [f.band, f.tslot]),
              [
                [ELEV, 0],
                [NDVI, 7],
              ],
            );
            clock.advance(5);
            const t7b = makeBatch([makeFact({ cell: HERE, band: NDVI, tslot: 7, value: 0.71, signed_at: '2026-01-02T00:00:00Z' })]);
            await store.append(t7b);
            got = await store.latest({ cell: HERE, bands: [NDVI] });
            assert.deepEqual(cids(got), [t7b.facts[0].fact_cid]);
            assert.deepEqual(await store.latest({ cell: PARIS }), []);
            assert.deepEqual(await store.latest({ cell: HERE, bands: ['no.such.band'] }), []);
          },
          { now: clock.now },
        );
      });

      it('breaks a same-second tie by log order', () =>
        withStore(
          async (store) => {
            await store.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1, signed_at: '2026-01-01T00:00:01Z' })]));
            const v2 = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 2, signed_at: '2026-01-01T00:00:02Z' })]);
            await store.append(v2);
            assert.deepEqual(cids(await store.latest({ cell: HERE })), [v2.facts[0].fact_cid]);
          },
          { now: () => new Date('2026-03-01T00:00:00Z') },
        ));

      it('bounds valid time with tslot and as_of_tslot', () =>
        withStore(async (store) => {
          for (const t of [3, 5, 9]) await store.append(makeBatch([makeFact({ cell: HERE, band: NDVI, tslot: t, value: t / 10 })]));
          assert.deepEqual(
            (await store.latest({ cell: HERE, as_of_tslot: 8 })).map((f) => f.tslot),
            [5],
          );
          assert.deepEqual(
            (await store.latest({ cell: HERE, as_of_tslot: 5 })).map((f) => f.tslot),
            [5],
          );
          assert.deepEqual(
            (await store.latest({ cell: HERE, tslot: 3 })).map((f) => f.tslot),
            [3],
          );
          assert.deepEqual(await store.latest({ cell: HERE, tslot: 4 }), []);
          assert.deepEqual(await store.latest({ cell: HERE, as_of_tslot: 2 }), []);
        }));

      it('bounds transaction time with as_of_signed_at (normalised to seconds)', () => {
        const clock = steppingClock('2026-03-01T12:00:00Z');
        return withStore(
          async (store) => {
            const v1 = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1, signed_at: '2026-03-01T11:00:00Z' })]);
            await store.append(v1);
            clock.advance(10);
            const v2 = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 2, signed_at: '2026-03-01T11:00:01Z' })]);
            await store.append(v2);
            const at = (t: string) => store.latest({ cell: HERE, as_of_signed_at: t }).then(cids);
            assert.deepEqual(await at('2026-03-01T12:00:05Z'), [v1.facts[0].fact_cid]);
            assert.deepEqual(await at('2026-03-01T12:00:09.999Z'), [v1.facts[0].fact_cid]);
            assert.deepEqual(await at('2026-03-01T13:00:10+01:00'), [v2.facts[0].fact_cid]);
            assert.deepEqual(await at('2026-03-01T12:00:10Z'), [v2.facts[0].fact_cid]);
            assert.deepEqual(await at('2026-03-01T11:59:59Z'), []);
            await assert.rejects(at('yesterday'), (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument' && /as_of_signed_at/.test(e.message));
          },
          { now: clock.now },
        );
      });

      it('filters by provenance class', () =>
        withStore(async (store) => {
          const batch = makeBatch(
            [makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 }), makeFact({ cell: HERE, band: NDVI, tslot: 2, value: 0.3 }), makeFact({ cell: HERE, band: 'model.lst', tslot: 1, value: 280 })],
            { provenance_class: ['direct_sensor', 'deterministic_index', 'model_output'] },
          );
          await store.append(batch);
          const bands = (p: Parameters<Store['latest']>[0]['provenance']) => store.latest({ cell: HERE, provenance: p }).then((fs) => fs.map((f) => f.band));
          assert.deepEqual(await bands(['direct_sensor', 'deterministic_index']), [ELEV, NDVI]);
          assert.deepEqual(await bands(['model_output']), ['model.lst']);
          assert.deepEqual(await bands(['human_curated']), []);
          assert.deepEqual(await bands(undefined), [ELEV, NDVI, 'model.lst']);
        }));
    });

    describe('supersession', () => {
      it('links a newer version to the one it supersedes and keeps both readable', () =>
        withStore(async (store) => {
          const v1 = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1, signed_at: '2026-01-01T00:00:00Z' })]);
          const v2 = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 2, signed_at: '2026-01-02T00:00:00Z' })]);
          const other = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 1, value: 3 })]);
          await store.append(v1);
          await store.append(v2);
          await store.append(other);
          const old = await store.getFact(v1.facts[0].fact_cid);
          const cur = await store.getFact(v2.facts[0].fact_cid);
          assert.ok(old && cur);
          assert.equal(old.supersedes, null);
          assert.equal(old.body.value, 1);
          assert.equal(cur.supersedes, v1.facts[0].fact_cid);
          assert.equal((await store.getFact(other.facts[0].fact_cid))!.supersedes, null, 'another tslot is not a new version');
          const hist = await store.history({ cell: HERE, bands: [ELEV] });
          assert.deepEqual(
            cids(hist),
            [v1, v2, other].map((b) => b.facts[0].fact_cid),
          );
          assert.deepEqual(
            cids(await store.history({ cell: HERE, tslot_from: 0, tslot_to: 0 })),
            [v1, v2].map((b) => b.facts[0].fact_cid),
          );
          assert.deepEqual(cids(await store.history({ cell: HERE, limit: 1 })), [v1.facts[0].fact_cid]);
        }));

      it('does not supersede across scopes', () =>
        withStore(async (store) => {
          await store.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 })]));
          const scoped = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 2, scope: { user_id: 'u1' } })]);
          await store.append(scoped);
          assert.equal((await store.getFact(scoped.facts[0].fact_cid))!.supersedes, null);
        }));
    });

    describe('scope', () => {
      it('isolates unscoped facts and each exact four-tuple', () =>
        withStore(async (store) => {
          const open = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 })]);
          const u1 = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 2, scope: { user_id: 'u1' } })]);
          const u1a1 = makeBatch([makeFact({ cell: HERE, band: NDVI, tslot: 0, value: 3, scope: { user_id: 'u1', agent_id: 'a1' } })]);
          for (const b of [open, u1, u1a1]) await store.append(b);
          const read = (scope?: Parameters<Store['latest']>[0]['scope']) => store.latest({ cell: HERE, scope }).then(cids);
          assert.deepEqual(await read(), [open.facts[0].fact_cid]);
          assert.deepEqual(await read(null), [open.facts[0].fact_cid]);
          assert.deepEqual(await read({}), [open.facts[0].fact_cid], 'an empty scope is no scope');
          assert.deepEqual(await read({ user_id: 'u1' }), [u1.facts[0].fact_cid]);
          assert.deepEqual(await read({ agent_id: 'a1', user_id: 'u1' }), [u1a1.facts[0].fact_cid]);
          assert.deepEqual(await read({ user_id: 'u2' }), []);
          assert.deepEqual(await read({ user_id: 'u1', agent_id: 'a1', run_id: 'r1' }), []);
          assert.deepEqual((await store.getFact(u1a1.facts[0].fact_cid))!.scope, { user_id: 'u1', agent_id: 'a1' });
          assert.deepEqual(await store.bandsAt(HERE), [ELEV]);
          assert.deepEqual(await store.bandsAt(HERE, { user_id: 'u1', agent_id: 'a1' }), [NDVI]);
          assert.deepEqual(cids(await store.history({ cell: HERE, scope: { user_id: 'u1' } })), [u1.facts[0].fact_cid]);
        }));
    });

    describe('cells and stats', () => {
      it('lists bands at a cell', () =>
        withStore(async (store) => {
          await store.append(
            makeBatch([
              makeFact({ cell: HERE, band: NDVI, tslot: 1, value: 0.1 }),
              makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 9 }),
              makeFact({ cell: HERE, band: NDVI, tslot: 2, value: 0.2 }),
            ]),
          );
          assert.deepEqual(await store.bandsAt(HERE), [ELEV, NDVI]);
          assert.deepEqual(await store.bandsAt(PARIS), []);
        }));

      it('lists cells by prefix, capped, with an honest truncated flag', () =>
        withStore(async (store) => {
          const cells = [HERE, NORTH, EAST, PARIS];
          // Several facts per cell: the cap counts cells, not facts.
          await store.append(makeBatch(cells.flatMap((cell) => [ELEV, NDVI].map((band) => makeFact({ cell, band, tslot: 0, value: 1 })))));
          const london = [HERE, NORTH, EAST].sort();
          const prefix = 'defi.zb649.';
          assert.deepEqual(await store.cellsWithPrefix(prefix, 10), { cells: london, truncated: false });
          assert.deepEqual(await store.cellsWithPrefix(prefix, 3), { cells: london, truncated: false });
          assert.deepEqual(await store.cellsWithPrefix(prefix, 2), { cells: london.slice(0, 2), truncated: true });
          assert.deepEqual(await store.cellsWithPrefix('defi.', 100), { cells: [...cells].sort(), truncated: false });
          assert.deepEqual(await store.cellsWithPrefix('zzzz', 5), { cells: [], truncated: false });
          assert.deepEqual(await store.cellsWithPrefix(HERE, 5), { cells: [HERE], truncated: false });
        }));

      it('lists only the cells a scope can see when asked for one: private facts do not show on a public walk', () =>
        withStore(async (store) => {
          // HERE: public; NORTH: only alice's; EAST: public and bob's; PARIS: only bob's.
          await store.append(
            makeBatch([
              makeFact({ cell: HERE, band: NDVI, tslot: 1, value: 0.1 }),
              makeFact({ cell: NORTH, band: NDVI, tslot: 1, value: 0.2, scope: { user_id: 'alice' } }),
              makeFact({ cell: EAST, band: NDVI, tslot: 1, value: 0.3 }),
              makeFact({ cell: EAST, band: ELEV, tslot: 0, value: 4, scope: { user_id: 'bob' } }),
              makeFact({ cell: PARIS, band: ELEV, tslot: 0, value: 5, scope: { user_id: 'bob' } }),
            ]),
          );
          const sorted = (xs: string[]) => [...xs].sort();
          assert.deepEqual(await store.cellsWithPrefix('defi.', 100), { cells: sorted([HERE, NORTH, EAST, PARIS]), truncated: false }, 'no scope argument: every cell');
          assert.deepEqual(await store.cellsWithPrefix('defi.', 100, null), { cells: sorted([HERE, EAST]), truncated: false });
          assert.deepEqual(await store.cellsWithPrefix('defi.', 100, { user_id: 'bob' }), { cells: sorted([EAST, PARIS]), truncated: false });
          assert.deepEqual(await store.cellsWithPrefix('defi.', 100, { user_id: 'alice' }), { cells: [NORTH], truncated: false });
          assert.deepEqual(await store.cellsWithPrefix('defi.', 100, { user_id: 'carol' }), { cells: [], truncated: false });
          assert.deepEqual(await store.cellsWithPrefix('defi.', 1, null), { cells: sorted([HERE, EAST]).slice(0, 1), truncated: true });
          assert.deepEqual(await store.cellsWithPrefix('defi.zb649.', 100, { user_id: 'bob' }), { cells: [EAST], truncated: false });
        }));

      it('counts facts, cells, bands and log entries', () =>
        withStore(async (store) => {
          assert.deepEqual(await store.stats(), { facts: 0, cells: 0, subjects: 0, bands: 0, log_size: 0 });
          await store.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 }), makeFact({ cell: NORTH, band: NDVI, tslot: 0, value: 1 })]));
          await store.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 2, signed_at: '2026-02-01T00:00:00Z' })]));
          assert.deepEqual(await store.stats(), { facts: 3, cells: 2, subjects: 0, bands: 2, log_size: 2 });
        }));

      it('counts a record anchored on a subject (svc:entity:…) as a subject, never as a cell', () =>
        withStore(async (store) => {
          await store.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 }), makeFact({ cell: 'svc:entity:note-anchor-1', band: NDVI, tslot: 0, value: 1 })]));
          assert.deepEqual(await store.stats(), { facts: 2, cells: 1, subjects: 1, bands: 2, log_size: 1 });
        }));

      it('counts public facts only: a scope moves the log size, never the fact, cell or band counts', () =>
        withStore(async (store) => {
          await store.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 })]));
          const before = await store.stats();
          assert.deepEqual(before, { facts: 1, cells: 1, subjects: 0, bands: 1, log_size: 1 });
          // A new cell, a new band and another version at a public cell, all in a scope.
          await store.append(
            makeBatch([makeFact({ cell: PARIS, band: NDVI, tslot: 0, value: 0.2, scope: { org_id: 'acme' } }), makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 2, scope: { org_id: 'acme' } })]),
          );
          assert.deepEqual(await store.stats(), { ...before, log_size: 2 });
        }));

      it("counts public facts per attester, never a scope's", () =>
        withStore(async (store) => {
          assert.deepEqual(await store.publicFactsByAttester(), []);
          const mine = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 }), makeFact({ cell: NORTH, band: ELEV, tslot: 0, value: 1 })]);
          await store.append(mine);
          // The store trusts the write path's checks: another key's batch is simulated by its attester field.
          await store.append({ ...makeBatch([makeFact({ cell: EAST, band: ELEV, tslot: 0, value: 5 })]), attester: 'other-attester' });
          await store.append(makeBatch([makeFact({ cell: PARIS, band: ELEV, tslot: 0, value: 9, scope: { user_id: 'secret' } })]));
          assert.deepEqual(await store.publicFactsByAttester(), [
            { attester: mine.attester, facts: 2 },
            { attester: 'other-attester', facts: 1 },
          ]);
        }));

      it('counts the facts first stored per attester and UTC day; duplicates add nothing', () => {
        const clock = steppingClock('2026-03-01T23:59:58Z');
        return withStore(
          async (store) => {
            const a = makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 });
            const b = makeFact({ cell: NORTH, band: ELEV, tslot: 0, value: 2 });
            const first = makeBatch([a, b]);
            const attester = first.attester;
            assert.equal(await store.attesterFactsOn(attester, '2026-03-01'), 0);
            await store.append(first);
            assert.equal(await store.attesterFactsOn(attester, '2026-03-01'), 2);
            await store.append(makeBatch([a, b])); // all duplicates: no entry
            await store.append(makeBatch([a, makeFact({ cell: EAST, band: ELEV, tslot: 0, value: 3 })])); // one new
            assert.equal(await store.attesterFactsOn(attester, '2026-03-01'), 3);
            clock.advance(5); // past UTC midnight
            await store.append(makeBatch([makeFact({ cell: PARIS, band: ELEV, tslot: 0, value: 4 })]));
            assert.equal(await store.attesterFactsOn(attester, '2026-03-02'), 1);
            assert.equal(await store.attesterFactsOn(attester, '2026-03-01'), 3);
            assert.equal(await store.attesterFactsOn('someone-else', '2026-03-02'), 0);
            await assert.rejects(store.attesterFactsOn(attester, '2026-3-2'), RangeError);
          },
          { now: clock.now },
        );
      });
    });

    describe('scope claims', () => {
      const RESPONDER = 'the-responder-key';
      const claims = (store: Store) => {
        return store.claimScope.bind(store);
      };

      it('records the first claimant of a scope and never changes it; each exact four-tuple is its own scope', () =>
        withStore(async (store) => {
          const claim = claims(store);
          assert.equal(await claim({ org_id: 'acme' }, null, RESPONDER), null, 'looking does not claim');
          assert.equal(await claim({ org_id: 'acme' }, 'key-a', RESPONDER), 'key-a');
          assert.equal(await claim({ org_id: 'acme' }, 'key-b', RESPONDER), 'key-a', 'a second claimant gets the owner back');
          assert.equal(await claim({ org_id: 'acme' }, null, RESPONDER), 'key-a');
          assert.equal(await claim({ org_id: 'acme', user_id: 'u1' }, 'key-b', RESPONDER), 'key-b');
          await assert.rejects(claim({}, 'key-a', RESPONDER), TypeError);
        }));

      it('gives racing claimants one owner', () =>
        withStore(async (store) => {
          const claim = claims(store);
          const got = await Promise.all(Array.from({ length: 12 }, (_, i) => claim({ user_id: 'race' }, `key-${i}`, RESPONDER)));
          assert.equal(new Set(got).size, 1);
          assert.match(got[0]!, /^key-\d+$/);
        }));

      it('falls back to the first writer of a scope written before its claim was recorded, passing over the excluded key', () =>
        withStore(async (store) => {
          const claim = claims(store);
          // The responder materialized first, then a tenant key wrote: the tenant owns it.
          await store.append({ ...makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1, scope: { org_id: 'old' } })]), attester: RESPONDER });
          await store.append({ ...makeBatch([makeFact({ cell: NORTH, band: ELEV, tslot: 0, value: 2, scope: { org_id: 'old' } })]), attester: 'tenant' });
          await store.append({ ...makeBatch([makeFact({ cell: EAST, band: ELEV, tslot: 0, value: 3, scope: { org_id: 'old' } })]), attester: 'latecomer' });
          assert.equal(await claim({ org_id: 'old' }, 'latecomer', RESPONDER), 'tenant');
          // Only the excluded key wrote it: nobody can claim it (its facts were minted for a reader unknown now).
          await store.append({ ...makeBatch([makeFact({ cell: PARIS, band: ELEV, tslot: 0, value: 4, scope: { org_id: 'orphan' } })]), attester: RESPONDER });
          assert.equal(await claim({ org_id: 'orphan' }, 'anyone', RESPONDER), null);
          assert.equal(await claim({ org_id: 'orphan' }, null, RESPONDER), null);
        }));
    });

    describe('proofs', () => {
      it('serves per-fact proofs that reach the batch root', () =>
        withStore(async (store) => {
          const batch = makeBatch(Array.from({ length: 5 }, (_, i) => makeFact({ cell: HERE, band: `test.b${i}`, tslot: 0, value: i })));
          await store.append(batch);
          for (const f of batch.facts) {
            const got = (await store.getFact(f.fact_cid))!;
            const proof = proofFromJson(got.proof);
            const leaf = b32decode(got.fact_cid, 32);
            assert.ok(verifyBatchProof(leaf, proof), `proof of ${got.fact_cid}`);
            assert.ok(equalBytes(batchRootFromProof(leaf, proof.index, proof.siblings), batch.batch_root));
            assert.deepEqual(got.proof, f.proof, 'the stored proof is the one the write path computed');
          }
        }));

      it('logs each batch as an entry whose inclusion proof verifies against the log root', () =>
        withStore(async (store) => {
          const batches = [0, 1, 2].map((i) => makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: i, value: i })]));
          const results = [];
          for (const b of batches) results.push(await store.append(b));
          const size = await store.log.size();
          assert.equal(size, 3);
          const root = await store.log.root(size);
          for (const [i, r] of results.entries()) {
            const entry = (await store.log.entry(r.log_index))!;
            const decoded = decodeLogEntry(entry);
            assert.deepEqual(decoded.facts, [batches[i].facts[0].body]);
            assert.ok(equalBytes(decoded.batch_root, batches[i].batch_root));
            assert.equal(decoded.accepted_at, r.accepted_at);
            const proof = await store.log.inclusionProof(r.log_index, size);
            assert.ok(verifyInclusion(r.log_index, size, leafHash(entry), proof, root), `inclusion of entry ${r.log_index}`);
          }
          const sth = await store.log.latestTreeHead();
          assert.equal(sth.tree_size, 3);
        }));
    });

    describe('rejected appends', () => {
      it('leaves log and index unchanged when the durable write fails', () => {
        let failing = false;
        return withStore(
          async (store) => {
            await store.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 })]));
            const before = await store.stats();
            const rootBefore = await store.log.root();
            const bad = makeBatch([makeFact({ cell: NORTH, band: ELEV, tslot: 0, value: 2 })]);
            failing = true;
            await assert.rejects(store.append(bad));
            failing = false;
            assert.deepEqual(await store.stats(), before);
            assert.ok(equalBytes(await store.log.root(), rootBefore));
            assert.equal(await store.getFact(bad.facts[0].fact_cid), null);
            assert.deepEqual(await store.latest({ cell: NORTH }), []);
            const ok = await store.append(bad);
            assert.equal(ok.log_index, 1, 'the failed write consumed no log index');
            assert.ok(await store.getFact(bad.facts[0].fact_cid));
          },
          { failLogAppend: () => failing },
        );
      });

      it('refuses a batch whose facts do not hash into batch_root, before the log', () =>
        withStore(async (store) => {
          const batch = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 }), makeFact({ cell: HERE, band: NDVI, tslot: 0, value: 2 })]);
          const tampered = { ...batch, batch_root: new Uint8Array(32).fill(1) };
          await assert.rejects(store.append(tampered), (e: unknown) => e instanceof SvcError && e.code === 'bad_merkle_proof');
          const wrongCid = { ...batch, facts: [{ ...batch.facts[0], fact_cid: batch.facts[1].fact_cid }, batch.facts[1]] };
          await assert.rejects(store.append(wrongCid), (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument');
          await assert.rejects(store.append({ ...batch, facts: [] }), (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument');
          assert.equal(await store.log.size(), 0);
          assert.deepEqual(await store.stats(), { facts: 0, cells: 0, subjects: 0, bands: 0, log_size: 0 });
        }));
    });

    describe('witnesses', () => {
      it('persists co-signatures once per (tree_size, witness)', () =>
        withStore(async (store) => {
          const w = { tree_size: 1, root: 'r'.repeat(52), witness: 'w'.repeat(52), signature: 's'.repeat(103), operator: 'op-a', received_at: '2026-03-01T00:00:00Z' };
          await store.addWitness(w);
          await store.addWitness({ ...w, received_at: '2026-03-02T00:00:00Z' });
          await store.addWitness({ ...w, witness: 'x'.repeat(52), operator: 'op-b' });
          const all = await store.witnesses();
          assert.equal(all.length, 2);
          assert.deepEqual(all[0], w);
        }));
    });
  });
}
