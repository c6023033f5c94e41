import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadSodiumSign, serverEd25519 } from '../../src/crypto/server-ed25519.js';
import { portableEd25519, verifyStrict } from '../../src/protocol/ed25519.js';
import { blake3 } from '../../src/protocol/hash.js';
import { utf8 } from '../../src/protocol/bytes.js';

describe('server Ed25519 backend', () => {
  it('signs with libsodium on this platform (sodium-native is a dependency)', () => {
    assert.ok(loadSodiumSign(), 'sodium-native failed to load or disagreed with node:crypto');
    assert.match(serverEd25519.name, /libsodium/);
  });

  it('produces the RFC 8032 signature of the portable reference, across seeds and message lengths', () => {
    for (let i = 0; i < 40; i++) {
      // Alternate between seeds so the expanded-key cache is exercised on every switch.
      const seed = blake3(utf8(`seed ${i % 3}`));
      const msg = i % 4 === 0 ? new Uint8Array(0) : utf8(`message ${i} `.repeat(i));
      const sig = serverEd25519.sign(msg, seed);
      assert.deepEqual(sig, portableEd25519.sign(msg, seed));
      assert.equal(verifyStrict(sig, msg, portableEd25519.publicKey(seed), serverEd25519), true);
    }
  });

  it('returns a fresh signature buffer per call (callers may keep them)', () => {
    const seed = blake3(utf8('k'));
    const a = serverEd25519.sign(utf8('a'), seed);
    const copy = a.slice();
    serverEd25519.sign(utf8('b'), seed);
    assert.deepEqual(a, copy);
  });

  it('refuses a seed that is not 32 bytes', () => {
    assert.throws(() => serverEd25519.sign(utf8('m'), new Uint8Array(31)));
  });
});
