/**
 * SvcClient: typed calls of every operation (generated, operations.gen.ts), each answer verified
 * offline with the whole-response verifier against the responder key (pinned from the options,
 * or read once from /.well-known/svc.json), retries that honour `retry_after`, ETag reuse, and
 * the writer's helpers: signed attest batches, memory records and scope bearers. Runtime code
 * uses `fetch`, `TextEncoder` and the pure protocol module only, so it runs in a browser.
 */
import { SvcApiError, SvcNetworkError, VerificationError } from './errors.js';
import { OPERATION_TABLE, type OperationInfo, type OperationInput, type OperationName, type OperationOutput, SvcOperations } from './operations.gen.js';
import { b32decode, b32encode, completeBodies, type ErrorEnvelope, expectedBatch, portableEd25519, type ResponseVerdict, scopeBearerRequest, signEnvelope, verifyResponse } from './protocol.js';
import type { AttesterKey, AttestOptions, CallOptions, ClientOptions, FetchLike, ResponderInfo, ScopeBearer, ScopeBearerOptions, Verified, WriteOptions, WriteResult } from './types.js';

/** The record bands a client writes, and the operation that takes each (docs/memory.md). */
export const RECORD_ROUTES = {
  'memory.note': 'memory_notes',
  'memory.edge': 'edges',
  'memory.alias': 'entity_alias',
  'device.trace': 'trace_submit',
} as const satisfies Record<string, OperationName>;
export type RecordBand = keyof typeof RECORD_ROUTES;

/** The answer of POST /v1/attest. */
export interface AttestAnswer {
  accepted: true;
  fact_cids: string[];
  duplicates: string[];
  batch_root: string;
  log_index: number;
  accepted_at: string;
  tree_head: Record<string, unknown>;
  log_inclusion: { leaf_index: number; tree_size: number; path: string[] };
  /** Absent when asked with `proofs: 'none'`. */
  merkle_proofs?: Record<string, unknown>;
  receipt: Record<string, unknown>;
  [key: string]: unknown;
}

interface Sent {
  status: number;
  headers: Headers;
  body: any;
}

interface CacheEntry {
  etag: string;
  answer: unknown;
  verdict: ResponseVerdict | null;
}

/** What clients made by `withBearer` share with the client they came from. */
interface Shared {
  responder?: Promise<ResponderInfo>;
  manifests?: Promise<{ registry_cid: string; schema_cid: string }>;
  cache: Map<string, CacheEntry>;
  /** Responder clock minus ours (ms), from the last Date header read; never ahead of the responder. */
  skewMs: number;
}

const isObject = (x: unknown): x is Record<string, any> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The 32-byte seed of an attester key in any of its accepted forms. */
export function seedOf(key: AttesterKey): Uint8Array {
  if (key instanceof Uint8Array) {
    if (key.length !== 32) throw new RangeError('key: expected a 32-byte Ed25519 seed');
    return key;
  }
  if (typeof key === 'string') return b32decode(key, 32, 'key');
  if (isObject(key) && typeof key.seed_b32 === 'string') {
    const seed = b32decode(key.seed_b32, 32, 'key.seed_b32');
    if (key.public_key !== undefined && key.public_key !== b32encode(portableEd25519.publicKey(seed))) throw new RangeError('key: public_key does not belong to seed_b32 (the key file is damaged)');
    return seed;
  }
  throw new TypeError('key: expected a 32-byte seed, its b32 text or a key file object {seed_b32}');
}

/** The public key (b32) of an attester key. */
export function publicKeyOf(key: AttesterKey): string {
  return b32encode(portableEd25519.publicKey(seedOf(key)));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A GET operation's input as a query string: arrays as repeated keys, objects as JSON. */
export function queryString(input: unknown): string {
  if (!isObject(input)) return '';
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(input)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const x of v) q.append(k, isObject(x) ? JSON.stringify(x) : String(x));
    else q.append(k, isObject(v) ? JSON.stringify(v) : String(v));
  }
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

function retryAfterOf(envelope: ErrorEnvelope | undefined, headers: Headers): number | undefined {
  const candidates = [envelope?.retry_after, envelope?.details?.retry_after, headers.get('retry-after')];
  for (const c of candidates) {
    const n = typeof c === 'string' && /^\d+$/.test(c.trim()) ? Number(c) : c;
    if (typeof n === 'number' && Number.isFinite(n) && n >= 0) return n;
  }
  return undefined;
}

