/** The SQLite driver: the shared contract suite, then rebuild and crash recovery from the log. */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { b32decode } from '../../src/protocol/base32.js';
import { cellOf } from '../../src/protocol/cell64.js';
import { SvcError } from '../../src/protocol/errors.js';
import { isoSeconds } from '../../src/protocol/receipt.js';
import type { AppendBatch, AppendOnlyLog, Store, StoreConfig, StoredFact } from '../../src/store/contract.js';
import { encodeCanonical } from '../../src/protocol/cbor.js';
import { anchorId, factCid } from '../../src/protocol/cid.js';
import type { Scope } from '../../src/protocol/receipt.js';
import { decodeLogEntry, encodeLogEntry, factsFromEntry } from '../../src/store/entry.js';
import { cidKey } from '../../src/store/sqlite/tree-cache.js';
import { SCHEMA_VERSION } from '../../src/store/sqlite/schema.js';
import { createSqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite/sqlite-store.js';
import { runContractSuite, type MakeStore } from './contract-suite.js';
import { runMemoryContractSuite } from './memory-contract-suite.js';
import { entryOf, makeBatch, makeFact, mixedBatch, steppingClock, testSigner } from './support/facts.js';
import { logOpener, withFailingAppend } from './support/log-factory.js';
import { searchText } from './support/note-search.js';

const signer = testSigner();
const logs = await logOpener(signer, { segmentMaxBytes: 64 * 1024 });
const root = mkdtempSync(join(tmpdir(), 'svc-sqlite-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
let seq = 0;

const quiet = () => {};
const configFor = (dataDir: string): StoreConfig => ({ dataDir, scanCellLimit: 1000 });

async function open(dataDir: string, opts: SqliteStoreOptions & { failLogAppend?: () => boolean } = {}): Promise<{ store: Store; log: AppendOnlyLog }> {
  let log = await logs.open(join(dataDir, 'log'));
  if (opts.failLogAppend) log = withFailingAppend(log, opts.failLogAppend);
  try {
    const store = await createSqliteStore(configFor(dataDir), log, { logger: quiet, ...opts });
    return { store, log };
  } catch (err) {
    await log.close();
    throw err;
  }
}

const suiteStore: MakeStore = async (opts = {}) => {
  const dir = join(root, `suite-${seq++}`);
  const { store } = await open(dir, opts);
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
runContractSuite(`sqlite + ${logs.kind} log`, suiteStore);
runMemoryContractSuite(`sqlite + ${logs.kind} log`, suiteStore);

const HERE = cellOf(51.5, -0.12);
const THERE = cellOf(-33.9, 18.4);
const ELEV = 'copdem30m.elevation_mean';

/** Every fact a store holds for the given cids, for before/after comparisons. */
async function snapshot(store: Store, cids: string[]): Promise<(StoredFact | null)[]> {
  return Promise.all(cids.map((c) => store.getFact(c)));
}

function sampleBatches(): AppendBatch[] {
  return [
    makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 }), makeFact({ cell: THERE, band: ELEV, tslot: 0, value: 7 })]),
    makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 2, signed_at: '2026-01-05T00:00:00Z' })]),
    makeBatch([makeFact({ cell: HERE, band: 'indices.ndvi', tslot: 4, value: 0.5, scope: { user_id: 'u1', run_id: 'r9' } })], { provenance_class: 'deterministic_index' }),
  ];
}

