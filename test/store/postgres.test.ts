/**
 * The PostgreSQL driver: the shared contract suite in a fresh schema per test, then what only
 * this driver has: the log in log_entries/log_nodes (roots and proofs against the in-memory
 * reference), group commit, and two stores sharing one schema.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { b32decode, b32encode } from '../../src/protocol/base32.js';
import { equalBytes } from '../../src/protocol/bytes.js';
import { cellOf } from '../../src/protocol/cell64.js';
import { anchorId, factCid } from '../../src/protocol/cid.js';
import { verifyStrict } from '../../src/protocol/ed25519.js';
import { blake3 } from '../../src/protocol/hash.js';
import { proofFromJson, verifyBatchProof } from '../../src/protocol/merkle-batch.js';
import { consistencyProof, inclusionProof, leafHash, memoryNodeSource, treeRoot, verifyConsistency, verifyInclusion } from '../../src/protocol/log-tree.js';
import { sthDigest } from '../../src/protocol/tree-head.js';
import type { Store } from '../../src/store/contract.js';
import { decodeLogEntry } from '../../src/store/entry.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SCHEMA_VERSION } from '../../src/store/postgres/schema.js';
import { runContractSuite } from './contract-suite.js';
import { runMemoryContractSuite } from './memory-contract-suite.js';
import { makeBatch, makeFact, steppingClock, testSigner } from './support/facts.js';
import { openPgStore, pgConfig, pgQuery, pgSkip, pgUrl } from './support/pg-env.js';
import { searchText } from './support/note-search.js';

const signer = testSigner();
const HERE = cellOf(51.5, -0.12);
const ELEV = 'copdem30m.elevation_mean';

const single = (i: number, extra: { band?: string; signed_at?: string } = {}) =>
  makeBatch([makeFact({ cell: HERE, band: extra.band ?? `test.b${i}`, tslot: 0, value: i, signed_at: extra.signed_at })], { sign: false });

/** A memory record body (band memory.*), filed under the svc:entity: subject of its value. */
const record = (band: string, value: Record<string, unknown>) => makeFact({ cell: `svc:entity:${anchorId(value)}`, band, tslot: 0, value, unit: 'record' });
const curated = (bodies: Record<string, unknown>[], seed?: Uint8Array) => makeBatch(bodies, { provenance_class: 'human_curated', sign: false, ...(seed ? { attesterSeed: seed } : {}) });
const unix = (iso: string) => Date.parse(iso) / 1000;

/** Everything the memory index answers about the records `memoryFixture` writes. */
async function memorySnapshot(store: Store, plot: string) {
  return {
    notes: await store.memory.searchNotes({ scope: null, limit: 100 }),
    ranked: await searchText(store, { scope: null, text: 'paddock gate', limit: 100 }),
    edges: await store.memory.edges({ scope: null, record: plot, direction: 'both', limit: 100 }),
    aliases: await store.memory.aliases({ scope: null, text: 'plot seven', limit: 100 }),
    derived: await store.memory.derivedBy({ scope: null, attester: curated([record('memory.note', { text: 'x' })]).attester, limit: 100 }),
    slots: await store.memory.sharedSlots({ scope: null, limit: 100 }),
  };
}

/** Notes, exclusive edges, an alias, a derivative and a shared slot; returns the plot's entity id. */
async function memoryFixture(store: Store): Promise<string> {
  const plot = anchorId({ n: 'plot 7' });
  await store.append(curated([record('memory.note', { text: 'gate left open at the east paddock', tags: ['gate'] }), record('memory.alias', { entity: plot, phrase: 'plot seven' })]));
  await store.append(curated([record('memory.edge', { type: 'part_of', from: plot, to: anchorId({ n: 'X' }), valid_from: '2026-01-01T00:00:00Z' })]));
  await store.append(curated([record('memory.edge', { type: 'part_of', from: plot, to: anchorId({ n: 'Y' }), valid_from: '2026-06-01T00:00:00Z' })]));
  const p1 = makeFact({ cell: HERE, band: 'indices.ndvi', tslot: 1, value: 0.5 });
  await store.append(makeBatch([p1], { sign: false }));
  const p2 = makeFact({ cell: HERE, band: 'indices.ndvi', tslot: 1, value: 0.4, signed_at: '2026-01-02T00:00:00Z' });
  await store.append(makeBatch([p2], { sign: false, attesterSeed: new Uint8Array(32).fill(11) }));
  const d = { ...makeFact({ cell: HERE, band: 'derived.delta', tslot: 0, value: -0.1, kind: 'derivative' }), derivation: { fn: 'nd.delta@1', parents: [factCid(p1), factCid(p2)] } };
  await store.append(curated([d, record('memory.note', { text: 'paddock gate mended' })]));
  return plot;
}

