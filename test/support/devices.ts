/** Signed key statements for tests, built the way a client would (docs/devices.md). */
import * as P from '../../src/protocol/index.js';
import { bearerRevocationDigest, deviceEnrollmentDigest, keyRevocationDigest } from '../../src/protocol/device-statements.js';
import type { TestApp } from './app.js';
import type { TestAttester } from './attester.js';
import { freshExp } from './fresh-exp.js';

const nowS = (t: TestApp) => Math.floor(t.service.now().getTime() / 1000);

const sign = (digest: Uint8Array, who: TestAttester) => P.b32encode(P.portableEd25519.sign(digest, who.seed));

/** A POST /v1/device_platforms body: `device` enrolled on `voucher`'s word (operator_vouched). */
export function enrollRequest(t: TestApp, device: TestAttester, voucher: TestAttester, opts: { ttlS?: number; platform?: string } = {}) {
  const platform = opts.platform ?? 'operator_vouched';
  const exp = opts.ttlS === undefined ? freshExp(`enroll|${device.publicKey}|${voucher.publicKey}|${platform}`, nowS(t), 300) : nowS(t) + opts.ttlS;
  const digest = deviceEnrollmentDigest(P.b32decode(device.publicKey, 32), platform, P.b32decode(voucher.publicKey, 32), exp, t.service.keys.signer.publicKey, t.service.config.prefix);
  return { platform, key: device.publicKey, voucher: voucher.publicKey, exp, voucher_signature: sign(digest, voucher), device_signature: sign(digest, device) };
}

/** A POST /v1/device_platforms/revoke body: `by` revokes `key`. */
export function revokeRequest(t: TestApp, key: TestAttester, by: TestAttester, reason = 'lost', ttlS = 300) {
  const exp = freshExp(`revoke|${key.publicKey}|${by.publicKey}|${reason}`, nowS(t), ttlS);
  const digest = keyRevocationDigest(P.b32decode(key.publicKey, 32), reason, P.b32decode(by.publicKey, 32), exp, t.service.keys.signer.publicKey, t.service.config.prefix);
  return { key: key.publicKey, reason, by: by.publicKey, exp, signature: sign(digest, by) };
}

/** A POST /v1/memory/bearer/revoke body; without `notBefore` the statement carries now and the field is left out. */
export function bearerRevokeRequest(t: TestApp, who: TestAttester, notBefore?: number, ttlS = 300) {
  const exp = freshExp(`bearer-revoke|${who.publicKey}|${notBefore ?? nowS(t)}`, nowS(t), ttlS);
  const nb = notBefore ?? nowS(t);
  const digest = bearerRevocationDigest(P.b32decode(who.publicKey, 32), nb, exp, t.service.keys.signer.publicKey, t.service.config.prefix);
  return { key: who.publicKey, ...(notBefore === undefined ? {} : { not_before: notBefore }), exp, signature: sign(digest, who) };
}
