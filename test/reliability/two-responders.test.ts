import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as P from '../../src/protocol/index.js';
import { makeAttester } from '../support/attester.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../store/support/pg-env.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const REDIS = process.env.SVC_TEST_REDIS_URL ?? '';
const op = makeAttester('two-responders');

interface Responder {
  child: ChildProcess;
  base: string;
  data: string;
}

async function startResponder(schema: string): Promise<Responder> {
  const data = mkdtempSync(join(tmpdir(), 'svc-two-'));
  const port = 21000 + Math.floor(Math.random() * 20000);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      SVC_HOST: '127.0.0.1',
      SVC_DATA: data,
      SVC_LOG_LEVEL: 'warn',
      SVC_DATABASE_URL: pgUrl(),
      SVC_DATABASE_SCHEMA: schema,
      SVC_REDIS_URL: REDIS,
      SVC_ATTESTER_KEYS: op.publicKey,
      SVC_RATE_LIMIT_RPS: '100000',
      SVC_RATE_LIMIT_BURST: '100000',
      SVC_UPSTREAM_PHOTON_URL: 'off',
      SVC_UPSTREAM_NOMINATIM_URL: 'off',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) return { child, base, data };
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('responder did not start');
}

const post = async (base: string, path: string, body: unknown) => {
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
};

describe('two responder processes on one PostgreSQL (+ Redis when configured)', { skip: pgSkip }, () => {
  const schema = randomSchema();
  let a: Responder;
  let b: Responder;
  before(async () => {
    a = await startResponder(schema);
    b = await startResponder(schema);
  });
  after(async () => {
    for (const r of [a, b]) {
      if (!r) continue;
      r.child.kill('SIGTERM');
      await new Promise((res) => r.child.once('exit', res));
      rmSync(r.data, { recursive: true, force: true });
    }
    await dropSchema(schema).catch(() => undefined);
  });

  it('share one log: concurrent writes through both, no lost or duplicated entries, reads and receipts from both verify', { timeout: 120_000 }, async () => {
    const wk = async (r: Responder) => (await (await fetch(`${r.base}/.well-known/svc.json`)).json()).responder_pubkey_b32 as string;
    const [keyA, keyB] = [await wk(a), await wk(b)];
    const manifests = await (await fetch(`${a.base}/v1/manifests`)).json();
    const writes: Array<Promise<{ status: number; body: any }>> = [];
    for (let i = 0; i < 40; i++) {
      const fact = { kind: 'primary', cell: P.cellOf(20 + i * 0.001, 30), band: 'weather.temperature_2m', tslot: 20_000 + i, value: i, unit: 'degC' };
      writes.push(post(i % 2 === 0 ? a.base : b.base, '/v1/attest', op.batch([fact], manifests)));
    }
    const results = await Promise.all(writes);
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
    const indices = results.map((r) => r.body.log_index).sort((x, y) => x - y);
    assert.deepEqual(
      indices,
      Array.from({ length: 40 }, (_, i) => indices[0] + i),
      'dense, unique log indices',
    );
    // Each fact is readable through the OTHER responder, with a receipt that verifies under that responder's key.
    for (let i = 0; i < 40; i++) {
      const reader = i % 2 === 0 ? b : a;
      const key = i % 2 === 0 ? keyB : keyA;
      const cid = results[i].body.fact_cids[0];
      const got = await post(reader.base, '/v1/fetch', { cid });
      assert.equal(got.status, 200, JSON.stringify(got.body));
      const fact = got.body.fact ?? got.body.facts?.[0];
      assert.equal(fact.fact_cid, cid);
      assert.ok(P.verifyReceipt(got.body.receipt, { publicKey: key }).valid);
    }
    // One log: both heads name the same tree, and each is consistent with every head served during the writes.
    const sthA = await (await fetch(`${a.base}/v1/log/sth`)).json();
    const sthB = await (await fetch(`${b.base}/v1/log/sth`)).json();
    assert.equal(sthA.tree_size, sthB.tree_size);
    assert.equal(sthA.root, sthB.root);
    for (const r of results) {
      const h = r.body.tree_head;
      const c = await (await fetch(`${a.base}/v1/log/consistency?first=${h.tree_size}&second=${sthA.tree_size}`)).json();
      assert.ok(
        P.verifyConsistency(
          h.tree_size,
          sthA.tree_size,
          P.b32decode(h.root, 32),
          P.b32decode(sthA.root, 32),
          c.path.map((x: string) => P.b32decode(x, 32)),
        ),
      );
    }
  });
});
