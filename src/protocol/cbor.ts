/**
 * Canonical CBOR (docs/protocol-notes.md §3): RFC 8949 §4.2.1 core deterministic encoding plus
 * numeric reduction, and a strict decoder for untrusted input that re-encodes and compares bytes.
 */
import { ByteBuffer, compareBytes, equalBytes, fromUtf8, utf8 } from './bytes.js';
import { SvcError } from './errors.js';

/** Values the encoder accepts: the JSON data model plus byte strings and bigints. */
export type CborValue = null | boolean | number | bigint | string | Uint8Array | readonly CborValue[] | { readonly [key: string]: CborValue | undefined };

const MAX_SAFE = 2 ** 53 - 1;
const U64_MAX = 0xffffffffffffffffn;

class Writer extends ByteBuffer {
  /** Major type + shortest argument (numbers below 2^32 avoid BigInt: the common case). */
  head(major: number, n: number | bigint): void {
    const m = major << 5;
    if (typeof n === 'number' && n < 0x100000000) {
      if (n < 24) return this.byte(m | n);
      this.ensure(5);
      const b = this.buf;
      if (n < 0x100) {
        b[this.len++] = m | 24;
        b[this.len++] = n;
      } else if (n < 0x10000) {
        b[this.len++] = m | 25;
        b[this.len++] = n >>> 8;
        b[this.len++] = n & 0xff;
      } else {
        b[this.len++] = m | 26;
        b[this.len++] = (n >>> 24) & 0xff;
        b[this.len++] = (n >>> 16) & 0xff;
        b[this.len++] = (n >>> 8) & 0xff;
        b[this.len++] = n & 0xff;
      }
      return;
    }
    const v = BigInt(n);
    if (v < 0x100000000n) return this.head(major, Number(v));
    if (v > U64_MAX) throw new RangeError('cbor: integer argument exceeds 64 bits');
    this.byte(m | 27);
    for (let s = 56n; s >= 0n; s -= 8n) this.byte(Number((v >> s) & 0xffn));
  }

  /** A text string; ASCII goes straight into the buffer (its UTF-8 is its code units). */
  text(s: string): void {
    const n = s.length;
    this.ensure(n + 9);
    const start = this.len;
    this.head(3, n);
    const b = this.buf;
    let p = this.len;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.len = start;
        const u = utf8(s);
        this.head(3, u.length);
        return this.bytes(u);
      }
      b[p++] = c;
    }
    this.len = p;
  }

  /** A non-integral number in its shortest exact float form (half, single, double). */
  float(x: number): void {
    this.ensure(9);
    const b = this.buf;
    let half: number;
    if (Number.isNaN(x)) half = 0x7e00;
    else if (x === 0) half = Object.is(x, -0) ? 0x8000 : 0;
    else if (!Number.isFinite(x)) half = x > 0 ? 0x7c00 : 0xfc00;
    else if (Math.fround(x) === x) {
      scratch.setFloat32(0, x);
      const bits = scratch.getUint32(0);
      half = halfFromF32Bits(bits);
      if (half < 0) {
        b[this.len++] = 0xfa;
        b[this.len++] = bits >>> 24;
        b[this.len++] = (bits >>> 16) & 0xff;
        b[this.len++] = (bits >>> 8) & 0xff;
        b[this.len++] = bits & 0xff;
        return;
      }
    } else {
      scratch.setFloat64(0, x);
      b[this.len++] = 0xfb;
      for (let i = 0; i < 8; i++) b[this.len++] = scratch.getUint8(i);
      return;
    }
    b[this.len++] = 0xf9;
    b[this.len++] = half >> 8;
    b[this.len++] = half & 0xff;
  }
}

// One scratch view for float conversions (big-endian, as CBOR writes them): no allocation per value.
const scratch = new DataView(new ArrayBuffer(8));

/**
 * Half-precision bits of a value whose float32 bits are `bits` (a finite, non-zero value that
 * float32 holds exactly), or -1 when half precision does not hold it exactly. Every half value
 * is a float32 value, so the test reads the exponent and the low mantissa bits.
 */
