/** The client's typed failures: a refusal of the responder, an answer that does not verify, no answer at all. */
import type { ErrorCode, ErrorEnvelope, ResponseVerdict } from './protocol.js';

/** The responder refused (docs/errors.md): the envelope's code, message, details and retry_after. */
export class SvcApiError extends Error {
  override readonly name = 'SvcApiError';
  /** HTTP status of the answer. */
  readonly status: number;
  /** The envelope's code; `http_error` when the answer carried no envelope. Branch on this. */
  readonly code: ErrorCode | 'http_error' | (string & {});
  readonly details: Record<string, unknown>;
  /** Seconds to wait before retrying, when the responder said so. */
  readonly retryAfter: number | undefined;
  /** The request path. */
  readonly path: string;
  /** The envelope as sent, when there was one. */
  readonly envelope: ErrorEnvelope | undefined;

  constructor(status: number, path: string, envelope: ErrorEnvelope | undefined, fallback?: string, retryAfter?: number) {
    super(envelope ? envelope.message : (fallback ?? `HTTP ${status}`));
    this.status = status;
    this.path = path;
    this.envelope = envelope;
    this.code = envelope?.code ?? 'http_error';
    this.details = envelope?.details ?? {};
    this.retryAfter = retryAfter;
  }
}

/** The answer came back but does not verify offline: a changed, cut or foreign-signed response. */
export class VerificationError extends Error {
  override readonly name = 'VerificationError';
  /** The operation (or write route) whose answer failed. */
  readonly operation: string;
  /** The whole-response verdict (failures, errors, per fact and per receipt); null for a write check. */
  readonly verdict: ResponseVerdict | null;
  /** Failure codes: the verdict's (cid_mismatch, signature, untrusted_key …) or a write check's. */
  readonly failures: string[];
  readonly errors: string[];
  /** The answer as received. */
  readonly answer: unknown;

  constructor(operation: string, verdict: ResponseVerdict | null, answer: unknown, problems: { failures: string[]; errors: string[] } = { failures: [], errors: [] }) {
    const failures = [...(verdict?.failures ?? []), ...problems.failures];
    const errors = [...(verdict?.errors ?? []), ...problems.errors];
    super(`${operation}: the answer does not verify (${failures.join(', ') || 'invalid'})${errors[0] ? `: ${errors[0]}` : ''}`);
    this.operation = operation;
    this.verdict = verdict;
    this.failures = failures;
    this.errors = errors;
    this.answer = answer;
  }
}

/** No answer: the responder could not be reached, the request timed out or was aborted, or the answer is not JSON. */
export class SvcNetworkError extends Error {
  override readonly name = 'SvcNetworkError';
  readonly url: string;
  constructor(url: string, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.url = url;
  }
}
