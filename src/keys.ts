/**
 * Responder key (docs/protocol-notes.md §8): created on first start in the data directory with mode
 * 0600; rotation keeps every retired key (with its epoch) so receipts signed before still verify.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, unwatchFile, watchFile, writeFileSync } from 'node:fs';
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

/**
 * The responder's keys. A running responder swaps them in place when the key file changes
 * (watchResponderKeys): readers take `signer` at each use, never keep it.
 */
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

/**
 * A signer that always signs with the responder's current key: for the store, which signs tree
 * heads and is handed its signer once at open.
 */
export function currentSigner(keys: ResponderKeys): ReceiptSigner {
  return {
    get publicKey() {
      return keys.signer.publicKey;
    },
    get epoch() {
      return keys.signer.epoch;
    },
    sign: (digest) => keys.signer.sign(digest),
  };
}

/** How often a running responder looks at its key file for a rotation. */
export const KEY_WATCH_MS = 2000;

/**
 * Live rotation (docs/security.md, "Rotating the responder key"): when `svc rotate-key` (or an
 * operator copying a rotated file from another responder) changes the key file, the running
 * responder loads it and signs with the new epoch from then on; the retired key stays published.
 * A file that does not load (half copied, a seed that does not match) is ignored and reported;
 * a file whose epoch is not newer than the one in use is ignored (never a step back).
 * Returns a function that stops watching.
 */
export function watchResponderKeys(dataDir: string, keys: ResponderKeys, report: (line: string) => void = () => {}, backend: Ed25519Backend = serverEd25519): () => void {
  const path = keyPath(dataDir);
  const check = () => {
    let next: ResponderKeys;
    try {
      next = loadResponderKeys(dataDir, backend);
    } catch (e) {
      report(`responder key file not reloaded: ${(e as Error).message}`);
      return;
    }
    if (next.epoch <= keys.epoch) return;
    // A new signer object (not the old one changed): prepared receipt templates keyed on the
    // signer are rebuilt, never reused with the old key.
    keys.signer = next.signer;
    keys.publicKeyB32 = next.publicKeyB32;
    keys.epoch = next.epoch;
    keys.retired = next.retired;
    report(`responder key rotated: epoch ${next.epoch}, ${next.publicKeyB32}`);
  };
  watchFile(path, { interval: KEY_WATCH_MS, persistent: false }, check);
  return () => unwatchFile(path, check);
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
