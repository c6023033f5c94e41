/**
 * The TypeScript client (packages/client) against a real responder listening on a loopback port,
 * started with a listed attester key: the three examples run as they are (their main functions,
 * and one as its own process), then what the client promises — a tampered answer throws
 * VerificationError (a proxy in front of the responder alters a value), a 429 with retry_after is
 * retried after that long, a repeated recall reuses its ETag (304 → the cached, verified answer),
 * and refusals are typed (SvcApiError with the envelope's code, SvcNetworkError without an answer).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SvcApiError, SvcClient, SvcNetworkError, VerificationError, protocol as P } from '../../packages/client/src/index.js';
import { nodeEd25519 } from '../../src/crypto/node-ed25519.js';
import { main as attestExample } from '../../packages/client/examples/attest.js';
import { main as readExample } from '../../packages/client/examples/read-and-verify.js';
import { main as notesExample } from '../../packages/client/examples/private-notes.js';
import { build, type TestApp } from '../support/app.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const seed = P.blake3(P.utf8('client test attester'));
const keyFile = { seed_b32: P.b32encode(seed), public_key: P.b32encode(P.portableEd25519.publicKey(seed)) };

let t: TestApp;
let base: string;
let responderKey: string;
let dir: string;

/** A proxy in front of the responder: counts requests, and `hook` may answer or rewrite. */
interface Proxy {
  url: string;
  seen: { method: string; url: string; headers: IncomingMessage['headers']; status: number }[];
  hook: ((req: IncomingMessage, up: { status: number; body: string }) => { status?: number; body?: string } | undefined) | null;
  /** Answer before asking the responder (a 429, say); undefined passes the request on. */
  before: ((req: IncomingMessage, res: ServerResponse) => boolean) | null;
  close(): Promise<void>;
}