export class SvcClient extends SvcOperations {
  /** The responder's base URL, without a trailing slash. */
  readonly url: string;
  /** The bearer sent with every call, if any. */
  readonly bearer: string | undefined;
  readonly #options: ClientOptions;
  readonly #fetch: FetchLike;
  readonly #verify: boolean;
  readonly #retries: number;
  readonly #maxRetryAfter: number;
  readonly #cacheSize: number;
  #shared: Shared = { cache: new Map(), skewMs: 0 };

  constructor(options: ClientOptions) {
    super();
    if (!options || typeof options.url !== 'string' || !/^https?:\/\/[^/]/.test(options.url)) throw new TypeError('url: expected an http(s) base URL');
    this.#options = { ...options };
    this.url = options.url.replace(/\/+$/, '');
    this.bearer = options.bearer?.replace(/^Bearer\s+/i, '').trim() || undefined;
    const f = options.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (typeof f !== 'function') throw new TypeError('fetch: no global fetch here; pass one in the options');
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#verify = options.verify ?? true;
    this.#retries = options.retries ?? 3;
    this.#maxRetryAfter = options.maxRetryAfter ?? 30;
    this.#cacheSize = options.etagCacheSize ?? 256;
  }

  /** A client of the same responder sending `bearer`; it shares the pinned key, manifests and ETag cache. */
  withBearer(bearer: string): SvcClient {
    const c = new SvcClient({ ...this.#options, bearer });
    c.#shared = this.#shared;
    return c;
  }

  /** The responder key receipts must be signed by (pinned from the options, or read once and kept). */
  responder(): Promise<ResponderInfo> {
    this.#shared.responder ??= this.#loadResponder().catch((e) => {
      this.#shared.responder = undefined;
      throw e;
    });
    return this.#shared.responder;
  }

  async #loadResponder(): Promise<ResponderInfo> {
    const o = this.#options;
    if (o.publicKey !== undefined) {
      b32decode(o.publicKey, 32, 'publicKey');
      return { publicKey: o.publicKey, trustedKeys: [...(o.trustedKeys ?? [])], prefix: o.prefix ?? 'svc', pinned: true };
    }
    const wk = (await this.#send('GET', '/.well-known/svc.json', {})).body;
    const key = wk?.responder_pubkey_b32;
    if (typeof key !== 'string') throw new SvcNetworkError(`${this.url}/.well-known/svc.json`, 'the discovery document names no responder_pubkey_b32');
    b32decode(key, 32, 'responder_pubkey_b32');
    const retired = Array.isArray(wk.retired_keys) ? wk.retired_keys.map((k: { public_key?: unknown }) => k?.public_key).filter((k: unknown): k is string => typeof k === 'string') : [];
    return { publicKey: key, trustedKeys: [...retired, ...(o.trustedKeys ?? [])], prefix: o.prefix ?? (typeof wk.prefix === 'string' ? wk.prefix : 'svc'), pinned: false };
  }

