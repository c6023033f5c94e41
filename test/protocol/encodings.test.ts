import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { base32 } from '@scure/base';
import { b32decode, b32encode, isB32 } from '../../src/protocol/base32.js';
import { isUlid, ulid, ulidTime } from '../../src/protocol/ulid.js';
import { blake3, blake3Reference } from '../../src/protocol/hash.js';
import { fromHex, toHex, utf8 } from '../../src/protocol/bytes.js';
import { anchorId, contentId, factCid, isAnchorId, isFactCid } from '../../src/protocol/cid.js';
import { encodeCanonical } from '../../src/protocol/cbor.js';
import { checkTslot, tslotOf, tslotRange, TEMPO_UNIT_S } from '../../src/protocol/tslot.js';
import { SvcError } from '../../src/protocol/errors.js';
import { loadVectors } from '../support/vectors.js';

describe('base32 (spec 2.2)', () => {
  it('RFC 4648 test vectors, lowercase without padding', () => {
    const cases: Array<[string, string]> = [
      ['', ''],
      ['f', 'my'],
      ['fo', 'mzxq'],
      ['foo', 'mzxw6'],
      ['foob', 'mzxw6yq'],
      ['fooba', 'mzxw6ytb'],
      ['foobar', 'mzxw6ytboi'],
    ];
    for (const [plain, enc] of cases) {
      assert.equal(b32encode(utf8(plain)), enc);
      assert.deepEqual(b32decode(enc), utf8(plain));
    }
  });
  const bad: Array<[string, string]> = [
    ['MZXW6', 'upper case'],
    ['mzxw6===', 'padding'],
    ['mzxw7', 'non-zero trailing bits'],
    ['mz1w6', 'digit 1 outside the alphabet'],
    ['m', 'impossible length'],
  ];
  for (const [text, why] of bad) {
    it(`refuses ${text} (${why})`, () =>
      assert.throws(
        () => b32decode(text, undefined, 'key'),
        (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument' && e.message.startsWith('key: '),
      ));
  }
  it('encodes every length like the reference codec and decodes back (0..80 random bytes)', () => {
    for (let n = 0; n <= 80; n++) {
      const bytes = crypto.getRandomValues(new Uint8Array(n));
      const text = b32encode(bytes);
      assert.equal(text, base32.encode(bytes).replace(/=+$/, '').toLowerCase(), `length ${n}`);
      assert.deepEqual(b32decode(text), bytes);
    }
  });
  it('checks the decoded length', () => {
    assert.ok(isB32(b32encode(new Uint8Array(32)), 32));
    assert.equal(isB32(b32encode(new Uint8Array(31)), 32), false);
  });
});

describe('ULID', () => {
  it('is 26 Crockford characters and monotonic within one millisecond', () => {
    const ids = Array.from({ length: 1000 }, () => ulid(1_700_000_000_000));
    for (const id of ids) assert.ok(isUlid(id), id);
    const sorted = [...ids].sort();
    assert.deepEqual(sorted, ids);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(ulidTime(ids[0]), 1_700_000_000_000);
  });
  it('spells its 80 random bits most significant first, and consecutive ids differ by one', () => {
    const ids = Array.from({ length: 300 }, () => ulid(1_700_000_000_123));
    const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    const value = (id: string) => [...id.slice(10)].reduce((v, c) => v * 32n + BigInt(CROCKFORD.indexOf(c)), 0n);
    for (let i = 1; i < ids.length; i++) assert.equal(value(ids[i]) - value(ids[i - 1]), 1n);
    // Fresh milliseconds draw fresh randomness.
    const fresh = new Set(Array.from({ length: 200 }, (_, i) => ulid(1_900_000_000_000 + i).slice(10)));
    assert.equal(fresh.size, 200);
  });
  it('stays ordered when the clock steps back', () => {
    const a = ulid(1_800_000_000_000);
    const b = ulid(1_799_999_999_000);
    assert.ok(b > a);
  });
});

describe('BLAKE3 official vectors', () => {
  const V = loadVectors('blake3/official.json');
  V.cases.forEach((c: any) => {
    it(`input length ${c.input_len}`, () => {
      const input = Uint8Array.from({ length: c.input_len }, (_, i) => i % 251);
      assert.equal(toHex(blake3(input)), c.hash);
      assert.equal(toHex(blake3Reference(input)), c.hash);
    });
  });
});

describe('content ids (protocol.md §4)', () => {
  const V = loadVectors('facts/cids.json');
  V.cases.forEach((c: any, i: number) => {
    it(`fact ${i}: canonical bytes, 52-char fact_cid, 26-char anchor`, () => {
      assert.equal(toHex(encodeCanonical(c.body)), c.cbor_hex);
      assert.equal(factCid(c.body), c.fact_cid);
      assert.equal(anchorId(c.body), c.anchor_id);
      assert.ok(isFactCid(c.fact_cid) && c.fact_cid.length === 52);
      assert.ok(isAnchorId(c.anchor_id) && c.anchor_id.length === 26);
    });
  });
  it('fact_cid ignores the served-only keys fact_cid and receipt', () => {
    const body = { kind: 'primary', value: 1 };
    assert.equal(factCid({ ...body, fact_cid: 'x', receipt: { y: 1 } }), factCid(body));
  });
  it('two encodings of one fact converge (918 and 918.0, key order)', () => {
    assert.equal(contentId(JSON.parse('{"v":918.0,"a":1}')), contentId({ a: 1, v: 918 }));
  });
  it('hex decoding is strict', () => {
    assert.throws(() => fromHex('ABC'), /hex/);
    assert.throws(() => fromHex('0g'), /hex/);
  });
});

describe('tslot (protocol.md §2)', () => {
  it('counts tempo units since the Unix epoch', () => {
    assert.equal(tslotOf(86_399, 'fast'), 0);
    assert.equal(tslotOf(86_400, 'fast'), 1);
    assert.equal(tslotOf(1_700_000_000, 'medium'), Math.floor(1_700_000_000 / 2_592_000));
    assert.equal(tslotOf(1_700_000_000, 'slow'), 53);
    assert.equal(tslotOf(1_700_000_000, 'static'), 0);
    assert.deepEqual(tslotRange(2, 'fast'), { start_unix: 172_800, end_unix: 259_200 });
    assert.equal(TEMPO_UNIT_S.slow, 31_536_000);
  });
  it('converts both ways: every second of a slot maps back to it', () => {
    for (const tempo of ['fast', 'medium', 'slow'] as const) {
      const r = tslotRange(20_000 % 1000, tempo);
      assert.equal(tslotOf(r.start_unix, tempo), 20_000 % 1000);
      assert.equal(tslotOf(r.end_unix! - 1, tempo), 20_000 % 1000);
    }
  });
  it('tslot_mismatch: a static band has only tslot 0, and future slots are off the grid', () => {
    assert.equal(checkTslot(0, 'static', 'copdem30m.elevation_mean'), 0);
    assert.throws(
      () => checkTslot(1, 'static', 'copdem30m.elevation_mean'),
      (e: unknown) => e instanceof SvcError && e.code === 'tslot_mismatch',
    );
    const now = Date.UTC(2026, 0, 1);
    assert.throws(
      () => checkTslot(tslotOf(now / 1000, 'fast') + 5, 'fast', 'weather.temperature_2m', now),
      (e: unknown) => e instanceof SvcError && e.code === 'tslot_mismatch',
    );
    for (const bad of [-1, 1.5, '3', null]) {
      assert.throws(
        () => checkTslot(bad, 'fast', 'b'),
        (e: unknown) => e instanceof SvcError && e.code === 'invalid_argument',
      );
    }
  });
});
