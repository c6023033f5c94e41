/**
 * The attester key file of the writer commands (`svc keygen --attester`, `svc agent-key`, `svc
 * attest`, `svc bearer`, `svc sign`): one JSON object, written with mode 0600,
 *
 *   {"schema": "svc.attester_key.v1", "algorithm": "ed25519",
 *    "public_key": "<52 base32>", "seed_b32": "<52 base32>", "created_at": "<RFC 3339>"}
 *
 * `seed_b32` is the 32-byte Ed25519 seed (the secret) in the protocol's base32; `public_key` is
 * what the operator lists in SVC_ATTESTER_KEYS. Files written by older `svc agent-key` carry only
 * `seed_b32` and `public_key`; they are read the same way. A file whose `public_key` does not
 * belong to its seed is refused rather than used.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as P from './protocol/index.js';

export const KEY_FILE_SCHEMA = 'svc.attester_key.v1';

export interface KeyFile {
  schema: typeof KEY_FILE_SCHEMA;
  algorithm: 'ed25519';
  public_key: string;
  seed_b32: string;
  created_at: string;
}

/** A key read from a key file: its seed and public key (base32). */
export interface AttesterKey {
  seed: Uint8Array;
  publicKey: string;
  path: string;
}

/** A key file that cannot be read or used; its message says which file and why. */
export class KeyFileError extends Error {}

/** A fresh key file's contents (a random seed). */
export function newKeyFile(now = new Date()): KeyFile {
  const seed = new Uint8Array(randomBytes(32));
  return {
    schema: KEY_FILE_SCHEMA,
    algorithm: 'ed25519',
    public_key: P.b32encode(P.portableEd25519.publicKey(seed)),
    seed_b32: P.b32encode(seed),
    created_at: P.isoSeconds(now),
  };
}

/**
 * Write `file` at `path` with mode 0600. Without `force` an existing file is never touched (the
 * create is exclusive); with `force` the new file is written beside it and renamed over it, so
 * the old key is replaced whole or not at all and the new one is never readable by others.
 */
export function writeKeyFile(path: string, file: KeyFile, force: boolean): void {
  const text = `${JSON.stringify(file, null, 2)}\n`;
  if (!force) {
    writeFileSync(path, text, { mode: 0o600, flag: 'wx' });
    return;
  }
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, path);
  } finally {
    if (existsSync(tmp)) rmSync(tmp, { force: true });
  }
}

/** Read and check the key file at `path`; throws KeyFileError with a message fit for a user. */
export function readKeyFile(path: string): AttesterKey {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new KeyFileError(`key file ${path}: not found (create one with \`svc keygen --attester --out ${path}\`)`);
    if (code === 'EISDIR') throw new KeyFileError(`key file ${path}: is a directory`);
    throw new KeyFileError(`key file ${path}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new KeyFileError(`key file ${path}: not JSON (expected {"seed_b32": …, "public_key": …} as written by \`svc keygen --attester\`)`);
  }
  const o = doc as Partial<KeyFile> | null;
  if (typeof o !== 'object' || o === null || typeof o.seed_b32 !== 'string') throw new KeyFileError(`key file ${path}: no seed_b32 (not an attester key file)`);
  let seed: Uint8Array;
  try {
    seed = P.b32decode(o.seed_b32, 32, 'seed_b32');
  } catch {
    throw new KeyFileError(`key file ${path}: seed_b32 is not a 32-byte base32 seed`);
  }
  const publicKey = P.b32encode(P.portableEd25519.publicKey(seed));
  if (o.public_key !== undefined && o.public_key !== publicKey) throw new KeyFileError(`key file ${path}: public_key ${String(o.public_key)} does not belong to seed_b32 (the file is damaged)`);
  if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
    console.error(`warning: key file ${path} is readable by other users (chmod 600 ${path})`);
  }
  return { seed, publicKey, path };
}
