/**
 * Memory bundles (docs/memory.md, "Tokens and bundles"): `svc:bundle:<bundle_cid>` names a set of
 * facts. The bundle_cid is content-derived — anchorId over {fact_cids (sorted, unique), label?} —
 * so minting the same set twice yields the same token and nothing new is signed into the log. The
 * definition is kept in the store's document facility (contract.ts, DocumentStore; kind `bundle`,
 * keyed by bundle_cid; the text is the JSON `{v: 1, bundle_cid, fact_cids, label?, created_at}`),
 * durable before the mint answers, so every responder of a deployment (PostgreSQL: one schema)
 * resolves a bundle any of them minted. A stored text is trusted only as far as it re-derives its
 * own bundle_cid.
 *
 * Legacy: before bundles moved into the store, each definition was a file
 * `<dataDir>/bundles/<bundle_cid>.json`. On a miss in the store that file is still read, and when
 * it holds a definition hashing to its name it is imported into the store (the file stays; the
 * store's copy is found first from then on), so existing data directories keep their bundles.
 * Nothing writes such files any more.
 *
 * Storing a definition is metered per client address (address-quota.ts; SVC_BUNDLE_QUOTA_*): only
 * a definition not stored yet is charged, so re-minting a bundle is free; concurrent mints of one
 * definition in a process store it once, and a mint that another responder beat to the store is
 * refunded.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { anchorId, isAnchorId } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { Receipt } from '../../protocol/receipt.js';
import type { Store, StoredFact } from '../../store/contract.js';
import { AddressQuota, addressKey, quotaPerOwner } from '../../lib/address-quota.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import { READ_CONCURRENCY, mapLimit } from '../reads/common.js';
import { factByCid } from '../reads/series.js';

export const MAX_BUNDLE_FACTS = 256;
export const MAX_BUNDLE_LABEL = 200;

/** The hashed definition of a bundle. */
export interface BundleDefinition {
  fact_cids: string[];
  label?: string;
}

/** bundle_cid of a definition: 16-byte anchor over its canonical CBOR. */
export function bundleCidOf(def: BundleDefinition): string {
  return anchorId(def.label === undefined ? { fact_cids: def.fact_cids } : { fact_cids: def.fact_cids, label: def.label });
}

/** The store's document kind holding bundle definitions. */
const DOCUMENT_KIND = 'bundle';

/** Where a bundle definition was kept before bundles moved into the store (read on a miss only). */
function legacyPath(ctx: ServiceContext, cid: string): string {
  return join(ctx.config.dataDir, 'bundles', `${cid}.json`);
}

/** The definition a stored text holds when it hashes to `cid`; otherwise why it cannot be served. */
function parseDefinition(text: string, cid: string): { def: BundleDefinition } | { unusable: string } {
  let def: BundleDefinition;
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    def = { fact_cids: j.fact_cids as string[], ...(typeof j.label === 'string' ? { label: j.label } : {}) };
    if (!Array.isArray(def.fact_cids) || !def.fact_cids.every((c) => typeof c === 'string')) throw new Error('shape');
  } catch {
    return { unusable: 'stored definition is unreadable' };
  }
  // A stored text is trusted only as far as it re-derives its own name.
  if (bundleCidOf(def) !== cid) return { unusable: 'stored definition does not hash to its bundle_cid' };
  return { def };
}

/**
 * The stored definition of bundle `cid`, or null when none is stored: the store's document, else
 * a legacy file of this data directory, imported into the store when it hashes to its name (best
 * effort: an import that fails, a full disk say, is tried again at the next read).
 */
async function loadDefinition(ctx: ServiceContext, cid: string): Promise<ReturnType<typeof parseDefinition> | null> {
  const kept = await ctx.store.documents.get(DOCUMENT_KIND, cid);
  if (kept !== null) return parseDefinition(kept, cid);
  let legacy: string;
  try {
    legacy = await readFile(legacyPath(ctx, cid), 'utf8');
  } catch {
    return null; // no legacy file either
  }
  const parsed = parseDefinition(legacy, cid);
  if ('def' in parsed) await ctx.store.documents.putOnce(DOCUMENT_KIND, cid, legacy).catch(() => undefined);
  return parsed;
}

