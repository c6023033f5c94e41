/** Transparency-log primitives (docs/protocol-notes.md §6 and "Transparency log"): tree head, inclusion, consistency, witnesses. */
import { AddressQuota, addressKey, quotaPerOwner } from '../../lib/address-quota.js';
import { b32decode, b32encode } from '../../protocol/base32.js';
import { fromHex, toHex } from '../../protocol/bytes.js';
import { decodeTrusted, type CborValue } from '../../protocol/cbor.js';
import { verifyStrict, admitPublicKey } from '../../protocol/ed25519.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { leafHash } from '../../protocol/log-tree.js';
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import { witnessDigest } from '../../protocol/tree-head.js';
import { bodyScope, scopeKey } from '../../store/entry.js';
import type { ServiceContext } from '../context/context.js';
import { mayReadScope, type Authorization } from '../scopes/access.js';

function sizeArg(field: string, v: unknown, max: number): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw invalidArgument(field, 'expected a non-negative integer');
  if (n > max) throw invalidArgument(field, `${n} is beyond the current tree size ${max}`);
  return n;
}

/** A 32-byte digest given as b32 (52 chars) or lowercase hex (64 chars). */
function digestArg(field: string, v: unknown): Uint8Array {
  if (typeof v === 'string' && /^[0-9a-f]{64}$/.test(v)) return fromHex(v);
  if (typeof v === 'string') return b32decode(v, 32, field);
  throw invalidArgument(field, 'expected a 32-byte digest as b32 or hex');
}

export async function treeHead(ctx: ServiceContext) {
  const sth = await ctx.store.log.latestTreeHead();
  return {
    ...sth,
    root_hex: toHex(b32decode(sth.root, 32)),
    rule: 'Ed25519 over H(stream("sth") ‖ seg(1,u64be(tree_size)) ‖ seg(2,root) ‖ seg(3,signed_at) ‖ seg(4,responder key)); see /v1/verifier_spec',
  };
}

export async function inclusion(ctx: ServiceContext, q: { index?: unknown; entry_hash?: unknown; tree_size?: unknown }) {
  const size = await ctx.store.log.size();
  const treeSize = q.tree_size === undefined ? size : sizeArg('tree_size', q.tree_size, size);
  let index: number;
  if (q.index !== undefined && q.entry_hash !== undefined) throw invalidArgument('index', 'give either index or entry_hash, not both');
  if (q.index !== undefined) {
    index = sizeArg('index', q.index, Number.MAX_SAFE_INTEGER);
  } else if (q.entry_hash !== undefined) {
    const h = digestArg('entry_hash', q.entry_hash);
    const found = await ctx.store.log.leafIndexOf(h);
    if (found === null) throw new SvcError('cid_not_found', 'entry_hash: no log entry has this leaf hash (leaf hash = H(0x00 ‖ entry))', { field: 'entry_hash' });
    index = found;
  } else {
    throw invalidArgument('index', 'give index or entry_hash');
  }
  if (index >= treeSize) throw invalidArgument('index', `${index} is not below tree_size ${treeSize}`);
  const entry = await ctx.store.log.entry(index);
  if (!entry) throw new SvcError('cid_not_found', `index: no log entry ${index}`, { field: 'index' });
  const path = await ctx.store.log.inclusionProof(index, treeSize);
  const root = await ctx.store.log.root(treeSize);
  return {
    leaf_index: index,
    tree_size: treeSize,
    leaf_hash: b32encode(leafHash(entry)),
    path: path.map(b32encode),
    root: b32encode(root),
    rule: 'RFC 9162 §2.1.3.2 with BLAKE3; leaf hash = H(0x00 ‖ entry); digests in b32',
  };
}

export async function consistency(ctx: ServiceContext, q: { first?: unknown; second?: unknown }) {
  const size = await ctx.store.log.size();
  const second = q.second === undefined ? size : sizeArg('second', q.second, size);
  if (q.first === undefined) throw invalidArgument('first', 'is required');
  const first = sizeArg('first', q.first, second);
  const path = await ctx.store.log.consistencyProof(first, second);
  return {
    first,
    second,
    first_root: b32encode(await ctx.store.log.root(first)),
    second_root: b32encode(await ctx.store.log.root(second)),
    path: path.map(b32encode),
    rule: 'RFC 9162 §2.1.4.2 with BLAKE3; digests in b32',
  };
}

