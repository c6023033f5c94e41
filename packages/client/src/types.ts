/** Options and result shapes of the client (packages/client). */
import type { Ed25519Backend, ResponseVerdict, Scope } from './protocol.js';

/** A `fetch` implementation: the global one by default (browsers, Node ≥ 18, Deno, Bun). */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** Base URL of the responder, e.g. `https://svc.example.org` (a path prefix is kept). */
  url: string;
  /** A scope bearer (`sb1.…`, from `scopeBearer`) sent as `Authorization: Bearer` with every call. */
  bearer?: string;
  /**
   * The responder key (b32) every receipt must be signed by. Without it the key is read once
   * from `/.well-known/svc.json` and pinned for the client's life (trust on first use).
   */
  publicKey?: string;
  /** More keys to accept receipts from (retired keys of the same responder), with `publicKey`. */
  trustedKeys?: readonly string[];
  /** Prefix word of signed preimages (default: the well-known document's, else `svc`). */
  prefix?: string;
  /** Verify every answer offline (default true); a failure throws VerificationError. */
  verify?: boolean;
  /**
   * The Ed25519 verifier receipts are checked with (default: the portable one, @noble/curves).
   * Keys are still admitted strictly by the protocol module first; a faster backend (Node's
   * node:crypto, say) only replaces the final signature check. See docs/performance.md.
   */
  ed25519?: Ed25519Backend;
  fetch?: FetchLike;
  /** Retries of a 429/503 answer that names `retry_after` (default 3). */
  retries?: number;
  /** The longest `retry_after` (seconds) worth waiting for (default 30); a longer one is thrown at once. */
  maxRetryAfter?: number;
  /** Per-request timeout in ms (default 120 000). */
  timeoutMs?: number;
  /** Answers kept for ETag reuse (default 256; 0 turns the cache off). */
  etagCacheSize?: number;
}

export interface CallOptions {
  /** The bearer for this call (default: the client's). */
  bearer?: string;
  /** Verify this answer (default: the client's `verify`). */
  verify?: boolean;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/** An answer with the verdict of its offline verification (null when it was not verified). */
export interface Verified<T> {
  answer: T;
  verdict: ResponseVerdict | null;
  /** True when a 304 answered and the cached answer was returned. */
  cached: boolean;
}

/**
 * An attester key: the 32-byte Ed25519 seed, its b32 text, or a key file object as `svc keygen
 * --attester` writes it (`{seed_b32, public_key?}`; read and parse the file yourself).
 */
export type AttesterKey = Uint8Array | string | { seed_b32: string; public_key?: string };

export interface WriteOptions extends Pick<CallOptions, 'signal'> {
  key: AttesterKey;
  /** Scope of every item given as `{band, value}` (full bodies carry their own). */
  scope?: Scope;
}

/** Options of `attest`: a write's, and the answer's shape. */
export interface AttestOptions extends WriteOptions {
  /** 'none': the answer leaves out each fact's proof to the batch root (built here to sign it); default 'all'. */
  proofs?: 'all' | 'none';
}

/** What a signed write returned, checked against what was signed. */
export interface WriteResult<A = Record<string, unknown>> {
  /** One per submitted fact, in order (equal to the locally computed ones). */
  fact_cids: string[];
  /** fact_cids already in the log (accepted again, not appended twice). */
  duplicates: string[];
  log_index: number;
  batch_root: string;
  accepted_at: string;
  /** The fact bodies as signed. */
  facts: Record<string, unknown>[];
  /** The whole answer (with its receipt, merkle proofs and tree head). */
  answer: A;
  verdict: ResponseVerdict | null;
}

export interface ScopeBearerOptions {
  scope: Scope;
  key: AttesterKey;
  /** Lifetime in seconds (default: the responder's maximum, from /v1/limits). */
  ttl?: number;
  signal?: AbortSignal;
}

export interface ScopeBearer {
  token_type: 'Bearer';
  bearer: string;
  scope: Scope;
  key: string;
  expires_at: string;
  issued_at?: string;
  binding: 'configured' | 'claimed';
  [key: string]: unknown;
}

/** The responder's identity as the client trusts it. */
export interface ResponderInfo {
  publicKey: string;
  trustedKeys: string[];
  prefix: string;
  /** True when the key came from the options, false when read from /.well-known/svc.json. */
  pinned: boolean;
}
