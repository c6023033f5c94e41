/**
 * Server-side BLAKE3 through blake3-wasm (≈10× the portable implementation on small messages).
 * Installed into the protocol module with setBlake3Implementation; tests compare it with the
 * reference on the official vectors and random inputs.
 */
import { createRequire } from 'node:module';
import { blake3Reference, setBlake3Implementation, type HashFn } from '../protocol/hash.js';

const require = createRequire(import.meta.url);

/** The wasm hash, or null when the package cannot load on this platform. */
export function loadWasmBlake3(): HashFn | null {
  try {
    const mod = require('blake3-wasm') as { hash(data: Uint8Array): Uint8Array };
    const fn: HashFn = (data) => {
      const out = mod.hash(data);
      return new Uint8Array(out.buffer, out.byteOffset, 32);
    };
    // Refuse to install an implementation that disagrees with the reference.
    const probe = new Uint8Array(1500).map((_, i) => i % 251);
    const a = fn(probe);
    const b = blake3Reference(probe);
    for (let i = 0; i < 32; i++) if (a[i] !== b[i]) return null;
    return fn;
  } catch {
    return null;
  }
}

/** Use the wasm BLAKE3 for this process when it loads and agrees with the reference. */
export function installFastBlake3(): boolean {
  const fn = loadWasmBlake3();
  if (fn) setBlake3Implementation(fn);
  return fn !== null;
}
