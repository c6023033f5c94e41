/**
 * `svc serve` with SVC_WORKERS=2 as a real process tree: reads and writes through either worker
 * see one store (a write acknowledged through one worker is read through the other at once, warm
 * answers included), receipts carry the one responder key, SIGTERM drains and closes, and SIGKILL
 * of the owner under concurrent writers through both workers loses no acknowledged write.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as P from '../../src/protocol/index.js';
import { loadConfig } from '../../src/config.js';
import { openService } from '../../src/service.js';
import { verifyLogDir } from '../../src/store/log/verify.js';
import { alive, exited, killTree, operator, post, startServe } from '../support/worker-server.js';

const ROUNDS = Number(process.env.SVC_WORKER_CRASH_ROUNDS ?? 3);
const BAND = 'copdem30m.elevation_mean';

async function manifestsOf(base: string): Promise<{ registry_cid: string; schema_cid: string }> {
  return (await (await fetch(`${base}/v1/manifests`)).json()) as { registry_cid: string; schema_cid: string };
}

function elevation(cell: string, value: number): Record<string, unknown> {
  return { kind: 'primary', cell, band: BAND, tslot: 0, value, unit: 'm_msl', signed_at: '2026-11-20T12:00:00Z' };
}

/** The elevation served at `cell` and the receipt's key, on a fresh connection. */
async function elevationAt(base: string, cell: string): Promise<{ value: unknown; key: unknown }> {
  const r = await post(base, '/v1/recall', { cell, bands: [BAND] });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const facts = r.json.facts as Array<{ band: string; value: unknown; receipt: { responder_key?: string; key?: string } }>;
  const f = facts.find((x) => x.band === BAND);
  return { value: f?.value, key: (r.json.receipt as Record<string, unknown>)?.responder };
}

