/**
 * A BLAKE3-256 specialised for inputs of at most one chunk (1024 bytes): log entries, leaf
 * hashes H(0x00 ‖ entry) and interior nodes H(0x01 ‖ l ‖ r) are all that small. It keeps the
 * whole state in locals and allocates only the output, which makes it roughly ten times faster
 * than the general-purpose reference on these sizes. Longer inputs go to the reference.
 *
 * The log itself always hashes through the protocol's `blake3` (src/protocol/hash.ts), so this
 * is used only where someone installs it with `setBlake3Implementation(blake3Small)` (the
 * benchmark does; a server may). Tests compare it with the reference on every length 0..2100
 * and with the official vectors.
 */
import { blake3Reference } from '../../protocol/hash.js';

const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
const CHUNK_START = 1;
const CHUNK_END = 2;
const ROOT = 8;

/** Message word order for each of the 7 rounds (the BLAKE3 specification's message permutation, applied repeatedly). */
const SCHEDULE = (() => {
  const perm = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];
  const out = new Uint8Array(7 * 16);
  let order = Array.from({ length: 16 }, (_, i) => i);
  for (let r = 0; r < 7; r++) {
    out.set(order, r * 16);
    order = perm.map((p) => order[p]);
  }
  return out;
})();

const m = new Int32Array(16);
const cv = new Int32Array(8);
const tail = new Uint8Array(64);