async function proxy(): Promise<Proxy> {
  const p: Proxy = { url: '', seen: [], hook: null, before: null, close: async () => undefined };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (p.before?.(req, res)) {
      p.seen.push({ method: req.method!, url: req.url!, headers: req.headers, status: res.statusCode });
      return;
    }
    const headers: Record<string, string> = {};
    for (const h of ['content-type', 'authorization', 'accept', 'if-none-match']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h] as string;
    const up = await fetch(`${base}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    let status = up.status;
    let body = up.status === 304 ? '' : await up.text();
    const changed = p.hook?.(req, { status, body });
    if (changed) ({ status = status, body = body } = changed);
    const out: Record<string, string> = {};
    for (const h of ['content-type', 'etag', 'retry-after', 'date', 'cache-control']) {
      const v = up.headers.get(h);
      if (v) out[h] = v;
    }
    p.seen.push({ method: req.method!, url: req.url!, headers: req.headers, status });
    res.writeHead(status, out);
    res.end(status === 304 ? undefined : body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  p.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  p.close = () => new Promise((r) => server.close(() => r()));
  return p;
}

const cell = P.cellOf(52.1, 5.1);
const bands = ['weather.temperature_2m', 'copdem30m.elevation_mean'];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-client-'));
  t = await build({}, { SVC_ATTESTER_KEYS: keyFile.public_key });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  responderKey = t.service.keys.publicKeyB32;
});

after(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the examples, against a real responder', () => {
  it('attest: writes two facts and fetches one back, verified', async () => {
    const lines: string[] = [];
    const r = await attestExample({ url: base, key: keyFile, cell, log: (l) => lines.push(l) });
    assert.equal(r.fact_cids.length, 2);
    assert.equal(r.fetched, r.fact_cids[0]);
    assert.match(lines[0], /^accepted 2 fact\(s\) at log index \d+ \(batch root [a-z2-7]{52}\); receipt verified$/);
    assert.match(lines.at(-1)!, /^fetched [a-z2-7]{52}: weather\.temperature_2m = 12\.5, verified$/);
  });

  it('read-and-verify: recalls them with the key pinned, then a 304 reuses the verified answer', async () => {
    const lines: string[] = [];
    const r = await readExample({ url: base, publicKey: responderKey, cell, bands, log: (l) => lines.push(l) });
    assert.deepEqual(r, { cell, facts: 2, verified: 2, cached: true });
    assert.match(lines.join('\n'), /weather\.temperature_2m = 12\.5 degC/);
    assert.match(lines.join('\n'), new RegExp(`signed by ${responderKey} \\(pinned\\)`));
    assert.equal(lines.at(-1), 'again: 304 Not Modified, the verified answer kept from the first call');
  });

  it('private-notes: a note in a private scope is found with its bearer, refused without, unseen by a public search', async () => {
    const lines: string[] = [];
    const r = await notesExample({ url: base, key: keyFile, agent: 'client-test-agent', log: (l) => lines.push(l) });
    const text = lines.join('\n');
    assert.equal(r.notes.length, 2);
    assert.ok(r.found.includes(r.notes[0]), text);
    assert.equal(r.edges, 1);
    assert.equal(r.public, 0);
    assert.match(text, /without a bearer: unauthorized \(HTTP 401\)/);
    assert.match(text, /bearer for \{"agent_id":"client-test-agent"\} \(claimed\)/);
    assert.match(text, /Irrigation pump at the north field failed/);
  });

  it('each example runs as its own process (SVC_URL, SVC_KEY_FILE)', async () => {
    const file = join(dir, 'key.json');
    writeFileSync(file, JSON.stringify(keyFile), { mode: 0o600 });
    const run = (name: string) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', `packages/client/examples/${name}.ts`], {
          cwd: root,
          env: { ...process.env, SVC_URL: base, SVC_KEY_FILE: file, SVC_PUBKEY: responderKey },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('error', reject);
        child.on('close', (status) => resolve({ status, stdout, stderr }));
      });
    const [read, attest, notes] = await Promise.all([run('read-and-verify'), run('attest'), run('private-notes')]);
    assert.equal(read.status, 0, read.stderr);
    assert.match(read.stdout, /^recall defi\.zb650\.zc820\.ze81b: \d+ fact\(s\)$/m);
    assert.equal(attest.status, 0, attest.stderr);
    assert.match(attest.stdout, /receipt verified/);
    assert.equal(notes.status, 0, notes.stderr);
    assert.match(notes.stdout, /search "pump failed": [12] note\(s\), ranking verified/);
  });
});

describe('verification by default', () => {
  it('a tampered value throws VerificationError (cid_mismatch); verify: false hands it over', async () => {
    const px = await proxy();
    try {
      px.hook = (req, up) => {
        if (req.url !== '/v1/recall' || up.status !== 200) return undefined;
        const a = JSON.parse(up.body);
        a.facts[0].value = 99;
        return { body: JSON.stringify(a) };
      };
      const client = new SvcClient({ url: px.url, publicKey: responderKey });
      const err = await client.recall({ cell, bands }).then(
        () => assert.fail('a tampered answer was accepted'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof VerificationError, String(err));
      assert.equal(err.operation, 'recall');
      assert.ok(err.failures.includes('cid_mismatch'), err.failures.join());
      assert.equal(err.verdict?.valid, false);
      const unchecked = await client.recall({ cell, bands }, { verify: false });
      assert.equal(unchecked.facts[0].value, 99);
    } finally {
      await px.close();
    }
  });

  it('a receipt by another key than the pinned one is untrusted_key; the discovered key is pinned once', async () => {
    const other = P.b32encode(P.portableEd25519.publicKey(P.blake3(P.utf8('someone else'))));
    await assert.rejects(new SvcClient({ url: base, publicKey: other }).recall({ cell, bands }), (e: unknown) => e instanceof VerificationError && e.failures.includes('untrusted_key'));
    const px = await proxy();
    try {
      const client = new SvcClient({ url: px.url });
      await client.recall({ cell, bands }, { verify: true });
      await client.corpus_state_stats();
      assert.equal(px.seen.filter((s) => s.url === '/.well-known/svc.json').length, 1);
      assert.deepEqual(await client.responder(), { publicKey: responderKey, trustedKeys: [], prefix: 'svc', pinned: false });
    } finally {
      await px.close();
    }
  });

  it('a faster Ed25519 backend (node:crypto) gives the same verdicts', async () => {
    let asked = 0;
    const backend = { ...nodeEd25519, verify: (s: Uint8Array, m: Uint8Array, k: Uint8Array) => (asked++, nodeEd25519.verify(s, m, k)) };
    const client = new SvcClient({ url: base, publicKey: responderKey, ed25519: backend });
    const r = await client.callVerified('recall', { cell, bands });
    assert.ok(r.verdict?.trusted);
    assert.equal(asked, r.verdict.receipts.length);
  });

  it('a write answer listing other fact_cids, or another batch root, than were signed is refused', async () => {
    const px = await proxy();
    try {
      px.hook = (req, up) => {
        if (req.url !== '/v1/attest' || up.status !== 200) return undefined;
        return { body: JSON.stringify({ ...JSON.parse(up.body), batch_root: 'a'.repeat(52) }) };
      };
      const client = new SvcClient({ url: px.url, publicKey: responderKey });
      const facts = [{ kind: 'primary', cell, band: 'soil.clay_0_30cm', tslot: 0, value: 21, unit: 'percent', signed_at: P.signedAtText(new Date()) }];
      await assert.rejects(client.attest(facts, { key: seed }), (e: unknown) => e instanceof VerificationError && e.failures.includes('write_mismatch'));
    } finally {
      await px.close();
    }
  });
});

describe('attest', () => {
  it("with proofs: 'none' the answer leaves out the per-fact proofs and is still verified", async () => {
    const client = new SvcClient({ url: base, publicKey: responderKey });
    const facts = [{ kind: 'primary', cell: P.cellOf(51.9, 4.4), band: 'soil.clay_0_30cm', tslot: 0, value: 23, unit: 'percent', signed_at: P.signedAtText(new Date()) }];
    const bare = await client.attest(facts, { key: keyFile, proofs: 'none' });
    assert.equal(bare.answer.merkle_proofs, undefined);
    assert.equal(bare.fact_cids.length, 1);
    assert.ok(bare.verdict?.valid);
    const full = await client.attest([{ ...facts[0], value: 24 }], { key: keyFile });
    assert.ok(full.answer.merkle_proofs?.[full.fact_cids[0]]);
  });
});

describe('retries', () => {
  it('a 429 with retry_after is retried after that long, and answers', async () => {
    const px = await proxy();
    try {
      let refused = 0;
      px.before = (req, res) => {
        if (req.url !== '/v1/recall' || refused > 0) return false;
        refused++;
        res.writeHead(429, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'rate_limited', message: 'slow down', schema: 'svc.error.v1', path: '/v1/recall', details: { retry_after: 1 }, retry_after: 1 }));
        return true;
      };
      const client = new SvcClient({ url: px.url, publicKey: responderKey });
      const t0 = performance.now();
      const answer = await client.recall({ cell, bands });
      assert.ok(performance.now() - t0 >= 950, 'waited retry_after seconds');
      assert.equal(answer.facts.length, 2);
      assert.deepEqual(
        px.seen.filter((s) => s.url === '/v1/recall').map((s) => s.status),
        [429, 200],
      );
    } finally {
      await px.close();
    }
  });

  it('a retry_after beyond maxRetryAfter, or more refusals than retries, throws the typed refusal', async () => {
    const px = await proxy();
    try {
      let wait = 3600;
      px.before = (req, res) => {
        if (req.url !== '/v1/recall') return false;
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': String(wait) });
        res.end(JSON.stringify({ code: 'overloaded', message: 'busy', schema: 'svc.error.v1', details: {} }));
        return true;
      };
      const client = new SvcClient({ url: px.url, publicKey: responderKey, retries: 2, maxRetryAfter: 1 });
      await assert.rejects(client.recall({ cell, bands }), (e: unknown) => e instanceof SvcApiError && e.code === 'overloaded' && e.status === 503 && e.retryAfter === 3600);
      assert.equal(px.seen.length, 1, 'not retried: the wait is too long');
      wait = 0;
      await assert.rejects(client.recall({ cell, bands }), (e: unknown) => e instanceof SvcApiError && e.code === 'overloaded');
      assert.equal(px.seen.length, 1 + 3, 'the first try and two retries');
    } finally {
      await px.close();
    }
  });
});

describe('ETag reuse', () => {
  it('a repeated recall sends If-None-Match; the 304 returns the cached verified answer; new facts give a new answer', async () => {
    const px = await proxy();
    try {
      const client = new SvcClient({ url: px.url, publicKey: responderKey });
      const cellB = P.cellOf(48.2, 11.6);
      const signed_at = P.signedAtText(new Date());
      await client.attest([{ kind: 'primary', cell: cellB, band: 'soil.sand_0_30cm', tslot: 0, value: 40, unit: 'percent', signed_at }], { key: keyFile });
      const first = await client.callVerified('recall', { cell: cellB, bands: ['soil.sand_0_30cm'] });
      const second = await client.callVerified('recall', { cell: cellB, bands: ['soil.sand_0_30cm'] });
      assert.equal(first.cached, false);
      assert.equal(second.cached, true);
      assert.deepEqual(second.answer, first.answer);
      assert.ok(second.verdict?.valid, 'the cached answer keeps its verdict');
      const recalls = px.seen.filter((s) => s.url === '/v1/recall');
      assert.equal(recalls[0].headers['if-none-match'], undefined);
      assert.match(String(recalls[1].headers['if-none-match']), /^"[^"]+"$/);
      assert.deepEqual(
        recalls.map((s) => s.status),
        [200, 304],
      );
      // Mutating a returned answer does not change the cache.
      (second.answer.facts as unknown[]).length = 0;
      assert.equal((await client.recall({ cell: cellB, bands: ['soil.sand_0_30cm'] })).facts.length, 1);

      // A bearer (or any other input) is another cache entry; a newer fact changes the ETag.
      await client.attest([{ kind: 'primary', cell: cellB, band: 'soil.sand_0_30cm', tslot: 0, value: 41, unit: 'percent', signed_at: P.signedAtText(new Date(Date.now() + 1000)) }], { key: keyFile });
      const third = await client.callVerified('recall', { cell: cellB, bands: ['soil.sand_0_30cm'] });
      assert.equal(third.cached, false);
      assert.equal(third.answer.facts[0].value, 41);
    } finally {
      await px.close();
    }
  });
});

describe('typed errors and calls', () => {
  it('a refusal is an SvcApiError with the envelope code, status, message and details', async () => {
    const client = new SvcClient({ url: base, publicKey: responderKey });
    const err = await client.recall({ cell: 'defi.not.a.cell' }).then(
      () => assert.fail('accepted'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof SvcApiError, String(err));
    assert.equal(err.code, 'invalid_cell');
    assert.equal(err.status, 422);
    assert.equal(err.details.field, 'cell');
    assert.equal(err.path, '/v1/recall');
    assert.equal(err.envelope?.schema, 'svc.error.v1');

    const stranger = P.blake3(P.utf8('not listed'));
    await assert.rejects(client.writeNotes([{ text: 'x' }], { key: stranger }), (e: unknown) => e instanceof SvcApiError && e.code === 'unauthorized' && e.status === 403);
    await assert.rejects(client.fetch({ cid: P.b32encode(P.blake3(P.utf8('never stored'))) }), (e: unknown) => e instanceof SvcApiError && e.code === 'cid_not_found' && e.status === 404);
  });

  it('no answer is an SvcNetworkError', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await assert.rejects(new SvcClient({ url: `http://127.0.0.1:${port}`, publicKey: responderKey }).recall({ cell }), (e: unknown) => e instanceof SvcNetworkError && /cannot reach/.test(e.message));
  });

  it('GET operations send their input as query parameters; signed GET answers verify', async () => {
    const client = new SvcClient({ url: base, publicKey: responderKey });
    const derived = await client.callVerified('derived', { attester: keyFile.public_key, limit: 5 });
    assert.equal(derived.answer.attester, keyFile.public_key);
    assert.ok(derived.verdict?.valid);
    const stats = await client.callVerified('corpus_state_stats', {});
    assert.ok(stats.verdict?.trusted);
    assert.ok(stats.answer.facts_scanned >= 2);
  });
});
