/**
 * Item 8 of issue 13 by injection, so it runs everywhere (disk-full.test.ts does it on a real
 * tmpfs when mounting is allowed): the store's write sites fail as they do on a full disk
 * (src/store/disk-full.ts `diskFaults`), and the promises are checked one failure site at a time:
 * - the log's segment write (ENOSPC): storage_full + Retry-After, health degraded, nothing
 *   logged, the next write after the disk recovers succeeds;
 * - the index's deferred commit (SQLITE_FULL, which makes SQLite roll the whole transaction
 *   back): facts acknowledged before it stay readable, writes are refused until a retry commits;
 * - node files and checkpoints (derived data): appends go on, and a reopen finds the same tree;
 * - a failure between segments (sealing one, starting the next): the log stays dense and verifies.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { equalBytes } from '../../src/protocol/bytes.js';
import { encodeCanonical } from '../../src/protocol/cbor.js';
import { portableEd25519, randomSeed } from '../../src/protocol/ed25519.js';
import { SvcError } from '../../src/protocol/errors.js';
import { leafHash, memoryNodeSource, treeRoot } from '../../src/protocol/log-tree.js';
import { diskFaults, enospc, type DiskFaultSite } from '../../src/store/disk-full.js';
import { openDiskLog, verifyLogDir } from '../../src/store/log/disk-log.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester, sampleFact } from '../support/attester.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-diskfull-seam-'));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  diskFaults.hook = undefined;
});

/** Fail the given sites as a full disk would, until `diskFaults.hook` is cleared. */
function fillDisk(...sites: DiskFaultSite[]): void {
  diskFaults.hook = (site, handle) => {
    if (!sites.includes(site)) return;
    if (site === 'index.commit') {
      // What SQLite does when COMMIT finds no room for the WAL: the transaction is rolled back.
      (handle as Database).prepare('ROLLBACK').run();
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    }
    throw enospc();
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const op = makeAttester('disk-full-seam-operator');

describe('a full disk behind the HTTP API (injected)', () => {
  let t: TestApp;
  let dataDir: string;
  const acked: string[] = [];
  after(async () => t?.close());

  async function send(method: 'GET' | 'POST', url: string, payload?: unknown) {
    const r = await t.app.inject({ method, url, payload: payload as any });
    return { status: r.statusCode, body: r.json(), headers: r.headers };
  }
  const attest = () => send('POST', '/v1/attest', op.batch([sampleFact(), sampleFact()], t.service.manifests));
  async function unreadable(): Promise<string[]> {
    const out: string[] = [];
    for (const cid of acked) {
      const r = await send('POST', '/v1/fetch', { cid });
      if (r.status !== 200) out.push(`${cid}: ${r.status} ${r.body.code}`);
    }
    return out;
  }
  function assertStorageFull(r: { status: number; body: any; headers: Record<string, unknown> }, component: string): void {
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal(r.body.code, 'storage_full');
    assert.equal(r.body.details.component, component);
    assert.ok(Number.isInteger(r.body.retry_after) && r.body.retry_after > 0);
    assert.equal(r.headers['retry-after'], String(r.body.retry_after));
  }

  it('a log write out of space: storage_full, health degraded, nothing logged, then writes resume', async () => {
    dataDir = tempDir();
    t = await build({ dataDir, attesterKeys: [op.publicKey] });
    const ok = await attest();
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    acked.push(...ok.body.fact_cids);
    const size = await t.service.store.log.size();

    fillDisk('log.write');
    for (let i = 0; i < 3; i++) assertStorageFull(await attest(), 'log');
    const health = await send('GET', '/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'degraded');
    assert.equal(health.body.storage.component, 'log');
    assert.equal(await t.service.store.log.size(), size, 'a refused write logs nothing');
    assert.deepEqual(await unreadable(), []);

    diskFaults.hook = undefined;
    const again = await attest();
    assert.equal(again.status, 200, JSON.stringify(again.body));
    acked.push(...again.body.fact_cids);
    assert.equal(again.body.log_index, size, 'the log stays dense');
    assert.equal((await send('GET', '/health')).body.status, 'ok');
    assert.deepEqual(await unreadable(), []);
  });

  it('an index commit out of space: acknowledged facts stay readable, writes wait for a commit', async () => {
    // Let the previous test's deferred commit land first, so the next apply opens a transaction.
    await sleep(400);
    fillDisk('index.commit');
    // The first write is acknowledged before its deferred commit (200 ms later) meets the full
    // disk. Later ones race that commit on a busy machine: each is acknowledged, or refused
    // storage_full once the failed commit is known; never anything else.
    for (let i = 0; i < 3; i++) {
      const r = await attest();
      if (i > 0 && r.status === 503) {
        assertStorageFull(r, 'index');
        continue;
      }
      assert.equal(r.status, 200, JSON.stringify(r.body));
      acked.push(...r.body.fact_cids);
    }
    await sleep(400);
    assert.deepEqual(await unreadable(), [], 'the rolled-back commit took no acknowledged fact with it');
    assert.equal((await send('GET', '/health')).body.storage.component, 'index');
    assertStorageFull(await attest(), 'index');
    assert.deepEqual(await unreadable(), [], 'still readable after the retried commits failed');

    diskFaults.hook = undefined;
    const deadline = Date.now() + 5000;
    let r = await attest();
    while (r.status !== 200 && Date.now() < deadline) {
      assertStorageFull(r, 'index');
      await sleep(200);
      r = await attest();
    }
    assert.equal(r.status, 200, 'writes resumed without a restart');
    acked.push(...r.body.fact_cids);
    assert.equal((await send('GET', '/health')).body.status, 'ok');
    assert.deepEqual(await unreadable(), []);
  });

  it('after a restart every acknowledged fact reads and the log verifies', async () => {
    await t.close();
    const v = await verifyLogDir(join(dataDir, 'log'));
    assert.ok(v.ok, v.problems.join('; '));
    t = await build({ dataDir, attesterKeys: [op.publicKey] });
    assert.deepEqual(await unreadable(), []);
  });
});

describe('the disk log on a full disk (injected)', () => {
  const seed = randomSeed();
  const signer = { publicKey: portableEd25519.publicKey(seed), epoch: 1, sign: (d: Uint8Array) => portableEd25519.sign(d, seed) };
  const entryOf = (i: number) => encodeCanonical({ i, pad: 'p'.repeat(i % 13) });

  it('node files and checkpoints that cannot be written do not stop appends; a reopen finds the same tree', async () => {
    const dir = tempDir();
    // Enough leaves for several node-file flushes (every 8192 nodes) and checkpoints.
    const log = await openDiskLog({ dir, signer, checkpointEvery: 5000 });
    fillDisk('log.nodes', 'log.checkpoint');
    const entries = Array.from({ length: 20_000 }, (_, i) => entryOf(i));
    for (let i = 0; i < entries.length; i += 4000) assert.equal(await log.bulkAppend(entries.slice(i, i + 4000)), i);
    const expected = treeRoot(memoryNodeSource(entries.map(leafHash)), entries.length);
    assert.ok(equalBytes(await log.root(), expected));
    assert.equal(log.storageHealth().status, 'ok', 'derived data lagging is not a refusal');
    await log.close();
    diskFaults.hook = undefined;
    const reopened = await openDiskLog({ dir, signer });
    try {
      assert.equal(await reopened.size(), entries.length);
      assert.ok(equalBytes(await reopened.root(), expected));
    } finally {
      await reopened.close();
    }
    assert.ok((await verifyLogDir(dir)).ok);
  });

  it('a write failing while segments are sealed and started refuses that append only; the log stays dense', async () => {
    const dir = tempDir();
    const log = await openDiskLog({ dir, signer, segmentMaxBytes: 600 });
    const appended: Uint8Array[] = [];
    let writes = 0;
    // Fail every third write: record writes, trailers and first records of new segments alike.
    diskFaults.hook = (site) => {
      if (site === 'log.write' && ++writes % 3 === 0) throw enospc();
    };
    let refused = 0;
    for (let i = 0; appended.length < 60; i++) {
      const e = entryOf(i);
      try {
        assert.equal(await log.append(e), appended.length);
        appended.push(e);
      } catch (err) {
        assert.ok(err instanceof SvcError && err.code === 'storage_full', String(err));
        assert.equal(log.storageHealth().status, 'full');
        refused++;
      }
    }
    assert.ok(refused > 10, `refusals were injected (${refused})`);
    diskFaults.hook = undefined;
    assert.equal(await log.append(entryOf(999)), appended.length);
    appended.push(entryOf(999));
    assert.equal(log.storageHealth().status, 'ok');
    for (let i = 0; i < appended.length; i++) assert.ok(equalBytes((await log.entry(i))!, appended[i]), `entry ${i}`);
    await log.close();
    const v = await verifyLogDir(dir);
    assert.ok(v.ok, v.problems.join('; '));
    assert.equal(v.entries, appended.length);
    assert.ok(v.segments > 3, `several segments (${v.segments})`);
  });
});
