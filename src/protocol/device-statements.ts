/**
 * The statements keys sign about keys (docs/devices.md), built from this module alone so a
 * client needs nothing else: enrolling a device key on a voucher's word, revoking a key, and
 * voiding a key's bearers. Every statement is a segment stream (preimage.ts) ending with the
 * responder's own public key, so a signed statement is good at one responder only, and carries
 * an expiry (Unix seconds) the responder holds short.
 * Pure and browser-safe, like everything in protocol/.
 */
import { abytes, u64be, utf8 } from './bytes.js';
import { DEFAULT_PREFIX, domainDigest, segment } from './preimage.js';

function unixSeconds(name: string, x: number): void {
  if (!Number.isSafeInteger(x) || x < 0) throw new RangeError(`${name}: expected Unix seconds (a non-negative integer)`);
}

/**
 * Signed by both the device key and the voucher (an operator-listed key):
 * H(stream("device_enrollment") ‖ seg(1, device key) ‖ seg(2, utf8 platform) ‖ seg(3, voucher key)
 *   ‖ seg(4, u64be exp) ‖ seg(5, responder key)).
 */
export function deviceEnrollmentDigest(deviceKey: Uint8Array, platform: string, voucherKey: Uint8Array, expUnix: number, responderKey: Uint8Array, prefix = DEFAULT_PREFIX): Uint8Array {
  abytes('deviceKey', deviceKey, 32);
  abytes('voucherKey', voucherKey, 32);
  abytes('responderKey', responderKey, 32);
  if (typeof platform !== 'string' || platform === '') throw new RangeError('platform: expected a platform name');
  unixSeconds('exp', expUnix);
  return domainDigest('device_enrollment', [segment(1, deviceKey), segment(2, utf8(platform)), segment(3, voucherKey), segment(4, u64be(expUnix)), segment(5, responderKey)], prefix);
}

/**
 * Signed by `by` (the key itself, the voucher that enrolled it, or an operator revoker key):
 * H(stream("key_revocation") ‖ seg(1, revoked key) ‖ seg(2, utf8 reason) ‖ seg(3, by key)
 *   ‖ seg(4, u64be exp) ‖ seg(5, responder key)).
 */
export function keyRevocationDigest(key: Uint8Array, reason: string, byKey: Uint8Array, expUnix: number, responderKey: Uint8Array, prefix = DEFAULT_PREFIX): Uint8Array {
  abytes('key', key, 32);
  abytes('byKey', byKey, 32);
  abytes('responderKey', responderKey, 32);
  if (typeof reason !== 'string') throw new RangeError('reason: expected a string');
  unixSeconds('exp', expUnix);
  return domainDigest('key_revocation', [segment(1, key), segment(2, utf8(reason)), segment(3, byKey), segment(4, u64be(expUnix)), segment(5, responderKey)], prefix);
}

/**
 * Signed by the key whose bearers it voids (those issued before not_before):
 * H(stream("bearer_revocation") ‖ seg(1, key) ‖ seg(2, u64be not_before) ‖ seg(3, u64be exp)
 *   ‖ seg(4, responder key)).
 */
export function bearerRevocationDigest(key: Uint8Array, notBeforeUnix: number, expUnix: number, responderKey: Uint8Array, prefix = DEFAULT_PREFIX): Uint8Array {
  abytes('key', key, 32);
  abytes('responderKey', responderKey, 32);
  unixSeconds('not_before', notBeforeUnix);
  unixSeconds('exp', expUnix);
  return domainDigest('bearer_revocation', [segment(1, key), segment(2, u64be(notBeforeUnix)), segment(3, u64be(expUnix)), segment(4, responderKey)], prefix);
}