describe('sqlite store: recovery from the log', () => {
  it('rebuilds the same facts after index.sqlite is deleted', async () => {
    const dir = join(root, `rebuild-${seq++}`);
    const batches = sampleBatches();
    const cids = batches.flatMap((b) => b.facts.map((f) => f.fact_cid));
    let { store } = await open(dir);
    for (const b of batches) await store.append(b);
    const before = await snapshot(store, cids);
    const latestBefore = await store.latest({ cell: HERE });
    const statsBefore = await store.stats();
    await store.close();

    for (const f of ['index.sqlite', 'index.sqlite-wal', 'index.sqlite-shm']) rmSync(join(dir, f), { force: true });
    const lines: string[] = [];
    ({ store } = await open(dir, { logger: (l) => lines.push(l) }));
    try {
      assert.deepEqual(await snapshot(store, cids), before);
      assert.deepEqual(await store.latest({ cell: HERE }), latestBefore);
      assert.deepEqual(await store.stats(), statsBefore);
      assert.equal(before[2]!.supersedes, before[0]!.fact_cid, 'supersession is rebuilt too');
      assert.equal(lines.length, 1);
      assert.match(lines[0], /replayed 3 entries \(4 facts\)/);
      const next = await store.append(makeBatch([makeFact({ cell: THERE, band: ELEV, tslot: 1, value: 8 })]));
      assert.equal(next.log_index, 3);
    } finally {
      await store.close();
    }
  });

  it('replays an entry that reached the log but not the index (crash between fsync and commit)', async () => {
    const dir = join(root, `crash-${seq++}`);
    const [first, second] = sampleBatches();
    let { store } = await open(dir);
    await store.append(first);
    await store.close();

    // What append() would have written, had the process died right after the log fsync.
    const log = await logs.open(join(dir, 'log'));
    const accepted = isoSeconds(new Date());
    await log.append(
      encodeLogEntry({
        v: 1,
        type: 'batch',
        accepted_at: accepted,
        attester: second.attester,
        signature: second.signature,
        batch_root: second.batch_root,
        registry_cid: second.registry_cid,
        schema_cid: second.schema_cid,
        facts: second.facts.map((f) => f.body),
        meta: second.facts.map((f) => ({ provenance_class: f.provenance_class, tslot: f.tslot })),
      }),
    );
    await log.close();

    const lines: string[] = [];
    ({ store } = await open(dir, { logger: (l) => lines.push(l) }));
    try {
      const got = await store.getFact(second.facts[0].fact_cid);
      assert.ok(got, 'the logged fact is indexed on open');
      assert.equal(got.log_index, 1);
      assert.equal(got.accepted_at, accepted);
      assert.equal(got.supersedes, first.facts[0].fact_cid);
      assert.match(lines[0], /index had 1, replayed 1 entries \(1 facts\)/);
      const again = await store.append(second);
      assert.deepEqual(again.duplicates, [second.facts[0].fact_cid], 'a client retry after the crash is a duplicate');
      assert.equal(await store.log.size(), 2);
    } finally {
      await store.close();
    }
  });

  it('indexes an entry appended to its log by someone else before its own next append', async () => {
    const dir = join(root, `gap-${seq++}`);
    const [first, second, third] = sampleBatches();
    const { store, log } = await open(dir);
    try {
      await store.append(first);
      await log.append(
        encodeLogEntry({
          v: 1,
          type: 'batch',
          accepted_at: isoSeconds(new Date()),
          attester: second.attester,
          signature: second.signature,
          batch_root: second.batch_root,
          registry_cid: second.registry_cid,
          schema_cid: second.schema_cid,
          facts: second.facts.map((f) => f.body),
          meta: second.facts.map((f) => ({ provenance_class: f.provenance_class, tslot: f.tslot })),
        }),
      );
      const res = await store.append(third);
      assert.equal(res.log_index, 2);
      assert.equal((await store.getFact(second.facts[0].fact_cid))?.log_index, 1);
      assert.equal((await store.getFact(third.facts[0].fact_cid))?.log_index, 2);
    } finally {
      await store.close();
    }
  });

  it('refuses an index that is ahead of its log', async () => {
    const dir = join(root, `ahead-${seq++}`);
    const { store } = await open(dir);
    await store.append(sampleBatches()[0]);
    await store.close();
    rmSync(join(dir, 'log'), { recursive: true, force: true });
    const fresh = await logOpener(signer);
    const log = await fresh.open(join(dir, 'log-elsewhere'));
    await assert.rejects(createSqliteStore(configFor(dir), log, { logger: quiet }), (e: unknown) => e instanceof SvcError && e.code === 'internal' && /ahead|holds 0/.test(e.message));
    await log.close();
  });

  it('waits for in-flight appends before closing', async () => {
    const dir = join(root, `drain-${seq++}`);
    const { store } = await open(dir);
    const batches = Array.from({ length: 8 }, (_, i) => makeBatch([makeFact({ cell: HERE, band: `test.b${i}`, tslot: 0, value: i })], { sign: false }));
    const pending = batches.map((b) => store.append(b));
    await store.close();
    const results = await Promise.all(pending);
    assert.equal(results.length, 8);
    const reopened = await open(dir);
    try {
      assert.equal((await reopened.store.stats()).facts, 8);
    } finally {
      await reopened.store.close();
    }
  });
});

