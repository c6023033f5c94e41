/**
 * Canonical CBOR (protocol.md §3): RFC 8949 §4.2.1 core deterministic encoding plus numeric
 * reduction, and a strict decoder for untrusted input that re-encodes and compares bytes.
 */
import { ByteBuffer, compareBytes, equalBytes, fromUtf8, utf8 } from './bytes.js';
import { SvcError } from './errors.js';

/** Values the encoder accepts: the JSON data model plus byte strings and bigints. */
export type CborValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | readonly CborValue[]
  | { readonly [key: string]: CborValue | undefined };

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

}

/** Half-precision bits of `x` when it round-trips exactly, else -1. */
function toHalfBits(x: number): number {
  if (x === 0) return Object.is(x, -0) ? 0x8000 : 0;
  if (!Number.isFinite(x)) return x > 0 ? 0x7c00 : 0xfc00;
  const sign = x < 0 ? 0x8000 : 0;
  const a = Math.abs(x);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--; // Math.log2 may round across a power of two
  else if (2 ** (e + 1) <= a) e++;
  if (e > 15) return -1;
  if (e >= -14) {
    const mant = a / 2 ** e - 1; // in [0,1)
    const m = mant * 1024;
    if (!Number.isInteger(m)) return -1;
    return sign | ((e + 15) << 10) | m;
  }
  const m = a / 2 ** -24; // subnormal: value = m * 2^-24
  if (!Number.isInteger(m) || m >= 1024) return -1;
  return sign | m;
}

function writeFloat(w: Writer, x: number): void {
  if (Number.isNaN(x)) {
    w.byte(0xf9);
    w.byte(0x7e);
    w.byte(0x00);
    return;
  }
  const half = toHalfBits(x);
  if (half >= 0) {
    w.byte(0xf9);
    w.byte(half >> 8);
    w.byte(half & 0xff);
    return;
  }
  if (Math.fround(x) === x) {
    const b = new Uint8Array(5);
    b[0] = 0xfa;
    new DataView(b.buffer).setFloat32(1, x, false);
    w.bytes(b);
    return;
  }
  const b = new Uint8Array(9);
  b[0] = 0xfb;
  new DataView(b.buffer).setFloat64(1, x, false);
  w.bytes(b);
}

function writeNumber(w: Writer, x: number): void {
  // Numeric reduction: integral values within ±(2^53-1) are integers (also 918.0 and -0.0).
  if (Number.isInteger(x) && Math.abs(x) <= MAX_SAFE) {
    if (x >= 0) w.head(0, x === 0 ? 0 : x);
    else w.head(1, -1 - x);
    return;
  }
  writeFloat(w, x);
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
    case 'string': {
      const b = utf8(v);
      w.head(3, b.length);
      return w.bytes(b);
    }
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
  const entries: Array<[Uint8Array, CborValue]> = [];
  for (const key of Object.keys(obj)) {
    const val = obj[key];
    if (val === undefined) continue; // as in JSON: an undefined member is not a member
    entries.push([encodeKey(key), val]);
  }
  entries.sort((a, b) => compareBytes(a[0], b[0]));
  w.head(5, entries.length);
  for (const [k, val] of entries) {
    w.bytes(k);
    encodeInto(w, val, depth + 1);
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

/** Canonical CBOR bytes of `value` (protocol.md §3). */
export function encodeCanonical(value: CborValue): Uint8Array {
  const w = new Writer();
  encodeInto(w, value, 0);
  return w.result();
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

  argument(info: number): bigint {
    if (info < 24) return BigInt(info);
    if (info === 24) return BigInt(this.u8());
    if (info === 25 || info === 26 || info === 27) {
      const n = info === 25 ? 2 : info === 26 ? 4 : 8;
      const b = this.take(n);
      let v = 0n;
      for (const x of b) v = (v << 8n) | BigInt(x);
      return v;
    }
    throw divergence(info === 31 ? 'indefinite lengths are not allowed' : `reserved additional information ${info}`);
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
  if (n > BigInt(r.buf.length - r.pos)) throw divergence('length exceeds input');
  return Number(n);
}

function decodeItem(r: Reader, depth: number): CborValue {
  if (depth > 64) throw divergence('nesting deeper than 64');
  const ib = r.u8();
  const major = ib >> 5;
  const info = ib & 31;
  switch (major) {
    case 0: {
      const v = r.argument(info);
      return v <= BigInt(MAX_SAFE) ? Number(v) : v;
    }
    case 1: {
      const v = -1n - r.argument(info);
      return v >= BigInt(-MAX_SAFE) ? Number(v) : v;
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
        Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
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
      if (info === 26) return new DataView(r.take(4).slice().buffer).getFloat32(0, false);
      if (info === 27) return new DataView(r.take(8).slice().buffer).getFloat64(0, false);
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

