/**
 * The writer's command line end to end, each command its own process (`node --import tsx
 * src/cli.ts …`) against a responder listening on a loopback port: keygen --attester makes the
 * key the responder is started with (SVC_ATTESTER_KEYS), attest writes from a file and from
 * stdin (JSON and CBOR), fetch verifies what was written, a tampering proxy in front of the
 * responder makes fetch fail, and a scoped fact is read with the bearer `svc bearer` prints and
 * not without it. Bad input is refused with a message, never a stack trace.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as P from '../../src/protocol/index.js';
import { build, type TestApp } from '../support/app.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `svc …` as its own process, stdin fed from `input`. Asynchronous on purpose: the responder
 * runs in this process, and a synchronous spawn would stop it from answering.
 */
function svc(args: string[], input = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: root, env: { ...process.env, SVC_LOG_LEVEL: 'silent' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}

const NO_STACK = /\n\s+at [^\n]+:\d+:\d+/;
/** A refusal as a user should see it: the exit status, a message, no stack trace. */
function refusedWith(r: Run, status: number, says: RegExp): void {
  assert.equal(r.status, status, r.stdout + r.stderr);
  assert.match(r.stderr, says);
  assert.doesNotMatch(r.stderr, NO_STACK);
}

let dir: string;
let keyFile: string;
let publicKey: string;
let t: TestApp;
let base: string;
/** A proxy in front of the responder; `tamper` rewrites its /v1/fetch answers. */
let proxy: Server;
let proxyBase: string;
let tamper: ((answer: any) => any) | null = null;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-writer-cli-'));
  keyFile = join(dir, 'writer.json');
  const k = await svc(['keygen', '--attester', '--out', keyFile, '--json']);
  assert.equal(k.status, 0, k.stderr);
  publicKey = JSON.parse(k.stdout).public_key;
  t = await build({}, { SVC_ATTESTER_KEYS: publicKey });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const h of ['content-type', 'authorization', 'accept']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h] as string;
    const up = await fetch(`${base}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    let body = await up.text();
    if (tamper && req.url === '/v1/fetch' && up.ok) body = JSON.stringify(tamper(JSON.parse(body)));
    res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' });
    res.end(body);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyBase = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

after(async () => {
  await new Promise((r) => proxy?.close(r));
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const now = () => new Date().toISOString().slice(0, 19) + 'Z';

describe('svc keygen --attester', () => {
  it('writes a 0600 key file whose public key is the printed one, and refuses to overwrite it without --force', async () => {
    const file = JSON.parse(readFileSync(keyFile, 'utf8'));
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    assert.equal(file.schema, 'svc.attester_key.v1');
    assert.equal(file.algorithm, 'ed25519');
    assert.match(file.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(P.b32encode(P.portableEd25519.publicKey(P.b32decode(file.seed_b32, 32))), publicKey);
    assert.equal(file.public_key, publicKey);

    const before = readFileSync(keyFile, 'utf8');
    refusedWith(await svc(['keygen', '--attester', '--out', keyFile]), 2, /already exists[\s\S]*--force/);
    assert.equal(readFileSync(keyFile, 'utf8'), before);

    const other = join(dir, 'other.json');
    const first = await svc(['keygen', '--attester', '--out', other]);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /public key: [a-z2-7]{52}\n[\s\S]*SVC_ATTESTER_KEYS=/);
    const forced = await svc(['keygen', '--attester', '--out', other, '--force', '--json']);
    assert.equal(forced.status, 0, forced.stderr);
    assert.notEqual(JSON.parse(forced.stdout).public_key, first.stdout.match(/public key: (\S+)/)![1]);
    assert.equal(statSync(other).mode & 0o777, 0o600);
  });

  it('--out and --force without --attester are refused, and the responder key is untouched', async () => {
    refusedWith(await svc(['keygen', '--force']), 2, /--attester/);
    refusedWith(await svc(['keygen', '--out', join(dir, 'x.json')]), 2, /--attester/);
  });
});

describe('svc attest, svc fetch', () => {
  const written: string[] = [];

  it('attests from a file (a record and a full body) and prints the fact_cids and the log index', async () => {
    const facts = join(dir, 'facts.json');
    writeFileSync(
      facts,
      JSON.stringify([
        { band: 'memory.note', value: { text: 'Pump at the north field failed', tags: ['pump'] } },
        { kind: 'primary', cell: P.cellOf(52.1, 5.1), band: 'weather.temperature_2m', value: 12.5, unit: 'degC', signed_at: now() },
      ]),
    );
    const r = await svc(['attest', facts, '--key', keyFile, '--url', base]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^accepted 2 fact\(s\) at log index \d+/);
    const cids = [...r.stdout.matchAll(/^ {2}([a-z2-7]{52}) {2}/gm)].map((m) => m[1]);
    assert.equal(cids.length, 2);
    assert.match(r.stdout, /memory\.note @ svc:entity:/);
    written.push(...cids);
  });

  it('attests from stdin ({facts: […]}, --json) and as canonical CBOR', async () => {
    const j = await svc(['attest', '-', '--key', keyFile, '--url', base, '--json'], JSON.stringify({ facts: [{ band: 'memory.note', value: { text: 'from stdin' } }] }));
    assert.equal(j.status, 0, j.stderr);
    const a = JSON.parse(j.stdout);
    assert.equal(a.accepted, true);
    assert.equal(a.fact_cids.length, 1);
    assert.equal(typeof a.log_index, 'number');
    assert.ok(a.receipt, 'the whole answer, receipt included');
    const c = await svc(['attest', '-', '--key', keyFile, '--url', base, '--cbor', '--json'], JSON.stringify([{ band: 'memory.note', value: { text: 'over CBOR' } }]));
    assert.equal(c.status, 0, c.stderr);
    const b = JSON.parse(c.stdout);
    assert.equal(b.log_index, a.log_index + 1);
    written.push(a.fact_cids[0], b.fact_cids[0]);
  });

  it('every printed fact_cid is fetchable and verifies offline', async () => {
    assert.equal(written.length, 4);
    for (const cid of written) {
      const r = await svc(['fetch', cid, '--url', base, '--pubkey', t.service.keys.publicKeyB32]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /^valid: .*\(the pinned key\)$/m);
      assert.match(r.stdout, new RegExp(`"fact_cid": "${cid}"`));
      assert.match(r.stdout, /signed by operator /);
    }
    const j = await svc(['fetch', written[0], '--url', base, '--json']);
    assert.equal(j.status, 0, j.stderr);
    const out = JSON.parse(j.stdout);
    assert.equal(out.ok, true);
    assert.equal(out.answer.fact.fact_cid, written[0]);
    assert.equal(out.verdict.valid, true);
  });

  it('a tampered answer, another fact in its place, another signer or an unknown cid fail with a non-zero exit', async () => {
    try {
      tamper = (a) => ({ ...a, fact: { ...a.fact, value: { ...a.fact.value, text: 'Pump at the north field works' } } });
      const changed = await svc(['fetch', written[0], '--url', proxyBase]);
      assert.equal(changed.status, 1, changed.stdout + changed.stderr);
      assert.match(changed.stdout, /^INVALID/m);
      assert.match(changed.stdout, /cid_mismatch/);

      // A genuine, signed answer, but for another fact than the one asked for.
      const other = (await t.app.inject({ method: 'POST', url: '/v1/fetch', payload: { cid: written[1] } })).json();
      tamper = () => other;
      const swapped = await svc(['fetch', written[0], '--url', proxyBase]);
      assert.equal(swapped.status, 1, swapped.stdout + swapped.stderr);
      assert.match(swapped.stdout, /^INVALID/m);
      assert.match(swapped.stdout, new RegExp(`asked for ${written[0]}: the answer holds ${written[1]}`));
    } finally {
      tamper = null;
    }
    const pinned = await svc(['fetch', written[0], '--url', base, '--pubkey', publicKey]);
    assert.equal(pinned.status, 1, pinned.stdout + pinned.stderr);

    const unknown = P.b32encode(P.blake3(P.utf8('never stored')));
    refusedWith(await svc(['fetch', unknown, '--url', base]), 3, /cid_not_found \(HTTP 404\)/);
  });
});

describe('svc bearer: a scoped fact', () => {
  it('is readable with the printed bearer and not without it', async () => {
    const agent = `writer-cli-${Date.now().toString(36)}`;
    const w = await svc(['attest', '-', '--key', keyFile, '--url', base, '--json'], JSON.stringify([{ band: 'memory.note', value: { text: 'private plan' }, scope: { agent_id: agent } }]));
    assert.equal(w.status, 0, w.stderr);
    const cid = JSON.parse(w.stdout).fact_cids[0];

    refusedWith(await svc(['fetch', cid, '--url', base]), 3, /cid_not_found/);

    const b = await svc(['bearer', '--scope', `agent_id=${agent}`, '--key', keyFile, '--url', base]);
    assert.equal(b.status, 0, b.stderr);
    const bearer = b.stdout.trim();
    assert.match(bearer, /^sb1\.[\w-]+\.[\w-]+$/);

    const r = await svc(['fetch', cid, '--url', base, '--bearer', bearer]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^valid: /m);
    assert.match(r.stdout, /private plan/);

    // The header a curl (or an MCP client) would send.
    const direct = await fetch(`${base}/v1/fetch`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` }, body: JSON.stringify({ cid }) });
    assert.equal(direct.status, 200);
    assert.equal((await direct.json()).fact.fact_cid, cid);

    // A second bearer in the same second still comes (a statement is good once), and --json shows the answer.
    const again = await svc(['bearer', '--scope', JSON.stringify({ agent_id: agent }), '--key', keyFile, '--url', base, '--ttl', '60', '--json']);
    assert.equal(again.status, 0, again.stderr);
    const answer = JSON.parse(again.stdout);
    assert.deepEqual(answer.scope, { agent_id: agent });
    assert.equal(answer.binding, 'claimed');
  });
});

