/**
 * Device enrollment and key revocation (docs/devices.md). A device key is enrolled with its
 * platform evidence; the responder checks the evidence, then mints a `device.enrollment` record
 * (an `svc:attestation:` token names it), after which the key writes at level L2 like an
 * SVC_DEVICE_KEYS key. A key is revoked by a signed request; the responder mints a
 * `device.revocation` record, after which the key's writes and bearers are refused
 * (`attester_revoked`). Nothing is erased: facts the key wrote stay signed and served.
 *
 * Of the platforms, this responder verifies `operator_vouched` only: an operator-listed key
 * vouches for the device key. Vendor attestations (Android key attestation, Apple App Attest,
 * TPM 2.0 quotes) chain to vendor root certificates this responder does not hold offline, so
 * they are listed as unsupported and refused with `not_yet_implemented`, never half-checked.
 */
import { isFactCid } from '../../protocol/cid.js';
import { deviceEnrollmentDigest, keyRevocationDigest } from '../../protocol/device-statements.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { isoSeconds, type Receipt } from '../../protocol/receipt.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import { STATEMENT_TTL_SECS, checkExp, mintRecord, publicKeyOf, requireSignature, signatureOf } from './common.js';
import { useStatementOnce } from './single-use.js';
import { ENROLLMENT_BAND, REVOCATION_BAND, isScopeKey, keyRecords, keyStatus, revokedError, withKeyLock, type KeyRecords } from '../write/standing.js';

export interface PlatformEntry {
  platform: string;
  supported: boolean;
  title: string;
  /** What the request carries as evidence. */
  evidence: string;
  /** How this responder checks it (supported), or why it does not (unsupported). */
  verification: string;
  request?: Record<string, string>;
}

export const PLATFORMS: readonly PlatformEntry[] = [
  {
    platform: 'operator_vouched',
    supported: true,
    title: 'Vouched for by an operator-listed key',
    evidence:
      'Two Ed25519 signatures over one device_enrollment statement: one by the device key (it holds the private key) and one by a voucher, a key in SVC_ATTESTER_KEYS in good standing (it vouches for the device).',
    verification:
      'Both signatures are checked over H(stream("device_enrollment") ‖ seg(1, device key) ‖ seg(2, utf8 platform) ‖ seg(3, voucher key) ‖ seg(4, u64be exp) ‖ seg(5, responder key)); exp lies after now and at most 900 s ahead; the voucher must be operator-listed and neither it nor the device key revoked. The voucher, exp and both signatures are kept in the record as its evidence, so anyone can check them again.',
    request: {
      platform: '"operator_vouched"',
      key: 'device public key (b32)',
      voucher: 'operator-listed public key (b32)',
      exp: `Unix seconds, at most ${STATEMENT_TTL_SECS} s ahead`,
      device_signature: 'Ed25519 by the device key over the statement (b32)',
      voucher_signature: 'Ed25519 by the voucher over the same statement (b32)',
    },
  },
  {
    platform: 'android_key_attestation',
    supported: false,
    title: 'Android Keystore key attestation',
    evidence:
      'The X.509 certificate chain of the device key from the Android Keystore, its leaf carrying the key attestation extension (OID 1.3.6.1.4.1.11129.2.1.17: challenge, security level, verified boot state), up to a Google hardware attestation root.',
    verification:
      "Not verified here: the chain must end at Google's attestation root certificates and be checked against Google's attestation revocation list, which this responder does not hold offline. Refused with not_yet_implemented; enroll with operator_vouched instead.",
  },
  {
    platform: 'apple_app_attest',
    supported: false,
    title: 'Apple App Attest',
    evidence: 'The App Attest attestation object (CBOR, fmt "apple-appattest") with its x5c certificate chain, the key id and the client data hash binding the challenge.',
    verification:
      'Not verified here: the chain must end at the Apple App Attestation Root CA, which this responder does not hold offline. Refused with not_yet_implemented; enroll with operator_vouched instead.',
  },
  {
    platform: 'tpm2_quote',
    supported: false,
    title: 'TPM 2.0 quote',
    evidence: "A TPM2 quote (TPMS_ATTEST over PCR values and a nonce) signed by an attestation key, the attestation key's certificate, and the endorsement key certificate chain of the TPM vendor.",
    verification:
      "Not verified here: the endorsement key chain must end at the TPM vendor's root certificates, which this responder does not hold offline. Refused with not_yet_implemented; enroll with operator_vouched instead.",
  },
];

