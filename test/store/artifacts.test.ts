/**
 * The artifact store on both drivers (contract.ts, ArtifactStore): content-addressed bytes
 * (cid = b32(BLAKE3(bytes)), computed by the store), whole and ranged reads, a byte bound with
 * least-recently-used eviction that keeps each evicted artifact's description, restoring an
 * evicted artifact by putting its bytes again, sharing between two stores over one PostgreSQL
 * schema (or a reopened SQLite store), and nothing of it in the log.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blake3 } from '@noble/hashes/blake3.js';
import { base32 } from '@scure/base';
import type { Store } from '../../src/store/contract.js';
import { MAX_ARTIFACT_BYTES, evictionOrder } from '../../src/store/artifacts.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { logOpener } from './support/log-factory.js';
import { dropSchema, pgConfig, pgQuery, pgSkip, randomSchema } from './support/pg-env.js';
import { testSigner } from './support/facts.js';

const signer = testSigner();
const quiet = () => undefined;
const MAX = 10_000;
const TYPE = 'application/x.svc-grid-f32.v1';

/** A clock the test steps by hand (recency of use is what eviction orders by). */
let clock = Date.parse('2026-11-26T12:00:00Z');
const now = () => new Date(clock);
const tick = (ms = 5000) => {
  clock += ms;
};

/** n bytes whose content depends on `seed`. */
function blob(seed: number, n = 3000): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (seed * 31 + i * 7) & 0xff;
  return b;
}
/** The cid a third party computes: RFC 4648 base32, lower case, no padding, of BLAKE3-256. */
const cidOf = (b: Uint8Array) => base32.encode(blake3(b)).replace(/=+$/, '').toLowerCase();

