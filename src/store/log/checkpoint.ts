/**
 * The log checkpoint: a small file naming a tree size whose entries are durable and whose node
 * files are synced, so open can trust everything before it and hash-check only what follows.
 *
 * File `checkpoint` (80 bytes):
 *   magic "SVCLOGC1" (8 ASCII bytes) ‖ u64-LE tree_size ‖ root[32] ‖ BLAKE3(preceding 48 bytes)[32]
 *
 * Replaced atomically (write `checkpoint.tmp`, fsync, rename, fsync the directory), and only
 * after the segments holding those entries and the node files were fsynced.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { blake3 } from '../../protocol/hash.js';
import { diskFaults } from '../disk-full.js';

export const CHECKPOINT_FILE = 'checkpoint';
export const CHECKPOINT_BYTES = 80;
const MAGIC = new TextEncoder().encode('SVCLOGC1');

export interface Checkpoint {
  size: number;
  root: Uint8Array;
}

/** fsync a directory so entries created or renamed in it survive a crash. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The 80 checkpoint bytes for (size, root). */
export function encodeCheckpoint(c: Checkpoint): Uint8Array {
  const out = new Uint8Array(CHECKPOINT_BYTES);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setBigUint64(8, BigInt(c.size), true);
  out.set(c.root, 16);
  out.set(blake3(out.subarray(0, 48)), 48);
  return out;
}

/** Parse checkpoint bytes; null when malformed or failing the self-check. */
export function decodeCheckpoint(bytes: Uint8Array): Checkpoint | null {
  if (bytes.length !== CHECKPOINT_BYTES) return null;
  for (let i = 0; i < 8; i++) if (bytes[i] !== MAGIC[i]) return null;
  const check = blake3(bytes.subarray(0, 48));
  for (let i = 0; i < 32; i++) if (check[i] !== bytes[48 + i]) return null;
  const size = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(8, true);
  if (size > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return { size: Number(size), root: bytes.slice(16, 48) };
}

/** Read `dir/checkpoint`: null when absent; 'invalid' when present but unusable. */
export function readCheckpoint(dir: string): Checkpoint | null | 'invalid' {
  const path = join(dir, CHECKPOINT_FILE);
  if (!existsSync(path)) return null;
  return decodeCheckpoint(new Uint8Array(readFileSync(path))) ?? 'invalid';
}

/** Atomically replace `dir/checkpoint`. */
export function writeCheckpoint(dir: string, c: Checkpoint): void {
  const tmp = join(dir, CHECKPOINT_FILE + '.tmp');
  const bytes = encodeCheckpoint(c);
  diskFaults.hook?.('log.checkpoint');
  const fd = openSync(tmp, 'w', 0o644);
  try {
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, done);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, CHECKPOINT_FILE));
  fsyncDir(dir);
}
