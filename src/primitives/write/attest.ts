/**
 * The write path (docs/writes.md): attested batches from listed keys and facts the
 * responder mints itself go through one function, `acceptBatch`, which checks everything
 * before anything is written, so a rejection leaves cache, store and log untouched. What a
 * fact must say for its band is in fact-rules.ts; the daily quota in attester-quota.ts; who may
 * write a scope in scopes/write.ts.
 */
import { b32decode, b32encode } from '../../protocol/base32.js';
import { equalBytes, toHex } from '../../protocol/bytes.js';
import { encodeCanonical, type CborValue } from '../../protocol/cbor.js';
import { isCell } from '../../protocol/cell64.js';
import { factBody } from '../../protocol/cid.js';
import { admitPublicKey, verifyStrict } from '../../protocol/ed25519.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { parseRfc3339 } from '../../protocol/rfc3339.js';
import { blake3 } from '../../protocol/hash.js';
import { batchRoot, type MerkleProofJson } from '../../protocol/merkle-batch.js';
import { isoSeconds, scopeFieldsSet, type Scope } from '../../protocol/receipt.js';
import { checkTslot, tslotOf } from '../../protocol/tslot.js';
import { attesterDigest } from '../../protocol/tree-head.js';
import type { AppendResult, FactKind, NewFact, ProvenanceClass } from '../../store/contract.js';
import { OwnedBatchEncoder } from '../../store/encoded-body.js';
// The batch tree as both drivers keep it: pure code (node hashes through the one-chunk BLAKE3),
// giving batchProofs' root and proofs with each node's base32 computed once.
import { BatchTree, buildBatchTree } from '../../store/batch-tree.js';
import { reserveDailyFacts } from './attester-quota.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { derivativeFunctionRefusal } from './derive-functions.js';
import { checkAgainstBand, checkDerivatives, checkFactTimes, derivativeFn, derivativeParents, type AttesterKind } from './fact-rules.js';
import { checkRecord } from './record-rules.js';
import { keyStanding } from './standing.js';
import { batchScope, checkScopeWrite } from './scope-write.js';

export type { AttesterKind } from './fact-rules.js';

const KINDS: readonly FactKind[] = ['primary', 'derivative', 'absence'];
const ENTITY_RE = /^svc:entity:[a-z2-7]{26}$/;
export const MAX_FACTS_PER_BATCH = 4096;

export interface AttestRequest {
  batch_root: number[] | Uint8Array;
  /** Required: absent is 401 unauthorized (checked by acceptBatch), not a schema error. */
  attester?: string;
  signature?: string;
  facts: Record<string, unknown>[];
  registry_cid?: string;
  schema_cid?: string;
}

export interface AttestResult {
  accepted: true;
  fact_cids: string[];
  duplicates: string[];
  batch_root: string;
  log_index: number;
  accepted_at: string;
  tree_head: Awaited<ReturnType<ServiceContext['store']['log']['latestTreeHead']>>;
  /** Audit path of the batch's log entry in `tree_head`. */
  log_inclusion: { leaf_index: number; tree_size: number; path: string[] };
  /** Each fact's proof to batch_root; left out when the caller asked for `proofs: 'none'`. */
  merkle_proofs?: Record<string, MerkleProofJson>;
  receipt: ReturnType<typeof issueReceipt>;
}

interface CheckedFact {
  body: Record<string, unknown>;
  digest: Uint8Array;
  fact_cid: string;
  kind: FactKind;
  cell: string;
  band: string;
  tslot: number;
  provenance_class: ProvenanceClass;
  scope: Scope | null;
  /** Derivatives only: the parents to resolve in the store once the batch is authenticated. */
  parents?: string[];
  /** Derivatives only: the registered function `derivation.fn` names. */
  fn?: string;
}

/**
 * Validate one submitted fact (`at` names it in refusals) and resolve its index columns; nothing is
 * written here. With `owned` (the caller owns the fact objects: a parsed request), the body is
 * frozen and encoded through it, for the store to reuse (store/encoded-body.ts).
 */
