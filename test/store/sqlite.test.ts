/** The SQLite driver: the shared contract suite, then rebuild and crash recovery from the log. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cellOf } from '../../src/protocol/cell64.js';
import { SvcError } from '../../src/protocol/errors.js';
import { isoSeconds } from '../../src/protocol/receipt.js';
import type { AppendBatch, AppendOnlyLog, Store, StoreConfig, StoredFact } from '../../src/store/contract.js';
import { decodeCanonical } from '../../src/protocol/cbor.js';
import { factCid, factDigest } from '../../src/protocol/cid.js';
import { batchProofs, proofToJson } from '../../src/protocol/merkle-batch.js';
import type { LogEntryV1 } from '../../src/store/contract.js';
import { decodeLogEntry, encodeLogEntry, factsFromEntry, scopeKey } from '../../src/store/entry.js';
import { createSqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite/sqlite-store.js';
import { runContractSuite } from './contract-suite.js';
import { makeBatch, makeFact, testSigner } from './support/facts.js';
import { logOpener, withFailingAppend } from './support/log-factory.js';

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

runContractSuite(`sqlite + ${logs.kind} log`, async (opts = {}) => {
  const dir = join(root, `suite-${seq++}`);
  const { store } = await open(dir, opts);
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

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
    await log.append(encodeLogEntry({
      v: 1, type: 'batch', accepted_at: accepted, attester: second.attester, signature: second.signature, batch_root: second.batch_root,
      registry_cid: second.registry_cid, schema_cid: second.schema_cid,
      facts: second.facts.map((f) => f.body), meta: second.facts.map((f) => ({ provenance_class: f.provenance_class, tslot: f.tslot })),
    }));
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
      await log.append(encodeLogEntry({
        v: 1, type: 'batch', accepted_at: isoSeconds(new Date()), attester: second.attester, signature: second.signature,
        batch_root: second.batch_root, registry_cid: second.registry_cid, schema_cid: second.schema_cid,
        facts: second.facts.map((f) => f.body), meta: second.facts.map((f) => ({ provenance_class: f.provenance_class, tslot: f.tslot })),
      }));
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
    const fresh = await logOpener(signer, { forceMemory: logs.kind === 'memory' });
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

describe('log entry codec (src/store/entry.ts)', () => {
  const batch = makeBatch([
    makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 918.5 }),
    makeFact({ cell: THERE, band: 'indices.ndvi', tslot: 12, value: [0.5, -0.25], scope: { org_id: 'o1', user_id: 'u1' } }),
    makeFact({ cell: HERE, band: 'era5.t2m', tslot: 3, value: null, kind: 'absence' }),
  ], { provenance_class: ['direct_sensor', 'deterministic_index', 'model_output'] });
  const entry: LogEntryV1 = {
    v: 1, type: 'batch', accepted_at: '2026-03-01T12:00:00Z', attester: batch.attester, signature: batch.signature, batch_root: batch.batch_root,
    registry_cid: batch.registry_cid, schema_cid: batch.schema_cid,
    facts: batch.facts.map((f) => f.body), meta: batch.facts.map((f) => ({ provenance_class: f.provenance_class, tslot: f.tslot })),
  };

  it('round-trips through canonical CBOR', () => {
    const bytes = encodeLogEntry(entry);
    assert.deepEqual(decodeCanonical(bytes), decodeLogEntry(bytes), 'the encoding is canonical');
    assert.deepEqual(decodeLogEntry(bytes), entry);
  });

  it('rebuilds every StoredFact from the entry alone', () => {
    const facts = factsFromEntry(decodeLogEntry(encodeLogEntry(entry)), 7);
    const { proofs } = batchProofs(entry.facts.map((b) => factDigest(b)));
    facts.forEach((f, i) => {
      assert.equal(f.fact_cid, factCid(entry.facts[i]));
      assert.equal(f.fact_cid, batch.facts[i].fact_cid);
      assert.deepEqual(f.proof, proofToJson(proofs[i]));
      assert.deepEqual(f.body, entry.facts[i]);
      assert.equal(f.log_index, 7);
      assert.equal(f.accepted_at, entry.accepted_at);
      assert.equal(f.attester, entry.attester);
      assert.equal(f.provenance_class, entry.meta[i].provenance_class);
      assert.equal(f.supersedes, null);
    });
    assert.deepEqual(facts.map((f) => f.kind), ['primary', 'primary', 'absence']);
    assert.deepEqual(facts[1].scope, { user_id: 'u1', org_id: 'o1' });
    assert.equal(facts[0].scope, null);
  });

  it('names the field of an invalid entry', () => {
    const bad: Array<[string, unknown, RegExp]> = [
      ['version', { ...entry, v: 2 }, /^log entry: v: /],
      ['accepted_at with fractions', { ...entry, accepted_at: '2026-03-01T12:00:00.5Z' }, /accepted_at/],
      ['short batch_root', { ...entry, batch_root: new Uint8Array(31) }, /batch_root/],
      ['meta count', { ...entry, meta: entry.meta.slice(1) }, /meta: expected one entry per fact/],
      ['provenance class', { ...entry, meta: [{ provenance_class: 'guess', tslot: 0 }, ...entry.meta.slice(1)] }, /meta\[0\]\.provenance_class/],
      ['tslot disagreeing with the body', { ...entry, meta: [{ provenance_class: 'direct_sensor', tslot: 1 }, ...entry.meta.slice(1)] }, /meta\[0\]\.tslot: differs/],
      ['a body carrying fact_cid', { ...entry, facts: [{ ...entry.facts[0], fact_cid: 'x' }, ...entry.facts.slice(1)] }, /facts\[0\]/],
      ['a body without a cell', { ...entry, facts: [{ ...entry.facts[0], cell: 5 }, ...entry.facts.slice(1)] }, /facts\[0\]\.cell/],
      ['an unknown member', { ...entry, extra: 1 }, /extra: unknown member/],
    ];
    for (const [what, e, re] of bad) {
      assert.throws(() => encodeLogEntry(e as LogEntryV1), (err: unknown) => err instanceof SvcError && err.code === 'internal' && re.test(err.message), what);
    }
    assert.throws(() => decodeLogEntry(new Uint8Array([0xa1])), (err: unknown) => err instanceof SvcError && /not decodable/.test(err.message));
  });

  it('keys scopes by their set members in a fixed order', () => {
    assert.equal(scopeKey(null), '');
    assert.equal(scopeKey({}), '');
    assert.equal(scopeKey({ user_id: undefined }), '');
    assert.equal(scopeKey({ run_id: 'r', user_id: 'u' }), scopeKey({ user_id: 'u', run_id: 'r' }));
    assert.equal(scopeKey({ run_id: 'r', user_id: 'u' }), '{"user_id":"u","run_id":"r"}');
  });
});
