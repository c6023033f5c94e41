/** Byte helpers shared by the protocol modules (the notation of docs/protocol-notes.md: u32le, u64be, ‖, hex). */

const HEX = '0123456789abcdef';
const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/** Throws unless `value` is a Uint8Array (of `length` bytes when given); the message names `name`. */
export function abytes(name: string, value: unknown, length?: number): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`${name}: expected Uint8Array, got ${typeof value}`);
  if (length !== undefined && value.length !== length) {
    throw new RangeError(`${name}: expected ${length} bytes, got ${value.length}`);
  }
  return value;
}

/** Lowercase hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i] >> 4] + HEX[bytes[i] & 15];
  return out;
}

/** Strict hex decode: even length, [0-9a-f] only (lowercase, as every hex this protocol emits). */
export function fromHex(text: string): Uint8Array {
  if (typeof text !== 'string') throw new TypeError('hex: expected string');
  if (text.length % 2 !== 0 || !/^[0-9a-f]*$/.test(text)) throw new RangeError('hex: expected lowercase hex of even length');
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** UTF-8 bytes of `text`; short ASCII strings (keys, cells, band names) skip the encoder call. */
export function utf8(text: string): Uint8Array {
  const n = text.length;
  if (n <= 64) {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) return utf8Encoder.encode(text);
      out[i] = c;
    }
    return out;
  }
  return utf8Encoder.encode(text);
}

/** Strict UTF-8 decode (throws on invalid sequences). */
export function fromUtf8(bytes: Uint8Array): string {
  return utf8Decoder.decode(bytes);
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export function u32le(x: number): Uint8Array {
  if (!Number.isInteger(x) || x < 0 || x > 0xffffffff) throw new RangeError(`u32le: ${x} out of range`);
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, x, true);
  return out;
}

export function u64be(x: number | bigint): Uint8Array {
  const v = BigInt(x);
  if (v < 0n || v > 0xffffffffffffffffn) throw new RangeError(`u64be: ${x} out of range`);
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, v, false);
  return out;
}

/** Constant-shape equality (length, then every byte). */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** Bytewise lexicographic comparison (shorter prefix first). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** A growable output buffer (CBOR encoder, preimage builder): appends without small allocations. */
export class ByteBuffer {
  protected buf: Uint8Array;
  protected len = 0;

  constructor(initial = 256) {
    this.buf = new Uint8Array(initial);
  }

  /** Make room for `n` more bytes. */
  protected ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.len++] = b;
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  /** A copy of what was written. */
  result(): Uint8Array {
    return this.buf.slice(0, this.len);
  }

  /** Start over, keeping the buffer. */
  clear(): void {
    this.len = 0;
  }

  /** Bytes the buffer holds before it must grow. */
  get capacity(): number {
    return this.buf.length;
  }
}
