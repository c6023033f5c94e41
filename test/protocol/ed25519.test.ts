import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { admitPublicKey, hasCanonicalS, portableEd25519, verifyStrict } from '../../src/protocol/ed25519.js';
import { fromHex, toHex, utf8 } from '../../src/protocol/bytes.js';
import { blake3 } from '../../src/protocol/hash.js';
import { nodeEd25519 } from '../../src/crypto/node-ed25519.js';

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const seed = blake3(utf8('ed25519 test'));
const msg = blake3(utf8('message'));

// Small-order points of edwards25519 (canonical encodings): identity, order-2, order-4 and order-8 points.
const SMALL_ORDER = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
];

describe('Ed25519 (protocol.md §5, §8)', () => {
  it('RFC 8032 test 1: key and signature', () => {
    const sk = fromHex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
    const pk = portableEd25519.publicKey(sk);
    assert.equal(toHex(pk), 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
    const sig = portableEd25519.sign(new Uint8Array(0), sk);
    assert.equal(toHex(sig), 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b');
    assert.ok(verifyStrict(sig, new Uint8Array(0), pk));
  });

  it('node:crypto and the portable reference agree on keys, signatures and verdicts', () => {
    for (let i = 0; i < 20; i++) {
      const s = blake3(utf8(`seed ${i}`));
      const m = blake3(utf8(`msg ${i}`));
      assert.deepEqual(nodeEd25519.publicKey(s), portableEd25519.publicKey(s));
      const sig = nodeEd25519.sign(m, s);
      assert.deepEqual(sig, portableEd25519.sign(m, s));
      const pk = portableEd25519.publicKey(s);
      assert.equal(verifyStrict(sig, m, pk, nodeEd25519), true);
      const bad = sig.slice();
      bad[i % 64] ^= 1;
      assert.equal(verifyStrict(bad, m, pk, nodeEd25519), verifyStrict(bad, m, pk, portableEd25519));
    }
  });

  describe('key admission', () => {
    for (const hex of SMALL_ORDER) {
      it(`refuses small-order key ${hex.slice(0, 8)}…`, () => {
        const v = admitPublicKey(fromHex(hex));
        assert.equal(v.ok, false);
      });
    }
    it('refuses a non-canonical y (≥ p)', () => {
      const v = admitPublicKey(fromHex('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'));
      assert.equal(v.ok, false);
    });
    it('refuses a key with torsion (valid key plus an order-8 point)', () => {
      const A = ed25519.Point.fromBytes(portableEd25519.publicKey(seed));
      const T = ed25519.Point.fromBytes(fromHex(SMALL_ORDER[4]));
      const mixed = A.add(T).toBytes();
      assert.deepEqual(admitPublicKey(mixed), { ok: false, reason: 'torsion' });
    });
    it('node:crypto alone would accept a small-order key: verifyStrict does not', () => {
      // With A = identity and R = identity, S = 0 satisfies the cofactorless equation for any message.
      const pk = fromHex(SMALL_ORDER[0]);
      const sig = new Uint8Array(64);
      sig.set(fromHex(SMALL_ORDER[0]), 0);
      assert.equal(verifyStrict(sig, msg, pk, nodeEd25519), false);
      assert.equal(verifyStrict(sig, msg, pk, portableEd25519), false);
    });
    it('admits an ordinary key', () => assert.deepEqual(admitPublicKey(portableEd25519.publicKey(seed)), { ok: true }));
  });

  describe('signature malleability', () => {
    it('refuses S + L (non-canonical S) even though the group equation holds', () => {
      const pk = portableEd25519.publicKey(seed);
      const sig = portableEd25519.sign(msg, seed);
      let s = 0n;
      for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i]);
      let s2 = s + L;
      const mal = sig.slice();
      for (let i = 32; i < 64; i++) {
        mal[i] = Number(s2 & 0xffn);
        s2 >>= 8n;
      }
      assert.equal(hasCanonicalS(mal), false);
      assert.equal(verifyStrict(mal, msg, pk, nodeEd25519), false);
      assert.equal(verifyStrict(sig, msg, pk, nodeEd25519), true);
    });
    it('refuses signatures of the wrong length', () => {
      assert.equal(verifyStrict(new Uint8Array(63), msg, portableEd25519.publicKey(seed)), false);
    });
  });
});

describe('server BLAKE3 (blake3-wasm) agrees with the reference', () => {
  it('on official lengths and random inputs', async () => {
    const { loadWasmBlake3 } = await import('../../src/crypto/fast-blake3.js');
    const { blake3Reference } = await import('../../src/protocol/hash.js');
    const fast = loadWasmBlake3();
    assert.ok(fast, 'blake3-wasm loads');
    for (const n of [0, 1, 63, 64, 65, 1023, 1024, 1025, 4097, 70_000]) {
      const input = Uint8Array.from({ length: n }, (_, i) => (i * 7 + n) % 256);
      assert.equal(toHex(fast!(input)), toHex(blake3Reference(input)), `length ${n}`);
    }
  });
});
