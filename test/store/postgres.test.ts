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
import { verifyStrict } from '../../src/protocol/ed25519.js';
import { blake3 } from '../../src/protocol/hash.js';
import {
  consistencyProof, inclusionProof, leafHash, memoryNodeSource, treeRoot, verifyConsistency, verifyInclusion,
} from '../../src/protocol/log-tree.js';
import { sthDigest } from '../../src/protocol/tree-head.js';
import type { Store } from '../../src/store/contract.js';
import { decodeLogEntry } from '../../src/store/entry.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { runContractSuite } from './contract-suite.js';
import { runMemoryContractSuite } from './memory-contract-suite.js';
import { makeBatch, makeFact, steppingClock, testSigner } from './support/facts.js';
import { openPgStore, pgConfig, pgQuery, pgSkip, pgUrl } from './support/pg-env.js';

const signer = testSigner();
const HERE = cellOf(51.5, -0.12);
const ELEV = 'copdem30m.elevation_mean';

const single = (i: number, extra: { band?: string; signed_at?: string } = {}) =>
  makeBatch([makeFact({ cell: HERE, band: extra.band ?? `test.b${i}`, tslot: 0, value: i, signed_at: extra.signed_at })], { sign: false });

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
        assert.deepEqual(results.map((r) => r.log_index).sort((x, y) => x - y), Array.from({ length: 64 }, (_, i) => i));
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
        assert.deepEqual((await store.latest({ cell: HERE })).map((f) => f.fact_cid), [v2.facts[0].fact_cid]);
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
        await store.append(makeBatch(bands.map((band) => makeFact({ cell: HERE, band, tslot: 0, value: 1 })), { sign: false }));
        const sorted = [...bands].sort();
        assert.deepEqual(await store.bandsAt(HERE), sorted);
        assert.deepEqual((await store.latest({ cell: HERE })).map((f) => f.band), sorted);
        assert.deepEqual((await store.history({ cell: HERE })).map((f) => f.band), bands, 'history is in version order, not band order');
      } finally {
        await cleanup();
      }
    });

    it('caps cellsWithPrefix at the deployment scan limit', async () => {
      const { store, cleanup } = await openPgStore(signer, { config: { scanCellLimit: 2 } });
      try {
        const cells = [0, 1, 2].map((i) => cellOf(51.5 + i * 0.001, -0.12));
        await store.append(makeBatch(cells.map((cell) => makeFact({ cell, band: ELEV, tslot: 0, value: 1 })), { sign: false }));
        const got = await store.cellsWithPrefix('', 10);
        assert.deepEqual(got, { cells: [...cells].sort().slice(0, 2), truncated: true });
        await assert.rejects(store.cellsWithPrefix('', -1), RangeError);
      } finally {
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
        assert.deepEqual(results.map((r) => r.log_index).sort((x, y) => x - y), Array.from({ length: 40 }, (_, i) => i));
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
  });
});