/** GET /v1/device_platforms. */
export function devicePlatforms(ctx: ServiceContext) {
  return {
    platforms: PLATFORMS,
    responder_key: ctx.keys.publicKeyB32,
    statement_ttl_s: STATEMENT_TTL_SECS,
    enroll: 'POST /v1/device_platforms',
    resolve: 'POST /v1/device_platforms/resolve {attestation}',
    revoke: 'POST /v1/device_platforms/revoke {key, reason, by, exp, signature}: by is the key itself, the voucher that enrolled it, or an operator revoker key (SVC_REVOKER_KEYS)',
    token: `${ctx.config.prefix}:attestation:<fact_cid of the device.enrollment record>`,
    docs: 'docs/devices.md',
  };
}

const attestationPrefix = (ctx: ServiceContext) => `${ctx.config.prefix}:attestation:`;

/** This responder's keys, current and retired: rotated by the operator, never enrolled or revoked. */
function isResponderKey(ctx: ServiceContext, key: string): boolean {
  return key === ctx.keys.publicKeyB32 || ctx.keys.retired.some((k) => k.public_key === key);
}

function notResponder(ctx: ServiceContext, field: string, key: string): void {
  if (isResponderKey(ctx, key)) throw invalidArgument(field, "is the responder's own key: it is rotated by the operator (svc keys rotate), never enrolled or revoked");
}

/**
 * An enrollment, as the operation's schema admits it (types and key/signature forms checked).
 * Only platform and key are required: the platform is checked first (an unsupported one is
 * refused 501 whatever else is sent), then each operator_vouched field (a missing signature is
 * 401 unauthorized).
 */
export interface EnrollRequest {
  platform: string;
  key: string;
  voucher?: string;
  voucher_signature?: string;
  device_signature?: string;
  exp?: number;
  evidence?: unknown;
}

export interface EnrollmentAnswer {
  attestation: string;
  key: string;
  platform: string;
  enrolled_at: string;
  /** True when the key was enrolled before: the existing record is returned, nothing is minted. */
  already_enrolled: boolean;
  fact: ServedFact;
  receipt: Receipt;
}

function platformEntry(v: string): PlatformEntry {
  const p = PLATFORMS.find((x) => x.platform === v);
  if (!p) {
    throw new SvcError('invalid_argument', `platform: ${JSON.stringify(v)} is not a platform this responder knows (GET /v1/device_platforms lists them)`, {
      field: 'platform',
      known: PLATFORMS.map((x) => x.platform),
    });
  }
  if (!p.supported) {
    throw new SvcError('not_yet_implemented', `platform: ${p.platform} evidence is not verified by this responder (${p.verification})`, {
      field: 'platform',
      platform: p.platform,
      reason: 'no_vendor_roots',
      workaround: 'Enroll with platform operator_vouched: an operator-listed key signs the device_enrollment statement with the device key (docs/devices.md).',
    });
  }
  return p;
}

async function enrollmentAnswer(ctx: ServiceContext, f: StoredFact, already: boolean): Promise<EnrollmentAnswer> {
  const v = f.body.value as { key: string; platform: string; enrolled_at: string };
  return {
    attestation: `${attestationPrefix(ctx)}${f.fact_cid}`,
    key: v.key,
    platform: v.platform,
    enrolled_at: v.enrolled_at,
    already_enrolled: already,
    fact: await serveFact(ctx, f),
    receipt: issueReceipt(ctx, 'device_enroll', [f.cell], [f.fact_cid], { merkle_proof: f.proof }),
  };
}