function checkFact(ctx: ServiceContext, raw: unknown, at: string, attester: string, writer: AttesterKind, nowMs: number, owned?: OwnedBatchEncoder): CheckedFact {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalidArgument(at, 'expected an object');
  const body = factBody(raw as Record<string, unknown>) as Record<string, unknown>;
  const kind = body.kind;
  if (typeof kind !== 'string' || !KINDS.includes(kind as FactKind)) throw invalidArgument(`${at}.kind`, 'expected one of primary, derivative, absence');
  const cell = body.cell;
  if (typeof cell !== 'string' || !(isCell(cell) || ENTITY_RE.test(cell))) {
    throw new SvcError('unaddressable_subject', `${at}.cell: ${JSON.stringify(cell)} is neither a cell64 nor an svc:entity: token`, { field: `${at}.cell` });
  }
  const band = body.band;
  if (typeof band !== 'string') throw invalidArgument(`${at}.band`, 'expected a band key');
  const entry = ctx.registry.bands.get(band);
  if (!entry) throw new SvcError('band_not_in_registry', `${at}.band: ${band} is not in the active manifest (see /v1/bands)`, { field: `${at}.band`, band });
  if (!('value' in body)) throw invalidArgument(`${at}.value`, 'is required (null for an absence)');
  // A body naming a signer names the key that signed its batch: otherwise any listed key could
  // pass its facts off as another's (the responder's own, with a materializer's derivation).
  if (body.signer !== undefined && body.signer !== attester) {
    throw invalidArgument(`${at}.signer`, `names ${JSON.stringify(body.signer)}, but the batch is signed by attester ${attester}; a body may name only its own attester as signer`);
  }
  let signedAtMs: number | undefined;
  if (body.signed_at !== undefined) {
    signedAtMs = parseRfc3339(body.signed_at);
    if (!Number.isFinite(signedAtMs)) throw invalidArgument(`${at}.signed_at`, 'expected an RFC 3339 timestamp');
  }
  let tslot: number;
  if (body.tslot !== undefined) {
    try {
      tslot = checkTslot(body.tslot, entry.tempo, band, nowMs);
    } catch (e) {
      throw atFact(e, at);
    }
  } else {
    tslot = tslotOf(Math.floor((signedAtMs ?? nowMs) / 1000), entry.tempo);
  }
  checkFactTimes(at, body, entry, tslot, signedAtMs, nowMs);
  checkAgainstBand(at, body, kind as FactKind, cell, entry, writer);
  checkRecord(at, body, kind, cell, band, tslot);
  const parents = kind === 'derivative' ? derivativeParents(at, body) : undefined;
  const fn = kind === 'derivative' ? derivativeFn(at, body, ctx.registry.functions) : undefined;
  const fnRefusal = fn === undefined ? null : derivativeFunctionRefusal(entry, fn);
  if (fnRefusal) {
    throw new SvcError('invalid_argument', `${at}.derivation.fn: ${fn} is not allowed here: ${fnRefusal.reason}`, {
      field: `${at}.derivation.fn`,
      reason: 'function_not_allowed',
      allowed: fnRefusal.allowed,
    });
  }
  let scope: Scope | null = null;
  if (body.scope !== undefined) {
    const s = body.scope as Record<string, unknown>;
    if (typeof s !== 'object' || s === null || Array.isArray(s) || Object.entries(s).some(([k, v]) => !['user_id', 'agent_id', 'run_id', 'org_id'].includes(k) || typeof v !== 'string')) {
      throw invalidArgument(`${at}.scope`, 'expected {user_id?, agent_id?, run_id?, org_id?} of strings');
    }
    scope = scopeFieldsSet(s as Scope) ?? null;
  }
  let digest: Uint8Array;
  let factCid: string;
  try {
    if (owned) ({ digest, cid: factCid } = owned.encode(body));
    else factCid = b32encode((digest = blake3(encodeCanonical(body as CborValue))));
  } catch (e) {
    throw invalidArgument(at, `cannot be encoded canonically (${(e as Error).message})`);
  }
  return {
    body,
    digest,
    fact_cid: factCid,
    kind: kind as FactKind,
    cell,
    band,
    tslot,
    provenance_class: kind === 'derivative' ? 'deterministic_index' : (entry.provenance_class as ProvenanceClass),
    scope,
    parents,
    fn,
  };
}

/** checkTslot names the bare field `tslot`; a batch refusal names the fact too. */
function atFact(e: unknown, at: string): unknown {
  if (!(e instanceof SvcError) || e.details.field !== 'tslot') return e;
  const field = `${at}.tslot`;
  return new SvcError(e.code, `${at}.${e.message}`, { ...e.details, field }, { status: e.httpStatus });
}

function rootBytes(root: unknown): Uint8Array {
  if (root instanceof Uint8Array) {
    if (root.length !== 32) throw invalidArgument('batch_root', 'expected exactly 32 bytes');
    return root;
  }
  if (!Array.isArray(root) || root.length !== 32 || !root.every((x) => Number.isInteger(x) && x >= 0 && x <= 255)) {
    throw invalidArgument('batch_root', 'expected an array of exactly 32 integers 0..255 (not a hex string)');
  }
  return Uint8Array.from(root);
}

