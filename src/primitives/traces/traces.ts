/**
 * Execution traces (docs/devices.md): what a device ran, as a `device.trace` record it signs
 * itself, submitted in the attest envelope to POST /v1/substrates and named by an `svc:trace:`
 * token. The record's fields and limits are the write path's record rules
 * (memory/record-rules.ts); the subject is `svc:entity:` + anchorId(value), so equal traces land
 * at one subject. Resolving a trace answers the record, who signed it, how that key stands now,
 * and a receipt binding the trace with the input and output fact_cids it names.
 */
import { invalidArgument, SvcError } from '../../protocol/errors.js';
import { acceptBatch, type AttestRequest } from '../write/attest.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact } from '../facts/facts-view.js';
import { mayReadScope, type Authorization } from '../scopes/access.js';
import { tokenCid } from '../keys/devices.js';
import { keyStatus } from '../write/standing.js';

export const TRACE_BAND = 'device.trace';

const tracePrefix = (ctx: ServiceContext) => `${ctx.config.prefix}:trace:`;

/** GET /v1/substrates: the record a trace is, its limits, and how to submit and resolve one. */
export function substratesCatalogue(ctx: ServiceContext) {
  return {
    band: TRACE_BAND,
    record: {
      substrate: '{kind: 1..64 characters (runtime, e.g. "onnxruntime", "llama.cpp", "python"), version: 1..64 characters, hardware?: 1..128 characters (hardware class, e.g. "arm64-npu")}',
      inputs: 'fact_cids the run read (0..256)',
      outputs: 'fact_cids the run produced or attested (0..256)',
      steps_digest: 'optional: 64 lower-case hex characters, a digest of the steps run (your own scheme, e.g. BLAKE3 of a step log)',
      started_at: 'RFC 3339',
      ended_at: 'RFC 3339, not before started_at',
      summary: 'optional: 0..2000 characters',
    },
    fact: {
      kind: 'primary',
      cell: `svc:entity:<anchorId(value)> (recordSubject("${TRACE_BAND}", value) in src/protocol/memory-records.ts)`,
      band: TRACE_BAND,
      tslot: 0,
      signed_at: 'RFC 3339 (optional)',
      scope: 'not allowed: traces are public records',
    },
    envelope:
      'The attest envelope (POST /v1/attest): {batch_root, attester, signature, facts: [exactly one device.trace fact]}; signature = Ed25519 over blake3(batch_root ‖ registry_cid ‖ schema_cid).',
    signers: 'An enrolled device key (POST /v1/device_platforms, or SVC_DEVICE_KEYS) or an operator-listed key (SVC_ATTESTER_KEYS); revoked keys get attester_revoked, any other key 403 unauthorized.',
    submit: 'POST /v1/substrates',
    resolve: 'POST /v1/trace_resolve {trace}',
    token: `${tracePrefix(ctx)}<fact_cid>`,
    docs: 'docs/devices.md',
  };
}

/** POST /v1/substrates: one device.trace record in the attest envelope. */
export async function submitTrace(ctx: ServiceContext, req: AttestRequest) {
  // Exactly one object in facts: the operation's schema (minItems = maxItems = 1).
  const f = req.facts[0];
  if (f.band !== TRACE_BAND) throw invalidArgument('facts[0].band', `expected ${TRACE_BAND} (other bands go to POST /v1/attest)`);
  if (f.scope !== undefined) throw invalidArgument('facts[0].scope', 'a trace is a public record: leave scope out');
  const res = await acceptBatch(ctx, req, 'substrates');
  const cid = res.fact_cids[0];
  return {
    trace: `${tracePrefix(ctx)}${cid}`,
    fact_cid: cid,
    attester: req.attester,
    duplicate: res.duplicates.includes(cid),
    log_index: res.log_index,
    accepted_at: res.accepted_at,
    merkle_proofs: res.merkle_proofs,
    receipt: res.receipt,
  };
}

const strings = (x: unknown): string[] => (Array.isArray(x) ? x.filter((v): v is string => typeof v === 'string') : []);

/** POST /v1/trace_resolve: the trace a token (or bare fact_cid) names. */
export async function resolveTrace(ctx: ServiceContext, input: { trace: string }, authorization?: Authorization) {
  const cid = tokenCid(ctx, input.trace, 'trace', 'trace');
  const f = (await ctx.store.readFact(cid)).fact;
  // A scoped trace (written through /v1/attest) is found only with a bearer for its scope.
  if (!f || f.band !== TRACE_BAND || (f.scope && !(await mayReadScope(ctx, authorization, f.scope)))) {
    throw new SvcError('cid_not_found', `trace: no execution trace is stored under ${cid} here`, { field: 'trace', fact_cid: cid });
  }
  const v = f.body.value as Record<string, unknown>;
  const inputs = strings(v.inputs);
  const outputs = strings(v.outputs);
  let standing: Record<string, unknown>;
  if (ctx.keys.retired.some((k) => k.public_key === f.attester)) {
    standing = { standing: 'responder', note: 'a retired key of this responder' };
  } else {
    const s = await keyStatus(ctx, f.attester);
    standing = { standing: s.standing };
    if (s.revoked_by) standing.revoked_by = s.revoked_by;
    if (s.records?.revocation) standing.revocation = s.records.revocation.fact_cid;
    if (s.records?.enrollment) standing.enrollment = `${ctx.config.prefix}:attestation:${s.records.enrollment.fact_cid}`;
  }
  return {
    trace: `${tracePrefix(ctx)}${cid}`,
    fact_cid: cid,
    record: v,
    attester: f.attester,
    attester_standing: standing,
    inputs,
    outputs,
    fact: await serveFact(ctx, f),
    receipt: issueReceipt(ctx, 'trace', [f.cell], [...new Set([cid, ...inputs, ...outputs])], { merkle_proof: f.proof, scope: f.scope ?? undefined }),
  };
}
