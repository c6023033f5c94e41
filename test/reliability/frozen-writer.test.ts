/**
 * Issue 13 item 3, end to end: two responder processes on one PostgreSQL schema, writers on
 * both; responder A is frozen (SIGSTOP) at a moment it holds the log lock, for FREEZE_MS, then
 * thawed (SIGCONT). The probe saw every write of the deployment stall for as long as A stayed
 * frozen. Now B's writes may stall only until A's transaction is cut (bound ≤ 5 s); A's
 * interrupted batch is refused typed (503 overloaded), never acknowledged; A carries on after
 * the thaw; and the log is dense and consistent: every acknowledged fact readable through both,
 * one tree on both, every inclusion proof verifying.
 *
 * Loopback only, bounded: the freeze lasts FREEZE_MS, the whole test well under a minute.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import * as P from '../../src/protocol/index.js';
import { leafHash, memoryNodeSource, treeRoot, verifyConsistency, verifyInclusion } from '../../src/protocol/log-tree.js';
import { sequencerLockKey } from '../../src/store/postgres/schema.js';
import { advisoryLockIds } from '../../src/store/postgres/writer-bounds.js';
import { makeAttester } from '../support/attester.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../store/support/pg-env.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FREEZE_MS = 8_000;
/** The promised bound on how long a frozen writer can stall the others' writes. */
const STALL_BOUND_MS = 5_000;
const op = makeAttester('frozen-writer');
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

interface Responder {
  child: ChildProcess;
  base: string;
  data: string;
  stderr: string[];
}

async function startResponder(schema: string): Promise<Responder> {
  const data = mkdtempSync(join(tmpdir(), 'svc-frozen-'));
  const port = 21_000 + Math.floor(Math.random() * 20_000);
  const stderr: string[] = [];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      SVC_HOST: '127.0.0.1',
      SVC_DATA: data,
      SVC_LOG_LEVEL: 'warn',
      SVC_DATABASE_URL: pgUrl(),
      SVC_DATABASE_SCHEMA: schema,
      SVC_REDIS_URL: '',
      SVC_ATTESTER_KEYS: op.publicKey,
      SVC_RATE_LIMIT_RPS: '100000',
      SVC_RATE_LIMIT_BURST: '100000',
      SVC_UPSTREAM_PHOTON_URL: 'off',
      SVC_UPSTREAM_NOMINATIM_URL: 'off',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => stderr.push(...d.toString().split('\n').filter(Boolean)));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) return { child, base, data, stderr };
    } catch {}
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`responder did not start: ${stderr.join('\n')}`);
}

/** Local TCP ports of `pid`'s sockets (its connections to PostgreSQL among them). */
function localPorts(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {}
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9])) ports.add(parseInt(cols[1].split(':')[1], 16));
    }
  }
  return ports;
}

interface Call {
  via: 'A' | 'B';
  start: number;
  end: number;
  status: number;
  body: any;
  cid: string;
}

