/**
 * Whole-response verification of a 256-cell recall_many answer (768 facts, each also repeated in
 * merged_facts): facts checked per second in process (server Ed25519 backend and the portable
 * one the browser page uses), and the `svc verify` command end to end (process start included).
 * The time to serve the same response in process is measured in the same run for the ratio.
 * Prints one JSON line. Run: node --import tsx bench/verify-response.ts [runs]
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeEd25519 } from '../src/crypto/node-ed25519.js';
import * as P from '../src/protocol/index.js';
import { manyCells } from './many-cells.js';
import { percentiles } from './harness.js';

const CELLS = 256;
const runs = Number(process.argv[2] ?? 5);
const { app, service, dataDir, payload, close } = await manyCells(CELLS);
try {
  const serve = async () => {
    const t0 = performance.now();
    const r = await app.inject({ method: 'POST', url: '/v1/recall_many', payload });
    return { ms: performance.now() - t0, text: r.body };
  };
  for (let i = 0; i < 2; i++) await serve();
  const served: number[] = [];
  let text = '';
  for (let i = 0; i < runs; i++) {
    const r = await serve();
    served.push(r.ms);
    text = r.text;
  }
  const doc = JSON.parse(text);
  const key = service.keys.publicKeyB32;

  const time = (backend: P.Ed25519Backend, n: number) => {
    const ms: number[] = [];
    let v: P.ResponseVerdict | undefined;
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      v = P.verifyResponse(doc, { publicKey: key, backend });
      ms.push(performance.now() - t0);
    }
    if (!v!.valid || !v!.trusted) throw new Error(`verification failed: ${v!.errors.slice(0, 3).join('; ')}`);
    return { p: percentiles(ms), v: v! };
  };
  const server = time(nodeEd25519, runs);
  const portable = time(P.portableEd25519, Math.max(1, Math.min(2, runs)));
  const distinct = new Set(server.v.facts.map((f) => f.fact_cid)).size;

  const file = join(dataDir, 'recall-many.json');
  writeFileSync(file, text);
  const cli: number[] = [];
  for (let i = 0; i < Math.min(runs, 3); i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['bin/svc.mjs', 'verify', file, '--pubkey', key], { encoding: 'utf8' });
    cli.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`svc verify exited ${r.status}: ${r.stdout.slice(0, 400)}${r.stderr.slice(0, 400)}`);
  }
  const startup: number[] = [];
  for (let i = 0; i < Math.min(runs, 3); i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ['bin/svc.mjs', 'verify', '--help'], { encoding: 'utf8' });
    startup.push(performance.now() - t0);
  }
  const s = percentiles(served).p50_ms;
  const cliP50 = percentiles(cli).p50_ms;
  const startP50 = percentiles(startup).p50_ms;
  console.log(
    JSON.stringify({
      bench: 'verify_response',
      cells: CELLS,
      fact_checks: server.v.facts.length,
      distinct_facts: distinct,
      receipts: server.v.receipts.length,
      response_bytes: text.length,
      serve_p50_ms: s,
      verify_server_backend_p50_ms: server.p.p50_ms,
      verify_server_backend_facts_per_s: Math.round(server.v.facts.length / (server.p.p50_ms / 1000)),
      verify_vs_serve: Number((server.p.p50_ms / s).toFixed(2)),
      verify_portable_backend_ms: portable.p.p50_ms,
      verify_portable_backend_facts_per_s: Math.round(portable.v.facts.length / (portable.p.p50_ms / 1000)),
      cli_wall_p50_ms: cliP50,
      cli_startup_p50_ms: startP50,
      cli_facts_per_s_excluding_startup: Math.round(server.v.facts.length / (Math.max(1, cliP50 - startP50) / 1000)),
      node: process.version,
    }),
  );
} finally {
  await close();
}
