/**
 * Keys over the API (docs/devices.md): device enrollment and key revocation at
 * /v1/device_platforms, execution traces at /v1/substrates and /v1/trace_resolve, and the
 * memory bearer routes (scopes.ts). Writes are REST only; resolves are MCP tools in /mcp/full.
 * None of these take a `scope`, so they sit outside the scoped-read guard.
 */
import { Type } from '@sinclair/typebox';
import { devicePlatforms, enrollDevice, resolveAttestation, revokeKey } from '../../primitives/keys/devices.js';
import { resolveTrace, submitTrace, substratesCatalogue } from '../../primitives/traces/traces.js';
import { defineOperation, type Operation } from '../operations.js';
import { B32Key, B32Signature } from '../schemas/inputs.js';
import { AnyValue, Closed, Nullable, ServedFact, Signed } from '../schemas/responses.js';
import { signedRecordsSchema } from './signed-batch.js';
import { memoryBearerOp, memoryBearerRevokeOp } from './scopes.js';

const exp = Type.Integer({ minimum: 0, description: 'expiry of the signed statement, Unix seconds, at most 900 s ahead' });
const noInput = Type.Object({}, { additionalProperties: false });
const attestationToken = Type.String({ description: 'svc:attestation:<fact_cid of the device.enrollment record>' });

/** A key's standing as the write path reads it now. */
const standing = Type.String({ description: 'responder, device (L2), operator (listed), revoked or unlisted' });

export const devicePlatformsOp = defineOperation({
  name: 'device_platforms',
  method: 'GET',
  path: '/v1/device_platforms',
  summary: 'Platforms a device key can be enrolled with, the evidence each needs, and whether this responder verifies it',
  description:
    'Lists operator_vouched (supported: an operator-listed key and the device key both sign a device_enrollment statement) and android_key_attestation, apple_app_attest, tpm2_quote (supported: false: they chain to vendor root certificates this responder does not hold offline). Also the responder key every statement must name and the routes to enroll, resolve and revoke (writes are REST only). Next: device_enrollment_resolve on an svc:attestation: token.',
  tags: ['devices'],
  input: noInput,
  output: Closed({
    platforms: Type.Array(
      Closed({
        platform: Type.String(),
        supported: Type.Boolean({ description: 'whether this responder verifies the evidence' }),
        title: Type.String(),
        evidence: Type.String({ description: 'what the request carries' }),
        verification: Type.String({ description: 'how it is checked here, or why it is not' }),
        request: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'the enroll request fields (supported platforms)' })),
      }),
    ),
    responder_key: Type.String({ description: 'the responder key every statement names (b32)' }),
    statement_ttl_s: Type.Integer({ description: 'how far ahead a statement exp may lie' }),
    enroll: Type.String(),
    resolve: Type.String(),
    revoke: Type.String(),
    token: Type.String({ description: 'the form of an attestation token' }),
    docs: Type.String(),
  }),
  mcp: 'full',
  run: async (ctx) => devicePlatforms(ctx),
});

export const deviceEnrollOp = defineOperation({
  name: 'device_enroll',
  method: 'POST',
  path: '/v1/device_platforms',
  summary: 'Enroll a device key with its platform evidence; the responder mints a device.enrollment record (svc:attestation: token)',
  description:
    'operator_vouched: voucher_signature (by an operator-listed voucher) and device_signature (by the device key), both ed25519 (base32) over H(stream("device_enrollment") ‖ seg(1, device key) ‖ seg(2, utf8 platform) ‖ seg(3, voucher key) ‖ seg(4, u64be(exp)) ‖ seg(5, responder key)) (src/protocol/device-statements.ts). Returns {attestation: "svc:attestation:<fact_cid>", key, platform, enrolled_at, already_enrolled, fact, receipt}; re-enrolling an enrolled key returns its record. Refusals: unknown platform 422 invalid_argument; unsupported platform 501 not_yet_implemented; bad signature 401 bad_signature; exp past or more than 900 s ahead 422 invalid_argument; voucher not listed 403 unauthorized (voucher_not_listed); revoked voucher or key 403 attester_revoked. Afterwards the key writes at L2 through POST /v1/attest.',
  tags: ['devices'],
  // Only platform and key are required: an unsupported platform is refused (501) before the
  // operator_vouched fields are read, and a missing signature answers 401 (the primitive's checks).
  input: Type.Object(
    {
      platform: Type.String({ minLength: 1, maxLength: 64, description: 'a platform of GET /v1/device_platforms' }),
      key: B32Key,
      voucher: Type.Optional(B32Key),
      voucher_signature: Type.Optional(B32Signature),
      device_signature: Type.Optional(B32Signature),
      exp: Type.Optional(exp),
      evidence: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'vendor evidence (platforms this responder does not verify; refused)' })),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    attestation: attestationToken,
    key: Type.String(),
    platform: Type.String(),
    enrolled_at: Type.String({ description: 'RFC 3339' }),
    already_enrolled: Type.Boolean({ description: 'the key was enrolled before: its existing record is returned, nothing is minted' }),
    fact: ServedFact,
  }),
  mcp: false,
  run: (ctx, input) => enrollDevice(ctx, input),
});