const quotaOf = quotaPerOwner<ServiceContext>((ctx) => new AddressQuota(ctx.config.bundleQuota, 'bundles'));
/** Definitions being stored, per store and bundle_cid: a concurrent mint of the same one waits for that write. */
const writing = new WeakMap<Store, Map<string, Promise<void>>>();

/** Store the definition unless it is stored already; a new one is charged to `ip`'s quota. */
async function persist(ctx: ServiceContext, cid: string, def: BundleDefinition, ip: string | undefined): Promise<void> {
  // Content-addressed: a stored definition (or an imported legacy file) is exactly this one.
  const stored = await loadDefinition(ctx, cid);
  if (stored !== null && 'def' in stored) return;
  let mine = writing.get(ctx.store);
  if (!mine) writing.set(ctx.store, (mine = new Map()));
  // No await between this lookup and `mine.set`: one write per definition in this process, charged once.
  const pending = mine.get(cid);
  if (pending) return pending;
  const text = JSON.stringify({ v: 1, bundle_cid: cid, ...def, created_at: ctx.now().toISOString() }) + '\n';
  const refund = quotaOf(ctx).take(addressKey(ip), Buffer.byteLength(text), ctx.now().getTime());
  const write = (async () => {
    // Durable before it resolves; a full disk is the store's storage_full (component `documents`).
    const outcome = await ctx.store.documents.putOnce(DOCUMENT_KIND, cid, text);
    if (outcome === 'existing') refund(); // another responder stored it meanwhile: nothing new here
  })();
  mine.set(cid, write);
  try {
    await write;
  } catch (err) {
    refund();
    throw err;
  } finally {
    mine.delete(cid);
  }
}

function tokens(ctx: ServiceContext, cid: string) {
  return { token: `${ctx.config.prefix}:bundle:${cid}`, legacy_token: `memb:${cid}` };
}

/**
 * A bundle to mint, as the operation's schema admits it: 1..MAX_BUNDLE_FACTS fact_cids (each
 * checked here as it is read), label 1..MAX_BUNDLE_LABEL characters.
 */
export interface BundleRequest {
  fact_cids: string[];
  label?: string;
}

/** Mint (or re-mint) a bundle over existing public facts; every cid must resolve here (a scoped one does not: factByCid). */
export async function mintBundle(ctx: ServiceContext, req: BundleRequest, caller: { ip?: string } = {}) {
  const list = req.fact_cids;
  const found = await mapLimit(list, READ_CONCURRENCY, (cid, i) => factByCid(ctx, cid, `fact_cids[${i}]`));
  const facts = new Map<string, StoredFact>(found.map((r) => [r!.fact.fact_cid, r!.fact]));
  const def: BundleDefinition = { fact_cids: [...facts.keys()].sort(), ...(req.label !== undefined ? { label: req.label } : {}) };
  const bundle_cid = bundleCidOf(def);
  await persist(ctx, bundle_cid, def, caller.ip);
  const first = facts.get(def.fact_cids[0])!;
  const cells = [...new Set(def.fact_cids.map((c) => facts.get(c)!.cell))];
  return {
    ...tokens(ctx, bundle_cid),
    bundle_cid,
    fact_cids: def.fact_cids,
    ...(def.label !== undefined ? { label: def.label } : {}),
    n_facts: def.fact_cids.length,
    receipt: issueReceipt(ctx, 'memory_bundle', cells, def.fact_cids, { merkle_proof: first.proof, cost: { credits: 0, was_cached: false } }),
  };
}

/**
 * Bundles citing the evidence of a statement the responder has just assembled (an EUDR
 * due-diligence statement): the fact_cids are facts it read itself, so none is looked up again,
 * and the statement, not the address, is the metered unit, so no bundle quota is charged. Split
 * into bundles of at most MAX_BUNDLE_FACTS, in sorted order; returns their tokens.
 */