describe('worker processes (SVC_WORKERS=2)', () => {
  const redis = process.env.SVC_TEST_REDIS_URL;
  const caches: Array<[string, Record<string, string> | null]> = [
    ['each worker its own cache', {}],
    ['Redis shared by the workers', redis ? { SVC_REDIS_URL: redis } : null],
  ];
  for (const [cache, env] of caches) {
    it(`every worker reads what any worker wrote, at once; SIGTERM drains and closes (${cache})`, { timeout: 300_000, skip: env === null ? 'SVC_TEST_REDIS_URL is not set' : false }, async () => {
      const data = mkdtempSync(join(tmpdir(), 'svc-workers-'));
      const tree = await startServe(data, 2, env ?? {});
      try {
        const workers = tree.workerPids();
        assert.equal(workers.length, 2, `two workers run: ${workers}`);
        const manifests = await manifestsOf(tree.base);
        const cell = P.cellOf(47.37, 8.54);
        const first = await post(tree.base, '/v1/attest', operator.batch([elevation(cell, 408)], manifests));
        assert.equal(first.status, 200, JSON.stringify(first.json));
        // Fresh connections alternate between the workers: each serves the fact, and the
        // repeated reads leave a warm answer in both.
        const seen = [];
        for (let i = 0; i < 8; i++) seen.push(await elevationAt(tree.base, cell));
        assert.ok(
          seen.every((s) => s.value === 408),
          `every read sees the write: ${JSON.stringify(seen.map((s) => s.value))}`,
        );
        assert.equal(new Set(seen.map((s) => JSON.stringify(s.key))).size, 1, 'one responder key across workers');
        // A newer version through whichever worker: every worker's warm answer ends before the ack.
        for (let v = 409; v < 413; v++) {
          const w = await post(tree.base, '/v1/attest', operator.batch([elevation(cell, v)], manifests));
          assert.equal(w.status, 200, JSON.stringify(w.json));
          for (let i = 0; i < 4; i++) assert.equal((await elevationAt(tree.base, cell)).value, v, `read ${i} after writing ${v}`);
        }
        // Batch attestations are accepted in full by the owner: a refusal there comes back typed,
        // as from one process, and writes nothing; the forwarding worker counts the appends.
        const forged = operator.batch([elevation(cell, 999)], manifests) as Record<string, unknown>;
        const sig = P.b32decode(forged.signature as string, 64);
        sig[0] ^= 1;
        const refused = await post(tree.base, '/v1/attest', { ...forged, signature: P.b32encode(sig) });
        assert.equal(refused.status, 401, JSON.stringify(refused.json));
        assert.equal(refused.json.code, 'bad_signature');
        const cbor = await fetch(`${tree.base}/v1/attest_cbor`, { method: 'POST', headers: { 'content-type': 'application/cbor' }, body: Buffer.from([0xa0]) });
        assert.deepEqual([cbor.status, ((await cbor.json()) as { code: string }).code], [422, 'invalid_argument']);
        const appends = await Promise.all(
          [0, 1, 2, 3].map(async () => {
            const text = await (await fetch(`${tree.base}/metrics`, { headers: { connection: 'close' } })).text();
            return Number(/svc_log_append_duration_seconds_count\{outcome="ok"\} (\d+)/.exec(text)?.[1] ?? 0);
          }),
        );
        assert.ok(
          appends.some((n) => n > 0),
          `a worker's metrics count the appends it forwarded: ${appends}`,
        );
        // Log reads go through the owner: one head for everyone.
        const heads = await Promise.all([0, 1, 2, 3].map(async () => (await (await fetch(`${tree.base}/v1/log/sth`, { headers: { connection: 'close' } })).json()) as { tree_size: number }));
        assert.ok(
          heads.every((h) => h.tree_size === 5),
          JSON.stringify(heads),
        );

        tree.child.kill('SIGTERM');
        const { code } = await exited(tree.child);
        assert.equal(code, 0, tree.stderr());
        for (const pid of workers) assert.equal(alive(pid), false, `worker ${pid} ended`);
        const svc = await openService(loadConfig({ SVC_DATA: data, SVC_LOG_LEVEL: 'silent' }));
        try {
          assert.equal(await svc.store.log.size(), 5);
        } finally {
          await svc.close();
        }
      } finally {
        killTree(tree.child);
        rmSync(data, { recursive: true, force: true });
      }
    });
  }

  it(`SIGKILL of a worker (it is replaced) and of the owner under writers through both workers loses no acknowledged write (${ROUNDS} rounds)`, { timeout: 900_000 }, async () => {
    const data = mkdtempSync(join(tmpdir(), 'svc-workers-crash-'));
    const acked: string[] = [];
    let seq = 0;
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const tree = await startServe(data, 2);
        const workers = tree.workerPids();
        const manifests = await manifestsOf(tree.base);
        let stop = false;
        let roundAcks = 0;
        const writer = async (w: number) => {
          while (!stop) {
            const facts = Array.from({ length: 1 + (seq % 3) }, () => {
              seq++;
              return elevation(P.cellOf(((w * 13 + round * 7) % 160) - 80 + seq * 1e-4, (seq % 340) - 170), seq % 4000);
            });
            try {
              const r = await post(tree.base, '/v1/attest', operator.batch(facts, manifests));
              if (r.status === 200) {
                acked.push(...(r.json.fact_cids as string[]));
                roundAcks++;
              }
            } catch {
              // The connection died with the kill: not acknowledged, nothing to check.
            }
          }
        };
        const writers = [0, 1, 2, 3, 4, 5].map(writer);
        // Kill once writes are flowing, at a moment that varies by round.
        while (roundAcks < 5) await new Promise((r) => setTimeout(r, 20));
        if (round === 0) {
          // A worker dies under the writers: the owner starts another, which joins while writes go on.
          process.kill(workers[0], 'SIGKILL');
          const until = Date.now() + 120_000;
          let now = tree.workerPids();
          while ((now.length < 2 || now.includes(workers[0])) && Date.now() < until) {
            await new Promise((r) => setTimeout(r, 200));
            now = tree.workerPids();
          }
          assert.equal(now.length, 2, `a worker took the dead one's place: ${now}`);
          workers.splice(0, workers.length, ...now);
          const before = roundAcks;
          while (roundAcks < before + 10 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
          assert.ok(roundAcks >= before + 10, 'writes go on with the new worker');
          assert.ok(!tree.stderr().includes('did not confirm'), tree.stderr());
        }
        await new Promise((r) => setTimeout(r, 50 + Math.floor(Math.random() * 300)));
        process.kill(tree.child.pid!, 'SIGKILL');
        await exited(tree.child);
        stop = true;
        await Promise.all(writers);
        // Without their owner the workers leave by themselves.
        const until = Date.now() + 20_000;
        while (workers.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
        assert.deepEqual(workers.filter(alive), [], `round ${round}: workers exit when the owner is killed`);

        const check = await verifyLogDir(join(data, 'log'));
        assert.deepEqual(check.problems, [], `round ${round}: the log verifies`);
        const svc = await openService(loadConfig({ SVC_DATA: data, SVC_LOG_LEVEL: 'silent' }));
        try {
          for (const cid of acked) assert.ok(await svc.store.getFact(cid), `round ${round}: acknowledged fact ${cid} survived`);
        } finally {
          await svc.close();
        }
      }
      assert.ok(acked.length > ROUNDS * 5, `writes were acknowledged (${acked.length})`);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
