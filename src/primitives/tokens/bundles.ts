/**
 * Memory bundles (docs/memory.md, "Tokens and bundles"): `svc:bundle:<bundle_cid>` names a set of
 * facts. The bundle_cid is content-derived — anchorId over {fact_cids (sorted, unique), label?} —
 * so minting the same set twice yields the same token and nothing new is signed into the log. The
 * definition is kept as one small JSON file per bundle under `<dataDir>/bundles/<bundle_cid>.json`
 * (written to a temp file and renamed, so a reader never sees half a file). The store contract has
 * no bundle table; a file map keeps this primitive self-contained. Limitation: deployments whose
 * replicas do not share `dataDir` (several processes over PostgreSQL) resolve only bundles minted
 * on the same host.
 *
 * Storing a file is metered per client address (address-quota.ts; SVC_BUNDLE_QUOTA_*): only a
 * definition not stored yet is charged, so re-minting a bundle is free, and concurrent mints of
 * one definition write it once.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { anchorId, isAnchorId } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { Receipt } from '../../protocol/receipt.js';
import type { StoredFact } from '../../store/contract.js';
import { isDiskFull, storageFull } from '../../store/disk-full.js';
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

function bundlePath(ctx: ServiceContext, cid: string): string {
  return join(ctx.config.dataDir, 'bundles', `${cid}.json`);
}

const quotaOf = quotaPerOwner<ServiceContext>((ctx) => new AddressQuota(ctx.config.bundleQuota, 'bundles'));
/** Definitions being written, by path: a concurrent mint of the same one waits for that write. */
const writing = new Map<string, Promise<void>>();


/** Store the definition unless it is stored already; a new one is charged to `ip`'s quota. */
async function persist(ctx: ServiceContext, cid: string, def: BundleDefinition, ip: string | undefined): Promise<void> {
  const path = bundlePath(ctx, cid);
  try {
    await stat(path);
    return; // content-addressed: an existing file already holds exactly this definition
  } catch {
    // not there yet
  }
  // No await between this lookup and `writing.set`: one write per definition, charged once.
  const pending = writing.get(path);
  if (pending) return pending;
  const bytes = JSON.stringify({ v: 1, bundle_cid: cid, ...def, created_at: ctx.now().toISOString() }) + '\n';
  const refund = quotaOf(ctx).take(addressKey(ip), Buffer.byteLength(bytes), ctx.now().getTime());
  const write = (async () => {
    const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await mkdir(join(ctx.config.dataDir, 'bundles'), { recursive: true });
      await writeFile(tmp, bytes, { mode: 0o644 });
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => {}); // a partial file (full disk) must not stay
      throw isDiskFull(err) ? storageFull('bundles', err) : err;
    }
  })();
  writing.set(path, write);
  try {
    await write;
  } catch (err) {
    refund();
    throw err;
  } finally {
    writing.delete(path);
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
  let raw: string;
  try {
    raw = await readFile(bundlePath(ctx, cid), 'utf8');
  } catch {
    throw notFound('unknown bundle_cid');
  }
  let def: BundleDefinition;
  try {
    const j = JSON.parse(raw) as Record<string, unknown>;
    def = { fact_cids: j.fact_cids as string[], ...(typeof j.label === 'string' ? { label: j.label } : {}) };
    if (!Array.isArray(def.fact_cids) || !def.fact_cids.every((c) => typeof c === 'string')) throw new Error('shape');
  } catch {
    throw notFound('stored definition is unreadable');
  }
  // The file is trusted only as far as it re-derives its own name.
  if (bundleCidOf(def) !== cid) throw notFound('stored definition does not hash to its bundle_cid');
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
    receipt: issueReceipt(ctx, 'memory_bundle_resolve', [...new Set(present.map((f) => f.cell))], present.map((f) => f.fact_cid), {
      merkle_proof: present[0]?.proof, cost: { credits: 0, was_cached: false },
    }),
  };
}