export const deviceAttestationResolveOp = defineOperation({
  name: 'device_enrollment_resolve',
  method: 'POST',
  path: '/v1/device_platforms/resolve',
  summary: "Resolve an svc:attestation: token to the device enrollment it names and the key's standing now",
  description: [
    'Use when you meet an svc:attestation: token, or want to know whether a device key that signed facts is enrolled and still in good standing.',
    'Returns attestation, key, platform, enrolled_at, record (the signed value, with its evidence: voucher, exp and both signatures),',
    'standing ("enrolled" or "revoked"), writes_as (device, operator or revoked), revocation (null, or the device.revocation record with its fact_cid and served fact),',
    'fact (the enrollment as a responder-signed fact with its own receipt) and a receipt binding the enrollment and any revocation. Unknown ids → cid_not_found.',
    'Next: recall or fetch facts the key wrote; check a trace it signed with trace_resolve.',
  ].join(' '),
  tags: ['devices'],
  input: Type.Object({ attestation: Type.String({ minLength: 1, maxLength: 120, description: 'an svc:attestation: token, or its bare fact_cid' }) }, { additionalProperties: false }),
  output: Signed({
    attestation: attestationToken,
    key: Type.String(),
    platform: Type.String(),
    enrolled_at: Type.String({ description: 'RFC 3339' }),
    record: AnyValue,
    standing: Type.Union([Type.Literal('enrolled'), Type.Literal('revoked')]),
    writes_as: standing,
    revocation: Nullable(
      Type.Union([
        Closed({ source: Type.Literal('record'), fact_cid: Type.String(), record: AnyValue, fact: ServedFact }, 'a device.revocation record'),
        Closed({ source: Type.Literal('configuration'), note: Type.String() }, 'revoked by the operator (SVC_REVOKED_KEYS): no record'),
      ]),
    ),
    fact: ServedFact,
  }),
  mcp: 'full',
  run: (ctx, input) => resolveAttestation(ctx, input),
});

export const keyRevokeOp = defineOperation({
  name: 'key_revoke',
  method: 'POST',
  path: '/v1/device_platforms/revoke',
  summary: 'Revoke a device or agent key (signed by the key, its voucher, or an operator-listed key); mints a device.revocation record',
  description:
    'signature: ed25519 (base32) by `by` over H(stream("key_revocation") ‖ seg(1, key) ‖ seg(2, utf8 reason) ‖ seg(3, by key) ‖ seg(4, u64be(exp)) ‖ seg(5, responder key)). by: the key itself, the voucher that enrolled it, or any operator-listed key not itself revoked (a listed key may revoke itself). Returns {key, revoked, revocation (fact_cid), reason, requested_by, revoked_at, already_revoked, subject, fact, receipt}. Afterwards the key\'s writes get 403 attester_revoked and its bearers attester_revoked, on every responder sharing the store; nothing it wrote is erased. The responder\'s own key cannot be revoked (it is rotated).',
  tags: ['devices'],
  input: Type.Object(
    {
      key: B32Key,
      reason: Type.String({ maxLength: 500 }),
      by: B32Key,
      exp,
      signature: B32Signature,
    },
    { additionalProperties: false },
  ),
  output: Signed({
    key: Type.String(),
    revoked: Type.Literal(true),
    revocation: Type.String({ description: 'fact_cid of the device.revocation record' }),
    reason: Type.String(),
    requested_by: Type.String(),
    revoked_at: Type.String({ description: 'RFC 3339' }),
    already_revoked: Type.Boolean({ description: 'the key was revoked before: its existing record is returned, nothing is minted' }),
    subject: Type.String({ description: 'the svc:entity: subject the record is filed under' }),
    fact: ServedFact,
  }),
  mcp: false,
  run: (ctx, input) => revokeKey(ctx, input),
});

