/**
 * Soak at 80 % of the measured maximum load, loopback only, bounded in time (SOAK_SECONDS,
 * default 600). Phase 1 measures the maximum throughput of a mixed request set against a
 * responder whose rate limit is lifted. Phase 2 runs a responder with the default per-IP limits
 * and offers 80 % of that maximum, spread over many loopback source addresses so that each stays
 * under its own limit, while SSE streams stay open and one probe address sends above its limit.
 * Every window reports the server's RSS and open fds and the latency percentiles; at the end the
 * probe's accepted count is compared with what the token bucket allows. Prints one JSON line.
 *
 * Mix: warm recall, MCP tools/call svc_recall, recall_many of 8 cells, fetch by cid, corpus
 * stats, and signed attest batches (writes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeEd25519 } from '../src/crypto/node-ed25519.js';
import * as P from '../src/protocol/index.js';

const SOAK_S = Number(process.env.SOAK_SECONDS ?? 600);
const WINDOW_S = Number(process.env.SOAK_WINDOW_SECONDS ?? 30);
const MAX_PHASE_S = 15;
const PER_ADDRESS_RPS = 8; // 80 % of the default 10 requests/s per address
const seed = P.blake3(P.utf8('soak attester'));
const attester = P.b32encode(nodeEd25519.publicKey(seed));
const cells = Array.from({ length: 200 }, (_, i) => P.cellOf(20 + i * 0.002, 30));

interface Server {
  child: ChildProcess;
  port: number;
  dir: string;
  manifests: { registry_cid: string; schema_cid: string };
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-soak-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    env: { ...process.env, PORT: String(port), SVC_HOST: '127.0.0.1', SVC_DATA: dir, SVC_LOG_LEVEL: 'silent', SVC_ATTESTER_KEYS: attester, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 200; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/v1/manifests`);
      if (r.ok) return { child, port, dir, manifests: (await r.json()) as Server['manifests'] };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('server did not start');
}

async function stopServer(s: Server): Promise<void> {
  s.child.kill('SIGTERM');
  await new Promise((r) => s.child.once('exit', r));
  rmSync(s.dir, { recursive: true, force: true });
}

let writeSeq = 0;
/** A fresh signed batch of two facts (new values each time, so each is a real write). */
function attestBody(m: Server['manifests']): string {
  const n = writeSeq++;
  const facts = [0, 1].map((k) => ({
    kind: 'primary',
    cell: cells[(n * 2 + k) % cells.length],
    band: 'weather.temperature_2m',
    tslot: 20_000 + (n % 500),
    value: Number((((n * 7 + k) % 500) / 10).toFixed(1)),
    unit: 'degC',
  }));
  const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
  const signature = P.b32encode(nodeEd25519.sign(P.attesterDigest(root, m.registry_cid, m.schema_cid), seed));
  return JSON.stringify({ batch_root: Array.from(root), attester, signature, facts });
}

type Req = { method: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> };
function mix(i: number, m: Server['manifests'], cids: string[]): Req {
  const cell = cells[i % cells.length];
  const r = i % 20;
  if (r < 9) return { method: 'POST', path: '/v1/recall', body: JSON.stringify({ cell, bands: ['copdem30m.elevation_mean'] }) };
  if (r < 12) {
    return {
      method: 'POST',
      path: '/mcp',
      headers: { accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'svc_recall', arguments: { cell, bands: ['copdem30m.elevation_mean'] } } }),
    };
  }
  if (r < 14)
    return { method: 'POST', path: '/v1/recall_many', body: JSON.stringify({ cells: Array.from({ length: 8 }, (_, k) => cells[(i + k) % cells.length]), bands: ['copdem30m.elevation_mean'] }) };
  if (r < 16) return { method: 'POST', path: '/v1/fetch', body: JSON.stringify({ cid: cids[i % cids.length] }) };
  if (r < 18) return { method: 'GET', path: '/v1/corpus_state_stats' };
  return { method: 'POST', path: '/v1/attest', body: attestBody(m) };
}

const agents = new Map<string, http.Agent>();
const transportErrors: Record<string, number> = {};
function agentFor(address: string): http.Agent {
  let a = agents.get(address);
  if (!a) {
    a = new http.Agent({ keepAlive: true, maxSockets: 4, localAddress: address });
    agents.set(address, a);
  }
  return a;
}

/** One request; resolves with its status and latency (status 0 on a transport error). */
function send(port: number, address: string, req: Req): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const r = http.request(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.path,
        agent: agentFor(address),
        headers: { ...(req.body ? { 'content-type': 'application/json' } : {}), ...req.headers },
      },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
      },
    );
    r.on('error', (e: NodeJS.ErrnoException) => {
      transportErrors[e.code ?? e.message] = (transportErrors[e.code ?? e.message] ?? 0) + 1;
      resolve({ status: 0, ms: performance.now() - t0 });
    });
    if (req.body) r.write(req.body);
    r.end();
  });
}

function address(i: number): string {
  // 127.0.1.1 … 127.0.254.254: every loopback source address is its own client to the limiter.
  return `127.0.${1 + (Math.floor(i / 254) % 254)}.${1 + (i % 254)}`;
}

