/**
 * Writes over real HTTP next to the same writes in process, in one run, so the ratios
 * HTTP / acceptBatch / store come from one machine state. Prints one JSON object.
 *
 *   node --import tsx bench/ingest-http.ts
 *   BENCH_SECONDS=3        longest load per case (each case also stops when its batches run out)
 *   BENCH_FACTS=49152      facts pre-signed per batch case
 *   BENCH_CLIENTS=4        connections posting batches
 *   BENCH_ONLY=json_256,single   run only the named cases (json_256, json_1024, cbor_256,
 *                                cbor_1024, each also with _noproofs: answered with ?proofs=none,
 *                                single, attest_256, attest_1024, store_256, store_1024)
 *   BENCH_NODE_FLAGS='--cpu-prof --cpu-prof-dir=/tmp/prof'   flags of the server process
 *   BENCH_WORKERS=2        run the responder with SVC_WORKERS=2 (unpinned: owner and workers
 *                          share both cores with the client; CPU counts every process of it)
 *
 * A responder (`svc serve`, embedded store, one listed attester key) runs on core 0 and the client
 * child (bench/ingest-http-client.ts: N keep-alive connections posting pre-signed batches of the
 * realistic mix in bench/attest-mix.ts) on core 1 when they can be pinned. Every batch is fresh,
 * so each is appended durably (fsync of the log) before its 200 comes back. Then, with the server
 * stopped, this process moves to core 0 and runs the same mix through `acceptBatch` (the
 * /v1/attest path without HTTP) and through `store.append` alone (the SQLite index over the disk
 * log), at the same concurrency. Server CPU per fact is read from /proc around each HTTP load:
 * steadier than throughput on a shared machine, and `server_busy` near 1 says the server, not
 * the client, set the pace.
 */
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { installFastBlake3 } from '../src/crypto/fast-blake3.js';
import { loadConfig } from '../src/config.js';
import { acceptBatch, type AttestRequest } from '../src/primitives/write/attest.js';
import * as P from '../src/protocol/index.js';
import { openService } from '../src/service.js';
import type { AppendBatch, Store } from '../src/store/contract.js';
import { openDiskLog } from '../src/store/log/disk-log.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { makeBatch, testSigner } from '../test/store/support/facts.js';
import { attestedFact, jsonBody, parentFacts, signFacts } from './attest-mix.js';
import { canPinCores, closedUpstreams, pinSelf, spawnNodeOn, treeCpuMicros } from './harness.js';

installFastBlake3();
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const FACTS = Number(process.env.BENCH_FACTS ?? 49_152);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4);
const SINGLE_CLIENTS = 32;
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null;
const want = (name: string) => ONLY === null || ONLY.has(name);
const port = 20000 + Math.floor(Math.random() * 2000);
const base = `http://127.0.0.1:${port}`;
const root = mkdtempSync(join(tmpdir(), 'svc-bench-ingest-http-'));
const seed = P.blake3(P.utf8('bench ingest-http attester'));
const attester = P.b32encode(P.portableEd25519.publicKey(seed));
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);

