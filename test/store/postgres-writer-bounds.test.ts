/**
 * Issue 13 item 3 at the store level: how long one writer may hold the PostgreSQL log lock.
 * A raw connection plays the other writer: one that took the lock and went silent (a frozen
 * responder of an older build that set no timeouts), one stuck in a long statement, and the
 * store's own writer terminated under its feet. Acknowledged writes must stay exactly the
 * committed ones, and failures must be typed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { cellOf } from '../../src/protocol/cell64.js';
import { SvcError } from '../../src/protocol/errors.js';
import { sequencerLockKey } from '../../src/store/postgres/schema.js';
import { advisoryLockIds, FENCE_AFTER_MS, FENCE_STALLED_MS, LOCK_WAIT_MS } from '../../src/store/postgres/writer-bounds.js';
import { makeBatch, makeFact, testSigner } from './support/facts.js';
import { openPgStore, pgQuery, pgSkip, pgUrl } from './support/pg-env.js';

const signer = testSigner();
let n = 0;
const single = () => {
  n++;
  return makeBatch([makeFact({ cell: cellOf(20 + n / 1000, 40), band: 'test.bounds', tslot: n, value: n })], { sign: false });
};

/** A raw connection that takes the schema's log lock inside a transaction and keeps it. */
async function holdLock(schema: string, then?: string): Promise<{ client: pg.Client; pid: number; errors: Error[] }> {
  const client = new pg.Client({ connectionString: pgUrl() });
  const errors: Error[] = [];
  client.on('error', (e) => errors.push(e));
  await client.connect();
  const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
  await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${sequencerLockKey(schema)}::bigint)`);
  if (then) void client.query(then).catch((e: Error) => errors.push(e));
  return { client, pid, errors };
}

const alive = async (pid: number) => (await pgQuery<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1', [pid]))[0].n === 1;

describe('postgres log writer bounds', { skip: pgSkip }, () => {
  it('a holder silent inside its transaction (no timeouts of its own) is terminated by the waiting writer', { timeout: 30_000 }, async (t) => {
    const { store, schema, cleanup } = await openPgStore(signer);
    const holder = await holdLock(schema);
    try {
      const t0 = performance.now();
      const res = await store.append(single());
      const waited = performance.now() - t0;
      t.diagnostic(`append waited ${waited.toFixed(0)} ms for a silent holder (fence after ${FENCE_AFTER_MS} ms, holder silent ≥ ${FENCE_STALLED_MS} ms)`);
      assert.equal(res.log_index, 0);
      assert.ok(waited < 5_000, `waited ${waited} ms`);
      assert.equal(await alive(holder.pid), false, 'the silent holder was terminated');
    } finally {
      await holder.client.end().catch(() => undefined);
      await cleanup();
    }
  });

  it('a holder busy past the lock wait bound: batches fail typed (overloaded, nothing written), then writes resume', { timeout: 60_000 }, async (t) => {
    const { store, schema, cleanup } = await openPgStore(signer);
    await store.append(single());
    // Busy, not silent: no fence applies; the lock wait bound does.
    const holder = await holdLock(schema, 'SELECT pg_sleep(30)');
    try {
      const t0 = performance.now();
      const outcomes = await Promise.allSettled([store.append(single()), store.append(single()), store.append(single())]);
      const waited = performance.now() - t0;
      t.diagnostic(`refused after ${waited.toFixed(0)} ms (lock wait bound ${LOCK_WAIT_MS} ms)`);
      for (const o of outcomes) {
        assert.equal(o.status, 'rejected');
        const err = (o as PromiseRejectedResult).reason;
        assert.ok(err instanceof SvcError, String(err));
        assert.equal(err.code, 'overloaded');
        assert.equal(err.details.retry_after, 1);
        assert.equal(err.details.phase, 'lock');
        assert.equal(err.details.written, false);
      }
      assert.ok(waited >= LOCK_WAIT_MS - 500 && waited < LOCK_WAIT_MS + 5_000, `waited ${waited} ms`);
      await pgQuery('SELECT pg_terminate_backend($1)', [holder.pid]);
      assert.equal((await store.append(single())).log_index, 1, 'nothing was written by the refused batches');
      assert.equal(await store.log.size(), 2);
    } finally {
      await holder.client.end().catch(() => undefined);
      await cleanup();
    }
  });

  it("the store's own writer terminated mid-transaction: its group fails typed, the process survives, the log stays dense", { timeout: 60_000 }, async (t) => {
    const { store, schema, cleanup } = await openPgStore(signer);
    const [classid, objid] = advisoryLockIds(sequencerLockKey(schema));
    try {
      const acked: Array<{ cid: string; log_index: number }> = [];
      const failed: SvcError[] = [];
      let stop = false;
      const lane = async () => {
        while (!stop) {
          const b = single();
          try {
            const r = await store.append(b);
            acked.push({ cid: b.facts[0].fact_cid, log_index: r.log_index });
          } catch (err) {
            assert.ok(err instanceof SvcError && err.code === 'overloaded', `untyped failure: ${String(err)}`);
            failed.push(err);
          }
        }
      };
      const lanes = Array.from({ length: 8 }, lane);
      // Terminate whichever backend holds the log lock, a few times.
      let kills = 0;
      for (let i = 0; i < 400 && kills < 5; i++) {
        const r = await pgQuery<{ ok: boolean }>(
          `SELECT pg_terminate_backend(pid) AS ok FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = $1::oid AND objid = $2::oid AND objsubid = 1`,
          [classid, objid],
        );
        if (r.some((x) => x.ok)) kills++;
        await new Promise((res) => setTimeout(res, 5));
      }
      await new Promise((res) => setTimeout(res, 300));
      stop = true;
      await Promise.all(lanes);
      t.diagnostic(`${kills} writer transactions terminated; ${acked.length} acknowledged, ${failed.length} refused (overloaded)`);
      assert.ok(kills > 0 && failed.length > 0, 'some writer transaction was cut short');
      // Writes resumed after every kill, and the log holds exactly the acknowledged entries in
      // 0..size-1, plus any whose COMMIT outcome was reported unknown.
      assert.equal((await store.append(single())).duplicates.length, 0);
      const size = await store.log.size();
      const indices = acked.map((a) => a.log_index);
      assert.equal(new Set(indices).size, indices.length, 'no index acknowledged twice');
      const unknown = failed.filter((e) => e.details.written === 'unknown').length;
      assert.ok(size - 1 >= acked.length && size - 1 <= acked.length + unknown, `size ${size}, ${acked.length} acked, ${unknown} unknown`);
      const [{ count, max }] = await pgQuery<{ count: string; max: string }>(`SELECT count(*) AS count, max(idx) AS max FROM "${schema}".log_entries`);
      assert.equal(Number(count), size);
      assert.equal(Number(max), size - 1, 'dense');
      for (const a of acked) assert.equal((await store.getFact(a.cid))?.log_index, a.log_index);
    } finally {
      await cleanup();
    }
  });
});