describe("a frozen responder cannot stall the deployment's writes", { skip: pgSkip }, () => {
  const schema = randomSchema();
  let a: Responder;
  let b: Responder;
  let db: pg.Client;
  before(async () => {
    [a, b] = await Promise.all([startResponder(schema), startResponder(schema)]);
    db = new pg.Client({ connectionString: pgUrl() });
    await db.connect();
  });
  after(async () => {
    await db?.end().catch(() => undefined);
    for (const r of [a, b]) {
      if (!r) continue;
      r.child.kill('SIGCONT');
      r.child.kill('SIGTERM');
      await new Promise((res) => (r.child.exitCode !== null ? res(null) : r.child.once('exit', res)));
      rmSync(r.data, { recursive: true, force: true });
    }
    await dropSchema(schema).catch(() => undefined);
  });

  it('SIGSTOP of a writer holding the log: others stall ≤ 5 s, its batch is refused typed, the log stays consistent', { timeout: 120_000 }, async (t) => {
    const manifests = await (await fetch(`${a.base}/v1/manifests`)).json();
    const [classid, objid] = advisoryLockIds(sequencerLockKey(schema));
    /** Backend pid and client port of whoever holds the log lock, if anyone. */
    const holder = async () =>
      (
        await db.query<{ pid: number; port: number }>(
          `SELECT a.pid, a.client_port AS port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::oid AND l.objid = $2::oid AND l.objsubid = 1`,
          [classid, objid],
        )
      ).rows[0];

    const calls: Call[] = [];
    let counter = 0;
    let stopped = false;
    const lane = async (r: Responder, via: 'A' | 'B') => {
      while (!stopped) {
        const i = counter++;
        // A distinct cell per write; value and tslot within what the band accepts.
        const cell = P.cellOf(-70 + (i % 1400) * 0.1, -170 + Math.floor(i / 1400) * 0.5);
        const fact = { kind: 'primary', cell, band: 'weather.temperature_2m', tslot: 20_000 + (i % 500), value: (i % 80) - 20, unit: 'degC' };
        const batch = op.batch([fact], manifests);
        const start = performance.now();
        const res = await fetch(`${r.base}/v1/attest`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) });
        const body = await res.json();
        calls.push({ via, start, end: performance.now(), status: res.status, body, cid: P.factCid(fact) });
      }
    };
    // A writes hard (it holds the lock most of the time), B steadily.
    const lanes = [...Array.from({ length: 8 }, () => lane(a, 'A')), ...Array.from({ length: 2 }, () => lane(b, 'B'))];
    await sleep(1_500);

    // Freeze A at a moment its backend holds the lock (and still does 300 ms later: not committing).
    const aPid = a.child.pid!;
    let frozenAt = 0;
    let lastSeen: unknown;
    for (let attempt = 0; attempt < 40 && frozenAt === 0; attempt++) {
      a.child.kill('SIGSTOP');
      const t0 = performance.now();
      const ports = localPorts(aPid);
      const h1 = await holder();
      await sleep(300);
      const h2 = await holder();
      lastSeen = [h1, h2];
      if (h1 && h2 && h1.pid === h2.pid && ports.has(h1.port)) frozenAt = t0;
      else {
        a.child.kill('SIGCONT');
        await sleep(50 + Math.random() * 150);
      }
    }
    if (frozenAt === 0) {
      stopped = true;
      await Promise.allSettled(lanes);
      const statuses = [...new Set(calls.map((c) => `${c.via} ${c.status} ${c.body.code ?? ''}`))];
      assert.fail(`A was never caught holding the log lock (${calls.length} calls: ${statuses.join(', ')}; last holder ${JSON.stringify(lastSeen)}, A ports ${[...localPorts(aPid)].join(',')})`);
    }
    // How long the lock stays with frozen A.
    let releasedAfter = -1;
    const aPorts = localPorts(aPid);
    while (performance.now() - frozenAt < FREEZE_MS) {
      const h = await holder();
      if (releasedAfter < 0 && !(h && aPorts.has(h.port))) releasedAfter = performance.now() - frozenAt;
      await sleep(50);
    }
    a.child.kill('SIGCONT');
    const thawedAt = performance.now();
    await sleep(2_500);
    stopped = true;
    await Promise.all(lanes);

    // B during the freeze: how long its writes waited, and that they went through.
    const bDuring = calls.filter((c) => c.via === 'B' && c.end > frozenAt && c.start < thawedAt);
    const bStall = Math.max(...bDuring.map((c) => c.end - Math.max(c.start, frozenAt)));
    const bDone = bDuring.filter((c) => c.end < thawedAt && c.status === 200).length;
    const aFailed = calls.filter((c) => c.via === 'A' && c.status !== 200);
    const aAfter = calls.filter((c) => c.via === 'A' && c.start > thawedAt + 100 && c.status === 200).length;
    const fenceLines = [...a.stderr, ...b.stderr].filter((l) => l.includes('store postgres'));
    t.diagnostic(
      `lock left frozen A after ${releasedAfter.toFixed(0)} ms; B's longest write during the ${FREEZE_MS} ms freeze: ${bStall.toFixed(0)} ms; ` +
        `B writes acknowledged during the freeze: ${bDone}; A refused ${aFailed.length} (${[...new Set(aFailed.map((c) => `${c.status} ${c.body.code} ${c.body.details?.phase}`))].join(', ')}); ` +
        `A writes acknowledged after the thaw: ${aAfter}; total calls ${calls.length}`,
    );
    for (const l of fenceLines) t.diagnostic(l);

    assert.ok(releasedAfter >= 0 && releasedAfter < STALL_BOUND_MS, `the lock stayed with frozen A for ${releasedAfter} ms`);
    assert.ok(bStall < STALL_BOUND_MS, `B's writes stalled ${bStall.toFixed(0)} ms`);
    assert.ok(bDone > 0, 'B kept writing while A was frozen');
    assert.ok(aFailed.length > 0, "A's interrupted batch was refused");
    for (const c of aFailed) {
      assert.equal(c.status, 503, JSON.stringify(c.body));
      assert.equal(c.body.code, 'overloaded');
      assert.equal(c.body.retry_after, 1);
    }
    assert.equal(calls.filter((c) => c.via === 'B' && c.status !== 200).length, 0, 'B refused nothing');
    assert.ok(aAfter > 0, 'A rejoined: it acknowledges writes after the thaw');
    assert.equal(a.child.exitCode, null, 'A is still running');
    assert.ok((await fetch(`${a.base}/health`)).ok);

    // The log: one tree, dense, exactly the acknowledged entries (plus any reported unknown).
    const acked = calls.filter((c) => c.status === 200);
    const sthA = await (await fetch(`${a.base}/v1/log/sth`)).json();
    const sthB = await (await fetch(`${b.base}/v1/log/sth`)).json();
    assert.equal(sthA.tree_size, sthB.tree_size);
    assert.equal(sthA.root, sthB.root);
    const size = sthA.tree_size as number;
    const entries = (await db.query<{ idx: string; entry: Buffer }>(`SELECT idx, entry FROM "${schema}".log_entries ORDER BY idx`)).rows;
    assert.deepEqual(
      entries.map((e) => Number(e.idx)),
      Array.from({ length: size }, (_, i) => i),
      'dense',
    );
    const leaves = entries.map((e) => leafHash(new Uint8Array(e.entry)));
    const root = P.b32decode(sthA.root, 32);
    assert.ok(P.equalBytes(treeRoot(memoryNodeSource(leaves), size), root), 'the served root is the root of the stored entries');
    const unknown = aFailed.filter((c) => c.body.details?.written === 'unknown').length;
    assert.ok(size >= acked.length && size <= acked.length + unknown, `${size} entries for ${acked.length} acknowledged, ${unknown} unknown`);
    const stored = new Map(
      (await db.query<{ fact_cid: string; log_index: string }>(`SELECT fact_cid, log_index FROM "${schema}".facts WHERE fact_cid = ANY($1)`, [calls.map((c) => c.cid)])).rows.map((r) => [
        r.fact_cid,
        Number(r.log_index),
      ]),
    );
    assert.equal(new Set(acked.map((c) => c.body.log_index)).size, acked.length, 'no index acknowledged twice');
    for (const c of acked) {
      assert.equal(stored.get(c.cid), c.body.log_index, `acknowledged ${c.cid} is stored where it was said to be`);
      const inc = c.body.log_inclusion;
      const head = c.body.tree_head;
      assert.ok(
        verifyInclusion(
          inc.leaf_index,
          inc.tree_size,
          leaves[inc.leaf_index],
          inc.path.map((x: string) => P.b32decode(x, 32)),
          P.b32decode(head.root, 32),
        ),
        `inclusion proof in the answer for ${c.cid}`,
      );
    }
    for (const c of aFailed) if (c.body.details?.written === false) assert.equal(stored.has(c.cid), false, `refused ${c.cid} is not in the log`);

    // Served proofs and reads through both responders, for a sample around the freeze.
    const sample = acked.filter((_, i) => i % Math.max(1, Math.floor(acked.length / 40)) === 0);
    for (const [r, label] of [
      [a, 'A'],
      [b, 'B'],
    ] as const) {
      for (const c of sample) {
        const got = await (await fetch(`${r.base}/v1/fetch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cid: c.cid }) })).json();
        assert.equal((got.fact ?? got.facts?.[0])?.fact_cid, c.cid, `${label} serves ${c.cid}`);
        const inc = await (await fetch(`${r.base}/v1/log/inclusion?index=${c.body.log_index}&tree_size=${size}`)).json();
        assert.ok(
          verifyInclusion(
            c.body.log_index,
            size,
            leaves[c.body.log_index],
            inc.path.map((x: string) => P.b32decode(x, 32)),
            root,
          ),
          `${label}: inclusion of ${c.body.log_index}`,
        );
        const head = c.body.tree_head;
        const cons = await (await fetch(`${r.base}/v1/log/consistency?first=${head.tree_size}&second=${size}`)).json();
        assert.ok(
          verifyConsistency(
            head.tree_size,
            size,
            P.b32decode(head.root, 32),
            root,
            cons.path.map((x: string) => P.b32decode(x, 32)),
          ),
          `${label}: head ${head.tree_size} is a prefix of ${size}`,
        );
      }
    }
  });
});
