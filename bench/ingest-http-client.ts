/**
 * Client child of bench/ingest-http.ts: builds and signs its batches before timing (signing is
 * the client's cost), then posts them over keep-alive connections when told to, and replies with
 * what was acknowledged. Driven over IPC: {prepare} → 'prepared', {run} → the figures.
 */
import { Agent, request } from 'node:http';
import { installFastBlake3 } from '../src/crypto/fast-blake3.js';
import { attestedFact, cborBody, jsonBody, signFacts } from './attest-mix.js';

installFastBlake3();

interface Init {
  type: 'init';
  port: number;
  seed: number[];
  registryCid: string;
  schemaCid: string;
  parents: string[];
  /** First fact number this client uses (the orchestrator's own facts come before it). */
  firstFact: number;
}
interface Prepare {
  type: 'prepare';
  via: 'json' | 'cbor';
  size: number;
  count: number;
}
interface Run {
  type: 'run';
  connections: number;
  seconds: number;
  /** Query string of each request ('' or '?proofs=none'). */
  query?: string;
}

let init: Init;
let seq = 0;
let prepared: { via: 'json' | 'cbor'; size: number; bodies: Buffer[] } | null = null;

function prepare(m: Prepare): number {
  const seed = Uint8Array.from(init.seed);
  const bodies: Buffer[] = [];
  let bytes = 0;
  for (let b = 0; b < m.count; b++) {
    const facts = Array.from({ length: m.size }, () => attestedFact(init.firstFact + seq++, init.parents));
    const env = signFacts(facts, seed, init.registryCid, init.schemaCid);
    const body = m.via === 'json' ? jsonBody(env) : cborBody(env);
    bytes += body.length;
    bodies.push(body);
  }
  prepared = { via: m.via, size: m.size, bodies };
  return bytes;
}

function post(agent: Agent, path: string, contentType: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: '127.0.0.1', port: init.port, method: 'POST', path, headers: { 'content-type': contentType, 'content-length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function run(m: Run) {
  if (!prepared) throw new Error('nothing prepared');
  const { via, size, bodies } = prepared;
  prepared = null;
  const agent = new Agent({ keepAlive: true, maxSockets: m.connections });
  const path = (via === 'json' ? '/v1/attest' : '/v1/attest_cbor') + (m.query ?? '');
  const contentType = via === 'json' ? 'application/json' : 'application/cbor';
  const latencies: number[] = [];
  let next = 0;
  let acked = 0;
  let failed: string | null = null;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + m.seconds * 1000;
  await Promise.all(
    Array.from({ length: m.connections }, async () => {
      while (next < bodies.length && performance.now() < deadline && failed === null) {
        const body = bodies[next++];
        const s = performance.now();
        const r = await post(agent, path, contentType, body);
        latencies.push(performance.now() - s);
        // Acknowledged means a 200 naming every fact as new (each batch is fresh).
        const res = r.status === 200 ? JSON.parse(r.text) : null;
        if (!res || res.fact_cids?.length !== size || res.duplicates?.length !== 0) failed ??= `${r.status} ${r.text.slice(0, 300)}`;
        else acked += size;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Number(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(2));
  return {
    ok: failed === null,
    error: failed,
    requests: latencies.length,
    facts: acked,
    seconds,
    p50_ms: at(0.5),
    p99_ms: at(0.99),
    client_cpu_us_per_request: Math.round((cpu.user + cpu.system) / Math.max(1, latencies.length)),
  };
}

process.on('message', (m: Init | Prepare | Run | 'exit') => {
  if (m === 'exit') process.exit(0);
  if (m.type === 'init') {
    init = m;
    process.send!({ type: 'ready' });
  } else if (m.type === 'prepare') {
    process.send!({ type: 'prepared', bytes: prepare(m) });
  } else {
    run(m).then(
      (r) => process.send!({ type: 'done', ...r }),
      (err) => process.send!({ type: 'done', ok: false, error: String(err) }),
    );
  }
});
process.send!({ type: 'started' });
