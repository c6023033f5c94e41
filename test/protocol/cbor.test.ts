import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeCanonical, decodeTrusted, encodeCanonical } from '../../src/protocol/cbor.js';
import { fromHex, toHex } from '../../src/protocol/bytes.js';
import { SvcError } from '../../src/protocol/errors.js';
import { cborValueOf, loadVectors } from '../support/vectors.js';

const appendixA = loadVectors('rfc8949/appendix-a.json');
const reduction = loadVectors('rfc8949/numeric-reduction.json');

function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b) || (a === 0 && b === 0) || (Number.isNaN(a) && Number.isNaN(b));
  return assert.deepStrictEqual(a, b) === undefined;
}

describe('canonical CBOR (protocol.md §3)', () => {
  describe('RFC 8949 Appendix A items that are canonical', () => {
    appendixA.cases.forEach((c: any, i: number) => {
      it(`#${i} encodes ${c.hex} and decodes back`, () => {
        const v = cborValueOf(c.value);
        assert.equal(toHex(encodeCanonical(v)), c.hex, `vector ${i}`);
        const back = decodeCanonical(fromHex(c.hex));
        sameValue(back, typeof v === 'bigint' && v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v);
      });
    });
  });

  describe('numeric reduction and key order', () => {
    reduction.cases.forEach((c: any, i: number) => {
      it(`#${i} ${c.note}`, () => assert.equal(toHex(encodeCanonical(cborValueOf(c.value))), c.hex, `vector ${i}`));
    });
    it('encodes 918.0 arriving from JSON text like 918', () => {
      assert.equal(toHex(encodeCanonical(JSON.parse('918.0'))), toHex(encodeCanonical(918)));
    });
    it('drops undefined members as JSON does', () => {
      assert.equal(toHex(encodeCanonical({ a: 1, b: undefined })), toHex(encodeCanonical({ a: 1 })));
    });
  });

  describe('when the decoder meets non-canonical input', () => {
    const bad: Array<[string, string]> = [
      ['a2616201616102', 'keys out of order ({"b":1,"a":2})'],
      ['a2616101616102', 'duplicate key "a"'],
      ['1817', 'integer 23 in a one-byte argument (not shortest)'],
      ['f93c00', 'float 1.0 that must reduce to the integer 1'],
      ['fb3ff8000000000000', '1.5 as a double (half suffices)'],
      ['f97e01', 'NaN with a payload'],
      ['9f01ff', 'indefinite-length array'],
      ['c11a514b67b0', 'a tag'],
      ['f7', 'undefined'],
      ['0101', 'trailing bytes'],
      ['62c3', 'truncated text'],
      ['a10102', 'a non-text map key'],
      ['62c328', 'invalid UTF-8'],
      ['f90000', 'float zero that must reduce to integer 0'],
    ];
    for (const [hex, why] of bad) {
      it(`refuses ${hex}: ${why}`, () => {
        assert.throws(
          () => decodeCanonical(fromHex(hex)),
          (e: unknown) => e instanceof SvcError && e.code === 'canonical_encoding_divergence',
        );
      });
    }
    it('refuses nesting deeper than 64', () => {
      const deep = new Uint8Array(70).fill(0x81);
      assert.throws(() => decodeCanonical(Uint8Array.from([...deep, 0])), /nesting/);
    });
    it('refuses a length larger than the input without allocating it', () => {
      assert.throws(() => decodeCanonical(fromHex('5bffffffffffffffff')), /length exceeds input/);
    });
  });

  describe('properties', () => {
    const json = fc.jsonValue({ maxDepth: 4 });
    it('decode(encode(x)) re-encodes to the same bytes for any JSON value', () => {
      fc.assert(
        fc.property(json, (v) => {
          const bytes = encodeCanonical(v as any);
          assert.equal(toHex(encodeCanonical(decodeCanonical(bytes))), toHex(bytes));
        }),
        { numRuns: 500 },
      );
    });
    it('encoding does not depend on key insertion order', () => {
      fc.assert(
        fc.property(fc.dictionary(fc.string(), fc.integer()), (d) => {
          const reversed = Object.fromEntries(Object.entries(d).reverse());
          assert.equal(toHex(encodeCanonical(d)), toHex(encodeCanonical(reversed)));
        }),
        { numRuns: 300 },
      );
    });
    it('every double round-trips exactly', () => {
      fc.assert(
        fc.property(fc.double(), (x) => {
          const back = decodeCanonical(encodeCanonical(x)) as number;
          assert.ok(Object.is(back, x) || (x === 0 && back === 0) || (Number.isNaN(x) && Number.isNaN(back)), `${x} → ${back}`);
        }),
        { numRuns: 2000 },
      );
    });
    it('a non-integral number takes the shortest float width that holds it exactly (half, single, double)', () => {
      // Oracle: every finite half-precision value, from its bit pattern.
      const halfValue = (h: number) => {
        const sign = h & 0x8000 ? -1 : 1;
        const exp = (h >> 10) & 0x1f;
        const mant = h & 0x3ff;
        return exp === 0 ? sign * mant * 2 ** -24 : sign * (1 + mant / 1024) * 2 ** (exp - 15);
      };
      const halves = new Set<number>();
      for (let h = 0; h < 0x10000; h++) if (((h >> 10) & 0x1f) !== 31) halves.add(halfValue(h));
      const widthOf = (x: number) => (halves.has(x) ? 'f9' : Math.fround(x) === x ? 'fa' : 'fb');
      const halfGen = fc
        .integer({ min: 0, max: 0xffff })
        .filter((h) => ((h >> 10) & 0x1f) !== 31)
        .map(halfValue);
      const values = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.float({ noNaN: true, noDefaultInfinity: true }).map(Math.fround), halfGen);
      fc.assert(
        fc.property(values, (x) => {
          if (Number.isInteger(x)) return; // numeric reduction: integers are not floats
          const hex = toHex(encodeCanonical(x));
          assert.equal(hex.slice(0, 2), widthOf(x), `${x} → ${hex}`);
          assert.ok(Object.is(decodeCanonical(fromHex(hex)), x));
        }),
        { numRuns: 5000 },
      );
    });
    it('big integers and their negatives decode as numbers up to 2^53 − 1 and as bigints beyond', () => {
      for (const v of [2 ** 32, 2 ** 53 - 1, -(2 ** 53 - 1), 2n ** 53n, -(2n ** 53n), 2n ** 64n - 1n, -(2n ** 64n)]) {
        const back = decodeCanonical(encodeCanonical(v));
        assert.equal(typeof back, typeof v === 'bigint' ? 'bigint' : 'number');
        assert.equal(back, v);
      }
    });
    it('does not mutate its input', () => {
      const input = { b: [1, 2, { c: 3 }], a: 'x' };
      const copy = structuredClone(input);
      encodeCanonical(input);
      assert.deepEqual(input, copy);
      assert.deepEqual(Object.keys(input), ['b', 'a']);
    });
  });

  describe('wrong types', () => {
    for (const [v, name] of [
      [undefined, 'undefined'],
      [() => 1, 'a function'],
      [Symbol('s'), 'a symbol'],
    ] as const) {
      it(`refuses ${name} with a message naming the type`, () => assert.throws(() => encodeCanonical(v as any), /cbor: cannot encode/));
    }
  });

  describe('map keys that name Object.prototype members', () => {
    // {"__proto__": {"x": 1}, "constructor": 2, "toString": "t"} in canonical key order.
    const bytes = encodeCanonical(JSON.parse('{"__proto__": {"x": 1}, "constructor": 2, "toString": "t"}'));
    for (const [name, decode] of [
      ['decodeCanonical', decodeCanonical],
      ['decodeTrusted', decodeTrusted],
    ] as const) {
      it(`${name} makes them own members and leaves the prototype alone`, () => {
        const v = decode(bytes) as Record<string, unknown>;
        assert.equal(Object.getPrototypeOf(v), Object.prototype);
        assert.deepEqual(Object.keys(v).sort(), ['__proto__', 'constructor', 'toString']);
        assert.deepEqual(Object.getOwnPropertyDescriptor(v, '__proto__'), { value: { x: 1 }, enumerable: true, writable: true, configurable: true });
        assert.equal(v.constructor, 2);
        assert.equal((v as { x?: unknown }).x, undefined);
        assert.deepEqual(encodeCanonical(v as never), bytes);
      });
    }
  });
});