const toJson = (v: CborValue): unknown =>
  v instanceof Uint8Array ? b32encode(v) : Array.isArray(v) ? v.map(toJson) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x as CborValue)])) : v;

/** The distinct scopes of an entry's facts (none for a public entry). */
function entryScopes(facts: unknown): Scope[] {
  const byKey = new Map<string, Scope>();
  for (const f of Array.isArray(facts) ? facts : []) {
    const s = f && typeof f === 'object' ? bodyScope(f as Record<string, unknown>) : null;
    if (s) byKey.set(scopeKey(s), s);
  }
  return [...byKey.values()];
}

/**
 * One log entry, decoded for auditors (bytes as b32). An entry holding scoped facts is private:
 * anyone gets what a witness or verifier of the log needs (index, leaf hash, batch root,
 * attester and its signature, accepted_at, fact count), never the bodies, their cids or the
 * scope tuple; the whole entry goes only to a bearer for its one scope (`authorization`).
 * The leaf hash is all that inclusion and consistency proofs cover, so the log stays checkable.
 */
export async function logEntry(ctx: ServiceContext, indexArg: unknown, authorization?: Authorization) {
  const size = await ctx.store.log.size();
  const index = sizeArg('index', indexArg, Number.MAX_SAFE_INTEGER);
  if (index >= size) throw new SvcError('cid_not_found', `index: the log has ${size} entries`, { field: 'index' });
  const entry = await ctx.store.log.entry(index);
  if (!entry) throw new SvcError('cid_not_found', `index: no log entry ${index}`, { field: 'index' });
  const decoded = decodeTrusted(entry) as Record<string, CborValue>;
  const leaf_hash = b32encode(leafHash(entry));
  const scopes = entryScopes(decoded.facts);
  const whole = scopes.length === 0 || (scopes.length === 1 && (await mayReadScope(ctx, authorization, scopes[0])));
  if (whole) return { index, leaf_hash, cbor_hex: toHex(entry), entry: toJson(decoded) };
  const { v, type, accepted_at, attester, signature, batch_root, registry_cid, schema_cid } = decoded;
  return {
    index,
    leaf_hash,
    private: true,
    entry: toJson({ v, type, accepted_at, attester, signature, batch_root, registry_cid, schema_cid, fact_count: Array.isArray(decoded.facts) ? decoded.facts.length : 0 } as CborValue),
    note: 'This entry holds facts written under a scope: its bytes (cbor_hex) and bodies go only to a bearer for that scope (docs/scopes.md). Inclusion and consistency proofs cover its leaf_hash as for any entry.',
  };
}

export interface WitnessRequest {
  tree_size: number;
  root: string;
  witness: string;
  signature: string;
  operator?: string;
}

const witnessQuota = quotaPerOwner<ServiceContext>((ctx) => new AddressQuota(ctx.config.witnessQuota, 'co-signatures by unlisted witness keys'));

/**
 * Record a witness co-signature; refused unless the root is this log's root at that size. A key
 * the operator does not list costs nothing to make, so its co-signatures are metered per client
 * address (SVC_WITNESS_QUOTA_*): otherwise throwaway keys grow the listing without bound.
 */
export async function submitWitness(ctx: ServiceContext, req: WitnessRequest, ip?: string) {
  const size = await ctx.store.log.size();
  const treeSize = sizeArg('tree_size', req.tree_size, size);
  const root = digestArg('root', req.root);
  const key = b32decode(req.witness, 32, 'witness');
  const sig = b32decode(req.signature, 64, 'signature');
  const ours = await ctx.store.log.root(treeSize);
  if (toHex(ours) !== toHex(root)) {
    throw new SvcError('bad_merkle_proof', `root: not this log's root at tree_size ${treeSize}`, { field: 'root', expected: b32encode(ours) });
  }
  const verdict = admitPublicKey(key);
  if (!verdict.ok) throw new SvcError('bad_signature', `witness: key refused (${verdict.reason})`, { field: 'witness' });
  if (!verifyStrict(sig, witnessDigest(treeSize, root, key, ctx.config.prefix), key, ctx.ed25519)) {
    throw new SvcError('bad_signature', 'signature: witness co-signature does not verify over H(stream("witness") ‖ size ‖ root ‖ witness key)', { field: 'signature' });
  }
  // The label as sent is kept; what it counts for is decided when listed (asWitnessOf).
  const operator = typeof req.operator === 'string' && req.operator.trim() !== '' ? req.operator.trim().slice(0, 200) : req.witness;
  const record = { tree_size: treeSize, root: b32encode(root), witness: req.witness, signature: req.signature, operator, received_at: isoSeconds(ctx.now()) };
  const listed = Object.prototype.hasOwnProperty.call(ctx.config.witnessKeys, req.witness);
  const refund = listed ? () => undefined : witnessQuota(ctx).take(addressKey(ip), 0, ctx.now().getTime());
  try {
    await ctx.store.addWitness(record);
  } catch (err) {
    refund();
    throw err;
  }
  return { accepted: true, ...asWitnessOf(ctx, record) };
}

