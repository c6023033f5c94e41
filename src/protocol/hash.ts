/** BLAKE3-256 (`H` in the notation of docs/protocol-notes.md), via the audited pure implementation. */
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';

export type HashFn = (data: Uint8Array) => Uint8Array;

let impl: HashFn = (data) => nobleBlake3(data);

/** H(x): the 32-byte BLAKE3 digest. */
export function blake3(data: Uint8Array): Uint8Array {
  return impl(data);
}

/** The portable reference implementation, always available for cross-checks. */
export const blake3Reference: HashFn = (data) => nobleBlake3(data);

/**
 * Swap in a faster BLAKE3 (the server may use a wasm or native build). Tests compare every
 * replacement against the reference; the protocol module itself never imports one.
 */
export function setBlake3Implementation(fn: HashFn): void {
  impl = fn;
}
