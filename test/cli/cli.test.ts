import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type TestApp } from '../support/app.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin/svc.mjs');
const run = (args: string[], env: NodeJS.ProcessEnv = {}) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, cwd: root });

let t: TestApp;
let dir: string;
let receiptFile: string;
before(async () => {
  t = await build();
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  const snap = (await t.app.inject({ method: 'GET', url: '/v1/corpus_state_stats' })).json();
  receiptFile = join(dir, 'snap.json');
  writeFileSync(receiptFile, JSON.stringify(snap));
});
after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('svc verify', () => {
  it('exits 0 for a served receipt pinned to the responder key', () => {
    const r = run(['verify', receiptFile, '--pubkey', t.service.keys.publicKeyB32]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^valid: 1 receipt/);
  });
  it('exits 1 and says why when one byte changed', () => {
    const doc = JSON.parse(readFileSync(receiptFile, 'utf8'));
    doc.receipt.request_id = doc.receipt.request_id.slice(0, -1) + (doc.receipt.request_id.endsWith('A') ? 'B' : 'A');
    const f = join(dir, 'bad.json');
    writeFileSync(f, JSON.stringify(doc.receipt));
    const r = run(['verify', f]);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /INVALID[\s\S]*signature/);
  });
  it('exits 1 when signed by a key other than the pinned one', () => {
    const r = run(['verify', receiptFile, '--pubkey', 'a'.repeat(52)]);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /untrusted_key/);
  });
  it('exits 2 for unreadable input', () => {
    const f = join(dir, 'garbage.json');
    writeFileSync(f, '{not json');
    assert.equal(run(['verify', f]).status, 2);
    assert.equal(run(['verify', join(dir, 'missing.json')]).status, 2);
    writeFileSync(f, '{"hello":1}');
    assert.equal(run(['verify', f]).status, 2);
  });
  it('honours --prefix: the same receipt is invalid under another prefix word', () => {
    assert.equal(run(['verify', receiptFile, '--prefix', 'other']).status, 1);
  });
});

describe('independent verifier written from protocol.md (../shared/tools/svcref.py)', () => {
  const svcrefDir = process.env.SVC_REF_DIR ?? join(root, '../shared/tools');
  const skip = spawnSync('python3', ['--version']).status !== 0 ? 'python3 not found' : !existsSync(join(svcrefDir, 'svcref.py')) ? 'svcref.py not found' : false;
  it('accepts the served receipt', { skip }, () => {
    writeFileSync(join(dir, 'receipt-only.json'), JSON.stringify(JSON.parse(readFileSync(receiptFile, 'utf8')).receipt));
    const r2 = spawnSync('python3', [join(root, 'test/support/svcref_check.py'), svcrefDir, join(root, 'test/vectors'), join(dir, 'receipt-only.json')], { encoding: 'utf8' });
    assert.equal(r2.status, 0, r2.stderr);
    assert.deepEqual(JSON.parse(r2.stdout).failures, []);
  });
});

describe('svc keygen and rotate-key', () => {
  it('creates a key once, rotates it and keeps the retired key published', async () => {
    const data = mkdtempSync(join(tmpdir(), 'svc-keys-'));
    try {
      const k1 = JSON.parse(run(['keygen'], { SVC_DATA: data }).stdout);
      assert.equal(k1.created, true);
      const k2 = JSON.parse(run(['keygen'], { SVC_DATA: data }).stdout);
      assert.equal(k2.created, false);
      assert.equal(k2.public_key, k1.public_key);
      const rot = JSON.parse(run(['rotate-key'], { SVC_DATA: data }).stdout);
      assert.equal(rot.epoch, 1);
      assert.equal(rot.retired, k1.public_key);
      const svc = await build({ dataDir: data });
      try {
        const wk = (await svc.app.inject({ method: 'GET', url: '/.well-known/svc.json' })).json();
        assert.equal(wk.responder_key_epoch, 1);
        assert.deepEqual(
          wk.retired_keys.map((k: any) => [k.public_key, k.epoch]),
          [[k1.public_key, 0]],
        );
        const stats = (await svc.app.inject({ method: 'GET', url: '/v1/corpus_state_stats' })).json();
        assert.equal(stats.receipt.responder_key_epoch, 1);
      } finally {
        await svc.close();
      }
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});

describe('npm start', () => {
  // A smoke test of the README's start command, not a start-up benchmark: the bound is generous
  // so that a machine busy with the rest of the suite does not fail it (start-up is ~1 s idle).
  it('answers /health on the embedded default', async () => {
    const data = mkdtempSync(join(tmpdir(), 'svc-start-'));
    const port = 20000 + Math.floor(Math.random() * 20000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
      cwd: root,
      env: { ...process.env, PORT: String(port), SVC_DATA: data, SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    const started = Date.now();
    try {
      let ok = false;
      while (Date.now() - started < 60_000 && !ok) {
        try {
          const r = await fetch(`http://127.0.0.1:${port}/health`);
          ok = r.ok && (await r.json()).status === 'ok';
        } catch {
          await new Promise((res) => setTimeout(res, 100));
        }
      }
      assert.ok(ok, `no /health answer within 60 s (waited ${Date.now() - started} ms)`);
    } finally {
      child.kill('SIGTERM');
      await new Promise((res) => child.once('exit', res));
      rmSync(data, { recursive: true, force: true });
    }
  });
});
