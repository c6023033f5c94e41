/**
 * Item 8 of issue 13, on a real full disk: the responder's data directory sits on a 4 MiB tmpfs,
 * a filler file takes all but a few KiB, and attesters keep writing. Writes must be refused with
 * `storage_full` (503, Retry-After), `/health` must say degraded, every acknowledged fact must stay
 * readable, and once the filler is removed writes must succeed again without a restart. A restart
 * afterwards must find every acknowledged fact and a log that verifies.
 *
 * Mounting needs privileges (root, no container that forbids it): without them the test is
 * skipped, and test/reliability/disk-full-seam.test.ts covers the same promises by injection.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyLogDir } from '../../src/store/log/disk-log.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester, sampleFact } from '../support/attester.js';

const mountPoint = mkdtempSync('/tmp/svc-diskfull-');
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint]).status === 0;
const skip = mounted ? false : 'mounting a 4 MiB tmpfs needs privileges this environment lacks (the seam test covers it)';
const dataDir = join(mountPoint, 'data');
const filler = join(mountPoint, 'filler');
const op = makeAttester('disk-full-operator');

let t: TestApp | undefined;
after(async () => {
  await t?.close().catch(() => {});
  if (mounted) spawnSync('umount', [mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});

const freeBytes = () => {
  const s = statfsSync(mountPoint);
  return s.bavail * s.bsize;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function send(method: 'GET' | 'POST', url: string, payload?: unknown) {
  const r = await t!.app.inject({ method, url, payload: payload as any });
  return { status: r.statusCode, body: r.json(), headers: r.headers };
}
/** A batch of eight facts with some bulk, so the disk fills in a few dozen writes. */
const attest = () =>
  send(
    'POST',
    '/v1/attest',
    op.batch(
      Array.from({ length: 8 }, () => sampleFact({ note: 'n'.repeat(400) })),
      t!.service.manifests,
    ),
  );

async function unreadable(cids: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const cid of cids) {
    const r = await send('POST', '/v1/fetch', { cid });
    if (r.status !== 200) out.push(`${cid}: ${r.status} ${r.body.code}`);
  }
  return out;
}

describe('a full disk under the embedded store (real tmpfs)', { skip }, () => {
  const acked: string[] = [];

  before(async () => {
    t = await build({ dataDir, attesterKeys: [op.publicKey] });
  });

  it('refuses writes with storage_full and Retry-After, keeps acknowledged facts readable, reports degraded health', async (ctx) => {
    const first = await attest();
    assert.equal(first.status, 200, JSON.stringify(first.body));
    acked.push(...first.body.fact_cids);
    writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes() - 48 * 1024), 1));

    const refusals: Array<{ status: number; body: any; headers: Record<string, unknown> }> = [];
    // Write until refused, then on for a while: deferred index commits fail after their acks.
    for (let i = 0; i < 300 && refusals.length < 6; i++) {
      const r = await attest();
      if (r.status === 200) acked.push(...r.body.fact_cids);
      else refusals.push(r);
      if (refusals.length > 0) await sleep(120);
    }
    assert.ok(refusals.length > 0, 'the disk filled up');
    // Both places that meet the full disk are exercised: the log's append (ENOSPC) and, after the
    // acknowledgements, the index's deferred commit (SQLITE_FULL, which rolls its transaction back).
    const components = new Set(refusals.map((r) => r.body.details.component));
    ctx.diagnostic(`${acked.length} facts acknowledged; refusals from the ${[...components].join(' and the ')}`);
    assert.ok(components.has('index'), `the index commit met the full disk (${[...components]})`);
    for (const r of refusals) {
      assert.equal(r.status, 503, JSON.stringify(r.body));
      assert.equal(r.body.code, 'storage_full', JSON.stringify(r.body));
      assert.equal(r.headers['retry-after'], String(r.body.retry_after));
      assert.ok(r.body.retry_after > 0);
    }
    const health = await send('GET', '/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'degraded', JSON.stringify(health.body));
    assert.equal(health.body.storage.status, 'full');
    assert.deepEqual(await unreadable(acked), [], 'every acknowledged fact reads while the disk is full');
  });

  it('takes writes again by itself once space is freed, without a restart', async () => {
    rmSync(filler);
    let ok: Awaited<ReturnType<typeof attest>> | undefined;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const r = await attest();
      if (r.status === 200) {
        ok = r;
        break;
      }
      assert.equal(r.body.code, 'storage_full', JSON.stringify(r.body));
      await sleep(250);
    }
    assert.ok(ok, 'a write succeeded within 15 s of freeing space');
    acked.push(...ok.body.fact_cids);
    assert.equal((await send('GET', '/health')).body.status, 'ok');
    assert.deepEqual(await unreadable(acked), []);
  });

  it('a restart finds every acknowledged fact and a log that verifies', async () => {
    await t!.close();
    t = undefined;
    const v = await verifyLogDir(join(dataDir, 'log'));
    assert.ok(v.ok, v.problems.join('; '));
    t = await build({ dataDir, attesterKeys: [op.publicKey] });
    assert.deepEqual(await unreadable(acked), []);
    assert.ok(readdirSync(dataDir).includes('index.sqlite'));
  });
});
