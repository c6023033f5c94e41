/**
 * Graceful shutdown under load (docs/deploy.md, "Stopping a responder"; docs/reliability.md):
 * the real server (`src/cli.ts serve`) runs as a child process on a loopback port and a temp data
 * directory while eight clients keep signed writes and reads going over kept-alive connections;
 * then SIGTERM, sent while one recall is known to be in flight (its upstream, a stub here,
 * answers after 1.5 s). Held: the process exits 0 within a bound; every write answered 2xx is in
 * the log after a restart (and the log verifies); every request either got a whole answer (200,
 * or 503 `overloaded` once the drain began) or a connection error, never a cut-off body; the
 * recall in flight at the signal is answered 200 (before the drain, `app.close()` reset it);
 * once the shutdown is logged no new connection is accepted; every line the process wrote is
 * JSON. Counts and timings are reported, not asserted.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as P from '../../src/protocol/index.js';
import { loadConfig } from '../../src/config.js';
import { openService } from '../../src/service.js';
import { verifyLogDir } from '../../src/store/log/verify.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { makeAttester } from '../support/attester.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const op = makeAttester('graceful-shutdown');
const WORKERS = 8;
/** Writes acknowledged before the signal is sent (the load must really be running). */
const WRITES_BEFORE_SIGNAL = 30;
/** From SIGTERM to exit: requests here take milliseconds; the drain's own bound is the gateway timeout + 2 s. */
const EXIT_BOUND_MS = 30_000;
/** How long the stub upstream takes to answer: the recall in flight at the signal outlives the signal by this. */
const UPSTREAM_DELAY_MS = 1500;

interface Outcome {
  kind: 'attest' | 'fetch' | 'sth' | 'health' | 'recall';
  startedAt: number;
  endedAt: number;
  status?: number;
  /** The body arrived whole and parsed. */
  whole?: boolean;
  /** The request failed before any answer (connection refused, reset, closed). */
  connectionError?: string;
  /** Headers arrived but the body did not (a half-written answer). */
  bodyError?: string;
  cids?: string[];
  code?: string;
}