function halfFromF32Bits(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const biased = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (biased === 0) return -1; // float32 subnormal: far below the smallest half (2^-24)
  const e = biased - 127;
  if (e > 15) return -1;
  if (e >= -14) return mant & 0x1fff ? -1 : sign | ((e + 15) << 10) | (mant >>> 13);
  // Half subnormal: value = m · 2^-24 with m = (1.mant) · 2^(e + 24), an integer below 1024.
  if (e < -24) return -1;
  const full = 0x800000 | mant;
  const shift = -1 - e; // 14 … 23
  return full & ((1 << shift) - 1) ? -1 : sign | (full >>> shift);
}

function writeNumber(w: Writer, x: number): void {
  // Numeric reduction: integral values within ±(2^53-1) are integers (also 918.0 and -0.0).
  if (Number.isInteger(x) && Math.abs(x) <= MAX_SAFE) {
    if (x >= 0) w.head(0, x === 0 ? 0 : x);
    else w.head(1, -1 - x);
    return;
  }
  w.float(x);
}

function encodeInto(w: Writer, v: CborValue, depth: number): void {
  if (depth > 256) throw new RangeError('cbor: nesting too deep');
  if (v === null) return w.byte(0xf6);
  if (v === true) return w.byte(0xf5);
  if (v === false) return w.byte(0xf4);
  switch (typeof v) {
    case 'number':
      return writeNumber(w, v);
    case 'bigint':
      if (v >= 0n) return w.head(0, v);
      return w.head(1, -1n - v);
    case 'string':
      return w.text(v);
    case 'object':
      break;
    default:
      throw new TypeError(`cbor: cannot encode ${typeof v}`);
  }
  if (v instanceof Uint8Array) {
    w.head(2, v.length);
    return w.bytes(v);
  }
  if (Array.isArray(v)) {
    w.head(4, v.length);
    for (const item of v) encodeInto(w, item, depth + 1);
    return;
  }
  const obj = v as { readonly [key: string]: CborValue | undefined };
  // Members in the bytewise order of their encoded keys: an insertion sort of parallel arrays
  // (maps here are small), each value read once.
  const keys: Uint8Array[] = [];
  const vals: CborValue[] = [];
  for (const key of Object.keys(obj)) {
    const val = obj[key];
    if (val === undefined) continue; // as in JSON: an undefined member is not a member
    const k = encodeKey(key);
    let i = keys.length;
    keys.push(k);
    vals.push(val);
    for (; i > 0 && compareBytes(keys[i - 1], k) > 0; i--) {
      keys[i] = keys[i - 1];
      vals[i] = vals[i - 1];
    }
    keys[i] = k;
    vals[i] = val;
  }
  w.head(5, keys.length);
  for (let i = 0; i < keys.length; i++) {
    w.bytes(keys[i]);
    encodeInto(w, vals[i], depth + 1);
  }
}

// Map keys repeat across facts: memoise their encoded form (bounded).
const keyCache = new Map<string, Uint8Array>();

function encodeKey(key: string): Uint8Array {
  let k = keyCache.get(key);
  if (k === undefined) {
    const w = new Writer();
    const b = utf8(key);
    w.head(3, b.length);
    w.bytes(b);
    k = w.result();
    if (keyCache.size < 4096) keyCache.set(key, k);
  }
  return k;
}

/**
 * One writer kept between calls: allocating a fresh buffer per value cost about as much as
 * encoding a small fact. Taken while in use (a nested call gets its own), and dropped when a
 * large value grew it.
 */
let spare: Writer | null = null;
const SPARE_MAX = 1 << 16;

/** Canonical CBOR bytes of `value` (docs/protocol-notes.md §3). */
export function encodeCanonical(value: CborValue): Uint8Array {
  const w = spare ?? new Writer();
  spare = null;
  w.clear();
  try {
    encodeInto(w, value, 0);
    return w.result();
  } finally {
    if (w.capacity <= SPARE_MAX) spare = w;
  }
}