/**
 * Check a batch completely, then append it durably. Order: shape → key standing → each fact
 * (and one scope per batch) → batch root → signature → scope binding and derivative parents
 * (store reads, so only for an authenticated batch) → daily quota; every failure throws before
 * the store is written (a first claim on a scope stays recorded: docs/scopes.md).
 */
export interface AcceptOptions {
  /**
   * A check of the caller's own that reads the store (an alias's entity must exist in the batch's
   * scope): run once the batch is authenticated and its scope binding checked, before anything
   * is written, so what it reveals goes only to a key that signed the batch and may write there.
   */
  beforeAppend?: (scope: Scope | null, attester: string) => Promise<void>;
  /**
   * The request's fact objects belong to this call alone (a request body parsed for it, that no
   * one else holds): their bodies are frozen once checked and encoded only once, here.
   */
  ownsFacts?: boolean;
  /**
   * 'none': the result leaves out `merkle_proofs` (a bulk client built the batch tree itself and
   * needs no copy of it back); default 'all'.
   */
  proofs?: 'all' | 'none';
  /** Told how long the store append took and whether it landed (default: the responder's metrics). */
  onAppend?: (seconds: number, ok: boolean) => void;
}

export async function acceptBatch(ctx: ServiceContext, req: AttestRequest, primitive = 'attest', opts: AcceptOptions = {}): Promise<AttestResult> {
  const { attester, signature } = req;
  if (typeof attester !== 'string' || attester === '') throw new SvcError('unauthorized', 'attester: missing attester key', { field: 'attester' });
  if (typeof signature !== 'string' || signature === '') throw new SvcError('unauthorized', 'signature: missing attester signature', { field: 'signature' });
  const root = rootBytes(req.batch_root);
  if (!Array.isArray(req.facts) || req.facts.length === 0) throw invalidArgument('facts', 'expected a non-empty array');
  if (req.facts.length > MAX_FACTS_PER_BATCH) throw invalidArgument('facts', `at most ${MAX_FACTS_PER_BATCH} facts per batch`);
  const registryCid = req.registry_cid ?? ctx.manifests.registry_cid;
  const schemaCid = req.schema_cid ?? ctx.manifests.schema_cid;
  if (registryCid !== ctx.manifests.registry_cid)
    throw new SvcError('registry_cid_unknown', `registry_cid: ${registryCid} is not the registry in force (see /v1/manifests)`, { field: 'registry_cid' });
  if (schemaCid !== ctx.manifests.schema_cid) throw new SvcError('schema_cid_unknown', `schema_cid: ${schemaCid} is not the schema in force (see /v1/manifests)`, { field: 'schema_cid' });

  // Configuration and the responder's enrollment/revocation records (one store read; none for the responder).
  const writer: AttesterKind = await keyStanding(ctx, attester);
  const nowMs = ctx.now().getTime();
  const owned = opts.ownsFacts === true ? new OwnedBatchEncoder() : undefined;
  const checked = req.facts.map((f, i) => checkFact(ctx, f, `facts[${i}]`, attester, writer, nowMs, owned));
  const scope = batchScope(checked.map((c) => c.scope));

  const tree = owned ? owned.finish() : buildBatchTree(checked.map((c) => c.digest));
  if (!equalBytes(tree.root, root)) {
    throw new SvcError('bad_merkle_proof', `batch_root: merkle root mismatch (rebuilt ${toHex(tree.root)} from the facts' canonical CBOR)`, {
      field: 'batch_root',
      rebuilt_hex: toHex(tree.root),
      rule: 'docs/protocol-notes.md §6',
    });
  }
  let pub: Uint8Array;
  let sig: Uint8Array;
  try {
    pub = b32decode(attester, 32, 'attester');
    sig = b32decode(signature, 64, 'signature');
  } catch (e) {
    throw new SvcError('unauthorized', (e as Error).message, { field: (e as SvcError).details?.field ?? 'signature' });
  }
  const keyVerdict = admitPublicKey(pub);
  if (!keyVerdict.ok) throw new SvcError('bad_signature', `attester: key refused (${keyVerdict.reason})`, { field: 'attester', reason: keyVerdict.reason });
  if (!verifyStrict(sig, attesterDigest(root, registryCid, schemaCid), pub, ctx.ed25519)) {
    throw new SvcError('bad_signature', 'signature: bad signature over blake3(batch_root ‖ registry_cid ‖ schema_cid)', { field: 'signature' });
  }

  // Store reads from here on, so only for an authenticated batch: a claim binds the key that signed.
  if (scope) await checkScopeWrite(ctx, attester, writer, scope);
  const derivatives = checked.flatMap((c, i) => (c.parents ? [{ at: `facts[${i}]`, cell: c.cell, scope: c.scope, fn: c.fn!, value: c.body.value, parents: c.parents }] : []));
  if (derivatives.length > 0)
    await checkDerivatives(
      derivatives,
      (cid) => ctx.store.getFact(cid),
      (b) => ctx.registry.bands.get(b)?.value_kind,
    );
  await opts.beforeAppend?.(scope, attester);

  const proofs = new BatchTree(tree.count, tree.blob);
  const facts: NewFact[] = checked.map((c, i) => ({
    fact_cid: c.fact_cid,
    body: c.body,
    cell: c.cell,
    band: c.band,
    tslot: c.tslot,
    kind: c.kind,
    provenance_class: c.provenance_class,
    scope: c.scope,
    proof: proofs.proof(tree.leafIndex[i]),
  }));
  const release = writer === 'responder' ? undefined : await reserveDailyFacts(ctx, attester, facts.length);
  let res: AppendResult;
  const appendStarted = performance.now();
  let appended = false;
  try {
    res = await ctx.store.append({ facts, batch_root: root, attester: attester, signature: signature, registry_cid: registryCid, schema_cid: schemaCid });
    appended = true;
  } finally {
    release?.();
    const seconds = (performance.now() - appendStarted) / 1000;
    if (opts.onAppend) opts.onAppend(seconds, appended);
    else ctx.metrics.logAppend(seconds, appended);
  }
  const head = await ctx.store.log.latestTreeHead();
  const path = res.log_index < head.tree_size ? await ctx.store.log.inclusionProof(res.log_index, head.tree_size) : [];
  const cids = facts.map((f) => f.fact_cid);
  const cells = [...new Set(facts.map((f) => f.cell))];
  return {
    accepted: true,
    fact_cids: cids,
    duplicates: res.duplicates,
    batch_root: b32encode(root),
    log_index: res.log_index,
    accepted_at: res.accepted_at,
    tree_head: head,
    log_inclusion: { leaf_index: res.log_index, tree_size: head.tree_size, path: path.map(b32encode) },
    ...(opts.proofs === 'none' ? {} : { merkle_proofs: Object.fromEntries(facts.map((f) => [f.fact_cid, f.proof])) }),
    receipt: issueReceipt(ctx, primitive, cells, cids, { merkle_proof: facts[0].proof }),
  };
}