  /** The registry and schema CIDs a write is signed under (GET /v1/manifests, read once). */
  manifests(): Promise<{ registry_cid: string; schema_cid: string }> {
    this.#shared.manifests ??= this.#send('GET', '/v1/manifests', {}).then(
      (r) => {
        const m = r.body;
        if (typeof m?.registry_cid !== 'string' || typeof m?.schema_cid !== 'string') throw new SvcNetworkError(`${this.url}/v1/manifests`, 'the answer names no registry_cid and schema_cid');
        return { registry_cid: m.registry_cid, schema_cid: m.schema_cid };
      },
      (e) => {
        this.#shared.manifests = undefined;
        throw e;
      },
    );
    return this.#shared.manifests;
  }

  // -------------------------------------------------------------------------------------------
  // HTTP

  /** One request, retried while the responder answers 429/503 with a retry_after worth waiting for. */
  async #send(method: 'GET' | 'POST', path: string, o: { body?: string; headers?: Record<string, string>; bearer?: string; signal?: AbortSignal }): Promise<Sent> {
    const url = `${this.url}${path}`;
    const headers: Record<string, string> = { accept: 'application/json', ...o.headers };
    if (o.body !== undefined) headers['content-type'] = 'application/json';
    if (o.bearer) headers.authorization = `Bearer ${o.bearer}`;
    for (let attempt = 0; ; attempt++) {
      const signal = this.#signal(o.signal);
      let res: Response;
      let text: string;
      try {
        // Called unbound: a browser's fetch refuses any \`this\` other than the window (or none).
        const f = this.#fetch;
        res = await f(url, { method, headers, body: o.body, signal });
        text = res.status === 304 ? '' : await res.text();
      } catch (e) {
        if (o.signal?.aborted) throw o.signal.reason ?? e;
        throw new SvcNetworkError(url, `cannot reach ${this.url} (${method} ${path}): ${(e as Error)?.message ?? String(e)}`, e);
      }
      this.#readClock(res.headers);
      if (res.status === 304) return { status: 304, headers: res.headers, body: null };
      let body: any;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (res.ok) {
        if (body === undefined) throw new SvcNetworkError(url, `${method} ${path}: the answer is not JSON`);
        return { status: res.status, headers: res.headers, body };
      }
      const envelope = isObject(body) && typeof body.code === 'string' && typeof body.message === 'string' ? (body as ErrorEnvelope) : undefined;
      const retryAfter = retryAfterOf(envelope, res.headers);
      const error = new SvcApiError(res.status, path, envelope, `${method} ${path}: HTTP ${res.status}${text && !envelope ? `: ${text.slice(0, 200)}` : ''}`, retryAfter);
      if ((res.status === 429 || res.status === 503) && retryAfter !== undefined && retryAfter <= this.#maxRetryAfter && attempt < this.#retries) {
        await sleep(retryAfter * 1000, o.signal);
        continue;
      }
      throw error;
    }
  }

  #signal(user: AbortSignal | undefined): AbortSignal | undefined {
    const ms = this.#options.timeoutMs ?? 120_000;
    if (!(ms > 0) || typeof AbortSignal?.timeout !== 'function') return user;
    const timeout = AbortSignal.timeout(ms);
    if (!user) return timeout;
    const any = (AbortSignal as unknown as { any?: (s: AbortSignal[]) => AbortSignal }).any;
    return typeof any === 'function' ? any([user, timeout]) : user;
  }

  /** The responder's clock from its Date header (whole seconds, so never ahead of it). */
  #readClock(headers: Headers): void {
    const date = headers.get('date');
    const at = date ? Date.parse(date) : Number.NaN;
    if (Number.isFinite(at)) this.#shared.skewMs = at - Date.now();
  }

  /** Unix seconds on the responder's clock, as far as its last Date header tells. */
  #responderNow(): number {
    return Math.floor((Date.now() + this.#shared.skewMs) / 1000);
  }

  // -------------------------------------------------------------------------------------------
  // Operations

  /** Call an operation by name; its answer, verified unless verification is off. */
  async call<N extends OperationName>(name: N, input: OperationInput<N>, options: CallOptions = {}): Promise<OperationOutput<N>> {
    return (await this.callVerified(name, input, options)).answer;
  }

  /** Call an operation by name; its answer with the verification verdict. */
  async callVerified<N extends OperationName>(name: N, input: OperationInput<N>, options: CallOptions = {}): Promise<Verified<OperationOutput<N>>> {
    const info: OperationInfo | undefined = (OPERATION_TABLE as Record<string, OperationInfo>)[name];
    if (!info) throw new TypeError(`${String(name)}: not an operation of this client (OPERATION_TABLE)`);
    const bearer = options.bearer?.replace(/^Bearer\s+/i, '').trim() || this.bearer;
    const verify = options.verify ?? this.#verify;
    const isGet = info.method === 'GET';
    const body = isGet ? undefined : JSON.stringify(input ?? {});
    const path = isGet ? `${info.path}${queryString(input)}` : info.path;
    const headers: Record<string, string> = { ...options.headers };
    const cacheKey = `${info.method} ${path}\n${body ?? ''}\n${bearer ?? ''}`;
    const cached = this.#cacheSize > 0 ? this.#shared.cache.get(cacheKey) : undefined;
    if (cached) headers['if-none-match'] = cached.etag;
    const res = await this.#send(info.method, path, { body, headers, bearer, signal: options.signal });
    if (res.status === 304) {
      if (!cached) throw new SvcApiError(304, path, undefined, `${name}: HTTP 304 without a cached answer`);
      // Most recently used last.
      this.#shared.cache.delete(cacheKey);
      this.#shared.cache.set(cacheKey, cached);
      if (verify && !cached.verdict) cached.verdict = await this.#check(name, info.signed, cached.answer);
      return { answer: structuredClone(cached.answer) as OperationOutput<N>, verdict: verify ? cached.verdict : null, cached: true };
    }
    const verdict = verify ? await this.#check(name, info.signed, res.body) : null;
    const etag = res.headers.get('etag');
    if (etag && this.#cacheSize > 0) {
      this.#shared.cache.delete(cacheKey);
      this.#shared.cache.set(cacheKey, { etag, answer: structuredClone(res.body), verdict });
      while (this.#shared.cache.size > this.#cacheSize) this.#shared.cache.delete(this.#shared.cache.keys().next().value as string);
    }
    return { answer: res.body, verdict, cached: false };
  }

  /**
   * Whole-response verification against the responder key: every receipt, every fact recomputed
   * to its fact_cid and bound, every reference, nothing bound left out. Throws VerificationError.
   * Null when the operation's answer is never signed, or this one carries no receipt where the
   * operation's schema allows that.
   */
  async #check(name: string, signed: OperationInfo['signed'], answer: unknown): Promise<ResponseVerdict | null> {
    if (signed === 'none') return null;
    const r = await this.responder();
    const verdict = verifyResponse(answer, { publicKey: r.publicKey, trustedKeys: r.trustedKeys, prefix: r.prefix, backend: this.#options.ed25519 });
    if (verdict.valid && verdict.trusted) return verdict;
    if (signed === 'optional' && verdict.failures.length === 1 && verdict.failures[0] === 'no_receipt') return null;
    throw new VerificationError(name, verdict, answer);
  }

  /** Verify any answer (a saved one, say) the way every call is verified; throws VerificationError. */
  async verifyAnswer(answer: unknown): Promise<ResponseVerdict> {
    return (await this.#check('verify', 'required', answer)) as ResponseVerdict;
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  /**
   * Sign `facts` as one batch with `key` and POST /v1/attest. Each item is a full fact body
   * ({kind, cell, band, value, tslot?, unit?, signed_at, scope?, …}; docs/writes.md) or a record
   * shorthand {band, value, scope?} completed by the subject rule. The batch root is signed with
   * the responder's registry and schema CIDs (/v1/manifests). The answer is verified, and its
   * fact_cids and batch root must be the ones computed here. `proofs: 'none'` asks for the answer
   * without each fact's proof to the batch root (bulk writes: the tree was built here to sign).
   */
  attest(facts: readonly Record<string, unknown>[], options: AttestOptions): Promise<WriteResult<AttestAnswer>> {
    return this.#write('attest', options.proofs === 'none' ? '/v1/attest?proofs=none' : '/v1/attest', facts, options);
  }

  /** Write records of one band (memory.note, memory.edge, memory.alias, device.trace) at their route, each value filed by the subject rule. */
  writeRecords<B extends RecordBand>(band: B, values: readonly object[], options: WriteOptions): Promise<WriteResult<OperationOutput<(typeof RECORD_ROUTES)[B]>>> {
    const route = RECORD_ROUTES[band];
    if (!route) throw new TypeError(`band: expected one of ${Object.keys(RECORD_ROUTES).join(', ')}`);
    return this.#write(
      route,
      OPERATION_TABLE[route].path,
      values.map((value) => ({ band, value: value as Record<string, unknown> })),
      options,
    ) as never;
  }

  /** Write memory.note records (POST /v1/memory/notes): `{text, cell?, entity?, facts?, tags?, observed_at?, vector?}` each. */
  writeNotes(notes: readonly NoteValue[], options: WriteOptions) {
    return this.writeRecords('memory.note', notes, options);
  }

  /** Write memory.edge records (POST /v1/edges): `{type, from, to, valid_from, valid_to?, invalidates?, reason?}` each. */
  writeEdges(edges: readonly EdgeValue[], options: WriteOptions) {
    return this.writeRecords('memory.edge', edges, options);
  }

  /** Write memory.alias records (POST /v1/entity/alias): `{entity, phrase, lang?}` each. */
  writeAliases(aliases: readonly AliasValue[], options: WriteOptions) {
    return this.writeRecords('memory.alias', aliases, options);
  }

  async #write(name: string, path: string, items: readonly Record<string, unknown>[], options: WriteOptions): Promise<WriteResult<any>> {
    const seed = seedOf(options.key);
    const scoped = items.map((it) => (options.scope && isObject(it) && !('cell' in it) && !('scope' in it) ? { ...it, scope: options.scope } : it));
    const facts = completeBodies(scoped, new Date(), 'facts');
    let res: Sent;
    for (let attempt = 0; ; attempt++) {
      const m = await this.manifests();
      const envelope = { ...signEnvelope(facts, seed, m.registry_cid, m.schema_cid), registry_cid: m.registry_cid, schema_cid: m.schema_cid };
      try {
        res = await this.#send('POST', path, { body: JSON.stringify(envelope), bearer: this.bearer, signal: options.signal });
        break;
      } catch (e) {
        // The responder restarted on another registry since the manifests were read: read them again once.
        if (attempt === 0 && e instanceof SvcApiError && e.code === 'bad_signature') {
          this.#shared.manifests = undefined;
          continue;
        }
        throw e;
      }
    }
    const answer = res.body;
    let verdict: ResponseVerdict | null = null;
    if (this.#verify) {
      verdict = await this.#check(name, 'required', answer);
      // What the verifier cannot know: that these are the facts signed here.
      const want = expectedBatch(facts);
      const errors: string[] = [];
      const got: unknown = answer?.fact_cids;
      if (!Array.isArray(got) || got.length !== want.fact_cids.length || got.some((c, i) => c !== want.fact_cids[i])) {
        errors.push(`write_mismatch: the answer lists fact_cids ${JSON.stringify(got)}, not the ${want.fact_cids.length} signed here (${want.fact_cids.join(', ')})`);
      }
      if (answer?.batch_root !== want.batch_root) errors.push(`write_mismatch: the answer's batch_root ${String(answer?.batch_root)} is not the one signed here (${want.batch_root})`);
      const bound = new Set(Array.isArray(answer?.receipt?.fact_cids) ? answer.receipt.fact_cids : []);
      const unbound = want.fact_cids.filter((c) => !bound.has(c));
      if (unbound.length > 0) errors.push(`write_mismatch: the receipt does not bind ${unbound.join(', ')}`);
      if (errors.length > 0) throw new VerificationError(name, verdict, answer, { failures: ['write_mismatch'], errors });
    }
    return {
      fact_cids: answer.fact_cids,
      duplicates: answer.duplicates ?? [],
      log_index: answer.log_index,
      batch_root: answer.batch_root,
      accepted_at: answer.accepted_at,
      facts,
      answer,
      verdict,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Scope bearers

  /**
   * A read bearer for a private scope (docs/scopes.md): signs the scope_bearer_request statement
   * (the scope, the key, an expiry on the responder's clock and the pinned responder key) and
   * posts it to /v1/scope_bearer. The key must be bound to the scope (configured, or it claims
   * it). Use the bearer with `withBearer`, or per call (`{bearer}`).
   */
  async scopeBearer(options: ScopeBearerOptions): Promise<ScopeBearer> {
    const seed = seedOf(options.key);
    const r = await this.responder();
    let ttl = options.ttl;
    if (ttl === undefined) {
      const limits = (await this.#send('GET', '/v1/limits', { signal: options.signal })).body;
      const max = limits?.quotas?.scope_bearer_ttl_s;
      ttl = Number.isSafeInteger(max) && max > 0 ? (max as number) : 300;
    }
    if (!Number.isSafeInteger(ttl) || ttl < 1) throw new RangeError('ttl: expected a whole number of seconds ≥ 1');
    const now = this.#responderNow();
    // A statement is good once: one for the same scope and expiry in the same second is refused
    // as replayed, so the next earlier second is tried.
    for (let attempt = 0; ; attempt++) {
      const exp = now + ttl - attempt;
      const request = scopeBearerRequest(options.scope, seed, exp, r.publicKey, r.prefix);
      try {
        return (await this.call('scope_bearer', request, { signal: options.signal })) as ScopeBearer;
      } catch (e) {
        if (!(e instanceof SvcApiError && e.details.reason === 'replayed' && attempt < 5 && exp - 1 > now)) throw e;
      }
    }
  }
}

/** The value of a memory.note record (docs/writes.md, "memory.note"). */
export interface NoteValue {
  text: string;
  cell?: string;
  entity?: string;
  facts?: string[];
  tags?: string[];
  observed_at?: string;
  vector?: number[];
}

/** The value of a memory.edge record. */
export interface EdgeValue {
  type: 'contradicts' | 'same_as' | 'part_of' | 'observed_with' | 'located_in' | 'owned_by' | 'mentions' | 'related_to';
  from: string;
  to: string;
  valid_from: string;
  valid_to?: string;
  invalidates?: string[];
  reason?: string;
}

/** The value of a memory.alias record. */
export interface AliasValue {
  entity: string;
  phrase: string;
  lang?: string;
}