function suite(driver: 'sqlite' | 'postgres') {
  describe(`artifacts (${driver})`, { skip: driver === 'postgres' ? pgSkip : false }, () => {
    let open: () => Promise<Store>;
    let a: Store;
    let b: Store | undefined;
    let dir = '';
    let schema = '';
    before(async () => {
      if (driver === 'sqlite') {
        dir = mkdtempSync(join(tmpdir(), 'svc-artifacts-'));
        const logs = await logOpener(signer);
        open = async () => createSqliteStore({ dataDir: dir, scanCellLimit: 100, artifactMaxBytes: MAX }, await logs.open(dir), { logger: quiet, now });
      } else {
        schema = randomSchema();
        open = () => createPostgresStore({ ...pgConfig(), artifactMaxBytes: MAX }, signer, { schema, logger: quiet, now });
      }
      a = await open();
    });
    after(async () => {
      await a?.close();
      await b?.close();
      if (driver === 'sqlite') rmSync(dir, { recursive: true, force: true });
      else await dropSchema(schema);
    });

    /** A second responder: on PostgreSQL another store over the schema; on SQLite the store reopened. */
    async function other(): Promise<Store> {
      if (driver === 'postgres') {
        b ??= await open();
        return b;
      }
      await a.close();
      a = await open();
      return a;
    }

    it('put computes the cid from the bytes; read gives them back whole or by range; a second put writes nothing', async () => {
      const bytes = blob(1);
      const r = await a.artifacts.put(TYPE, bytes, 'svc:raster:x');
      assert.deepEqual(r, { cid: cidOf(bytes), stored: true, evicted: [] });
      assert.deepEqual(await a.artifacts.put(TYPE, bytes), { cid: r.cid, stored: false, evicted: [] });
      const whole = await a.artifacts.read(r.cid);
      assert.deepEqual([whole?.media_type, whole?.size], [TYPE, 3000]);
      assert.deepEqual(Buffer.from(whole!.bytes), Buffer.from(bytes));
      const part = await a.artifacts.read(r.cid, { start: 10, end: 19 });
      assert.deepEqual([...part!.bytes], [...bytes.subarray(10, 20)]);
      assert.equal(part!.size, 3000, 'size is the whole artifact');
      const tail = await a.artifacts.read(r.cid, { start: 2990, end: 99_999 });
      assert.deepEqual([...tail!.bytes], [...bytes.subarray(2990)], 'a range past the end is clipped');
      const info = await a.artifacts.info(r.cid);
      assert.deepEqual({ ...info, stored_at: undefined }, { cid: r.cid, media_type: TYPE, size: 3000, rebuild: 'svc:raster:x', stored_at: undefined, state: 'stored', evicted_at: null });
      assert.equal(await a.artifacts.read(cidOf(blob(999))), null);
      assert.equal(await a.artifacts.info(cidOf(blob(999))), null);
      assert.deepEqual(await a.artifacts.usage(), { artifacts: 1, bytes: 3000, max_bytes: MAX });
    });

    it('refuses malformed arguments before writing anything', async () => {
      await assert.rejects(a.artifacts.put('Application/X', blob(2)), TypeError);
      await assert.rejects(a.artifacts.put('text/plain; charset=utf-8', blob(2)), TypeError);
      await assert.rejects(a.artifacts.put(TYPE, new Uint8Array(0)), RangeError);
      await assert.rejects(a.artifacts.put(TYPE, new Uint8Array(MAX_ARTIFACT_BYTES + 1)), RangeError);
      await assert.rejects(a.artifacts.put(TYPE, blob(2), 'x'.repeat(1025)), RangeError);
      await assert.rejects(a.artifacts.read('NOT-A-CID'), TypeError);
      await assert.rejects(a.artifacts.read(cidOf(blob(1)), { start: 5, end: 4 }), RangeError);
      await assert.rejects(a.artifacts.info('x'), TypeError);
      assert.equal((await a.artifacts.usage()).artifacts, 1);
    });

    it('past the bound the least recently read go first; the one being put stays; descriptions outlive the bytes', async () => {
      tick();
      const first = (await a.artifacts.put(TYPE, blob(1))).cid; // already held: no new use
      tick();
      const second = (await a.artifacts.put(TYPE, blob(2), 'svc:raster:second')).cid;
      tick();
      const third = (await a.artifacts.put(TYPE, blob(3))).cid;
      tick();
      await a.artifacts.read(first); // first is now the most recently used
      tick();
      // 4 × 3000 > 10 000: the least recently used (second) goes.
      const fourth = await a.artifacts.put(TYPE, blob(4));
      assert.deepEqual(fourth.evicted, [second]);
      assert.equal(await a.artifacts.read(second), null);
      const gone = await a.artifacts.info(second);
      assert.deepEqual([gone?.state, gone?.rebuild, gone?.size, gone?.evicted_at !== null], ['evicted', 'svc:raster:second', 3000, true]);
      assert.deepEqual(await a.artifacts.usage(), { artifacts: 3, bytes: 9000, max_bytes: MAX });
      tick();
      // A single artifact larger than the bound is kept, and everything else goes.
      const big = await a.artifacts.put(TYPE, blob(5, 12_000));
      assert.deepEqual(new Set(big.evicted), new Set([first, third, fourth.cid]));
      assert.deepEqual(await a.artifacts.usage(), { artifacts: 1, bytes: 12_000, max_bytes: MAX });
      tick();
      // Putting evicted bytes again stores them anew (what a rebuild does).
      const again = await a.artifacts.put(TYPE, blob(2));
      assert.deepEqual([again.cid, again.stored, again.evicted], [second, true, [big.cid]]);
      assert.equal((await a.artifacts.info(second))?.state, 'stored');
      assert.equal((await a.artifacts.info(second))?.rebuild, 'svc:raster:second', 'the hint stays');
      assert.deepEqual(Buffer.from((await a.artifacts.read(second))!.bytes), Buffer.from(blob(2)));
      assert.equal(await a.artifacts.evict(second), true);
      assert.equal(await a.artifacts.evict(second), false);
      assert.equal(await a.artifacts.read(second), null);
    });

    it('what one store put, another responder (PostgreSQL) or the reopened store (SQLite) reads; the log is untouched', async () => {
      const size = await a.log.size();
      tick();
      const cid = (await a.artifacts.put(TYPE, blob(7))).cid;
      const o = await other();
      assert.deepEqual(Buffer.from((await o.artifacts.read(cid))!.bytes), Buffer.from(blob(7)));
      assert.equal(await o.log.size(), size);
      assert.equal(size, 0, 'artifacts never enter the log');
      if (driver === 'postgres') {
        // An eviction by one responder is seen by the other.
        assert.equal(await o.artifacts.evict(cid), true);
        assert.equal(await a.artifacts.read(cid), null);
        assert.equal((await a.artifacts.info(cid))?.state, 'evicted');
        const rows = await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".artifact_bytes WHERE cid = $1`, [cid]);
        assert.equal(rows[0].n, '0');
      }
    });

    it('concurrent puts keep the bound and store each artifact once', async () => {
      const o = driver === 'postgres' ? await other() : a;
      tick();
      const puts = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : o).artifacts.put(TYPE, blob(100 + (i % 6)))));
      assert.equal(new Set(puts.map((p) => p.cid)).size, 6);
      const u = await a.artifacts.usage();
      assert.ok(u.bytes <= MAX, `${u.bytes} bytes stored, bound ${MAX}`);
    });

    if (driver === 'sqlite') {
      it('artifacts live in artifacts.sqlite: rebuilding the index from the log keeps them', async () => {
        tick();
        const cid = (await a.artifacts.put(TYPE, blob(8))).cid;
        assert.ok(existsSync(join(dir, 'artifacts.sqlite')));
        await a.close();
        for (const f of ['index.sqlite', 'index.sqlite-wal', 'index.sqlite-shm']) rmSync(join(dir, f), { force: true });
        a = await open();
        assert.deepEqual(Buffer.from((await a.artifacts.read(cid))!.bytes), Buffer.from(blob(8)));
      });
    }
  });
}

describe('eviction order', () => {
  it('least recently used first, then oldest stored, then cid; never the kept one', () => {
    const c = (cid: string, used_at: number, stored_at = 0, size = 10) => ({ cid, size, used_at, stored_at });
    assert.deepEqual(evictionOrder([c('a', 1), c('b', 2), c('k', 0)], 'k', 30), []);
    assert.deepEqual(evictionOrder([c('a', 3), c('b', 2), c('k', 0)], 'k', 20), ['b']);
    assert.deepEqual(evictionOrder([c('b', 2, 5), c('a', 2, 5), c('c', 2, 1), c('k', 0)], 'k', 10), ['c', 'a', 'b']);
  });
});

suite('sqlite');
suite('postgres');
