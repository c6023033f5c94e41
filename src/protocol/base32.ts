/** RFC 4648 base32, lowercase, no padding, strict decode (spec 2.2: `[a-z2-7]`). */
import { base32 } from '@scure/base';
import { SvcError } from './errors.js';

const B32_RE = /^[a-z2-7]*$/;

/** b32(x): lowercase base32 without padding. */
export function b32encode(bytes: Uint8Array): string {
  return base32.encode(bytes).replace(/=+$/, '').toLowerCase();
}

/**
 * Strict decode: lowercase alphabet only, no padding, canonical trailing bits (so every
 * identifier has exactly one text form). `expectedLength` checks the decoded byte count.
 * Throws `invalid_argument` naming `field`.
 */
export function b32decode(text: string, expectedLength?: number, field = 'base32'): Uint8Array {
  if (typeof text !== 'string' || !B32_RE.test(text)) {
    throw new SvcError('invalid_argument', `${field}: expected lowercase base32 without padding`, { field });
  }
  const padded = text.toUpperCase() + '='.repeat((8 - (text.length % 8)) % 8);
  let out: Uint8Array;
  try {
    out = base32.decode(padded);
  } catch {
    throw new SvcError('invalid_argument', `${field}: malformed base32`, { field });
  }
  if (expectedLength !== undefined && out.length !== expectedLength) {
    throw new SvcError('invalid_argument', `${field}: expected ${expectedLength} bytes, got ${out.length}`, { field });
  }
  return out;
}

/** True when `text` is the canonical b32 of exactly `length` bytes. */
export function isB32(text: unknown, length: number): text is string {
  if (typeof text !== 'string') return false;
  try {
    b32decode(text, length);
    return true;
  } catch {
    return false;
  }
}