export const substratesOp = defineOperation({
  name: 'substrates',
  method: 'GET',
  path: '/v1/substrates',
  summary: 'What an execution trace (device.trace record) holds, its limits, and how to submit and resolve one',
  description:
    'Use before submitting a trace (POST /v1/substrates, REST only, signed by an enrolled device or listed key) or to learn what a resolved svc:trace: record means. Returns the record format, field limits and the submit/resolve routes. Next: trace_resolve on a svc:trace: token.',
  tags: ['devices'],
  input: noInput,
  output: Closed({
    band: Type.String(),
    record: Closed(
      { substrate: Type.String(), inputs: Type.String(), outputs: Type.String(), steps_digest: Type.String(), started_at: Type.String(), ended_at: Type.String(), summary: Type.String() },
      'the fields of a device.trace value and their limits',
    ),
    fact: Closed({ kind: Type.String(), cell: Type.String(), band: Type.String(), tslot: Type.Integer(), signed_at: Type.String(), scope: Type.String() }, 'the fact body carrying it'),
    envelope: Type.String(),
    signers: Type.String(),
    submit: Type.String(),
    resolve: Type.String(),
    token: Type.String({ description: 'the form of a trace token' }),
    docs: Type.String(),
  }),
  mcp: 'full',
  run: async (ctx) => substratesCatalogue(ctx),
});

export const traceSubmitOp = defineOperation({
  name: 'trace_submit',
  method: 'POST',
  path: '/v1/substrates',
  summary: 'Submit an execution trace: the attest envelope with exactly one device.trace record, signed by an enrolled device or listed key',
  description:
    'Body: {batch_root (32 integers), attester, signature (ed25519 over blake3(batch_root ‖ registry_cid ‖ schema_cid)), facts: [one device.trace fact at svc:entity:<anchorId(value)>, tslot 0]}. Returns {trace: "svc:trace:<fact_cid>", fact_cid, attester, duplicate, log_index, accepted_at, merkle_proofs, receipt}. Refusals as POST /v1/attest (attester_revoked, 403 unauthorized for keys not enrolled or listed, invalid_argument naming the record field).',
  tags: ['devices', 'write'],
  input: signedRecordsSchema('device.trace', 1, 'exactly one device.trace record'),
  output: Signed({
    trace: Type.String({ description: 'svc:trace:<fact_cid>' }),
    fact_cid: Type.String(),
    attester: Type.String(),
    duplicate: Type.Boolean({ description: 'the same trace was accepted before (not appended twice)' }),
    log_index: Type.Integer({ minimum: 0 }),
    accepted_at: Type.String(),
    merkle_proofs: Type.Record(Type.String(), Type.Unknown(), { description: 'per fact_cid: its inclusion proof in the batch tree' }),
  }),
  mcp: false,
  run: (ctx, input) => submitTrace(ctx, input),
});

export const traceResolveOp = defineOperation({
  name: 'trace_resolve',
  method: 'POST',
  path: '/v1/trace_resolve',
  summary: 'Resolve an svc:trace: token to the execution trace it names, who signed it and how that key stands now',
  description: [
    'Use when you meet an svc:trace: token and want to know what a device ran: the substrate (runtime, version, hardware class), the fact_cids it read (inputs) and produced (outputs), its steps digest and start and end times.',
    'Returns trace, fact_cid, record (the signed value), attester, attester_standing ({standing: device | operator | responder | revoked | unlisted, enrollment?: svc:attestation: token, revocation?: fact_cid}),',
    'inputs, outputs, fact (the trace as signed by the device, with its own receipt) and a receipt binding the trace and every input and output fact_cid. Unknown ids → cid_not_found.',
    'Next: fetch any input or output by its fact_cid, or resolve attester_standing.enrollment with device_enrollment_resolve.',
  ].join(' '),
  tags: ['devices'],
  input: Type.Object({ trace: Type.String({ minLength: 1, maxLength: 120, description: 'an svc:trace: token, or its bare fact_cid' }) }, { additionalProperties: false }),
  output: Signed({
    trace: Type.String({ description: 'svc:trace:<fact_cid>' }),
    fact_cid: Type.String(),
    record: AnyValue,
    attester: Type.String(),
    attester_standing: Closed({
      standing,
      note: Type.Optional(Type.String()),
      revoked_by: Type.Optional(Type.String({ description: 'configuration or record' })),
      revocation: Type.Optional(Type.String({ description: 'fact_cid of the revocation record' })),
      enrollment: Type.Optional(attestationToken),
    }),
    inputs: Type.Array(Type.String(), { description: 'fact_cids the run read' }),
    outputs: Type.Array(Type.String(), { description: 'fact_cids the run produced' }),
    fact: ServedFact,
  }),
  mcp: 'full',
  run: (ctx, input, call) => resolveTrace(ctx, input, call.headers.authorization),
});

/** The operations of this file (and the memory bearer routes), for the operation table. */
export const DEVICE_OPS: readonly Operation[] = [
  devicePlatformsOp,
  deviceEnrollOp,
  deviceAttestationResolveOp,
  keyRevokeOp,
  substratesOp,
  traceSubmitOp,
  traceResolveOp,
  memoryBearerOp,
  memoryBearerRevokeOp,
];