export async function keepEvidenceBundles(ctx: ServiceContext, factCids: readonly string[], label: string): Promise<string[]> {
  const sorted = [...new Set(factCids)].sort();
  const out: string[] = [];
  for (let i = 0; i < sorted.length; i += MAX_BUNDLE_FACTS) {
    const part = sorted.length > MAX_BUNDLE_FACTS ? ` (part ${i / MAX_BUNDLE_FACTS + 1} of ${Math.ceil(sorted.length / MAX_BUNDLE_FACTS)})` : '';
    const def: BundleDefinition = { fact_cids: sorted.slice(i, i + MAX_BUNDLE_FACTS), label: `${label}${part}`.slice(0, MAX_BUNDLE_LABEL) };
    const cid = bundleCidOf(def);
    const text = JSON.stringify({ v: 1, bundle_cid: cid, ...def, created_at: ctx.now().toISOString() }) + '\n';
    await ctx.store.documents.putOnce(DOCUMENT_KIND, cid, text);
    out.push(tokens(ctx, cid).token);
  }
  return out;
}

/** The bundle_cid named by `svc:bundle:<cid>`, `memb:<cid>` or a bare bundle_cid. */
export function bundleCidFromToken(ctx: ServiceContext, token: unknown, field = 'token'): string {
  if (typeof token !== 'string') throw invalidArgument(field, 'expected svc:bundle:<bundle_cid>');
  const cid = token.startsWith(`${ctx.config.prefix}:bundle:`) ? token.slice(ctx.config.prefix.length + 8) : token.startsWith('memb:') ? token.slice(5) : token;
  if (!isAnchorId(cid)) throw invalidArgument(field, `expected ${ctx.config.prefix}:bundle:<bundle_cid> (26 lowercase base32 characters)`);
  return cid;
}

export interface BundleResolution {
  token: string;
  legacy_token: string;
  bundle_cid: string;
  label?: string;
  facts: ServedFact[];
  /** fact_cids of the definition that no longer resolve here (never silently dropped). */
  missing: string[];
  receipt: Receipt;
}

/** Resolve a bundle token to its served facts; unknown (or altered) definitions → cid_not_found. */
export async function resolveBundle(ctx: ServiceContext, token: unknown, field = 'token'): Promise<BundleResolution> {
  const cid = bundleCidFromToken(ctx, token, field);
  const notFound = (reason: string) => new SvcError('cid_not_found', `${field}: no bundle stored under ${cid} here`, { field, bundle_cid: cid, reason });
  const stored = await loadDefinition(ctx, cid);
  if (stored === null) throw notFound('unknown bundle_cid');
  if ('unusable' in stored) throw notFound(stored.unusable);
  const def = stored.def;
  const read = await mapLimit(def.fact_cids, READ_CONCURRENCY, (c) => ctx.store.readFact(c));
  // Bundles name public facts (minting refuses scoped ones); a scoped fact in an older bundle
  // is listed missing, exactly as a cid never stored here, so a bundle reveals nothing of a scope.
  const visible = read.map((r) => (r!.fact && !r!.fact.scope ? r!.fact : null));
  const present = visible.filter((f): f is StoredFact => f !== null);
  const missing = def.fact_cids.filter((_, i) => visible[i] === null);
  const facts = await Promise.all(present.map((f) => serveFact(ctx, f)));
  return {
    ...tokens(ctx, cid),
    bundle_cid: cid,
    ...(def.label !== undefined ? { label: def.label } : {}),
    facts,
    missing,
    receipt: issueReceipt(
      ctx,
      'memory_bundle_resolve',
      [...new Set(present.map((f) => f.cell))],
      present.map((f) => f.fact_cid),
      {
        merkle_proof: present[0]?.proof,
        cost: { credits: 0, was_cached: false },
      },
    ),
  };
}
