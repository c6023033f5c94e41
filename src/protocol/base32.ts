/** RFC 4648 base32, lowercase, no padding, strict decode (docs/protocol-notes.md §4: `[a-z2-7]`). */
import { base32 } from '@scure/base';
import { SvcError } from './errors.js';

const B32_RE = /^[a-z2-7]*$/;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
// Every 10-bit value as its two characters: ids, keys and signatures are encoded on every read.
const PAIRS: string[] = Array.from({ length: 1024 }, (_, i) => ALPHABET[i >> 5] + ALPHABET[i & 31]);

/** b32(x): lowercase base32 without padding. */
export function b32encode(bytes: Uint8Array): string {
  let out = '';
  const n = bytes.length;
  let i = 0;
  // Whole 5-byte groups: 40 bits → four 10-bit pairs.
  for (; i + 5 <= n; i += 5) {
    const hi = (bytes[i] << 12) | (bytes[i + 1] << 4) | (bytes[i + 2] >>> 4);
    const lo = ((bytes[i + 2] & 15) << 16) | (bytes[i + 3] << 8) | bytes[i + 4];
    out += PAIRS[hi >>> 10] + PAIRS[hi & 1023] + PAIRS[lo >>> 10] + PAIRS[lo & 1023];
  }
  // The tail: 5 bits at a time, the last group zero-padded on the right.
  let acc = 0;
  let bits = 0;
  for (; i < n; i++) {
    acc = (acc << 8) | bytes[i];
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >>> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(acc << (5 - bits)) & 31];
  return out;
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
