/**
 * The store as worker processes use it (src/store/remote/): the whole store contract and the
 * memory contract over a channel that copies every message as the cluster IPC does (structured
 * clone), against a real SQLite store; typed errors across the channel; and the owner holding an
 * append's answer until every worker has confirmed its cache invalidation.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SvcError } from '../../src/protocol/errors.js';
import { cellOf } from '../../src/protocol/cell64.js';
import type { Store } from '../../src/store/contract.js';
import { openRemoteStore } from '../../src/store/index.js';
import { connectRemoteStore } from '../../src/store/remote/remote-store.js';
import type { Channel } from '../../src/store/remote/rpc.js';
import { batchingChannel } from '../../src/store/remote/batching.js';
import { StoreHost, type HostedWorker } from '../../src/store/remote/store-host.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { runContractSuite, type MakeStore } from './contract-suite.js';
import { runMemoryContractSuite } from './memory-contract-suite.js';
import { makeBatch, makeFact, testSigner } from './support/facts.js';
import { logOpener, withFailingAppend } from './support/log-factory.js';

const signer = testSigner();
const logs = await logOpener(signer, { segmentMaxBytes: 64 * 1024 });
const root = mkdtempSync(join(tmpdir(), 'svc-remote-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
let seq = 0;

const elev = (cell: string) => ({ cell, band: 'copdem30m.elevation_mean', tslot: 0, value: 100, unit: 'm_msl' });

/**
 * Two ends of a channel; each message is cloned and delivered on a later turn, as over IPC, and
 * both ends coalesce what they send in one turn, as src/workers.ts sets them up. `sent` counts the
 * messages that crossed (a batch is one).
 */
function channelPair(): { owner: HostedWorker & { killed?: string }; worker: Channel; sent: { toOwner: number; toWorker: number } } {
  const toOwner = new EventEmitter();
  const toWorker = new EventEmitter();
  const sent = { toOwner: 0, toWorker: 0 };
  const ownerEnd = batchingChannel({
    send: (m) => (sent.toWorker++, setImmediate(() => toWorker.emit('message', structuredClone(m)))),
    on: (_e, f) => toOwner.on('message', f),
  });
  const owner: HostedWorker & { killed?: string } = {
    id: ++seq,
    send: (m) => ownerEnd.send(m),
    on: (e, f) => ownerEnd.on(e, f),
    kill(signal) {
      owner.killed = signal ?? 'SIGTERM';
    },
  };
  const worker = batchingChannel({
    send: (m) => (sent.toOwner++, setImmediate(() => toOwner.emit('message', structuredClone(m)))),
    on: (_e, f) => toWorker.on('message', f),
    off: (_e, f) => toWorker.off('message', f),
  });
  return { owner, worker, sent };
}

async function sqliteStore(dir: string, failLogAppend?: () => boolean, now?: () => Date): Promise<Store> {
  let log = await logs.open(join(dir, 'log'));
  if (failLogAppend) log = withFailingAppend(log, failLogAppend);
  return createSqliteStore({ dataDir: dir, scanCellLimit: 1000 }, log, { logger: () => {}, ...(now ? { now } : {}) });
}

const remoteSuiteStore: MakeStore = async (opts = {}) => {
  const dir = join(root, `suite-${seq++}`);
  const real = await sqliteStore(dir, opts.failLogAppend, opts.now);
  const host = new StoreHost(real, { broadcastBumps: false });
  const { owner, worker } = channelPair();
  host.attach(owner);
  const store = await connectRemoteStore(worker);
  return {
    store,
    cleanup: async () => {
      await store.close();
      host.close();
      await real.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
runContractSuite('sqlite through a worker channel', remoteSuiteStore);
runMemoryContractSuite('sqlite through a worker channel', remoteSuiteStore);

describe('worker channel', () => {
  it('sends what one turn sends as one message, in order, and delivers it one message at a time', async () => {
    const { owner, worker, sent } = channelPair();
    const got: unknown[] = [];
    owner.on('message', (m) => got.push(m));
    for (let i = 0; i < 50; i++) worker.send({ svc: 'x', i });
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(
      got,
      Array.from({ length: 50 }, (_, i) => ({ svc: 'x', i })),
    );
    assert.equal(sent.toOwner, 1);
    worker.send({ svc: 'y' });
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(got.at(-1), { svc: 'y' });
    assert.equal(sent.toOwner, 2);
  });

  it('keeps the kind of an error: SvcError code and details, TypeError, RangeError', async () => {
    const { store, cleanup } = await remoteSuiteStore();
    try {
      await assert.rejects(store.getFact(42 as unknown as string), TypeError);
      await assert.rejects(store.cellsWithPrefix('', -1), RangeError);
      await assert.rejects(
        store.append({ ...makeBatch([makeFact(elev(cellOf(3, 4)))]), facts: [] }),
        (err: unknown) => err instanceof SvcError && err.code === 'invalid_argument' && err.details.field === 'facts',
      );
    } finally {
      await cleanup();
    }
  });

  it('answers an append only after every worker gave the touched cells new generations', async () => {
    const dir = join(root, `bump-${seq++}`);
    const real = await sqliteStore(dir);
    const host = new StoreHost(real, { broadcastBumps: true });
    const a = channelPair();
    const b = channelPair();
    host.attach(a.owner);
    host.attach(b.owner);
    const [sa, sb] = await Promise.all([openRemoteStore({ dataDir: dir, scanCellLimit: 100 }, a.worker), openRemoteStore({ dataDir: dir, scanCellLimit: 100 }, b.worker)]);
    try {
      const cell = cellOf(12.5, 45.25);
      const before = await sb.generation(cell);
      await sa.append(makeBatch([makeFact(elev(cell))]));
      // The append through worker a resolved: worker b's generation has moved already.
      assert.notEqual(await sb.generation(cell), before);
    } finally {
      host.close();
      await real.close();
    }
  });

  it('stops a subscribed worker that does not confirm an invalidation, then answers the append; one still starting is not waited for', async () => {
    const dir = join(root, `mute-${seq++}`);
    const real = await sqliteStore(dir);
    const host = new StoreHost(real, { broadcastBumps: true, bumpTimeoutMs: 200, logger: () => {} });
    const a = channelPair();
    const mute = channelPair(); // subscribed, then never answers
    const starting = channelPair(); // attached, still starting: not subscribed yet
    host.attach(a.owner);
    host.attach(mute.owner);
    host.attach(starting.owner);
    mute.worker.send({ svc: 'subscribed' });
    const sa = await openRemoteStore({ dataDir: dir, scanCellLimit: 100 }, a.worker);
    try {
      const res = await sa.append(makeBatch([makeFact(elev(cellOf(1, 2)))]));
      assert.equal(res.log_index, 0);
      assert.equal(mute.owner.killed, 'SIGKILL');
      assert.equal(a.owner.killed, undefined);
      // A worker still starting has served nothing from a cache: it is neither waited for nor stopped.
      assert.equal(starting.owner.killed, undefined);
    } finally {
      host.close();
      await real.close();
    }
  });
});
