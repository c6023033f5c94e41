/**
 * Slow request bodies (issue 13, item 6): one address opens 300 sockets on loopback; most send
 * complete headers announcing a body, then dribble that body one byte a second, so an idle
 * timeout never fires (a quarter dribble their headers instead, a quarter send nothing). The responder runs as its own process (src/cli.ts serve, defaults as
 * shipped) so /proc/<pid>/fd counts only its descriptors. Checked: connections past the per-IP
 * cap are refused at once, every accepted one is closed within the documented bound, a normal
 * client from another address is served throughout, and the fd count returns to its baseline.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HTTP_LIMITS } from '../../src/api/limits.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ATTACK_SOCKETS = 300;
// The attacker and the normal client need different addresses: the cap is per IP. Linux routes
// all of 127/8 to the loopback interface, so 127.0.0.2 is a second local address.
const ATTACKER = '127.0.0.2';
const NORMAL = '127.0.0.1';
/** Documented bound (docs/reliability.md): the request timeout plus one connection-check period. */
const BOUND_MS = HTTP_LIMITS.request_timeout_s * 1000 + HTTP_LIMITS.timeout_check_interval_ms;
/** The same for a request whose headers never complete. */
const HEADERS_BOUND_MS = HTTP_LIMITS.headers_timeout_s * 1000 + HTTP_LIMITS.timeout_check_interval_ms;
const SLACK_MS = 2500;

let child: ChildProcess;
let port: number;
let dataDir: string;

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => res(p));
    });
    s.on('error', rej);
  });
}

const fds = () => readdirSync(`/proc/${child.pid}/fd`).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One GET on a fresh connection from the normal address: status and latency, or the failure. */
function normalGet(path: string): Promise<{ status: number; ms: number }> {
  const t0 = Date.now();
  return new Promise((res) => {
    const req = http.get({ host: '127.0.0.1', port, path, localAddress: NORMAL, agent: false, timeout: 5000 }, (r) => {
      r.resume();
      r.on('end', () => res({ status: r.statusCode ?? 0, ms: Date.now() - t0 }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => res({ status: 0, ms: Date.now() - t0 }));
  });
}

interface SlowResult {
  style: Style;
  /** Milliseconds from connect until the socket closed. */
  ms: number;
  /** First bytes the server sent back (empty when refused without an answer). */
  answer: string;
}

type Style = 'body' | 'headers' | 'silent';
const HEAD = 'POST /v1/recall HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{';

/**
 * A client that holds a socket as long as the server lets it: `body` sends the headers for a
 * 100 kB body, then one byte a second; `headers` sends the request one byte a second from its
 * first; `silent` connects and sends nothing.
 */
function slowClient(style: Style): { done: Promise<SlowResult>; socket: net.Socket } {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: ATTACKER });
  const t0 = Date.now();
  let answer = '';
  let drip: NodeJS.Timeout | undefined;
  socket.on('connect', () => {
    if (style === 'silent') return;
    let at = 1;
    socket.write(style === 'body' ? HEAD : HEAD[0]);
    drip = setInterval(() => socket.write(style === 'body' ? ' ' : HEAD[at++ % HEAD.length]), 1000);
  });
  socket.on('data', (d) => (answer += d.toString('latin1')));
  socket.on('error', () => {});
  const done = new Promise<SlowResult>((res) =>
    socket.on('close', () => {
      clearInterval(drip);
      res({ style, ms: Date.now() - t0, answer });
    }),
  );
  return { done, socket };
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-slow-'));
  port = await freePort();
  child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), SVC_HOST: '127.0.0.1', SVC_DATA: dataDir, SVC_LOG_LEVEL: 'warn', SVC_UPSTREAM_PHOTON_URL: 'off', SVC_UPSTREAM_NOMINATIM_URL: 'off' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 200; i++) {
    if ((await normalGet('/health')).status === 200) return;
    await sleep(100);
  }
  throw new Error('responder did not start');
});