/** One IPC round trip with the client child. */
function ask(child: ReturnType<typeof fork>, msg: unknown): Promise<any> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`client exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (m) => {
      child.off('exit', onExit);
      resolve(m);
    });
    child.send(msg as never);
  });
}

async function httpCases(): Promise<Record<string, unknown>> {
  const dataDir = join(root, 'server');
  const serverArgs = [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), '--import', 'tsx', 'src/cli.ts', 'serve'];
  const server = spawnNodeOn(WORKERS > 1 ? -1 : 0, serverArgs, {
    env: {
      SVC_WORKERS: String(WORKERS),
      ...process.env,
      ...closedUpstreams(),
      PORT: String(port),
      SVC_HOST: '127.0.0.1',
      SVC_DATA: dataDir,
      SVC_LOG_LEVEL: 'warn',
      SVC_RATE_LIMIT_RPS: '1000000',
      SVC_RATE_LIMIT_BURST: '1000000',
      SVC_MAX_CONNECTIONS_PER_IP: '1000',
      SVC_ATTESTER_KEYS: attester,
    },
    stdio: 'inherit',
  });
  // The server's own pid (taskset execs node in place, so the spawned pid is the server's).
  const serverPid = server.pid!;
  const child = fork(new URL('./ingest-http-client.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise((r) => child.once('message', r));
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/health`)).ok) break;
      } catch {}
      if (i > 600) throw new Error('server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    // With workers every process shares both cores; otherwise the client keeps core 1.
    if (WORKERS > 1) await new Promise((r) => setTimeout(r, 5000));
    else if (canPinCores) execFileSync('taskset', ['-p', '-c', '1', String(child.pid)], { stdio: 'ignore' });
    const manifests = (await (await fetch(`${base}/v1/manifests`)).json()) as { registry_cid: string; schema_cid: string };
    const seeded = await fetch(`${base}/v1/attest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: jsonBody(signFacts(parentFacts(), seed, manifests.registry_cid, manifests.schema_cid)).toString('utf8'),
    });
    if (!seeded.ok) throw new Error(`seeding parents failed: ${await seeded.text()}`);
    const parents = ((await seeded.json()) as { fact_cids: string[] }).fact_cids;
    await ask(child, { type: 'init', port, seed: Array.from(seed), registryCid: manifests.registry_cid, schemaCid: manifests.schema_cid, parents, firstFact: 0 });

    const load = async (via: 'json' | 'cbor', size: number, count: number, connections: number, seconds: number, query = '') => {
      const prep = await ask(child, { type: 'prepare', via, size, count });
      const cpu0 = treeCpuMicros(serverPid);
      const r = await ask(child, { type: 'run', connections, seconds, query });
      const cpu = treeCpuMicros(serverPid) - cpu0;
      if (!r.ok) throw new Error(`${via} ${size}: ${r.error}`);
      const factsPerS = r.facts / r.seconds;
      const cpuPerFact = cpu / Math.max(1, r.facts);
      return {
        batch_size: size,
        connections,
        body_bytes_per_fact: round(prep.bytes / (size * count)),
        facts: r.facts,
        seconds: round(r.seconds, 2),
        facts_per_s: Math.round(factsPerS),
        requests_per_s: Math.round(r.requests / r.seconds),
        p50_ms: r.p50_ms,
        p99_ms: r.p99_ms,
        server_cpu_us_per_fact: round(cpuPerFact),
        server_busy: round((factsPerS * cpuPerFact) / 1e6, 2),
        client_cpu_us_per_request: r.client_cpu_us_per_request,
      };
    };
    // Warm-up of both routes (not reported): JIT, caches, the first fsyncs.
    await load('json', 256, 24, CLIENTS, 30);
    await load('cbor', 256, 24, CLIENTS, 30);
    const out: Record<string, unknown> = {};
    for (const via of ['json', 'cbor'] as const) {
      for (const size of [256, 1024]) {
        if (want(`${via}_${size}`)) out[`${via}_${size}`] = await load(via, size, Math.ceil(FACTS / size), CLIENTS, SECONDS);
        // The same batches answered without per-fact proofs (?proofs=none, docs/writes.md).
        if (want(`${via}_${size}_noproofs`)) out[`${via}_${size}_noproofs`] = await load(via, size, Math.ceil(FACTS / size), CLIENTS, SECONDS, '?proofs=none');
      }
    }
    if (want('single')) {
      // Single-fact batches, each signed: one request, one fact, one entry in the log.
      const s = await load('json', 1, 16_000, SINGLE_CLIENTS, SECONDS);
      out.single_c32 = {
        connections: s.connections,
        requests: s.facts,
        seconds: s.seconds,
        requests_per_s: s.requests_per_s,
        p50_ms: s.p50_ms,
        p99_ms: s.p99_ms,
        server_cpu_us_per_request: s.server_cpu_us_per_fact,
        server_busy: s.server_busy,
      };
    }
    return out;
  } finally {
    child.send('exit');
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  }
}

/** Run `work` with at most `concurrency` in flight until done or `SECONDS`: facts/s and CPU per fact of this process. */
async function drive<T>(work: T[], size: number, concurrency: number, fn: (w: T) => Promise<unknown>) {
  let next = 0;
  let done = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < work.length && performance.now() < deadline) {
        await fn(work[next++]);
        done += size;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuUs = cpu.user + cpu.system;
  return {
    batch_size: size,
    concurrency,
    facts: done,
    seconds: round(seconds, 2),
    facts_per_s: Math.round(done / seconds),
    cpu_us_per_fact: round(cpuUs / done),
    // Share of the wall time this process was working (other work on the machine takes the rest).
    busy: round(cpuUs / 1e6 / seconds, 2),
  };
}

/** The same mix through acceptBatch in this process (the /v1/attest path without HTTP). */
async function attestCase(size: number, firstFact: number) {
  const svc = await openService(loadConfig({ SVC_LOG_LEVEL: 'silent' }, { dataDir: join(root, `attest-${size}`), attesterKeys: [attester] }), { materializers: [] });
  try {
    const { registry_cid, schema_cid } = svc.manifests;
    const parents = (await acceptBatch(svc, signFacts(parentFacts(), seed, registry_cid, schema_cid))).fact_cids;
    let n = firstFact;
    const mk = (count: number): AttestRequest[] =>
      Array.from({ length: count }, () =>
        signFacts(
          Array.from({ length: size }, () => attestedFact(n++, parents)),
          seed,
          registry_cid,
          schema_cid,
        ),
      );
    // As the routes call it: the request's facts belong to the call (they are frozen and encoded once).
    const accept = (r: AttestRequest) => acceptBatch(svc, r, 'attest', { ownsFacts: true });
    await drive(mk(8), size, CLIENTS, accept); // warm-up
    return await drive(mk(Math.ceil(FACTS / size)), size, CLIENTS, accept);
  } finally {
    await svc.close();
  }
}

/** The same facts appended to the store alone (SQLite index over the disk log; no checks, no signature). */
async function storeCase(size: number, firstFact: number) {
  const dir = join(root, `store-${size}`);
  const log = await openDiskLog({ dir: join(dir, 'log'), signer: testSigner() });
  const store: Store = await createSqliteStore({ dataDir: dir, scanCellLimit: 1000 }, log, { logger: () => {} });
  const parents = Array.from({ length: 64 }, (_, i) => P.factCid({ parent: i }));
  let n = firstFact;
  const mk = (count: number): AppendBatch[] =>
    Array.from({ length: count }, () =>
      makeBatch(
        Array.from({ length: size }, () => attestedFact(n++, parents)),
        { sign: false },
      ),
    );
  try {
    await drive(mk(8), size, CLIENTS, (b) => store.append(b)); // warm-up
    return await drive(mk(Math.ceil(FACTS / size)), size, CLIENTS, (b) => store.append(b));
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  try {
    pinSelf(1);
    const http = await httpCases();
    // The server has stopped: the in-process cases take its core.
    pinSelf(0);
    const inproc: Record<string, Awaited<ReturnType<typeof drive>>> = {};
    if (want('attest_256')) inproc.attest_256 = await attestCase(256, 2_000_000);
    if (want('attest_1024')) inproc.attest_1024 = await attestCase(1024, 3_000_000);
    if (want('store_256')) inproc.store_256 = await storeCase(256, 4_000_000);
    if (want('store_1024')) inproc.store_1024 = await storeCase(1024, 5_000_000);
    const rate = (k: string) => (http[k] as { facts_per_s?: number } | undefined)?.facts_per_s ?? inproc[k]?.facts_per_s;
    const ratio = (a: string, b: string) => {
      const x = rate(a);
      const y = rate(b);
      return x === undefined || y === undefined ? undefined : round(x / y, 3);
    };
    const cpu = (k: string) => (http[k] as { server_cpu_us_per_fact?: number } | undefined)?.server_cpu_us_per_fact ?? inproc[k]?.cpu_us_per_fact;
    const out = {
      bench: 'ingest-http',
      node: process.version,
      cores: canPinCores && WORKERS === 1 ? { server_and_in_process: 0, client: 1 } : 'shared',
      available_cores: availableParallelism(),
      loadavg_1m: round(loadavg()[0], 2),
      seconds_per_case: SECONDS,
      clients: CLIENTS,
      responder_workers: WORKERS,
      http,
      in_process: inproc,
      ratios: {
        json_256_over_attest_256: ratio('json_256', 'attest_256'),
        cbor_256_over_attest_256: ratio('cbor_256', 'attest_256'),
        json_1024_over_attest_1024: ratio('json_1024', 'attest_1024'),
        cbor_1024_over_attest_1024: ratio('cbor_1024', 'attest_1024'),
        attest_256_over_store_256: ratio('attest_256', 'store_256'),
        attest_1024_over_store_1024: ratio('attest_1024', 'store_1024'),
        json_256_over_store_256: ratio('json_256', 'store_256'),
        cbor_1024_over_store_1024: ratio('cbor_1024', 'store_1024'),
        json_256_noproofs_over_store_256: ratio('json_256_noproofs', 'store_256'),
        cbor_1024_noproofs_over_store_1024: ratio('cbor_1024_noproofs', 'store_1024'),
      },
      cpu_us_per_fact: {
        json_256: cpu('json_256'),
        cbor_256: cpu('cbor_256'),
        json_1024: cpu('json_1024'),
        cbor_1024: cpu('cbor_1024'),
        json_256_noproofs: cpu('json_256_noproofs'),
        cbor_1024_noproofs: cpu('cbor_1024_noproofs'),
        attest_256: cpu('attest_256'),
        attest_1024: cpu('attest_1024'),
        store_256: cpu('store_256'),
        store_1024: cpu('store_1024'),
      },
      targets: { facts_per_s: '>= 50 000 over HTTP, or >= 0.8 x the store-only rate' },
    };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