async function seedFacts(s: Server): Promise<string[]> {
  const facts = cells.map((cell, i) => ({ kind: 'primary', cell, band: 'copdem30m.elevation_mean', tslot: 0, value: 100 + i, unit: 'm_msl' }));
  const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
  const signature = P.b32encode(nodeEd25519.sign(P.attesterDigest(root, s.manifests.registry_cid, s.manifests.schema_cid), seed));
  const r = await fetch(`http://127.0.0.1:${s.port}/v1/attest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ batch_root: Array.from(root), attester, signature, facts }),
  });
  if (!r.ok) throw new Error(`seed failed: ${await r.text()}`);
  return ((await r.json()) as { fact_cids: string[] }).fact_cids;
}

function pct(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2));
}

function serverStats(pid: number): { rss_mb: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
  return { rss_mb: Number(rss.toFixed(1)), fds: readdirSync(`/proc/${pid}/fd`).length };
}

/** Phase 1: closed loop, 32 in flight, limits lifted: the mix's maximum throughput. */
async function measureMax(): Promise<number> {
  const s = await startServer({ SVC_RATE_LIMIT_RPS: '1000000', SVC_RATE_LIMIT_BURST: '1000000' });
  try {
    const cids = await seedFacts(s);
    const until = performance.now() + MAX_PHASE_S * 1000;
    let done = 0;
    let i = 0;
    let warm = true;
    const warmUntil = performance.now() + 3000;
    await Promise.all(
      Array.from({ length: 32 }, async (_, w) => {
        while (performance.now() < until) {
          const r = await send(s.port, address(w), mix(i++, s.manifests, cids));
          if (r.status !== 200) throw new Error(`max phase: status ${r.status}`);
          if (!warm) done++;
          if (warm && performance.now() > warmUntil) warm = false;
        }
      }),
    );
    return done / (MAX_PHASE_S - 3);
  } finally {
    await stopServer(s);
  }
}

async function main(): Promise<void> {
  const maxRps = await measureMax();
  const rate = Math.round(maxRps * 0.8);
  const s = await startServer({});
  const pid = s.child.pid!;
  const cids = await seedFacts(s);
  const addresses = Math.ceil(rate / PER_ADDRESS_RPS);
  const windows: Array<Record<string, unknown>> = [];
  const statuses: Record<string, number> = {};
  let lat: number[] = [];
  let sent = 0;
  let outstanding = 0;
  let dropped = 0;

  // SSE: four streams ticking every 5 s for the whole soak.
  let ticks = 0;
  const streams = Array.from({ length: 4 }, (_, k) => {
    const r = http.get({ host: '127.0.0.1', port: s.port, path: '/v1/stream?interval_s=5', agent: false, localAddress: `127.0.255.${k + 1}` }, (res) => {
      res.on('data', (b: Buffer) => {
        ticks += (b.toString().match(/^event: /gm) ?? []).length;
      });
    });
    r.on('error', () => {});
    return r;
  });

  // The probe: 20 requests/s from one address against the default 10/s, burst 120.
  const probe = { sent: 0, ok: 0, limited: 0, started: 0 };
  const probeAddress = '127.0.255.200';
  const probeTimer = setInterval(() => {
    if (probe.started === 0) probe.started = performance.now();
    probe.sent++;
    void send(s.port, probeAddress, { method: 'GET', path: '/v1/manifests' }).then((r) => {
      if (r.status === 200) probe.ok++;
      else if (r.status === 429) probe.limited++;
    });
  }, 50);

  const start = performance.now();
  const end = start + SOAK_S * 1000;
  let nextWindow = start + WINDOW_S * 1000;
  windows.push({ t_s: 0, ...serverStats(pid) });
  let debt = 0;
  let last = start;
  while (performance.now() < end) {
    await new Promise((r) => setTimeout(r, 10));
    const now = performance.now();
    debt += ((now - last) / 1000) * rate;
    last = now;
    while (debt >= 1) {
      debt--;
      if (outstanding > 2000) {
        dropped++;
        continue;
      }
      const i = sent++;
      outstanding++;
      void send(s.port, address(i % addresses), mix(i, s.manifests, cids)).then((r) => {
        outstanding--;
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status === 200) lat.push(r.ms);
      });
    }
    if (now >= nextWindow) {
      const sorted = lat.sort((a, b) => a - b);
      windows.push({ t_s: Math.round((now - start) / 1000), ...serverStats(pid), requests: sorted.length, p50_ms: pct(sorted, 0.5), p99_ms: pct(sorted, 0.99), p99_9_ms: pct(sorted, 0.999) });
      lat = [];
      nextWindow += WINDOW_S * 1000;
    }
  }
  clearInterval(probeTimer);
  const probeSeconds = (performance.now() - probe.started) / 1000;
  await new Promise((r) => setTimeout(r, 2000));
  for (const st of streams) st.destroy();
  const allowed = Math.floor(120 + 10 * probeSeconds);
  const final = serverStats(pid);
  await stopServer(s);
  for (const a of agents.values()) a.destroy();

  const steady = windows.slice(2) as Array<{ rss_mb: number; fds: number; p99_ms: number }>;
  console.log(
    JSON.stringify({
      bench: 'soak',
      seconds: SOAK_S,
      max_rps_measured: Math.round(maxRps),
      offered_rps: rate,
      source_addresses: addresses,
      requests_sent: sent,
      dropped_client_side: dropped,
      statuses,
      transport_errors: transportErrors,
      sse_events: ticks,
      rss_mb: {
        first: (windows[1] as { rss_mb: number } | undefined)?.rss_mb,
        last: final.rss_mb,
        min_steady: Math.min(...steady.map((w) => w.rss_mb)),
        max_steady: Math.max(...steady.map((w) => w.rss_mb)),
      },
      fds: { start: (windows[0] as { fds: number }).fds, last: final.fds, max: Math.max(...windows.map((w) => (w as { fds: number }).fds)) },
      p99_ms_per_window: windows.slice(1).map((w) => (w as { p99_ms: number }).p99_ms),
      rate_limit_probe: { seconds: Number(probeSeconds.toFixed(1)), sent: probe.sent, accepted: probe.ok, limited: probe.limited, bucket_allows: allowed },
      windows,
      node: process.version,
    }),
  );
}

await main();