after(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('slow request bodies (slowloris) from one address', () => {
  it(`${ATTACK_SOCKETS} dribbling sockets: the excess is refused, the rest closed within the bound, fds back to baseline, others served`, { timeout: 60_000 }, async (t) => {
    // Warm up so lazily opened files and the first request's allocations are in the baseline.
    for (let i = 0; i < 3; i++) assert.equal((await normalGet('/v1/limits')).status, 200);
    await sleep(300);
    const baseline = fds();

    const styles: Style[] = ['body', 'headers', 'body', 'silent'];
    const attack = Array.from({ length: ATTACK_SOCKETS }, (_, i) => slowClient(styles[i % 4]));
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, fds())), 200);
    const normal: Array<{ status: number; ms: number }> = [];
    let attacking = true;
    const prober = (async () => {
      while (attacking) {
        normal.push(await normalGet('/v1/limits'));
        await sleep(300);
      }
    })();

    try {
      const all = Promise.all(attack.map((a) => a.done));
      const deadline = sleep(BOUND_MS + SLACK_MS).then(() => 'deadline' as const);
      await sleep(1500);
      const during = fds();
      const outcome = await Promise.race([all, deadline]);
      attacking = false;
      await prober;
      clearInterval(sampler);
      const open = attack.filter((a) => !a.socket.destroyed).length;
      t.diagnostic(`fds: baseline ${baseline}, 1.5 s into the attack ${during}, peak ${peak}; ${open} slow sockets open at the end`);
      assert.notEqual(outcome, 'deadline', `${open} of ${ATTACK_SOCKETS} slow sockets still open after ${BOUND_MS + SLACK_MS} ms`);
      const results = outcome as SlowResult[];

      await sleep(500);
      const afterFds = fds();
      const refused = results.filter((r) => r.ms < 1000 && r.answer === '').length;
      const reaped = results.filter((r) => r.ms >= 1000);
      const answered408 = reaped.filter((r) => r.answer.startsWith('HTTP/1.1 408')).length;
      const longest = Math.max(...results.map((r) => r.ms));
      const longestHeaderless = Math.max(0, ...reaped.filter((r) => r.style !== 'body').map((r) => r.ms));
      const worstNormal = Math.max(...normal.map((n) => n.ms));
      t.diagnostic(`fds after the attack: ${afterFds}`);
      t.diagnostic(
        `sockets: ${refused} refused at connect, ${reaped.length} accepted and reaped (${answered408} saw the 408 envelope), longest lived ${longest} ms (bound ${BOUND_MS} ms), longest without complete headers ${longestHeaderless} ms (bound ${HEADERS_BOUND_MS} ms)`,
      );
      t.diagnostic(`normal client: ${normal.length} requests, ${normal.filter((n) => n.status === 200).length} answered 200, slowest ${worstNormal} ms`);

      // The cap: no more than max_per_ip of the attacker's sockets were ever held.
      assert.ok(reaped.length <= HTTP_LIMITS.max_connections_per_ip, `${reaped.length} sockets held past 1 s > cap ${HTTP_LIMITS.max_connections_per_ip}`);
      assert.ok(peak - baseline <= HTTP_LIMITS.max_connections_per_ip + 8, `peak ${peak} fds vs baseline ${baseline}`);
      assert.ok(longest <= BOUND_MS + SLACK_MS, `a slow socket lived ${longest} ms`);
      assert.ok(longestHeaderless <= HEADERS_BOUND_MS + SLACK_MS, `a socket without complete headers lived ${longestHeaderless} ms`);
      assert.ok(afterFds <= baseline + 4, `fds after the attack: ${afterFds} vs baseline ${baseline}`);
      // The reaped get the reason in the envelope (when the answer beat the reset to the client).
      assert.ok(answered408 >= 1, 'at least one reaped socket read its 408');
      const sample = reaped.find((r) => r.answer.startsWith('HTTP/1.1 408'))!.answer;
      const env = JSON.parse(sample.slice(sample.indexOf('\r\n\r\n') + 4));
      assert.deepEqual([env.schema, env.code, env.details.request_timeout_s], ['svc.error.v1', 'invalid_argument', HTTP_LIMITS.request_timeout_s]);
      assert.ok(normal.length >= 10, `normal client made ${normal.length} requests`);
      assert.ok(
        normal.every((n) => n.status === 200),
        `normal client statuses: ${normal.map((n) => n.status).join(',')}`,
      );
    } finally {
      attacking = false;
      clearInterval(sampler);
      for (const a of attack) a.socket.destroy();
    }
  });
});