/** The body of a fact minted by this responder (docs/protocol-notes.md §4 and "Facts"). */
export function mintedBody(
  ctx: ServiceContext,
  fields: {
    kind: 'primary' | 'absence';
    cell: string;
    band: string;
    tslot: number;
    value: unknown;
    unit: string;
    provenance: string;
    derivation: { fn: string; sources: string[]; args?: Record<string, unknown>; parents?: string[] };
    absence_reason?: string;
    scope?: Scope;
  },
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    kind: fields.kind,
    cell: fields.cell,
    band: fields.band,
    tslot: fields.tslot,
    value: fields.value ?? null,
    unit: fields.unit,
    provenance: fields.provenance,
    derivation: fields.derivation,
    signer: ctx.keys.publicKeyB32,
    signed_at: isoSeconds(ctx.now()),
    schema_cid: ctx.manifests.schema_cid,
  };
  if (fields.kind === 'absence') body.absence_reason = fields.absence_reason ?? 'unavailable_capability';
  const scope = scopeFieldsSet(fields.scope);
  if (scope) body.scope = scope;
  return body;
}

/**
 * Why acceptBatch would refuse `body` from the responder's own key, or null. A materializer
 * calls it before queueing a minted body, so an upstream value the registry refuses becomes
 * that band's skipped note instead of failing the batch it would have joined (docs/writes.md).
 * Derivative parents are not resolved here (minted facts name none).
 */
export function mintRefusal(ctx: ServiceContext, body: Record<string, unknown>): SvcError | null {
  try {
    checkFact(ctx, body, 'fact', ctx.keys.publicKeyB32, 'responder', ctx.now().getTime());
    return null;
  } catch (e) {
    if (e instanceof SvcError) return e;
    throw e;
  }
}

/** Write facts signed by the responder through the same path as any attester (materialization, derived answers). */
export async function mintFacts(ctx: ServiceContext, bodies: Record<string, unknown>[], primitive = 'mint'): Promise<AttestResult> {
  const digests = bodies.map((b) => blake3(encodeCanonical(b as CborValue)));
  const root = batchRoot(digests);
  const sig = ctx.keys.signer.sign(attesterDigest(root, ctx.manifests.registry_cid, ctx.manifests.schema_cid));
  return acceptBatch(ctx, { batch_root: root, attester: ctx.keys.publicKeyB32, signature: b32encode(sig), facts: bodies }, primitive);
}