async function request(base: string, kind: Outcome['kind'], path: string, body?: unknown): Promise<Outcome> {
  const startedAt = Date.now();
  let r: Response;
  try {
    r = await fetch(base + path, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (err) {
    return { kind, startedAt, endedAt: Date.now(), connectionError: String((err as Error).cause ?? err) };
  }
  const out: Outcome = { kind, startedAt, endedAt: 0, status: r.status };
  try {
    const bytes = Buffer.from(await r.arrayBuffer());
    const declared = r.headers.get('content-length');
    if (declared !== null && Number(declared) !== bytes.length) throw new Error(`content-length ${declared}, received ${bytes.length}`);
    const json = JSON.parse(bytes.toString('utf8'));
    out.whole = true;
    if (kind === 'attest' && r.status === 200) out.cids = json.fact_cids;
    if (r.status !== 200) out.code = json.code;
  } catch (err) {
    out.bodyError = String(err);
  }
  out.endedAt = Date.now();
  return out;
}

/** True when a fresh TCP connection to `port` is refused (or reset before it could be used). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    const done = (v: boolean) => {
      s.destroy();
      resolve(v);
    };
    s.once('connect', () => done(false));
    s.once('error', () => done(true));
    s.setTimeout(5000, () => done(false));
  });
}

/** A slow upstream for every source: each request waits, then gets `{}` (a format error, nothing is signed). */
async function slowUpstream(): Promise<{ server: Server; url: string; hit: Promise<void> }> {
  let hit: () => void;
  const first = new Promise<void>((r) => (hit = r));
  const server = createServer((_req, res) => {
    hit();
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), UPSTREAM_DELAY_MS);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hit: first };
}

describe('graceful shutdown under load (SIGTERM)', () => {
  it('exits 0, keeps every acknowledged write, finishes the request in flight, answers whole or not at all, accepts no new connection', { timeout: 180_000 }, async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-shutdown-'));
    const upstream = await slowUpstream();
    const upstreams: Record<string, string> = {};
    for (const src of loadRegistry().sourceList) upstreams[src.env] = upstream.url;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
      cwd: root,
      env: {
        ...process.env,
        ...upstreams,
        PORT: '0',
        SVC_HOST: '127.0.0.1',
        SVC_DATA: dataDir,
        SVC_LOG_LEVEL: 'info',
        SVC_ATTESTER_KEYS: op.publicKey,
        SVC_RATE_LIMIT_RPS: '100000',
        SVC_RATE_LIMIT_BURST: '100000',
        SVC_UPSTREAM_PHOTON_URL: 'off',
        SVC_UPSTREAM_NOMINATIM_URL: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const logLines: string[] = [];
    let stderr = '';
    let partial = '';
    let listening: (url: string) => void;
    const listeningAt = new Promise<string>((r) => (listening = r));
    let shutdownLogged: () => void;
    const shutdownLine = new Promise<void>((r) => (shutdownLogged = r));
    child.stderr.on('data', (c) => (stderr += c));
    child.stdout.on('data', (chunk: Buffer) => {
      partial += chunk.toString();
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        const line = partial.slice(0, nl);
        partial = partial.slice(nl + 1);
        logLines.push(line);
        const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (m) listening(m[1]);
        if (line.includes('shutting down')) shutdownLogged();
      }
    });
    let exitedAt = 0;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => {
        exitedAt = Date.now();
        resolve({ code, signal });
      }),
    );
    try {
      const base = await Promise.race([listeningAt, exited.then(() => Promise.reject(new Error(`the responder exited before listening: ${stderr}`)))]);
      const port = Number(new URL(base).port);
      const manifests = await (await fetch(`${base}/v1/manifests`)).json();

      const outcomes: Outcome[] = [];
      const acked: string[] = [];
      let gone = false;
      void exited.then(() => (gone = true));
      let n = 0;
      const worker = async (w: number) => {
        for (let i = 0; !gone && i < 100_000; i++) {
          let o: Outcome;
          const pick = (i + w) % 4;
          if (pick === 0 || pick === 2) {
            n++;
            const fact = { kind: 'primary', cell: P.cellOf(-60 + (n % 120), -170 + ((n * 7) % 340)), band: 'weather.temperature_2m', tslot: 20_000 + n, value: (n % 400) / 10, unit: 'degC' };
            o = await request(base, 'attest', '/v1/attest', op.batch([fact], manifests));
            if (o.cids) acked.push(...o.cids);
          } else if (pick === 1 && acked.length > 0) {
            o = await request(base, 'fetch', '/v1/fetch', { cid: acked[(i * 31) % acked.length] });
          } else if (pick === 1) {
            o = await request(base, 'health', '/health');
          } else {
            o = await request(base, 'sth', '/v1/log/sth');
          }
          outcomes.push(o);
          // After the listener closed, refused connections fail at once: do not spin.
          if (o.connectionError) await new Promise((r) => setTimeout(r, 25));
        }
      };
      const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));

      // Signal once the load is really running, or after a bounded wait.
      const waitUntil = Date.now() + 60_000;
      while (acked.length < WRITES_BEFORE_SIGNAL && Date.now() < waitUntil && !gone) await new Promise((r) => setTimeout(r, 20));
      assert.ok(acked.length >= WRITES_BEFORE_SIGNAL, `writes were acknowledged before the signal (${acked.length}); stderr: ${stderr}`);
      // A request certainly in flight at the signal: its handler waits on the upstream.
      const inFlight = request(base, 'recall', '/v1/recall', { cell: P.cellOf(45.76, 4.84), bands: ['weather.temperature_2m'] });
      let hitBound: NodeJS.Timeout | undefined;
      await Promise.race([upstream.hit, new Promise((r) => (hitBound = setTimeout(r, 20_000)))]);
      clearTimeout(hitBound);
      const signalAt = Date.now();
      child.kill('SIGTERM');

      // Once the shutdown is logged the listening socket is closed: a new connection is refused.
      await Promise.race([shutdownLine, exited]);
      const probes = await Promise.all([refused(port), refused(port), refused(port)]);
      assert.deepEqual(probes, [true, true, true], 'no new connection is accepted once the shutdown began');

      let bound: NodeJS.Timeout | undefined;
      const result = await Promise.race([exited, new Promise<'timeout'>((r) => (bound = setTimeout(() => r('timeout'), EXIT_BOUND_MS)))]);
      clearTimeout(bound);
      if (result === 'timeout') child.kill('SIGKILL');
      assert.notEqual(result, 'timeout', `the responder exits within ${EXIT_BOUND_MS} ms of SIGTERM`);
      assert.deepEqual(result, { code: 0, signal: null }, `exit code 0; stderr: ${stderr}`);
      await load;
      const slow = await inFlight;
      assert.equal(slow.status, 200, `the recall in flight at the signal was answered: ${JSON.stringify(slow)}`);
      assert.ok(slow.whole, 'and its answer arrived whole');
      assert.ok(slow.endedAt >= signalAt, 'after the signal');

      // Every request: a whole answer (200, or 503 overloaded during the drain) or a connection error.
      const halfWritten = outcomes.filter((o) => o.status !== undefined && !o.whole);
      assert.deepEqual(halfWritten, [], 'no answer was cut off after its headers');
      const unexpected = outcomes.filter((o) => o.status !== undefined && !(o.status === 200 || (o.status === 503 && o.code === 'overloaded')));
      assert.deepEqual(unexpected, [], 'answers are 200, or 503 overloaded once the drain began');
      const early = outcomes.filter((o) => o.connectionError && o.endedAt < signalAt);
      assert.deepEqual(early, [], 'no connection error before the signal');

      // Every acknowledged write survived the shutdown, and the log verifies.
      const check = await verifyLogDir(join(dataDir, 'log'));
      assert.deepEqual(check.problems, [], 'the log verifies after the shutdown');
      const svc = await openService(loadConfig({ SVC_DATA: dataDir, SVC_LOG_LEVEL: 'silent' }));
      try {
        for (const cid of acked) assert.ok(await svc.store.getFact(cid), `acknowledged fact ${cid} is in the log after a restart`);
      } finally {
        await svc.close();
      }

      // Structured logs: one JSON object per line; request lines carry their request id.
      assert.ok(logLines.length > 0);
      for (const line of logLines) {
        const j = JSON.parse(line);
        assert.equal(typeof j.level, 'number');
        assert.equal(typeof j.msg, 'string');
        if (j.msg === 'request completed' || j.msg === 'incoming request') assert.equal(typeof j.reqId, 'string', line);
      }

      const after = outcomes.filter((o) => o.endedAt >= signalAt);
      t.diagnostic(
        `acknowledged writes ${acked.length}; requests ${outcomes.length}, finished after the signal ${after.length} ` +
          `(200: ${after.filter((o) => o.status === 200).length}, 503: ${after.filter((o) => o.status === 503).length}, ` +
          `connection errors: ${after.filter((o) => o.connectionError).length}); exit ${exitedAt - signalAt} ms after SIGTERM`,
      );
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      upstream.server.closeAllConnections();
      upstream.server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