/** POST /v1/device_platforms: check the evidence, then mint (or return) the key's enrollment. */
export async function enrollDevice(ctx: ServiceContext, req: EnrollRequest): Promise<EnrollmentAnswer> {
  const p = platformEntry(req.platform);
  if (req.evidence !== undefined) throw invalidArgument('evidence', `${p.platform} takes no evidence object: send voucher, voucher_signature, device_signature and exp`);
  const devicePub = publicKeyOf('key', req.key);
  const key = req.key;
  notResponder(ctx, 'key', key);
  const voucherPub = publicKeyOf('voucher', req.voucher);
  const voucher = req.voucher as string;
  if (voucher === key) throw invalidArgument('voucher', 'a key cannot vouch for itself: the voucher is another, operator-listed key');
  const exp = checkExp(ctx, req.exp);
  const voucherSig = signatureOf('voucher_signature', req.voucher_signature);
  const deviceSig = signatureOf('device_signature', req.device_signature);
  const digest = deviceEnrollmentDigest(devicePub, p.platform, voucherPub, exp, ctx.keys.signer.publicKey, ctx.config.prefix);
  requireSignature(ctx, 'voucher_signature', voucherSig, digest, voucherPub, 'device_enrollment');
  requireSignature(ctx, 'device_signature', deviceSig, digest, devicePub, 'device_enrollment');

  // Authenticated: now the standing of both keys (store reads).
  if (!ctx.config.attesterKeys.includes(voucher)) {
    throw new SvcError(
      'unauthorized',
      `voucher: key ${voucher} is not operator-listed (SVC_ATTESTER_KEYS); only a listed key vouches for a device`,
      {
        field: 'voucher',
        reason: 'voucher_not_listed',
      },
      { status: 403 },
    );
  }
  const voucherStatus = await keyStatus(ctx, voucher);
  if (voucherStatus.standing === 'revoked') throw revokedError(voucher, 'voucher', voucherStatus);

  return withKeyLock(ctx, key, async () => {
    const status = await keyStatus(ctx, key);
    if (status.standing === 'revoked') throw revokedError(key, 'key', status);
    await useStatementOnce(ctx, 'device_enrollment', digest, exp);
    const existing = status.records?.enrollment;
    if (existing) return enrollmentAnswer(ctx, existing, true);
    const value = {
      key,
      platform: p.platform,
      evidence: { voucher, exp, voucher_signature: req.voucher_signature as string, device_signature: req.device_signature as string },
      enrolled_at: isoSeconds(ctx.now()),
    };
    return enrollmentAnswer(ctx, await mintRecord(ctx, ENROLLMENT_BAND, value, 'device_enroll'), false);
  });
}

/** The fact_cid in a token `<prefix>:<kind>:<cid>` or a bare fact_cid. */
export function tokenCid(ctx: ServiceContext, v: string, field: string, kind: string): string {
  const prefix = `${ctx.config.prefix}:${kind}:`;
  const cid = v.startsWith(prefix) ? v.slice(prefix.length) : v;
  if (!isFactCid(cid)) throw invalidArgument(field, `expected ${prefix}<52 base32 characters> or the bare fact_cid`);
  return cid;
}

/** POST /v1/device_platforms/resolve: the enrollment an svc:attestation: token names, and the key's standing now. */
export async function resolveAttestation(ctx: ServiceContext, input: { attestation: string }) {
  const cid = tokenCid(ctx, input.attestation, 'attestation', 'attestation');
  const f = (await ctx.store.readFact(cid)).fact;
  // Any responder sharing the store may have minted it (the band is L3: responder keys only).
  if (!f || f.band !== ENROLLMENT_BAND || f.scope !== null) {
    throw new SvcError('cid_not_found', `attestation: no device enrollment is stored under ${cid} here`, { field: 'attestation', fact_cid: cid });
  }
  const v = f.body.value as { key: string; platform: string; enrolled_at: string; evidence: Record<string, unknown> };
  const status = await keyStatus(ctx, v.key);
  // keyStatus skips the store for a key revoked by configuration; a record may exist as well.
  const records = status.records ?? (await keyRecords(ctx, v.key));
  const rev = records.revocation;
  let revocation: Record<string, unknown> | null = null;
  if (rev) revocation = { source: 'record', fact_cid: rev.fact_cid, record: rev.body.value, fact: await serveFact(ctx, rev) };
  else if (status.revoked_by === 'configuration') revocation = { source: 'configuration', note: 'listed in SVC_REVOKED_KEYS by the operator; no record is signed for it' };
  const cids = rev ? [cid, rev.fact_cid] : [cid];
  return {
    attestation: `${attestationPrefix(ctx)}${cid}`,
    key: v.key,
    platform: v.platform,
    enrolled_at: v.enrolled_at,
    record: v,
    standing: revocation ? 'revoked' : 'enrolled',
    /** How the key writes now: device (L2) while enrolled; revoked after a revocation. */
    writes_as: status.standing,
    revocation,
    fact: await serveFact(ctx, f),
    receipt: issueReceipt(ctx, 'device_attestation', [f.cell], cids, { merkle_proof: f.proof }),
  };
}

