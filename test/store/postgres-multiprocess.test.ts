/**
 * Two responder processes, one PostgreSQL log: both open the same fresh schema (racing its
 * creation) and append concurrently; the parent then checks that the sequencer lost nothing,
 * duplicated nothing, and that the stored tree is the tree of the stored entries.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { b32decode } from '../../src/protocol/base32.js';
import { equalBytes, toHex } from '../../src/protocol/bytes.js';
import { verifyStrict } from '../../src/protocol/ed25519.js';
import { leafHash, memoryNodeSource, treeRoot, verifyInclusion } from '../../src/protocol/log-tree.js';
import { sthDigest } from '../../src/protocol/tree-head.js';
import { decodeLogEntry } from '../../src/store/entry.js';
import { testSigner } from './support/facts.js';
import { dropSchema, openPgStore, pgQuery, pgSkip, randomSchema } from './support/pg-env.js';

const WORKER = fileURLToPath(new URL('./support/pg-worker.ts', import.meta.url));
const PER_WORKER = 100;
const LANES = 8;

interface Ack {
  w: string;
  i: number;
  cid: string;
  log_index: number;
}

type Line = Ack | { done: string } | { ready: string };

/** Start one worker; `ready` resolves once its store is open, `acks` when it has finished. */
function startWorker(schema: string, tag: string): { ready: Promise<void>; go: () => void; acks: Promise<Ack[]> } {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, schema, tag, String(PER_WORKER), String(LANES)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: process.env,
  });
  let out = '';
  let err = '';
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('"ready"')) onReady();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const acks = new Promise<Ack[]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      onReady(); // never leave the parent waiting on a worker that died while opening
      if (code !== 0) return reject(new Error(`worker ${tag} exited with ${code}: ${err}`));
      const lines = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Line);
      if (!lines.some((l) => 'done' in l)) return reject(new Error(`worker ${tag} did not finish: ${err}`));
      resolve(lines.filter((l): l is Ack => 'log_index' in l));
    });
  });
  return { ready, go: () => child.stdin.end('go\n'), acks };
}

describe('postgres store shared by two processes', { skip: pgSkip }, () => {
  it('sequences concurrent appends from both into one dense, verifiable log', { timeout: 120_000 }, async (t) => {
    const schema = randomSchema();
    try {
      const workers = [startWorker(schema, '1'), startWorker(schema, '2')];
      await Promise.all(workers.map((w) => w.ready));
      for (const w of workers) w.go();
      const acks = (await Promise.all(workers.map((w) => w.acks))).flat();
      assert.equal(acks.length, 2 * PER_WORKER);

      const signer = testSigner();
      const { store, cleanup } = await openPgStore(signer, { schema });
      try {
        const size = await store.log.size();
        assert.equal(size, 2 * PER_WORKER, 'one entry per acknowledged batch');
        // Every acknowledged index is present exactly once, and they cover 0..n-1.
        const indices = acks.map((a) => a.log_index).sort((x, y) => x - y);
        assert.deepEqual(
          indices,
          Array.from({ length: size }, (_, i) => i),
        );
        // The two writers really overlapped: their entries interleave in the log.
        const order = [...acks].sort((x, y) => x.log_index - y.log_index).map((a) => a.w);
        const switches = order.filter((w, i) => i > 0 && w !== order[i - 1]).length;
        assert.ok(switches >= 2, `entries of the two workers interleave (${switches} switches)`);
        t.diagnostic(`${size} entries, ${switches} switches between the two writers in log order`);

        const rows = await pgQuery<{ idx: string; leaf_hash: Buffer; entry: Buffer }>(`SELECT idx, leaf_hash, entry FROM "${schema}".log_entries ORDER BY idx`);
        assert.deepEqual(
          rows.map((r) => Number(r.idx)),
          Array.from({ length: size }, (_, i) => i),
        );
        const leaves = rows.map((r) => new Uint8Array(r.leaf_hash));
        assert.equal(new Set(leaves.map(toHex)).size, size, 'leaf hashes are unique');
        const byIndex = new Map(acks.map((a) => [a.log_index, a]));
        for (const r of rows) {
          const entry = new Uint8Array(r.entry);
          assert.ok(equalBytes(leafHash(entry), new Uint8Array(r.leaf_hash)), `leaf hash of entry ${r.idx}`);
          const decoded = decodeLogEntry(entry);
          const ack = byIndex.get(Number(r.idx))!;
          assert.equal(decoded.facts.length, 1);
          assert.equal(decoded.facts[0].tslot, ack.i, `entry ${r.idx} holds the fact its worker was told it holds`);
          assert.equal(decoded.facts[0].band, `test.w${ack.w}`);
        }

        // The tree kept in log_nodes is the tree of the entries.
        const ref = memoryNodeSource(leaves);
        const root = await store.log.root();
        assert.ok(equalBytes(root, treeRoot(ref, size)), 'root from log_nodes equals the recomputed root');
        const nodes = await pgQuery<{ level: number; idx: string; hash: Buffer }>(`SELECT level, idx, hash FROM "${schema}".log_nodes`);
        let expected = 0;
        for (let l = 0; 2 ** l <= size; l++) expected += Math.floor(size / 2 ** l);
        assert.equal(nodes.length, expected, 'every perfect subtree stored once');
        for (const n of nodes) assert.ok(equalBytes(new Uint8Array(n.hash), ref.node(n.level, Number(n.idx))), `node (${n.level}, ${n.idx})`);

        for (const a of acks) {
          const f = await store.getFact(a.cid);
          assert.ok(f, `fact ${a.cid} of worker ${a.w}`);
          assert.equal(f.log_index, a.log_index);
        }
        assert.equal((await store.stats()).facts, 2 * PER_WORKER);

        const sth = await store.log.latestTreeHead();
        assert.equal(sth.tree_size, size);
        const sthRoot = b32decode(sth.root, 32);
        assert.ok(equalBytes(sthRoot, root));
        assert.ok(verifyStrict(b32decode(sth.signature, 64), sthDigest(sth.tree_size, sthRoot, sth.signed_at, signer.publicKey), signer.publicKey), 'STH signature');
        for (const i of [0, 77, size - 1]) {
          assert.ok(verifyInclusion(i, size, leaves[i], await store.log.inclusionProof(i, size), sthRoot), `inclusion of ${i} under the STH`);
        }
      } finally {
        await cleanup();
      }
    } finally {
      await dropSchema(schema);
    }
  });
});