describe('sqlite store: index layout', () => {
  it('serves each fact exactly as the log entry alone rebuilds it (body from the log, proof from the batch tree)', async () => {
    const dir = join(root, `layout-${seq++}`);
    const { store, log } = await open(dir);
    try {
      const batches = [mixedBatch(37, 'a'), mixedBatch(1, 'b'), mixedBatch(64, 'c')];
      for (const b of batches) await store.append(b);
      for (let i = 0; i < batches.length; i++) {
        const rebuilt = factsFromEntry(decodeLogEntry((await log.entry(i))!), i);
        for (const want of rebuilt) {
          const got = await store.getFact(want.fact_cid);
          assert.deepEqual({ ...got!, supersedes: null }, want);
        }
      }
      // A second index over the same log, read through a wrapper without ranged reads (the
      // whole-entry fallback), serves the same facts (it indexes them by replay on open).
      const wrapped = withFailingAppend(log, () => false);
      const other = await createSqliteStore(configFor(dir + '-fallback'), wrapped, { logger: quiet });
      try {
        const cid = batches[2].facts[5].fact_cid;
        assert.deepEqual(await other.getFact(cid), await store.getFact(cid));
      } finally {
        await other.close(); // closes the shared log too
      }
    } finally {
      await store.close().catch(() => {});
    }
  });

  it('reads part of a logged entry (DiskLog.entryRange), and nothing outside it', async () => {
    const dir = join(root, `range-${seq++}`);
    const { store, log } = await open(dir);
    try {
      await store.append(sampleBatches()[0]);
      const whole = (await log.entry(0))!;
      const range = (log as unknown as { entryRange(i: number, a: number, b: number): Uint8Array | null }).entryRange.bind(log);
      assert.deepEqual(range(0, 5, 40), whole.subarray(5, 40));
      assert.deepEqual(range(0, 0, whole.length), whole);
      for (const [i, a, b] of [
        [0, 0, whole.length + 1],
        [0, 10, 9],
        [0, -1, 4],
        [1, 0, 1],
        [-1, 0, 1],
      ])
        assert.equal(range(i, a, b), null, `${i} [${a}, ${b})`);
    } finally {
      await store.close();
    }
  });

  it('does not find a fact under any text but its canonical cid', async () => {
    const dir = join(root, `cidtext-${seq++}`);
    const { store } = await open(dir);
    try {
      const b = sampleBatches()[0];
      await store.append(b);
      const cid = b.facts[0].fact_cid;
      assert.ok(await store.getFact(cid));
      for (const text of [cid.toUpperCase(), cid + 'a', cid.slice(0, -1), '', 'not a cid']) assert.equal(await store.getFact(text), null, text);
    } finally {
      await store.close();
    }
  });

  it('tells facts apart by their full digest when cid prefixes collide', async () => {
    const dir = join(root, `collide-${seq++}`);
    let { store } = await open(dir);
    const a = mixedBatch(6, 'p');
    const d = mixedBatch(3, 'q');
    await store.append(a);
    const others = a.facts.slice(1).map((f) => f.fact_cid);
    const before = await snapshot(store, others);
    await store.close();
    // A collision: a's first fact is now indexed under the 48-bit key of d's first fact.
    const db = new Database(join(dir, 'index.sqlite'));
    db.prepare('UPDATE facts SET cid_key = ? WHERE cid_key = ?').run(cidKey(b32decode(d.facts[0].fact_cid, 32)), cidKey(b32decode(a.facts[0].fact_cid, 32)));
    db.close();
    ({ store } = await open(dir));
    try {
      assert.equal(await store.getFact(d.facts[0].fact_cid), null, 'a candidate whose digest differs is not the fact');
      assert.deepEqual((await store.append(d)).duplicates, [], 'nor a duplicate of it');
      assert.equal((await store.getFact(d.facts[0].fact_cid))?.log_index, 1, 'of two candidates, the one whose digest matches');
      assert.deepEqual(await snapshot(store, others), before);
      assert.deepEqual((await store.append(mixedBatch(6, 'p'))).duplicates.slice(-5), others);
    } finally {
      await store.close();
    }
  });

  it('refuses to serve a body whose log bytes do not hash to its cid', async () => {
    const dir = join(root, `verify-${seq++}`);
    let { store } = await open(dir);
    const b = sampleBatches()[0];
    await store.append(b);
    await store.close();
    const db = new Database(join(dir, 'index.sqlite'));
    db.prepare('UPDATE facts SET body_at = body_at + 1').run(); // the row now points one byte off
    db.close();
    ({ store } = await open(dir));
    try {
      await assert.rejects(store.getFact(b.facts[0].fact_cid), (e: unknown) => e instanceof SvcError && e.code === 'internal' && /does not hash to its cid/.test(e.message));
    } finally {
      await store.close();
    }
  });

  it('keeps the body in the row when the logged entry is not byte for byte canonical', async () => {
    const dir = join(root, `noncanon-${seq++}`);
    const { store, log } = await open(dir);
    try {
      const b = mixedBatch(5, 'n');
      const bytes = encodeLogEntry(entryOf(b));
      // Same entry, but `v` written with a one-byte argument (valid CBOR, not the shortest form).
      const v = encodeCanonical('v');
      const at = bytes.findIndex((_, i) => v.every((x, k) => bytes[i + k] === x)) + v.length;
      const odd = new Uint8Array([...bytes.subarray(0, at), 0x18, 0x01, ...bytes.subarray(at + 1)]);
      assert.deepEqual(decodeLogEntry(odd), decodeLogEntry(bytes));
      await log.append(odd);
      await store.append(sampleBatches()[0]); // applies the foreign entry first (from the log)
      const want = factsFromEntry(decodeLogEntry(odd), 0);
      for (const f of want) assert.deepEqual({ ...(await store.getFact(f.fact_cid))!, supersedes: null }, f);
    } finally {
      await store.close();
    }
    const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
    assert.equal(db.prepare('SELECT COUNT(*) FROM facts WHERE body IS NOT NULL').pluck().get(), 5);
    db.close();
  });

  it('fills the public cell and band sets of an index written before they existed, without a rebuild', async () => {
    const dir = join(root, `public-sets-${seq++}`);
    let { store } = await open(dir);
    for (const b of sampleBatches()) await store.append(b);
    const expected = await store.stats();
    assert.deepEqual(expected, { facts: 3, cells: 2, subjects: 0, bands: 1, log_size: 3 }, 'the scoped fact (another band) is not counted');
    await store.close();
    const db = new Database(join(dir, 'index.sqlite'));
    db.exec('DROP TABLE public_cells; DROP TABLE public_bands;');
    db.close();
    const lines: string[] = [];
    ({ store } = await open(dir, { logger: (l) => lines.push(l) }));
    try {
      assert.match(lines[0], /index had 3, replayed 0 entries/);
      assert.deepEqual(await store.stats(), expected);
    } finally {
      await store.close();
    }
  });

  it(`rebuilds an index written by an older schema from the log, keeping witnesses (v1 → v${SCHEMA_VERSION})`, async () => {
    const dir = join(root, `upgrade-${seq++}`);
    let { store } = await open(dir);
    const batches = sampleBatches();
    for (const b of batches) await store.append(b);
    const cids = batches.flatMap((x) => x.facts.map((f) => f.fact_cid));
    const before = await snapshot(store, cids);
    await store.close();

    // A version 1 index (its layout, trimmed to what the upgrade touches) that claims every entry.
    for (const f of ['index.sqlite', 'index.sqlite-wal', 'index.sqlite-shm']) rmSync(join(dir, f), { force: true });
    const db = new Database(join(dir, 'index.sqlite'));
    db.exec(`
      CREATE TABLE facts (fact_cid TEXT PRIMARY KEY, cell TEXT NOT NULL, scope_key TEXT NOT NULL, body BLOB NOT NULL, proof_json TEXT NOT NULL);
      CREATE INDEX facts_cell_scope ON facts (cell, scope_key);
      CREATE TABLE edges (from_cid TEXT NOT NULL, to_cid TEXT NOT NULL, kind TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (from_cid, to_cid, kind)) WITHOUT ROWID;
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE witnesses (tree_size INTEGER NOT NULL, root TEXT NOT NULL, witness TEXT NOT NULL, signature TEXT NOT NULL, operator TEXT NOT NULL, received_at TEXT NOT NULL, UNIQUE (tree_size, witness));
      INSERT INTO meta VALUES ('schema_version', '1'), ('applied_log_size', '${batches.length}');
      INSERT INTO facts VALUES ('stale', 'x', '', x'00', '{}');
    `);
    const w = { tree_size: 2, root: 'r'.repeat(52), witness: 'w'.repeat(52), signature: 's'.repeat(103), operator: 'op', received_at: '2026-03-01T00:00:00Z' };
    db.prepare('INSERT INTO witnesses VALUES (@tree_size, @root, @witness, @signature, @operator, @received_at)').run(w);
    db.close();

    const lines: string[] = [];
    ({ store } = await open(dir, { logger: (l) => lines.push(l) }));
    try {
      assert.match(lines[0], /index had 0, replayed 3 entries \(4 facts\).*schema v1 index rebuilt from the log/);
      assert.deepEqual(await snapshot(store, cids), before);
      assert.deepEqual(await store.witnesses(), [w]);
      assert.equal((await store.stats()).facts, 3, 'the public facts (stats leave the scoped one out)');
    } finally {
      await store.close();
    }
    ({ store } = await open(dir, { logger: (l) => lines.push(l) }));
    await store.close();
    assert.match(lines[1], /index had 3, replayed 0 entries/, 'the upgrade happens once');
  });

  it('serves applied facts at once, commits them later, and replays what a crash left uncommitted', async () => {
    const dir = join(root, `deferred-${seq++}`);
    let { store, log } = await open(dir);
    const [first, second] = sampleBatches();
    await store.append(first);
    const peek = () => {
      const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
      try {
        return { facts: db.prepare('SELECT COUNT(*) FROM facts').pluck().get(), witnesses: db.prepare('SELECT COUNT(*) FROM witnesses').pluck().get() };
      } finally {
        db.close();
      }
    };
    assert.ok(await store.getFact(first.facts[0].fact_cid), 'readable as soon as append resolves');
    assert.deepEqual(peek(), { facts: 0, witnesses: 0 }, 'not yet committed');
    // A witness is not in the log: it commits at once, and what was applied before it with it.
    await store.addWitness({ tree_size: 1, root: 'r'.repeat(52), witness: 'w'.repeat(52), signature: 's'.repeat(103), operator: 'op', received_at: '2026-03-01T00:00:00Z' });
    assert.deepEqual(peek(), { facts: 2, witnesses: 1 });
    await store.append(second);
    // A crash: the connection goes away with the transaction open.
    (store as unknown as { db: Database.Database }).db.close();
    await log.close();
    const lines: string[] = [];
    ({ store, log } = await open(dir, { logger: (l) => lines.push(l) }));
    try {
      assert.match(lines[0], /index had 1, replayed 1 entries \(1 facts\)/);
      assert.equal((await store.getFact(second.facts[0].fact_cid))?.supersedes, first.facts[0].fact_cid);
      assert.equal((await store.witnesses()).length, 1);
    } finally {
      await store.close();
    }
  });

  it('compares transaction time as the text column did, including bounds past year 9999', async () => {
    const clock = steppingClock('2026-03-01T12:00:00Z');
    const dir = join(root, `asof-${seq++}`);
    const { store } = await open(dir, { now: clock.now });
    try {
      await store.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 })]));
      for (const [bound, n] of [
        ['2026-03-01T12:00:00Z', 1],
        ['2026-03-01T11:59:59Z', 0],
        ['+010000-01-01T00:00:00Z', 0],
        ['9999-12-31T23:59:59Z', 1],
      ] as const) {
        assert.equal((await store.latest({ cell: HERE, as_of_signed_at: bound })).length, n, bound);
      }
    } finally {
      await store.close();
    }
  });
});