/** A key revocation, as the operation's schema admits it (reason at most 500 characters). */
export interface RevokeRequest {
  key: string;
  reason: string;
  by: string;
  exp: number;
  signature: string;
}

async function revocationAnswer(ctx: ServiceContext, f: StoredFact, already: boolean) {
  const v = f.body.value as { key: string; reason: string; requested_by: string; revoked_at: string };
  return {
    key: v.key,
    revoked: true as const,
    revocation: f.fact_cid,
    reason: v.reason,
    requested_by: v.requested_by,
    revoked_at: v.revoked_at,
    already_revoked: already,
    subject: f.cell,
    fact: await serveFact(ctx, f),
    receipt: issueReceipt(ctx, 'key_revoke', [f.cell], [f.fact_cid], { merkle_proof: f.proof }),
  };
}

/**
 * Who may revoke `key` (docs/security.md, "Who may revoke"): the key itself (when it is known
 * here), the voucher its enrollment names, or a key the operator lists for revocation
 * (SVC_REVOKER_KEYS). Being listed to write (SVC_ATTESTER_KEYS) gives no power over other keys:
 * otherwise any writer could silence every other writer for good.
 */
function mayRevoke(ctx: ServiceContext, key: string, by: string, records: KeyRecords): 'self' | 'voucher' | 'revoker' | null {
  if (by === key) return 'self';
  const voucher = (records.enrollment?.body.value as { evidence?: { voucher?: unknown } } | undefined)?.evidence?.voucher;
  if (voucher === by) return 'voucher';
  if (ctx.config.revokerKeys.includes(by)) return 'revoker';
  return null;
}

/** POST /v1/device_platforms/revoke. `by` must not be revoked itself (unless it revokes itself). */
export async function revokeKey(ctx: ServiceContext, req: RevokeRequest) {
  const keyPub = publicKeyOf('key', req.key);
  const { key, reason, by } = req;
  notResponder(ctx, 'key', key);
  const byPub = publicKeyOf('by', by);
  const exp = checkExp(ctx, req.exp);
  const sig = signatureOf('signature', req.signature);
  const digest = keyRevocationDigest(keyPub, reason, byPub, exp, ctx.keys.signer.publicKey, ctx.config.prefix);
  requireSignature(ctx, 'signature', sig, digest, byPub, 'key_revocation');

  return withKeyLock(ctx, key, async () => {
    const records = await keyRecords(ctx, key);
    // Authority first: a stranger learns nothing, not even whether the key is revoked already.
    const role = mayRevoke(ctx, key, by, records);
    if (role === null) {
      throw new SvcError(
        'unauthorized',
        `by: key ${by} may not revoke ${key}: only the key itself, the voucher that enrolled it or a key the operator lists for revocation (SVC_REVOKER_KEYS) may`,
        {
          field: 'by',
          reason: 'not_allowed_to_revoke',
        },
        { status: 403 },
      );
    }
    if (role === 'self') {
      // A key revokes itself; a key unknown here has nothing to revoke (and mints nothing).
      const listed = ctx.config.attesterKeys.includes(key) || ctx.config.deviceKeys.includes(key) || ctx.config.revokedKeys.includes(key);
      if (!listed && !records.enrollment && !isScopeKey(ctx, key)) {
        throw new SvcError(
          'unauthorized',
          `key: ${key} is neither enrolled, listed nor a configured scope key here: there is nothing to revoke`,
          { field: 'key', reason: 'unknown_key' },
          { status: 403 },
        );
      }
    } else {
      const byStatus = await keyStatus(ctx, by);
      if (byStatus.standing === 'revoked') throw revokedError(by, 'by', byStatus);
    }
    await useStatementOnce(ctx, 'key_revocation', digest, exp);
    if (records.revocation) return revocationAnswer(ctx, records.revocation, true);
    const value = { key, reason, requested_by: by, revoked_at: isoSeconds(ctx.now()) };
    return revocationAnswer(ctx, await mintRecord(ctx, REVOCATION_BAND, value, 'key_revoke'), false);
  });
}
