import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as P from '../../src/protocol/index.js';
import { loadConfig } from '../../src/config.js';
import { openService } from '../../src/service.js';
import { verifyLogDir } from '../../src/store/log/verify.js';

const ROUNDS = Number(process.env.SVC_CRASH_ROUNDS ?? 20);
const worker = fileURLToPath(new URL('../support/crash-worker.ts', import.meta.url));

interface RoundOutput {
  acked: Array<{ index: number; cids: string[] }>;
  heads: Array<{ size: number; root: string }>;
}

/** Run the worker until it is ready, let it write for `ms` after its first acknowledged write, then SIGKILL it. */
function runAndKill(dataDir: string, round: number, ms: number): Promise<RoundOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', worker], { env: { ...process.env, SVC_DATA: dataDir, CRASH_ROUND: String(round) }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: RoundOutput = { acked: [], heads: [] };
    let buf = '';
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    child.stderr.on('data', (c) => (err += c));
    child.stdout.on('data', (chunk: Buffer) => {
      buf += chunk.toString();
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        // The kill comes `ms` after the first acknowledged write, so that a saturated machine,
        // where a write takes longer than `ms`, still kills mid-stream rather than before any
        // write; a worker that acknowledges nothing for a minute is killed anyway.
        if (line === 'READY') timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
        else if (line.startsWith('ACK ')) {
          if (out.acked.length === 0) {
            clearTimeout(timer);
            timer = setTimeout(() => child.kill('SIGKILL'), ms);
          }
          const [, idx, ...cids] = line.split(' ');
          out.acked.push({ index: Number(idx), cids });
        } else if (line.startsWith('STH ')) {
          const [, size, root] = line.split(' ');
          out.heads.push({ size: Number(size), root });
        }
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`worker exited ${code}: ${err}`));
      else resolve(out);
    });
  });
}

describe('crash safety (SIGKILL under concurrent write load)', () => {
  it(`loses no acknowledged write over ${ROUNDS} kills; the log verifies; every served head stays consistent`, { timeout: 600_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-crash-'));
    const allAcked: string[] = [];
    const allHeads: Array<{ size: number; root: string }> = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const out = await runAndKill(dataDir, round, 30 + Math.floor(Math.random() * 250));
        for (const a of out.acked) allAcked.push(...a.cids);
        allHeads.push(...out.heads);

        const check = await verifyLogDir(join(dataDir, 'log'));
        assert.deepEqual(check.problems, [], `round ${round}: log verifies`);
        const svc = await openService(loadConfig({ SVC_DATA: dataDir, SVC_LOG_LEVEL: 'silent' }));
        try {
          for (const cid of allAcked) assert.ok(await svc.store.getFact(cid), `round ${round}: acknowledged fact ${cid} survived`);
          const size = await svc.store.log.size();
          const root = await svc.store.log.root(size);
          for (const h of allHeads) {
            assert.ok(h.size <= size, `round ${round}: served head ${h.size} ≤ ${size}`);
            const proof = await svc.store.log.consistencyProof(h.size, size);
            assert.ok(P.verifyConsistency(h.size, size, P.b32decode(h.root, 32), root, proof), `round ${round}: head ${h.size} is consistent`);
          }
        } finally {
          await svc.close();
        }
      }
      assert.ok(allAcked.length > ROUNDS, `writes were acknowledged (${allAcked.length})`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
