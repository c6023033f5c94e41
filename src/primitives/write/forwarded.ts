/**
 * Batch attestations with worker processes (docs/deploy.md, "Worker processes"). A worker parses
 * and schema-checks the request, then hands it to the process that owns the store, which accepts
 * it there exactly as one process would (`acceptBatch`: key standing, fact rules, signature,
 * quota, append, receipt) and answers with the result. A write then costs one round trip between
 * the processes instead of one per store read it makes, and the batch is encoded and hashed once,
 * where it is appended.
 */
import { acceptBatch, type AttestRequest, type AttestResult } from './attest.js';
import type { ServiceContext } from '../context/context.js';

/** What the owner answers a forwarded attestation with. */
export interface ForwardedAttest {
  result: AttestResult;
  /** How long the store append took (the worker's metrics record it as its own). */
  append_seconds: number;
}

/** What a caller of POST /v1/attest may ask about the answer's shape (docs/writes.md). */
export interface AttestAnswerOptions {
  proofs?: 'all' | 'none';
}

/** POST /v1/attest and /v1/attest_cbor: accepted here, or by the owner when this is a worker. */
export async function attest(ctx: ServiceContext, req: AttestRequest, answer: AttestAnswerOptions = {}): Promise<AttestResult> {
  if (ctx.owner === undefined) return acceptBatch(ctx, req, 'attest', { ownsFacts: true, proofs: answer.proofs });
  const forwarded = (await ctx.owner.attest({ req, answer })) as ForwardedAttest;
  ctx.metrics.logAppend(forwarded.append_seconds, true);
  return forwarded.result;
}

/** The owner's side: accept a worker's request (a structured-clone copy, so this call owns it). */
export async function acceptForwarded(ctx: ServiceContext, call: { req: AttestRequest; answer?: AttestAnswerOptions }): Promise<ForwardedAttest> {
  let seconds = 0;
  const result = await acceptBatch(ctx, call.req, 'attest', {
    ownsFacts: true,
    proofs: call.answer?.proofs,
    onAppend: (s, ok) => {
      seconds = s;
      // A failed append throws out of acceptBatch: the owner's own metrics keep that count.
      if (!ok) ctx.metrics.logAppend(s, false);
    },
  });
  return { result, append_seconds: seconds };
}
