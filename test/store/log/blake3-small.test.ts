import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { toHex } from '../../../src/protocol/bytes.js';
import { blake3Reference } from '../../../src/protocol/hash.js';
import { blake3Small } from '../../../src/store/log/blake3-small.js';

test('blake3Small matches the official vectors', () => {
  const vectors = JSON.parse(readFileSync(new URL('../../vectors/blake3/official.json', import.meta.url), 'utf8')) as {
    cases: { input_len: number; hash: string }[];
  };
  assert.ok(vectors.cases.length > 3);
  for (const c of vectors.cases) {
    const input = Uint8Array.from({ length: c.input_len }, (_, i) => i % 251);
    assert.equal(toHex(blake3Small(input)), c.hash, `length ${c.input_len}`);
  }
});

test('blake3Small matches the reference on every length 0..2100', () => {
  let seed = 12345;
  for (let n = 0; n <= 2100; n++) {
    const input = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      input[i] = seed >>> 24;
    }
    assert.equal(toHex(blake3Small(input)), toHex(blake3Reference(input)), `length ${n}`);
    // A view into a larger buffer hashes the same as a copy.
    const padded = new Uint8Array(n + 7);
    padded.set(input, 3);
    assert.equal(toHex(blake3Small(padded.subarray(3, 3 + n))), toHex(blake3Reference(input)));
  }
});