/** A memory record body, filed under the svc:entity: subject of its value (as memory-contract-suite.ts). */
function record(band: string, value: Record<string, unknown>, extra: { scope?: Scope; signed_at?: string } = {}): Record<string, unknown> {
  return makeFact({ cell: `svc:entity:${anchorId(value)}`, band, tslot: 0, value, unit: 'record', signed_at: extra.signed_at, scope: extra.scope });
}

describe('sqlite store: memory index', () => {
  const SEED_B = new Uint8Array(32).fill(11);
  const A: Scope = { agent_id: 'agent-a' };
  const t = (iso: string) => Date.parse(iso) / 1000;
  const plot = anchorId({ kind: 'field', name: 'plot 7' });
  const farms = ['X', 'Y', 'Z'].map((name) => anchorId({ kind: 'farm', name }));

  /** Notes, aliases, edges with closures, a derivative and shared slots, public and scoped, over several entries. */
  async function fillMemory(store: Store, clock: ReturnType<typeof steppingClock>): Promise<void> {
    const ent = anchorId({ kind: 'field', name: 'Hoeve Noord' });
    await store.append(
      makeBatch(
        [
          record('memory.entity', { kind: 'field', name: 'Hoeve Noord' }),
          record('memory.alias', { entity: ent, phrase: 'the north field by the canal' }),
          record('memory.note', { text: 'Irrigation pump at the north field failed', cell: HERE, tags: ['pump'], entity: ent, vector: [0.1, 0.2], observed_at: '2026-02-01T00:00:00Z' }),
          record('memory.note', { text: 'Pump replaced; field irrigated again', cell: THERE, tags: ['pump', 'fixed'] }),
          record('memory.note', { text: 'secret pump plan for the north field', tags: ['pump'] }, { scope: A }),
          record('memory.alias', { entity: ent, phrase: 'north field secret name' }, { scope: A }),
        ],
        { provenance_class: 'human_curated' },
      ),
    );
    clock.advance(3600);
    await store.append(makeBatch([record('memory.edge', { type: 'part_of', from: plot, to: farms[0], valid_from: '2026-01-01T00:00:00Z' })], { provenance_class: 'human_curated' }));
    clock.advance(3600);
    // Learned late: valid before the first, so it is closed at the first's start.
    await store.append(
      makeBatch([record('memory.edge', { type: 'part_of', from: plot, to: farms[1], valid_from: '2025-06-01T00:00:00Z' })], { provenance_class: 'human_curated', attesterSeed: SEED_B }),
    );
    clock.advance(3600);
    const e3 = record('memory.edge', { type: 'part_of', from: plot, to: farms[2], valid_from: '2026-06-01T00:00:00Z' });
    await store.append(makeBatch([e3, record('memory.edge', { type: 'mentions', from: plot, to: ent, valid_from: '2026-02-01T00:00:00Z' })], { provenance_class: 'human_curated' }));
    clock.advance(3600);
    await store.append(
      makeBatch([record('memory.edge', { type: 'related_to', from: plot, to: ent, valid_from: '2026-07-01T00:00:00Z', invalidates: [factCid(e3)] })], { provenance_class: 'human_curated' }),
    );
    const p1 = makeFact({ cell: HERE, band: 'indices.ndvi', tslot: 100, value: 0.5, unit: 'ndvi' });
    const p2 = makeFact({ cell: HERE, band: 'indices.ndvi', tslot: 100, value: 0.4, unit: 'ndvi', signed_at: '2026-01-02T00:00:00Z' });
    await store.append(makeBatch([p1]));
    await store.append(makeBatch([p2], { attesterSeed: SEED_B }));
    const d = { ...makeFact({ cell: HERE, band: 'derived.delta', tslot: 0, value: -0.1, kind: 'derivative' }), derivation: { fn: 'nd.delta@1', parents: [factCid(p2), factCid(p1)] } };
    await store.append(makeBatch([d], { provenance_class: 'deterministic_index' }));
  }

  /** Every kind of memory read, as one comparable value. */
  async function memoryAnswers(store: Store): Promise<unknown> {
    const m = store.memory;
    const out: Record<string, unknown> = {};
    for (const scope of [null, A]) {
      const k = scope === null ? 'public' : 'a';
      out[`${k}.text`] = await searchText({ memory: m }, { scope, text: 'north field pump', limit: 10 });
      out[`${k}.newest`] = await m.searchNotes({ scope, limit: 10 });
      out[`${k}.tags`] = await m.searchNotes({ scope, tags: ['pump', 'fixed'], limit: 10 });
      out[`${k}.vector`] = await m.searchNotes({ scope, with_vector: true, limit: 10 });
      out[`${k}.aliases`] = await m.aliases({ scope, text: 'north field noord', limit: 10 });
      out[`${k}.slots`] = await m.sharedSlots({ scope, limit: 10 });
    }
    for (const valid_at of [undefined, t('2025-07-01T00:00:00Z'), t('2026-03-01T00:00:00Z'), t('2026-08-01T00:00:00Z')]) {
      out[`edges.${valid_at}`] = await m.edges({ scope: null, record: plot, direction: 'both', valid_at, limit: 20 });
      out[`edges.then.${valid_at}`] = await m.edges({ scope: null, record: plot, direction: 'out', valid_at, recorded_at: '2026-03-01T13:30:00Z', limit: 20 });
    }
    out.derived = await m.derivedBy({ scope: null, attester: makeBatch([]).attester, limit: 10 });
    return out;
  }

  it('answers every memory read the same after the index is rebuilt from the log', async () => {
    const dir = join(root, `memory-rebuild-${seq++}`);
    const clock = steppingClock();
    let { store } = await open(dir, { now: clock.now });
    await fillMemory(store, clock);
    const before = await memoryAnswers(store);
    await store.close();
    // The reads see something of every kind, so the comparison compares something.
    const b = before as Record<string, unknown[]>;
    for (const k of ['public.text', 'a.text', 'public.tags', 'public.vector', 'public.aliases', 'a.aliases', 'public.slots', 'edges.undefined', 'derived']) assert.ok(b[k].length > 0, k);
    assert.ok(
      (b['edges.undefined'] as Array<{ closed_at: number | null }>).some((e) => e.closed_at !== null),
      'closures are rebuilt too',
    );

    for (const f of ['index.sqlite', 'index.sqlite-wal', 'index.sqlite-shm']) rmSync(join(dir, f), { force: true });
    const lines: string[] = [];
    ({ store } = await open(dir, { now: clock.now, logger: (l) => lines.push(l) }));
    try {
      assert.match(lines[0], /index had 0, replayed 8 entries/);
      assert.deepEqual(await memoryAnswers(store), before);
    } finally {
      await store.close();
    }
  });

  it('rebuilds the memory index of a version 2 index from the log, keeping witnesses and scope claims', async () => {
    const dir = join(root, `memory-upgrade-${seq++}`);
    const clock = steppingClock();
    let { store } = await open(dir, { now: clock.now });
    await fillMemory(store, clock);
    const w = { tree_size: 2, root: 'r'.repeat(52), witness: 'w'.repeat(52), signature: 's'.repeat(103), operator: 'op', received_at: '2026-03-01T00:00:00Z' };
    await store.addWitness(w);
    const owner = 'k'.repeat(52);
    assert.equal(await store.claimScope({ agent_id: 'claimed' }, owner, 'responder'), owner);
    const before = await memoryAnswers(store);
    const day = await store.attesterFactsOn(makeBatch([]).attester, '2026-03-01');
    await store.close();

    // What a version 2 index looks like: no memory tables, and its version.
    const db = new Database(join(dir, 'index.sqlite'));
    db.exec(`DROP TABLE notes; DROP TABLE notes_fts; DROP TABLE note_tags; DROP TABLE aliases; DROP TABLE aliases_fts; DROP TABLE mem_edges;
             DROP TABLE mem_closures; DROP TABLE derivations; DROP TABLE shared_slots; DROP TABLE mem_refs; DROP TABLE attesters;
             UPDATE meta SET value = '2' WHERE key = 'schema_version';`);
    db.close();
    const lines: string[] = [];
    ({ store } = await open(dir, { now: clock.now, logger: (l) => lines.push(l) }));
    try {
      assert.match(lines[0], /index had 0, replayed 8 entries .*schema v2 index rebuilt from the log/);
      assert.deepEqual(await memoryAnswers(store), before);
      assert.deepEqual(await store.witnesses(), [w]);
      assert.equal(await store.claimScope({ agent_id: 'claimed' }, null, 'responder'), owner);
      assert.equal(await store.attesterFactsOn(makeBatch([]).attester, '2026-03-01'), day, 'daily counts are rebuilt, not added to');
    } finally {
      await store.close();
    }
  });

  it('ranks in bounded work when the words match more notes than it ranks exactly', async () => {
    const dir = join(root, `memory-bounded-${seq++}`);
    const clock = steppingClock();
    const { store } = await open(dir, { now: clock.now });
    try {
      // 4 200 notes saying "field" (more than a search ranks exactly); "zebra" in three of them,
      // the first of which is older than the newest 2 000 "field" notes.
      const texts = Array.from({ length: 4200 }, (_, i) => `field report ${i} ${i % 2 === 0 ? 'maize' : 'wheat'}${[5, 3000, 4100].includes(i) ? ' zebra' : ''}`);
      for (let i = 0; i < texts.length; i += 300) {
        await store.append(
          makeBatch(
            texts.slice(i, i + 300).map((text) => record('memory.note', { text, tags: [text.includes('maize') ? 'maize' : 'wheat'] })),
            { sign: false, provenance_class: 'human_curated' },
          ),
        );
        clock.advance(1);
      }
      const zebra = await searchText(store, { scope: null, text: 'zebra field', limit: 5 });
      assert.equal(zebra.length, 5);
      const withZebra = new Set([5, 3000, 4100].map((i) => factCid(record('memory.note', { text: texts[i], tags: [texts[i].includes('maize') ? 'maize' : 'wheat'] }))));
      assert.deepEqual(new Set(zebra.slice(0, 3).map((h) => h.fact_cid)), withZebra, 'every note with the rare word first, the oldest too');
      assert.ok(zebra.every((h) => h.text_score > 0));
      const common = await searchText(store, { scope: null, text: 'field report', limit: 50 });
      assert.equal(common.length, 50);
      assert.ok(
        common.every((h, i) => h.text_score > 0 && (i === 0 || common[i - 1].text_score >= h.text_score)),
        'best first',
      );
      const tagged = await searchText(store, { scope: null, text: 'field', tags: ['wheat'], limit: 20 });
      assert.equal(tagged.length, 20);
      assert.equal(new Set(tagged.map((h) => h.fact_cid)).size, 20);
    } finally {
      await store.close();
    }
  });
});

describe('sqlite store: configuration', () => {
  it('caps prefix scans at scanCellLimit whatever the caller asks', async () => {
    const dataDir = join(root, `cap-${seq++}`);
    const log = await logs.open(join(dataDir, 'log'));
    const store = await createSqliteStore({ dataDir, scanCellLimit: 2 }, log, { logger: quiet });
    try {
      await store.append(makeBatch([HERE, THERE, cellOf(48.85, 2.35)].map((cell) => makeFact({ cell, band: ELEV, tslot: 0, value: 1 }))));
      const r = await store.cellsWithPrefix('defi.', 100);
      assert.equal(r.cells.length, 2);
      assert.equal(r.truncated, true);
    } finally {
      await store.close();
    }
  });
});