// ---------------------------------------------------------------- strict decoder

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}

  need(n: number): void {
    if (this.pos + n > this.buf.length) throw divergence('truncated input');
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  take(n: number): Uint8Array {
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** The argument of a head: a number when it is at most 2^53 − 1 (the common case), else a bigint. */
  argument(info: number): number | bigint {
    if (info < 24) return info;
    const b = this.buf;
    if (info === 24) return this.u8();
    if (info === 25) {
      this.need(2);
      const p = (this.pos += 2) - 2;
      return (b[p] << 8) | b[p + 1];
    }
    if (info === 26) {
      this.need(4);
      const p = (this.pos += 4) - 4;
      return ((b[p] << 24) >>> 0) + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]);
    }
    if (info === 27) {
      this.need(8);
      const p = (this.pos += 8) - 8;
      const hi = ((b[p] << 24) >>> 0) + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]);
      const lo = ((b[p + 4] << 24) >>> 0) + ((b[p + 5] << 16) | (b[p + 6] << 8) | b[p + 7]);
      return hi < 0x200000 ? hi * 0x100000000 + lo : (BigInt(hi) << 32n) | BigInt(lo);
    }
    throw divergence(info === 31 ? 'indefinite lengths are not allowed' : `reserved additional information ${info}`);
  }

  /** A big-endian float of `n` bytes (4 or 8) at the read position. */
  float(n: 4 | 8): number {
    this.need(n);
    const b = this.buf;
    const p = this.pos;
    for (let i = 0; i < n; i++) scratch.setUint8(i, b[p + i]);
    this.pos += n;
    return n === 4 ? scratch.getFloat32(0) : scratch.getFloat64(0);
  }
}

function divergence(why: string): SvcError {
  return new SvcError('canonical_encoding_divergence', `cbor: ${why}`, { reason: why });
}

function halfToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

function lengthOf(r: Reader, info: number): number {
  const n = r.argument(info);
  if (n > r.buf.length - r.pos) throw divergence('length exceeds input');
  return Number(n);
}

function decodeItem(r: Reader, depth: number): CborValue {
  if (depth > 64) throw divergence('nesting deeper than 64');
  const ib = r.u8();
  const major = ib >> 5;
  const info = ib & 31;
  switch (major) {
    case 0:
      return r.argument(info);
    case 1: {
      const a = r.argument(info);
      // -1 - a: a number while a ≤ 2^53 − 2 keeps the result within −(2^53 − 1).
      return typeof a === 'number' && a < MAX_SAFE ? -1 - a : -1n - BigInt(a);
    }
    case 2:
      return r.take(lengthOf(r, info)).slice();
    case 3: {
      try {
        return fromUtf8(r.take(lengthOf(r, info)));
      } catch (e) {
        if (e instanceof SvcError) throw e;
        throw divergence('invalid UTF-8 in text string');
      }
    }
    case 4: {
      const n = lengthOf(r, info);
      const out: CborValue[] = [];
      for (let i = 0; i < n; i++) out.push(decodeItem(r, depth + 1));
      return out;
    }
    case 5: {
      const n = lengthOf(r, info);
      const out: Record<string, CborValue> = {};
      for (let i = 0; i < n; i++) {
        const k = decodeItem(r, depth + 1);
        if (typeof k !== 'string') throw divergence('map keys must be text strings');
        if (Object.prototype.hasOwnProperty.call(out, k)) throw divergence(`duplicate map key "${k}"`);
        const v = decodeItem(r, depth + 1);
        // A plain store makes the same own, enumerable, writable member, far faster; only
        // "__proto__" would instead reach the prototype setter, so it is defined.
        if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
        else out[k] = v;
      }
      return out;
    }
    case 6:
      throw divergence('tags are not used by this protocol');
    default: {
      if (info === 20) return false;
      if (info === 21) return true;
      if (info === 22) return null;
      if (info === 25) {
        const b = r.take(2);
        return halfToNumber((b[0] << 8) | b[1]);
      }
      if (info === 26) return r.float(4);
      if (info === 27) return r.float(8);
      throw divergence(`simple value ${info} is not allowed`);
    }
  }
}

/**
 * Strict decode of untrusted bytes: one item, nothing trailing, and the bytes must be exactly
 * the canonical encoding of what they decode to (else `canonical_encoding_divergence`).
 */
export function decodeCanonical(bytes: Uint8Array): CborValue {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('bytes: expected Uint8Array');
  const r = new Reader(bytes);
  const value = decodeItem(r, 0);
  if (r.pos !== bytes.length) throw divergence('trailing bytes after the item');
  if (!equalBytes(encodeCanonical(value), bytes)) {
    throw divergence('bytes are not the canonical encoding (key order, shortest form or numeric reduction)');
  }
  return value;
}

/** Decode without the canonical check (for bytes this responder wrote itself). */
export function decodeTrusted(bytes: Uint8Array): CborValue {
  const r = new Reader(bytes);
  const value = decodeItem(r, 0);
  if (r.pos !== bytes.length) throw divergence('trailing bytes after the item');
  return value;
}