describe('bad input: a message and a non-zero exit, no stack trace', () => {
  it('a missing or damaged key file', async () => {
    const facts = JSON.stringify([{ band: 'memory.note', value: { text: 'x' } }]);
    refusedWith(await svc(['attest', '-', '--key', join(dir, 'missing.json'), '--url', base], facts), 2, /key file .*missing\.json: not found/);
    writeFileSync(join(dir, 'junk-key.json'), '{"seed_b32": 1');
    refusedWith(await svc(['attest', '-', '--key', join(dir, 'junk-key.json'), '--url', base], facts), 2, /junk-key\.json: not JSON/);
    refusedWith(await svc(['bearer', '--scope', 'agent_id=a', '--key', join(dir, 'missing.json'), '--url', base]), 2, /not found/);
  });

  it('malformed facts', async () => {
    refusedWith(await svc(['attest', '-', '--key', keyFile, '--url', base], '[{"band":'), 2, /stdin: not JSON/);
    refusedWith(await svc(['attest', '-', '--key', keyFile, '--url', base], '{"nothing": 1}'), 2, /expected a non-empty JSON array of facts/);
    refusedWith(await svc(['attest', join(dir, 'no-such-facts.json'), '--key', keyFile, '--url', base]), 2, /no-such-facts\.json: not found/);
  });

  it('unknown flags, missing options and bad values are usage errors', async () => {
    refusedWith(await svc(['attest', '-', '--key', keyFile, '--frobnicate']), 2, /svc attest: Unknown option '--frobnicate'/);
    refusedWith(await svc(['attest', '-']), 2, /--key <file> is required/);
    refusedWith(await svc(['bearer', '--scope', 'colour=red', '--key', keyFile]), 2, /unknown member "colour"/);
    refusedWith(await svc(['bearer', '--scope', 'agent_id=a', '--key', keyFile, '--ttl', 'soon']), 2, /--ttl/);
    refusedWith(await svc(['fetch', 'not-a-cid']), 2, /is not a fact_cid/);
    refusedWith(await svc(['fetch', 'a'.repeat(52), '--url', 'ftp://x']), 2, /--url/);
  });

  it('the responder refuses an unlisted key, typed; an unreachable responder is said so', async () => {
    const stranger = join(dir, 'stranger.json');
    assert.equal((await svc(['keygen', '--attester', '--out', stranger])).status, 0);
    const r = await svc(['attest', '-', '--key', stranger, '--url', base], JSON.stringify([{ band: 'memory.note', value: { text: 'x' } }]));
    refusedWith(r, 3, /svc attest: unauthorized \(HTTP 403\): attester: /);
    assert.match(r.stderr, /hint: .*SVC_ATTESTER_KEYS/);
    const bad = await svc(['attest', '-', '--key', keyFile, '--url', base], JSON.stringify([{ band: 'memory.note', value: { text: 'x', bogus: 1 } }]));
    refusedWith(bad, 3, /invalid_argument \(HTTP 422\): facts\[0\]\.value\.bogus/);

    const closed = createServer();
    await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((res) => closed.close(res));
    refusedWith(await svc(['fetch', 'a'.repeat(52), '--url', `http://127.0.0.1:${port}`]), 3, /cannot reach/);
  });
});
