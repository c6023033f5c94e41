import { strict as assert } from 'node:assert';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { b32decode } from '../../../src/protocol/base32.js';
import { equalBytes, toHex } from '../../../src/protocol/bytes.js';
import { encodeCanonical } from '../../../src/protocol/cbor.js';
import { portableEd25519, randomSeed, verifyStrict } from '../../../src/protocol/ed25519.js';
import { SvcError } from '../../../src/protocol/errors.js';
import { consistencyProof, emptyRoot, inclusionProof, leafHash, memoryNodeSource, treeRoot, verifyConsistency, verifyInclusion } from '../../../src/protocol/log-tree.js';
import { sthDigest } from '../../../src/protocol/tree-head.js';
import type { TreeHeadSigner } from '../../../src/store/contract.js';
import { openDiskLog, verifyLogDir, type DiskLogOptions } from '../../../src/store/log/disk-log.js';
import { decodeTrailer, encodeTrailer, RECORD_OVERHEAD, segmentName, TRAILER_BYTES } from '../../../src/store/log/segment-format.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'svc-disklog-'));
  dirs.push(d);
  return d;
}

const seed = randomSeed();
const signer: TreeHeadSigner = { publicKey: portableEd25519.publicKey(seed), epoch: 3, sign: (d) => portableEd25519.sign(d, seed) };

function entryOf(i: number, pad = 20): Uint8Array {
  return encodeCanonical({ i, pad: 'x'.repeat(pad + (i % 7)) });
}

function open(dir: string, extra: Partial<DiskLogOptions> = {}) {
  return openDiskLog({ dir, signer, ...extra });
}

async function appendAll(log: { append(e: Uint8Array): Promise<number> }, from: number, to: number, pad?: number): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for (let i = from; i < to; i++) {
    const e = entryOf(i, pad);
    assert.equal(await log.append(e), i);
    out.push(e);
  }
  return out;
}

/** Run crash-child.ts (it SIGKILLs itself); returns acknowledged index → entry hex. */
function crashChild(dir: string, count: number, concurrency: number, killAfterMs: number | '-', checkpointEvery?: number): Map<number, string> {
  const child = fileURLToPath(new URL('./crash-child.ts', import.meta.url));
  const args = ['--import', 'tsx', child, dir, String(count), String(concurrency), String(killAfterMs)];
  if (checkpointEvery !== undefined) args.push(String(checkpointEvery));
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.signal, 'SIGKILL', r.stderr);
  const acks = new Map<number, string>();
  for (const line of r.stdout.split('\n')) {
    const m = /^ack (\d+) ([0-9a-f]+)$/.exec(line);
    if (m) acks.set(Number(m[1]), m[2]);
  }
  return acks;
}

function segments(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.startsWith('seg-'))
    .sort();
}

async function rejectsInternal(p: Promise<unknown>, mention: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof SvcError, String(err));
    assert.equal(err.code, 'internal');
    assert.match(err.message, new RegExp(mention));
    return true;
  });
}

