/**
 * Responder key (docs/protocol-notes.md §8): created on first start in the data directory with mode
 * 0600; rotation keeps every retired key (with its epoch) so receipts signed before still verify.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { b32decode, b32encode } from './protocol/base32.js';
import { randomSeed, type Ed25519Backend } from './protocol/ed25519.js';
import type { ReceiptSigner } from './protocol/receipt.js';
import { serverEd25519 } from './crypto/server-ed25519.js';

interface KeyFile {
  schema: 'svc.keys.v1';
  current: { epoch: number; seed: string; public_key: string; created_at: string };
  retired: Array<{ epoch: number; public_key: string; retired_at: string }>;
}

export interface ResponderKeys {
  signer: ReceiptSigner;
  publicKeyB32: string;
  epoch: number;
  retired: KeyFile['retired'];
}

function keyPath(dataDir: string): string {
  return join(dataDir, 'keys', 'responder.json');
}

function writeKeyFile(dataDir: string, file: KeyFile): void {
  const dir = join(dataDir, 'keys');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = keyPath(dataDir) + '.tmp';
  writeFileSync(tmp, JSON.stringify(file, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, keyPath(dataDir)); // atomic: a crash never leaves a half-written key
}

function fresh(epoch: number, backend: Ed25519Backend): KeyFile['current'] {
  const seed = randomSeed();
  return { epoch, seed: b32encode(seed), public_key: b32encode(backend.publicKey(seed)), created_at: new Date().toISOString() };
}

/** Create the key file if missing (returns true when it created one). */
export function ensureKeyFile(dataDir: string, backend: Ed25519Backend = serverEd25519): boolean {
  if (existsSync(keyPath(dataDir))) return false;
  writeKeyFile(dataDir, { schema: 'svc.keys.v1', current: fresh(0, backend), retired: [] });
  return true;
}

/** Load (creating on first start) the responder key as a signer. */
export function loadResponderKeys(dataDir: string, backend: Ed25519Backend = serverEd25519): ResponderKeys {
  ensureKeyFile(dataDir, backend);
  const file = JSON.parse(readFileSync(keyPath(dataDir), 'utf8')) as KeyFile;
  const seed = b32decode(file.current.seed, 32, 'responder seed');
  const publicKey = backend.publicKey(seed);
  if (b32encode(publicKey) !== file.current.public_key) throw new Error(`${keyPath(dataDir)}: public key does not match the seed`);
  return {
    signer: { publicKey, epoch: file.current.epoch, sign: (digest) => backend.sign(digest, seed) },
    publicKeyB32: file.current.public_key,
    epoch: file.current.epoch,
    retired: file.retired,
  };
}

/** Retire the current key and create the next epoch's. Returns the new public key. */
export function rotateResponderKey(dataDir: string, backend: Ed25519Backend = serverEd25519): { epoch: number; public_key: string; retired: string } {
  ensureKeyFile(dataDir, backend);
  const file = JSON.parse(readFileSync(keyPath(dataDir), 'utf8')) as KeyFile;
  const old = file.current;
  file.retired.push({ epoch: old.epoch, public_key: old.public_key, retired_at: new Date().toISOString() });
  file.current = fresh(old.epoch + 1, backend);
  writeKeyFile(dataDir, file);
  return { epoch: file.current.epoch, public_key: file.current.public_key, retired: old.public_key };
}