/**
 * A co-signature as listed. Anyone can make keys and name an operator, so a key counts as an
 * operator's only when the operator of this responder lists it (SVC_WITNESS_KEYS), and then under
 * the configured name; any other key is `verified: false` with the label it sent.
 */
function asWitnessOf<W extends { witness: string; operator: string }>(ctx: ServiceContext, w: W): W & { verified: boolean } {
  const known = Object.prototype.hasOwnProperty.call(ctx.config.witnessKeys, w.witness) ? ctx.config.witnessKeys[w.witness] : undefined;
  return known === undefined ? { ...w, verified: false } : { ...w, operator: known, verified: true };
}

export const WITNESS_PAGE = { default: 100, max: 1000 } as const;

/** A page of `rows` after the cursor `<tree_size>:<witness>` (rows in the store's order: tree_size, witness). */
function pageOf<W extends { tree_size: number; witness: string }>(rows: W[], after: { size: number; key: string } | null, limit: number) {
  const start = after === null ? 0 : rows.findIndex((w) => w.tree_size > after.size || (w.tree_size === after.size && w.witness > after.key));
  const page = start < 0 ? [] : rows.slice(start, start + limit);
  const more = start >= 0 && start + limit < rows.length;
  const last = page[page.length - 1];
  return { page, total: rows.length, ...(more && last ? { next_after: `${last.tree_size}:${last.witness}` } : {}) };
}

/** GET /v1/log/witnesses?limit=&after=: the co-signatures, each list paged; the counts cover all. */
export async function listWitnesses(ctx: ServiceContext, q: { limit?: unknown; after?: unknown } = {}) {
  const limit = q.limit === undefined ? WITNESS_PAGE.default : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > WITNESS_PAGE.max) throw invalidArgument('limit', `expected an integer 1..${WITNESS_PAGE.max}`);
  let after: { size: number; key: string } | null = null;
  if (q.after !== undefined) {
    const m = typeof q.after === 'string' ? /^(\d{1,15}):([a-z2-7]{52})$/.exec(q.after) : null;
    if (!m) throw invalidArgument('after', 'expected <tree_size>:<witness key>, the next_after of a previous page');
    after = { size: Number(m[1]), key: m[2] };
  }
  const all = (await ctx.store.witnesses()).map((w) => asWitnessOf(ctx, w));
  const known = all.filter((w) => w.verified);
  const unverified = all.filter((w) => !w.verified);
  const k = pageOf(known, after, limit);
  const u = pageOf(unverified, after, limit);
  return {
    witnesses: k.page,
    total: k.total,
    ...(k.next_after ? { next_after: k.next_after } : {}),
    independent_operators: new Set(known.map((w) => w.operator)).size,
    distinct_witness_keys: new Set(known.map((w) => w.witness)).size,
    unverified: { witnesses: u.page, total: u.total, ...(u.next_after ? { next_after: u.next_after } : {}), distinct_witness_keys: new Set(unverified.map((w) => w.witness)).size },
    paging: `limit per list (default ${WITNESS_PAGE.default}, at most ${WITNESS_PAGE.max}); pass a list's next_after as after for its next page`,
    rule: "only witness keys this responder's operator lists (SVC_WITNESS_KEYS, key=operator name) count, once per operator name; co-signatures by other keys verify but are listed under unverified and count for nothing",
  };
}