describe('disk log', () => {
  test('append, entry round trip, roots for n = 0..70 match the reference', async () => {
    const dir = tempDir();
    const log = await open(dir);
    assert.deepEqual(await log.root(), emptyRoot());
    const entries: Uint8Array[] = [];
    const leaves: Uint8Array[] = [];
    for (let n = 0; n <= 70; n++) {
      assert.equal(await log.size(), n);
      assert.ok(equalBytes(await log.root(), treeRoot(memoryNodeSource(leaves), n)), `root at ${n}`);
      const e = entryOf(n);
      assert.equal(await log.append(e), n);
      entries.push(e);
      leaves.push(leafHash(e));
    }
    const ref = memoryNodeSource(leaves);
    for (let n = 0; n <= 71; n++) assert.ok(equalBytes(await log.root(n), treeRoot(ref, n)), `historical root ${n}`);
    for (let i = 0; i < entries.length; i++) assert.deepEqual(await log.entry(i), entries[i]);
    assert.equal(await log.entry(71), null);
    assert.equal(await log.entry(-1), null);
    const seen: number[] = [];
    for await (const { index, entry } of log.entries(10, 30)) {
      assert.deepEqual(entry, entries[index]);
      seen.push(index);
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 20 }, (_, k) => k + 10),
    );
    assert.equal(await log.leafIndexOf(leafHash(entries[42])), 42);
    assert.equal(await log.leafIndexOf(leafHash(entryOf(1000))), null);
    await assert.rejects(log.root(72), (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument');
    // The same entry appended again keeps its first index for leafIndexOf.
    assert.equal(await log.append(entries[3]), 71);
    assert.equal(await log.leafIndexOf(leafHash(entries[3])), 3);
    assert.deepEqual(await log.entry(71), entries[3]);
    await log.close();
  });

  test('inclusion and consistency proofs verify and equal the reference byte for byte', async () => {
    const dir = tempDir();
    const log = await open(dir);
    const entries = await appendAll(log, 0, 130);
    const leaves = entries.map(leafHash);
    const ref = memoryNodeSource(leaves);
    for (let size = 1; size <= 130; size += size < 20 ? 1 : 7) {
      const root = treeRoot(ref, size);
      for (let index = 0; index < size; index += Math.max(1, Math.floor(size / 9))) {
        const proof = await log.inclusionProof(index, size);
        assert.deepEqual(proof, inclusionProof(ref, index, size));
        assert.ok(verifyInclusion(index, size, leaves[index], proof, root), `inclusion ${index}/${size}`);
      }
      for (let first = 0; first <= size; first += Math.max(1, Math.floor(size / 6))) {
        const proof = await log.consistencyProof(first, size);
        assert.deepEqual(proof, consistencyProof(ref, first, size));
        assert.ok(verifyConsistency(first, size, treeRoot(ref, first), root, proof), `consistency ${first}->${size}`);
      }
    }
    await assert.rejects(log.inclusionProof(5, 131), (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument');
    await assert.rejects(log.consistencyProof(9, 8), (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument');
    await log.close();
  });

  test('reopen gives the same root, entries and leaf index', async () => {
    const dir = tempDir();
    const log = await open(dir);
    const entries = await appendAll(log, 0, 50);
    const root = await log.root();
    await log.close();
    const again = await open(dir);
    assert.equal(again.recovery.truncated_bytes, 0);
    assert.equal(again.recovery.rebuilt_nodes, 0, 'the close checkpoint covers every node');
    assert.equal(await again.size(), 50);
    assert.deepEqual(await again.root(), root);
    assert.deepEqual(await again.entry(49), entries[49]);
    assert.equal(await again.leafIndexOf(leafHash(entries[17])), 17);
    assert.equal(await again.append(entryOf(50)), 50);
    await again.close();
    const v = await verifyLogDir(dir);
    assert.ok(v.ok, v.problems.join('; '));
    assert.equal(v.entries, 51);
  });

  test('200 concurrent appends: dense unique indices, far fewer fsyncs (group commit)', async () => {
    const dir = tempDir();
    const log = await open(dir);
    const entries = Array.from({ length: 200 }, (_, i) => entryOf(i));
    const indices = await Promise.all(entries.map((e) => log.append(e)));
    assert.deepEqual(
      [...indices].sort((a, b) => a - b),
      Array.from({ length: 200 }, (_, i) => i),
    );
    assert.equal(new Set(indices).size, 200);
    for (let k = 0; k < 200; k++) assert.deepEqual(await log.entry(indices[k]), entries[k]);
    assert.ok(log.fsyncCount < 20, `fsyncs: ${log.fsyncCount}`);
    // A second wave arriving while the first is syncing is still batched.
    const wave = await Promise.all(Array.from({ length: 100 }, (_, i) => log.append(entryOf(200 + i))));
    assert.equal(Math.min(...wave), 200);
    assert.equal(Math.max(...wave), 299);
    assert.ok(log.fsyncCount < 40, `fsyncs: ${log.fsyncCount}`);
    await log.close();
    await assert.rejects(log.append(entryOf(1)), (e: unknown) => e instanceof SvcError && e.code === 'internal');
  });

  test('segment rollover seals with a valid trailer; proofs work across segments', async () => {
    const dir = tempDir();
    const log = await open(dir, { segmentMaxBytes: 300 });
    const entries = await appendAll(log, 0, 40);
    const concurrent = await Promise.all(Array.from({ length: 25 }, (_, i) => log.append(entryOf(40 + i))));
    assert.deepEqual(
      concurrent,
      Array.from({ length: 25 }, (_, i) => 40 + i),
    );
    for (let i = 40; i < 65; i++) entries.push(entryOf(i));
    const leaves = entries.map(leafHash);
    const ref = memoryNodeSource(leaves);
    const names = segments(dir);
    assert.ok(names.length > 5, `segments: ${names.length}`);
    let first = 0;
    for (const name of names.slice(0, -1)) {
      const bytes = new Uint8Array(readFileSync(join(dir, name)));
      assert.ok(bytes.length <= 300, `${name} is ${bytes.length} bytes`);
      const t = decodeTrailer(bytes.subarray(bytes.length - TRAILER_BYTES));
      assert.ok(t, `${name} has a trailer`);
      assert.equal(t.first, first);
      assert.deepEqual(t.root, treeRoot(ref, t.first + t.count));
      let records = 0;
      for (let at = 0; at < bytes.length - TRAILER_BYTES; records++) at += RECORD_OVERHEAD + new DataView(bytes.buffer).getUint32(at, true);
      assert.equal(records, t.count);
      first += t.count;
    }
    for (const [index, size] of [
      [0, 65],
      [3, 64],
      [17, 33],
      [64, 65],
      [30, 31],
    ]) {
      assert.ok(verifyInclusion(index, size, leaves[index], await log.inclusionProof(index, size), treeRoot(ref, size)));
    }
    assert.ok(verifyConsistency(7, 65, treeRoot(ref, 7), treeRoot(ref, 65), await log.consistencyProof(7, 65)));
    for (let i = 0; i < 65; i++) assert.deepEqual(await log.entry(i), entries[i]);
    const root = await log.root();
    await log.close();
    const again = await open(dir, { segmentMaxBytes: 300 });
    assert.deepEqual(await again.root(), root);
    assert.equal(again.recovery.segments, names.length);
    let n = 0;
    for await (const { index, entry } of again.entries(0, 1000)) {
      assert.deepEqual(entry, entries[index]);
      n++;
    }
    assert.equal(n, 65);
    await again.close();
    const v = await verifyLogDir(dir);
    assert.ok(v.ok, v.problems.join('; '));
    assert.equal(v.root_hex, toHex(root));
    assert.equal(v.segments, names.length);
  });

  test('an entry larger than the segment cap gets a segment of its own', async () => {
    const dir = tempDir();
    const log = await open(dir, { segmentMaxBytes: 300 });
    await log.append(entryOf(0));
    const big = entryOf(1, 500);
    assert.equal(await log.append(big), 1);
    assert.equal(await log.append(entryOf(2)), 2);
    assert.deepEqual(await log.entry(1), big);
    await log.close();
    assert.equal(segments(dir).length, 3);
    assert.ok((await verifyLogDir(dir)).ok);
  });

  test('torn tail after a crash: reopen cuts it and keeps every complete record', async () => {
    const dir = tempDir();
    // A real crash: the writer process dies by SIGKILL, so no closing checkpoint is written.
    const acks = crashChild(dir, 12, 1, '-');
    assert.equal(acks.size, 12);
    const entries = Array.from({ length: 12 }, (_, i) => Uint8Array.from(Buffer.from(acks.get(i)!, 'hex')));
    const seg = join(dir, segmentName(0));
    const full = statSync(seg).size;
    const lastLen = RECORD_OVERHEAD + entries[11].length;
    truncateSync(seg, full - Math.floor(lastLen / 2));
    const v = await verifyLogDir(dir);
    assert.ok(v.ok, 'a torn tail is a warning, not a problem');
    assert.equal(v.entries, 11);
    assert.equal(v.warnings.length, 1);
    const log = await open(dir);
    assert.equal(log.recovery.truncated_bytes, lastLen - Math.floor(lastLen / 2));
    assert.equal(await log.size(), 11);
    assert.deepEqual(await log.root(), treeRoot(memoryNodeSource(entries.slice(0, 11).map(leafHash)), 11));
    assert.deepEqual(await log.entry(10), entries[10]);
    assert.equal(await log.append(entryOf(99)), 11);
    await log.close();
    assert.ok((await verifyLogDir(dir)).ok);
  });

  test('garbage after the last record (and a torn record after close) is cut', async () => {
    const dir = tempDir();
    const log = await open(dir);
    const entries = await appendAll(log, 0, 9);
    await log.close();
    const seg = join(dir, segmentName(0));
    appendFileSync(seg, new Uint8Array([7, 0, 0, 0, 1, 2, 3]));
    let again = await open(dir);
    assert.equal(again.recovery.truncated_bytes, 7);
    assert.equal(await again.size(), 9);
    await again.close();
    // A complete-looking record with a wrong digest at the very tail.
    const bogus = new Uint8Array(4 + 3 + 32);
    bogus[0] = 3;
    appendFileSync(seg, bogus);
    again = await open(dir);
    assert.equal(again.recovery.truncated_bytes, bogus.length);
    await again.close();
    // Cutting the last checkpointed record mid-way: repaired, and reported as lost durable data.
    truncateSync(seg, statSync(seg).size - 5);
    again = await open(dir);
    assert.equal(await again.size(), 8);
    assert.ok(
      again.recovery.problems.some((p) => /lost/.test(p)),
      again.recovery.problems.join('; '),
    );
    assert.deepEqual(await again.root(), treeRoot(memoryNodeSource(entries.slice(0, 8).map(leafHash)), 8));
    await again.close();
  });

  test('a flipped byte inside a sealed segment: open throws internal, verify names the segment', async () => {
    const dir = tempDir();
    const log = await open(dir, { segmentMaxBytes: 300 });
    await appendAll(log, 0, 30);
    await log.close();
    const name = segmentName(1);
    const path = join(dir, name);
    const bytes = readFileSync(path);
    bytes[10] ^= 0x40;
    writeFileSync(path, bytes);
    await rejectsInternal(open(dir, { segmentMaxBytes: 300 }), name);
    const v = await verifyLogDir(dir);
    assert.equal(v.ok, false);
    assert.ok(
      v.problems.some((p) => p.includes(name) && /offset/.test(p)),
      v.problems.join('; '),
    );
    // A damaged trailer in a sealed segment is refused too.
    bytes[10] ^= 0x40;
    bytes[bytes.length - 40] ^= 1;
    writeFileSync(path, bytes);
    await rejectsInternal(open(dir, { segmentMaxBytes: 300 }), name);
    assert.ok((await verifyLogDir(dir)).problems.some((p) => p.includes(name)));
    // A well-formed trailer naming the wrong root is refused as well.
    bytes[bytes.length - 40] ^= 1;
    const t = decodeTrailer(bytes.subarray(bytes.length - TRAILER_BYTES))!;
    bytes.set(encodeTrailer({ ...t, root: new Uint8Array(32).fill(7) }), bytes.length - TRAILER_BYTES);
    writeFileSync(path, bytes);
    await rejectsInternal(open(dir, { segmentMaxBytes: 300 }), `${name}.*root`);
    assert.ok((await verifyLogDir(dir)).problems.some((p) => p.includes(name) && /root/.test(p)));
  });

  test('a bad record that is not at the tail of the last segment is refused', async () => {
    const dir = tempDir();
    const log = await open(dir);
    const entries = await appendAll(log, 0, 6);
    await log.close();
    const path = join(dir, segmentName(0));
    const bytes = readFileSync(path);
    bytes[RECORD_OVERHEAD + entries[0].length + 6] ^= 1; // inside entry 1's bytes
    writeFileSync(path, bytes);
    await rejectsInternal(open(dir), `${segmentName(0)}.*offset ${RECORD_OVERHEAD + entries[0].length}`);
    // With full verification off, open trusts the checkpointed prefix; verify still finds it.
    const fast = await open(dir, { fullVerifyBelowBytes: 0 });
    assert.equal(await fast.size(), 6);
    await rejectsInternal(fast.entry(1), 'BLAKE3');
    await fast.close();
    assert.equal((await verifyLogDir(dir)).ok, false);
  });

  test('deleting the nodes directory: reopen rebuilds identical roots', async () => {
    const dir = tempDir();
    const log = await open(dir, { segmentMaxBytes: 400 });
    const entries = await appendAll(log, 0, 77);
    const roots = await Promise.all([0, 1, 13, 64, 77].map((n) => log.root(n)));
    await log.close();
    rmSync(join(dir, 'nodes'), { recursive: true });
    const again = await open(dir, { segmentMaxBytes: 400 });
    assert.ok(again.recovery.rebuilt_nodes >= 77);
    assert.ok(again.recovery.problems.length > 0);
    for (const [k, n] of [0, 1, 13, 64, 77].entries()) assert.deepEqual(await again.root(n), roots[k]);
    assert.equal(await again.leafIndexOf(leafHash(entries[76])), 76);
    await again.close();
    // The rebuilt nodes were checkpointed, so the next open recomputes nothing.
    const third = await open(dir, { segmentMaxBytes: 400 });
    assert.equal(third.recovery.rebuilt_nodes, 0);
    await third.close();
    assert.ok((await verifyLogDir(dir)).ok);
  });

  test('corrupted node files under the checkpoint are detected and rebuilt', async () => {
    const dir = tempDir();
    const log = await open(dir);
    await appendAll(log, 0, 600);
    const root = await log.root();
    await log.close();
    const lvl = join(dir, 'nodes', 'level-09.bin');
    const b = readFileSync(lvl);
    b[0] ^= 1;
    writeFileSync(lvl, b);
    assert.equal((await verifyLogDir(dir)).ok, false);
    const again = await open(dir);
    assert.ok(again.recovery.problems.some((p) => /disagree/.test(p)));
    assert.deepEqual(await again.root(), root);
    await again.close();
    assert.ok((await verifyLogDir(dir)).ok);
  });

  test('checkpoint path: only records after the checkpoint are re-hashed on open', async () => {
    const dir = tempDir();
    // Killed without close: the periodic checkpoint (every 10) covers 20 entries, 5 are replayed.
    const acks = crashChild(dir, 25, 1, '-', 10);
    const entries = Array.from({ length: 25 }, (_, i) => Uint8Array.from(Buffer.from(acks.get(i)!, 'hex')));
    const root = treeRoot(memoryNodeSource(entries.map(leafHash)), 25);
    const again = await open(dir, { fullVerifyBelowBytes: 0 });
    assert.deepEqual(await again.root(), root);
    assert.ok(again.recovery.rebuilt_nodes >= 5 && again.recovery.rebuilt_nodes < 25, String(again.recovery.rebuilt_nodes));
    assert.deepEqual(await again.entry(24), entries[24]);
    await again.close();
  });

  test('SIGKILL during concurrent appends loses nothing acknowledged', async () => {
    const dir = tempDir();
    let expected = new Map<number, string>();
    for (const killAfter of [60, 140]) {
      const acks = crashChild(dir, 5000, 16, killAfter);
      assert.ok(acks.size > 0, 'the child acknowledged something before dying');
      expected = new Map([...expected, ...acks]);
      const log = await open(dir);
      const size = await log.size();
      assert.ok(size >= Math.max(...expected.keys()) + 1);
      for (const [index, hex] of expected) assert.equal(toHex((await log.entry(index))!), hex, `entry ${index}`);
      await log.close();
      const v = await verifyLogDir(dir);
      assert.ok(v.ok, v.problems.join('; '));
      assert.equal(v.entries, size);
    }
  });

  test('signed tree head verifies and is signed once per size', async () => {
    const dir = tempDir();
    const log = await open(dir, { prefix: 'svc' });
    const empty = await log.latestTreeHead();
    assert.equal(empty.tree_size, 0);
    await appendAll(log, 0, 5);
    const sth = await log.latestTreeHead();
    assert.equal(sth.tree_size, 5);
    assert.equal(sth.responder_key_epoch, 3);
    assert.match(sth.signed_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const root = b32decode(sth.root, 32);
    assert.deepEqual(root, await log.root());
    const pk = b32decode(sth.responder, 32);
    assert.deepEqual(pk, signer.publicKey);
    assert.ok(verifyStrict(b32decode(sth.signature, 64), sthDigest(sth.tree_size, root, sth.signed_at, pk), pk));
    assert.deepEqual(await log.latestTreeHead(), sth);
    await log.close();
  });
});