/** Leaf hashes of every entry, read back through the LogReader. */
async function leavesOf(store: Store): Promise<Uint8Array[]> {
  const n = await store.log.size();
  const out: Uint8Array[] = [];
  for (let i = 0; i < n; i++) out.push(leafHash((await store.log.entry(i))!));
  return out;
}

describe('postgres store', { skip: pgSkip }, () => {
  it('reaches the server named by SVC_TEST_DATABASE_URL', async () => {
    const [r] = await pgQuery<{ one: number }>('SELECT 1 AS one', [], pgUrl());
    assert.equal(r.one, 1);
  });

  runContractSuite('postgres', (opts = {}) => openPgStore(signer, { now: opts.now, failCommit: opts.failLogAppend }));
  runMemoryContractSuite('postgres', (opts = {}) => openPgStore(signer, { now: opts.now, failCommit: opts.failLogAppend }));

  describe('log in log_entries and log_nodes', () => {
    it('matches the in-memory reference tree for every size 1..40', async () => {
      const { store, schema, cleanup } = await openPgStore(signer);
      try {
        const leaves: Uint8Array[] = [];
        const ref = memoryNodeSource(leaves);
        for (let n = 1; n <= 40; n++) {
          const res = await store.append(single(n));
          assert.equal(res.log_index, n - 1);
          leaves.push(leafHash((await store.log.entry(n - 1))!));
          const root = await store.log.root(n);
          assert.ok(equalBytes(root, treeRoot(ref, n)), `root of size ${n}`);
          assert.ok(equalBytes(await store.log.root(), root), `root() at size ${n}`);
          for (let i = 0; i < n; i++) {
            const p = await store.log.inclusionProof(i, n);
            assert.deepEqual(p, inclusionProof(ref, i, n), `inclusion ${i} in ${n}`);
            assert.ok(verifyInclusion(i, n, leaves[i], p, root), `verify inclusion ${i} in ${n}`);
          }
          for (let m = 0; m <= n; m++) {
            const p = await store.log.consistencyProof(m, n);
            assert.deepEqual(p, consistencyProof(ref, m, n), `consistency ${m} -> ${n}`);
            if (m > 0) assert.ok(verifyConsistency(m, n, treeRoot(ref, m), root, p), `verify consistency ${m} -> ${n}`);
          }
        }
        // Every perfect subtree is stored, once, with the reference hash.
        const nodes = await pgQuery<{ level: number; idx: string; hash: Buffer }>(`SELECT level, idx, hash FROM "${schema}".log_nodes ORDER BY level, idx`);
        let expected = 0;
        for (let l = 0; 2 ** l <= 40; l++) expected += Math.floor(40 / 2 ** l);
        assert.equal(nodes.length, expected);
        for (const r of nodes) assert.ok(equalBytes(new Uint8Array(r.hash), ref.node(r.level, Number(r.idx))), `node (${r.level}, ${r.idx})`);
        // A second store on the schema (cold caches) serves the same proofs.
        const other = await createPostgresStore(pgConfig(), signer, { schema, logger: () => undefined });
        try {
          assert.ok(equalBytes(await other.log.root(), treeRoot(ref, 40)));
          assert.deepEqual(await other.log.inclusionProof(17, 33), inclusionProof(ref, 17, 33));
          assert.deepEqual(await other.log.consistencyProof(13, 40), consistencyProof(ref, 13, 40));
        } finally {
          await other.close();
        }
      } finally {
        await cleanup();
      }
    });

    it('refuses sizes beyond the log and finds entries by leaf hash or entry hash', async () => {
      const { store, cleanup } = await openPgStore(signer);
      try {
        for (let i = 0; i < 3; i++) await store.append(single(i));
        await assert.rejects(store.log.root(4), RangeError);
        await assert.rejects(store.log.inclusionProof(0, 4), RangeError);
        await assert.rejects(store.log.inclusionProof(3, 3), RangeError);
        await assert.rejects(store.log.consistencyProof(1, 4), RangeError);
        assert.equal(await store.log.entry(3), null);
        assert.equal(await store.log.entry(-1), null);
        const e1 = (await store.log.entry(1))!;
        assert.equal(await store.log.leafIndexOf(leafHash(e1)), 1);
        assert.equal(await store.log.leafIndexOf(blake3(e1)), 1);
        assert.equal(await store.log.leafIndexOf(new Uint8Array(32)), null);
      } finally {
        await cleanup();
      }
    });

    it('signs tree heads that verify, re-signing only when the size moves', async () => {
      const clock = steppingClock();
      const { store, cleanup } = await openPgStore(signer, { now: clock.now });
      try {
        await store.append(single(0));
        const a = await store.log.latestTreeHead();
        clock.advance(30);
        const b = await store.log.latestTreeHead();
        assert.deepEqual(b, a, 'cached while the size is unchanged');
        await store.append(single(1));
        const c = await store.log.latestTreeHead();
        assert.equal(c.tree_size, 2);
        assert.notEqual(c.signed_at, a.signed_at);
        for (const sth of [a, c]) {
          const root = b32decode(sth.root, 32);
          assert.ok(equalBytes(root, await store.log.root(sth.tree_size)));
          const digest = sthDigest(sth.tree_size, root, sth.signed_at, signer.publicKey);
          assert.ok(verifyStrict(b32decode(sth.signature, 64), digest, signer.publicKey), `STH of size ${sth.tree_size}`);
          assert.equal(sth.responder, b32encode(signer.publicKey));
        }
      } finally {
        await cleanup();
      }
    });
  });

  describe('group commit', () => {
    it('resolves concurrent appends with dense indices, each naming its own entry', async () => {
      const { store, cleanup } = await openPgStore(signer);
      try {
        const batches = Array.from({ length: 64 }, (_, i) => single(i));
        const results = await Promise.all(batches.map((b) => store.append(b)));
        assert.deepEqual(
          results.map((r) => r.log_index).sort((x, y) => x - y),
          Array.from({ length: 64 }, (_, i) => i),
        );
        for (const [i, r] of results.entries()) {
          const entry = decodeLogEntry((await store.log.entry(r.log_index))!);
          assert.deepEqual(entry.facts, [batches[i].facts[0].body], `entry ${r.log_index}`);
          assert.equal(r.tree_size, r.log_index + 1);
          assert.equal((await store.getFact(batches[i].facts[0].fact_cid))!.log_index, r.log_index);
        }
        const leaves = await leavesOf(store);
        assert.ok(equalBytes(await store.log.root(), treeRoot(memoryNodeSource(leaves), 64)));
      } finally {
        await cleanup();
      }
    });

    it('dedupes and supersedes in log order within one group', async () => {
      const { store, cleanup } = await openPgStore(signer);
      try {
        const v1 = single(0, { band: ELEV, signed_at: '2026-01-01T00:00:00Z' });
        const v2 = single(0, { band: ELEV, signed_at: '2026-01-02T00:00:00Z' });
        const [r1, r2, r1again] = await Promise.all([store.append(v1), store.append(v2), store.append(v1)]);
        assert.deepEqual([r1.log_index, r2.log_index], [0, 1]);
        assert.equal(r1again.log_index, 0, 'an all-duplicate batch reports the first placement');
        assert.deepEqual(r1again.duplicates, [v1.facts[0].fact_cid]);
        assert.equal(await store.log.size(), 2);
        assert.equal((await store.getFact(v2.facts[0].fact_cid))!.supersedes, v1.facts[0].fact_cid);
        assert.deepEqual(
          (await store.latest({ cell: HERE })).map((f) => f.fact_cid),
          [v2.facts[0].fact_cid],
        );
      } finally {
        await cleanup();
      }
    });
  });

  describe('reads', () => {
    it('orders bands and cells by bytes, whatever the server collation', async () => {
      const { store, cleanup } = await openPgStore(signer);
      try {
        const bands = ['a.lower', 'B.upper', 'b.lower', '_x'];
        await store.append(
          makeBatch(
            bands.map((band) => makeFact({ cell: HERE, band, tslot: 0, value: 1 })),
            { sign: false },
          ),
        );
        const sorted = [...bands].sort();
        assert.deepEqual(await store.bandsAt(HERE), sorted);
        assert.deepEqual(
          (await store.latest({ cell: HERE })).map((f) => f.band),
          sorted,
        );
        assert.deepEqual(
          (await store.history({ cell: HERE })).map((f) => f.band),
          bands,
          'history is in version order, not band order',
        );
      } finally {
        await cleanup();
      }
    });

    it('caps cellsWithPrefix at the deployment scan limit', async () => {
      const { store, cleanup } = await openPgStore(signer, { config: { scanCellLimit: 2 } });
      try {
        const cells = [0, 1, 2].map((i) => cellOf(51.5 + i * 0.001, -0.12));
        await store.append(
          makeBatch(
            cells.map((cell) => makeFact({ cell, band: ELEV, tslot: 0, value: 1 })),
            { sign: false },
          ),
        );
        const got = await store.cellsWithPrefix('', 10);
        assert.deepEqual(got, { cells: [...cells].sort().slice(0, 2), truncated: true });
        await assert.rejects(store.cellsWithPrefix('', -1), RangeError);
      } finally {
        await cleanup();
      }
    });
  });

  describe('memory index', () => {
    it('closes edges within one group exactly as one batch at a time would', async () => {
      const groups: number[] = [];
      const { store, cleanup } = await openPgStore(signer, { onCommit: (c) => groups.push(c.batches) });
      try {
        const plot = anchorId({ n: 'plot' });
        const [x, y, z] = ['X', 'Y', 'Z'].map((n) => anchorId({ n }));
        // Learned late: the June sale is logged before the January purchase, in the same group.
        const june = record('memory.edge', { type: 'part_of', from: plot, to: y, valid_from: '2026-06-01T00:00:00Z' });
        const jan = record('memory.edge', { type: 'part_of', from: plot, to: x, valid_from: '2026-01-01T00:00:00Z' });
        const seen = record('memory.edge', { type: 'observed_with', from: plot, to: z, valid_from: '2026-01-01T00:00:00Z' });
        const unseen = record('memory.edge', { type: 'related_to', from: plot, to: z, valid_from: '2026-03-01T00:00:00Z', invalidates: [factCid(seen)] });
        const results = await Promise.all([june, jan, seen, unseen].map((e) => store.append(curated([e]))));
        assert.deepEqual(groups, [4], 'one transaction');
        assert.deepEqual(
          results.map((r) => r.log_index),
          [0, 1, 2, 3],
        );
        const all = await store.memory.edges({ scope: null, record: plot, direction: 'out', limit: 10 });
        const byCid = new Map(all.map((e) => [e.edge_cid, e]));
        assert.equal(byCid.get(factCid(jan))!.closed_at, unix('2026-06-01T00:00:00Z'));
        assert.equal(byCid.get(factCid(jan))!.closed_by, factCid(june));
        assert.equal(byCid.get(factCid(june))!.closed_at, null);
        assert.equal(byCid.get(factCid(seen))!.closed_at, unix('2026-03-01T00:00:00Z'));
        assert.equal(byCid.get(factCid(seen))!.closed_by, factCid(unseen));
        assert.deepEqual(
          all.map((e) => e.valid_from),
          [...all.map((e) => e.valid_from)].sort((a, b) => a - b),
          'valid_from order',
        );
        const april = await store.memory.edges({ scope: null, record: plot, direction: 'out', valid_at: unix('2026-04-01T00:00:00Z'), limit: 10 });
        assert.deepEqual(april.map((e) => e.to).sort(), [x, z].sort());
        // Fractional seconds bound the integer columns exactly: just before the sale, X holds.
        const justBefore = await store.memory.edges({ scope: null, record: plot, direction: 'out', kinds: ['part_of'], valid_at: unix('2026-06-01T00:00:00Z') - 0.5, limit: 10 });
        assert.deepEqual(
          justBefore.map((e) => e.to),
          [x],
        );
        assert.deepEqual(await store.memory.searchNotes({ scope: null, observed_from: 1.5, observed_to: 1e300, limit: 1 }), []);
      } finally {
        await cleanup();
      }
    });

    it('rolls back with the facts: a failed transaction leaves no memory rows', async () => {
      let failing = true;
      const { store, cleanup } = await openPgStore(signer, { failCommit: () => failing });
      try {
        const n = record('memory.note', { text: 'rolled back note' });
        await assert.rejects(store.append(curated([n])));
        assert.deepEqual(await searchText(store, { scope: null, text: 'note', limit: 5 }), []);
        failing = false;
        await store.append(curated([n]));
        assert.deepEqual(
          (await searchText(store, { scope: null, text: 'note', limit: 5 })).map((h) => h.fact_cid),
          [factCid(n)],
        );
        // A duplicate indexes nothing twice.
        await store.append(curated([n]));
        assert.equal((await store.memory.searchNotes({ scope: null, limit: 5 })).length, 1);
      } finally {
        await cleanup();
      }
    });

    it("finds a common term's newest matches by walking the scope's newest notes exactly as through its postings", async () => {
      const { store, cleanup } = await openPgStore(signer);
      try {
        // 2 400 notes: "gate" in every other one, tag "north" on every third, "rare" in five.
        const notes = Array.from({ length: 2400 }, (_, i) =>
          record('memory.note', { text: `${i % 2 === 0 ? 'gate' : 'fence'} number ${i}${i % 500 === 7 ? ' rare' : ''}`, tags: [i % 3 === 0 ? 'north' : 'south'] }),
        );
        for (let i = 0; i < notes.length; i += 400) await store.append(curated(notes.slice(i, i + 400)));
        const stats = await store.memory.noteStats({ scope: null, terms: ['gate', '#north'] });
        assert.equal(stats.notes, 2400);
        assert.equal(stats.df[0], 1200);
        const seqs = (c: { seq: number }[]) => c.map((x) => x.seq).sort((a, b) => a - b);
        for (const [tags, cap] of [
          [undefined, 40],
          [['north'], 40],
          [['north'], 500],
          [['south', 'north'], 10],
        ] as const) {
          const q = { scope: null, terms: ['gate'], per_term: [cap], limit: 1, ...(tags ? { tags: [...tags] } : {}) };
          const postings = await store.memory.noteCandidates(q);
          const walked = await store.memory.noteCandidates({ ...q, hint: { df: [1200], notes: 2400 } });
          assert.deepEqual(seqs(walked), seqs(postings), `tags ${tags} cap ${cap}`);
          assert.equal(postings.length, tags?.length === 2 ? 0 : Math.min(cap, tags ? 400 : 1200));
        }
        // A wrong hint changes nothing either.
        const q = { scope: null, terms: ['rare'], per_term: [3], limit: 1 };
        assert.deepEqual(seqs(await store.memory.noteCandidates({ ...q, hint: { df: [2000], notes: 2400 } })), seqs(await store.memory.noteCandidates(q)));
      } finally {
        await cleanup();
      }
    });

    it('indexes text PostgreSQL cannot hold (NUL) without it, rather than failing the write', async () => {
      const { store, cleanup } = await openPgStore(signer);
      try {
        const n = record('memory.note', { text: 'valve\u0000 stuck open', tags: ['va\u0000lve'] });
        const a = record('memory.alias', { entity: anchorId({ n: 'v' }), phrase: 'the\u0000 old valve' });
        await store.append(curated([n, a]));
        const hits = await searchText(store, { scope: null, text: 'valve', tags: ['valve'], limit: 5 });
        assert.deepEqual(
          hits.map((h) => h.fact_cid),
          [factCid(n)],
        );
        assert.deepEqual(
          (await store.memory.aliases({ scope: null, text: 'old valve', limit: 5 })).map((h) => h.fact_cid),
          [factCid(a)],
        );
        // Nor does a NUL in a caller's filter fail the read: it finds nothing.
        assert.deepEqual(await store.memory.searchNotes({ scope: null, entity: 'x\u0000', authors: ['\u0000'], limit: 5 }), []);
        assert.deepEqual(await store.memory.edges({ scope: null, record: '\u0000', direction: 'both', kinds: ['a\u0000'], limit: 5 }), []);
        assert.deepEqual(await store.memory.sharedSlots({ scope: null, cells: ['\u0000'], limit: 5 }), []);
      } finally {
        await cleanup();
      }
    });

    it('is built from the stored facts when a version-1 schema is opened, and its notes again from a version-2 one', async () => {
      const { store, schema, cleanup } = await openPgStore(signer);
      let reopened: Store | undefined;
      try {
        const plot = await memoryFixture(store);
        const before = await memorySnapshot(store, plot);
        assert.equal(before.notes.length, 2);
        assert.equal(before.edges.length, 2);
        assert.equal(before.edges[0].closed_by, before.edges[1].edge_cid);
        assert.equal(before.derived.length, 1);
        assert.equal(before.slots.length, 1);
        await store.close();
        await pgQuery(
          `DROP TABLE "${schema}".mem_notes, "${schema}".mem_note_df, "${schema}".mem_note_stats, "${schema}".mem_aliases, "${schema}".mem_edges, "${schema}".mem_edge_closures, "${schema}".mem_derivations, "${schema}".shared_slots`,
        );
        await pgQuery(`UPDATE "${schema}".meta SET value = '1' WHERE key = 'schema_version'`);
        reopened = await createPostgresStore(pgConfig(), signer, { schema, logger: () => undefined });
        assert.deepEqual(await memorySnapshot(reopened, plot), before);
        const [v] = await pgQuery<{ value: string }>(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
        assert.equal(v.value, String(SCHEMA_VERSION));
        await reopened.close();
        // A version-2 schema: notes in another shape (here: none) and no term statistics; the
        // other memory tables stay. Its notes are projected again, nothing else twice.
        await pgQuery(`DROP TABLE "${schema}".mem_notes, "${schema}".mem_note_df, "${schema}".mem_note_stats`);
        await pgQuery(`CREATE TABLE "${schema}".mem_notes (fact_cid text PRIMARY KEY, text text)`);
        await pgQuery(`UPDATE "${schema}".meta SET value = '2' WHERE key = 'schema_version'`);
        reopened = await createPostgresStore(pgConfig(), signer, { schema, logger: () => undefined });
        assert.deepEqual(await memorySnapshot(reopened, plot), before);
        await reopened.close();
        // A version-3 schema: notes keyed by bare terms, with their term counts. They are
        // projected again under scoped keys, and the counts are not doubled.
        const counts = () => pgQuery<{ term: string; df: string }>(`SELECT term, df FROM "${schema}".mem_note_df ORDER BY term`);
        const df = await counts();
        assert.ok(df.length > 0);
        await pgQuery(`ALTER TABLE "${schema}".mem_notes RENAME COLUMN keys TO terms`);
        await pgQuery(`UPDATE "${schema}".meta SET value = '3' WHERE key = 'schema_version'`);
        reopened = await createPostgresStore(pgConfig(), signer, { schema, logger: () => undefined });
        assert.deepEqual(await memorySnapshot(reopened, plot), before);
        assert.deepEqual(await counts(), df);
      } finally {
        await reopened?.close();
        await cleanup();
      }
    });
  });

  describe('proofs', () => {
    it('are kept once per entry, and a version-3 schema keeps serving its per-fact JSON proofs beside new facts', async () => {
      const { store, schema, cleanup } = await openPgStore(signer);
      let reopened: Store | undefined;
      try {
        const batch = makeBatch(Array.from({ length: 5 }, (_, i) => makeFact({ cell: HERE, band: `b.${i}`, tslot: 1, value: i })));
        await store.append(batch);
        const before = await Promise.all(batch.facts.map((f) => store.getFact(f.fact_cid)));
        // Each proof leads from the fact's digest to the batch root it was signed under.
        for (const f of before) {
          assert.ok(f);
          assert.equal(f.proof.root, b32encode(batch.batch_root));
          assert.ok(verifyBatchProof(b32decode(f.fact_cid, 32), proofFromJson(f.proof)));
        }
        const [row] = await pgQuery<{ leaves: number; tree: Buffer | null }>(`SELECT tree_leaves AS leaves, tree FROM "${schema}".log_entries`);
        assert.equal(row.leaves, 5);
        assert.ok(row.tree !== null);
        await store.close();
        // The same facts as version 3 stored them: a JSON proof per fact, no tree, no leaf column.
        for (const f of before) await pgQuery(`UPDATE "${schema}".facts SET proof_json = $1 WHERE fact_cid = $2`, [JSON.stringify(f!.proof), f!.fact_cid]);
        await pgQuery(`ALTER TABLE "${schema}".facts DROP COLUMN leaf, ALTER COLUMN proof_json SET NOT NULL`);
        await pgQuery(`ALTER TABLE "${schema}".log_entries DROP COLUMN tree, DROP COLUMN tree_leaves`);
        await pgQuery(`UPDATE "${schema}".meta SET value = '3' WHERE key = 'schema_version'`);
        reopened = await createPostgresStore(pgConfig(), signer, { schema, logger: () => undefined });
        const [v] = await pgQuery<{ value: string }>(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
        assert.equal(v.value, String(SCHEMA_VERSION));
        assert.deepEqual(await Promise.all(batch.facts.map((f) => reopened!.getFact(f.fact_cid))), before);
        // A newer version of one key, written after the upgrade: proven from its entry's tree.
        const next = makeBatch([makeFact({ cell: HERE, band: 'b.0', tslot: 1, value: 9, signed_at: '2026-05-01T00:00:00Z' })]);
        await reopened.append(next);
        const [fresh] = await reopened.history({ cell: HERE, scope: null, bands: ['b.0'] }).then((h) => h.slice(-1));
        assert.equal(fresh.fact_cid, next.facts[0].fact_cid);
        assert.equal(fresh.proof.root, b32encode(next.batch_root));
        assert.ok(verifyBatchProof(b32decode(fresh.fact_cid, 32), proofFromJson(fresh.proof)));
        const both = await reopened.history({ cell: HERE, scope: null, bands: ['b.0'] });
        assert.deepEqual(both[0], before[0]);
      } finally {
        await reopened?.close();
        await cleanup();
      }
    });
  });

  describe('two stores on one schema', () => {
    it('share one dense log whose transaction time never runs backwards', async () => {
      const ahead = steppingClock('2026-03-01T12:00:10Z');
      const behind = steppingClock('2026-03-01T12:00:00Z');
      const { store: a, schema, cleanup } = await openPgStore(signer, { now: ahead.now });
      const b = await createPostgresStore(pgConfig(), signer, { schema, now: behind.now, logger: () => undefined });
      try {
        const work = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).append(single(i)));
        const results = await Promise.all(work);
        assert.deepEqual(
          results.map((r) => r.log_index).sort((x, y) => x - y),
          Array.from({ length: 40 }, (_, i) => i),
        );
        const size = await b.log.size();
        assert.equal(size, 40);
        const leaves = await leavesOf(b);
        const root = treeRoot(memoryNodeSource(leaves), size);
        assert.ok(equalBytes(await a.log.root(), root));
        assert.ok(equalBytes(await b.log.root(), root));
        let last = '';
        for (let i = 0; i < size; i++) {
          const at = decodeLogEntry((await a.log.entry(i))!).accepted_at;
          assert.ok(at >= last, `accepted_at of entry ${i} (${at}) is not before ${last}`);
          last = at;
        }
      } finally {
        await b.close();
        await cleanup();
      }
    });

    it('see the memory records written through the other', async () => {
      const { store: a, schema, cleanup } = await openPgStore(signer);
      const b = await createPostgresStore(pgConfig(), signer, { schema, logger: () => undefined });
      try {
        const n = record('memory.note', { text: 'gate left open at the east paddock', tags: ['gate'] });
        await a.append(curated([n]));
        assert.deepEqual(
          (await searchText(b, { scope: null, text: 'paddock gate', limit: 5 })).map((h) => h.fact_cid),
          [factCid(n)],
        );
        // An exclusive edge written through b closes the one written through a.
        const plot = anchorId({ n: 'plot' });
        const e1 = record('memory.edge', { type: 'owned_by', from: plot, to: anchorId({ n: 'ann' }), valid_from: '2026-01-01T00:00:00Z' });
        const e2 = record('memory.edge', { type: 'owned_by', from: plot, to: anchorId({ n: 'bob' }), valid_from: '2026-05-01T00:00:00Z' });
        await a.append(curated([e1]));
        await b.append(curated([e2]));
        const seen = await a.memory.edges({ scope: null, record: plot, direction: 'out', limit: 5 });
        assert.deepEqual(
          seen.map((e) => [e.edge_cid, e.closed_by]),
          [
            [factCid(e1), factCid(e2)],
            [factCid(e2), null],
          ],
        );
      } finally {
        await b.close();
        await cleanup();
      }
    });
  });
});