/** One compression of the block in `m` into `cv` (counter 0: a single-chunk input). */
function compress(blockLen: number, flags: number): void {
  let v0 = cv[0],
    v1 = cv[1],
    v2 = cv[2],
    v3 = cv[3],
    v4 = cv[4],
    v5 = cv[5],
    v6 = cv[6],
    v7 = cv[7];
  let v8 = IV[0] | 0,
    v9 = IV[1] | 0,
    v10 = IV[2] | 0,
    v11 = IV[3] | 0;
  let v12 = 0,
    v13 = 0,
    v14 = blockLen,
    v15 = flags;
  const S = SCHEDULE;
  for (let s = 0; s < 112; s += 16) {
    // Columns.
    v0 = (v0 + v4 + m[S[s]]) | 0;
    v12 ^= v0;
    v12 = (v12 >>> 16) | (v12 << 16);
    v8 = (v8 + v12) | 0;
    v4 ^= v8;
    v4 = (v4 >>> 12) | (v4 << 20);
    v0 = (v0 + v4 + m[S[s + 1]]) | 0;
    v12 ^= v0;
    v12 = (v12 >>> 8) | (v12 << 24);
    v8 = (v8 + v12) | 0;
    v4 ^= v8;
    v4 = (v4 >>> 7) | (v4 << 25);

    v1 = (v1 + v5 + m[S[s + 2]]) | 0;
    v13 ^= v1;
    v13 = (v13 >>> 16) | (v13 << 16);
    v9 = (v9 + v13) | 0;
    v5 ^= v9;
    v5 = (v5 >>> 12) | (v5 << 20);
    v1 = (v1 + v5 + m[S[s + 3]]) | 0;
    v13 ^= v1;
    v13 = (v13 >>> 8) | (v13 << 24);
    v9 = (v9 + v13) | 0;
    v5 ^= v9;
    v5 = (v5 >>> 7) | (v5 << 25);

    v2 = (v2 + v6 + m[S[s + 4]]) | 0;
    v14 ^= v2;
    v14 = (v14 >>> 16) | (v14 << 16);
    v10 = (v10 + v14) | 0;
    v6 ^= v10;
    v6 = (v6 >>> 12) | (v6 << 20);
    v2 = (v2 + v6 + m[S[s + 5]]) | 0;
    v14 ^= v2;
    v14 = (v14 >>> 8) | (v14 << 24);
    v10 = (v10 + v14) | 0;
    v6 ^= v10;
    v6 = (v6 >>> 7) | (v6 << 25);

    v3 = (v3 + v7 + m[S[s + 6]]) | 0;
    v15 ^= v3;
    v15 = (v15 >>> 16) | (v15 << 16);
    v11 = (v11 + v15) | 0;
    v7 ^= v11;
    v7 = (v7 >>> 12) | (v7 << 20);
    v3 = (v3 + v7 + m[S[s + 7]]) | 0;
    v15 ^= v3;
    v15 = (v15 >>> 8) | (v15 << 24);
    v11 = (v11 + v15) | 0;
    v7 ^= v11;
    v7 = (v7 >>> 7) | (v7 << 25);

    // Diagonals.
    v0 = (v0 + v5 + m[S[s + 8]]) | 0;
    v15 ^= v0;
    v15 = (v15 >>> 16) | (v15 << 16);
    v10 = (v10 + v15) | 0;
    v5 ^= v10;
    v5 = (v5 >>> 12) | (v5 << 20);
    v0 = (v0 + v5 + m[S[s + 9]]) | 0;
    v15 ^= v0;
    v15 = (v15 >>> 8) | (v15 << 24);
    v10 = (v10 + v15) | 0;
    v5 ^= v10;
    v5 = (v5 >>> 7) | (v5 << 25);

    v1 = (v1 + v6 + m[S[s + 10]]) | 0;
    v12 ^= v1;
    v12 = (v12 >>> 16) | (v12 << 16);
    v11 = (v11 + v12) | 0;
    v6 ^= v11;
    v6 = (v6 >>> 12) | (v6 << 20);
    v1 = (v1 + v6 + m[S[s + 11]]) | 0;
    v12 ^= v1;
    v12 = (v12 >>> 8) | (v12 << 24);
    v11 = (v11 + v12) | 0;
    v6 ^= v11;
    v6 = (v6 >>> 7) | (v6 << 25);

    v2 = (v2 + v7 + m[S[s + 12]]) | 0;
    v13 ^= v2;
    v13 = (v13 >>> 16) | (v13 << 16);
    v8 = (v8 + v13) | 0;
    v7 ^= v8;
    v7 = (v7 >>> 12) | (v7 << 20);
    v2 = (v2 + v7 + m[S[s + 13]]) | 0;
    v13 ^= v2;
    v13 = (v13 >>> 8) | (v13 << 24);
    v8 = (v8 + v13) | 0;
    v7 ^= v8;
    v7 = (v7 >>> 7) | (v7 << 25);

    v3 = (v3 + v4 + m[S[s + 14]]) | 0;
    v14 ^= v3;
    v14 = (v14 >>> 16) | (v14 << 16);
    v9 = (v9 + v14) | 0;
    v4 ^= v9;
    v4 = (v4 >>> 12) | (v4 << 20);
    v3 = (v3 + v4 + m[S[s + 15]]) | 0;
    v14 ^= v3;
    v14 = (v14 >>> 8) | (v14 << 24);
    v9 = (v9 + v14) | 0;
    v4 ^= v9;
    v4 = (v4 >>> 7) | (v4 << 25);
  }
  cv[0] = v0 ^ v8;
  cv[1] = v1 ^ v9;
  cv[2] = v2 ^ v10;
  cv[3] = v3 ^ v11;
  cv[4] = v4 ^ v12;
  cv[5] = v5 ^ v13;
  cv[6] = v6 ^ v14;
  cv[7] = v7 ^ v15;
}

function loadWords(b: Uint8Array, at: number): void {
  for (let i = 0; i < 16; i++, at += 4) m[i] = b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24);
}

/** BLAKE3-256 of `data`; fast for ≤ 1024 bytes, the reference beyond. */
export function blake3Small(data: Uint8Array): Uint8Array {
  const len = data.length;
  if (len > 1024) return blake3Reference(data);
  for (let i = 0; i < 8; i++) cv[i] = IV[i];
  const blocks = len === 0 ? 1 : Math.ceil(len / 64);
  for (let k = 0; k < blocks; k++) {
    const at = k * 64;
    const last = k === blocks - 1;
    const blockLen = last ? len - at : 64;
    if (blockLen === 64) {
      loadWords(data, at);
    } else {
      tail.fill(0);
      tail.set(data.subarray(at, len));
      loadWords(tail, 0);
    }
    compress(blockLen, (k === 0 ? CHUNK_START : 0) | (last ? CHUNK_END | ROOT : 0));
  }
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const w = cv[i];
    out[i * 4] = w;
    out[i * 4 + 1] = w >>> 8;
    out[i * 4 + 2] = w >>> 16;
    out[i * 4 + 3] = w >>> 24;
  }
  return out;
}
