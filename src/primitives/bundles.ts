/**
 * Memory bundles (spec 2.5): `svc:bundle:<bundle_cid>` names a set of facts. The bundle_cid is
 * content-derived — anchorId over {fact_cids (sorted, unique), label?} — so minting the same set
 * twice yields the same token and nothing new is signed into the log. The definition is kept as
 * one small JSON file per bundle under `<dataDir>/bundles/<bundle_cid>.json` (written to a temp
 * file and renamed, so a reader never sees half a file). The store contract has no bundle table;
 * a file map keeps this primitive self-contained. Limitation: deployments whose replicas do not
 * share `dataDir` (several processes over PostgreSQL) resolve only bundles minted on the same host.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { anchorId, isAnchorId } from '../protocol/cid.js';
import { SvcError, invalidArgument } from '../protocol/errors.js';
import type { Receipt } from '../protocol/receipt.js';
import type { StoredFact } from '../store/contract.js';
import { issueReceipt, type ServiceContext } from './context.js';
import { serveFact, type ServedFact } from './facts-view.js';
import { READ_CONCURRENCY, mapLimit } from './reads/common.js';
import { factByCid } from './reads/series.js';

export const MAX_BUNDLE_FACTS = 256;
const MAX_LABEL = 200;

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

async function persist(ctx: ServiceContext, cid: string, def: BundleDefinition): Promise<void> {
  const path = bundlePath(ctx, cid);
  try {
    await stat(path);
    return; // content-addressed: an existing file already holds exactly this definition
  } catch {
    // not there yet
  }
  await mkdir(join(ctx.config.dataDir, 'bundles'), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(tmp, JSON.stringify({ v: 1, bundle_cid: cid, ...def, created_at: ctx.now().toISOString() }) + '\n', { mode: 0o644 });
  await rename(tmp, path);
}

function tokens(ctx: ServiceContext, cid: string) {
  return { token: `${ctx.config.prefix}:bundle:${cid}`, legacy_token: `memb:${cid}` };
}

/** Mint (or re-mint) a bundle over existing facts; every cid must resolve here. */
export async function mintBundle(ctx: ServiceContext, req: { fact_cids: unknown; label?: unknown }) {
  const list = req.fact_cids;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_BUNDLE_FACTS) throw invalidArgument('fact_cids', `expected 1..${MAX_BUNDLE_FACTS} fact_cids`);
  if (req.label !== undefined && (typeof req.label !== 'string' || req.label.length === 0 || req.label.length > MAX_LABEL)) {
    throw invalidArgument('label', `expected a string of 1..${MAX_LABEL} characters`);
  }
  const found = await mapLimit(list, READ_CONCURRENCY, (cid, i) => factByCid(ctx, cid, `fact_cids[${i}]`));
  const facts = new Map<string, StoredFact>(found.map((r) => [r!.fact.fact_cid, r!.fact]));
  const def: BundleDefinition = { fact_cids: [...facts.keys()].sort(), ...(req.label !== undefined ? { label: req.label as string } : {}) };
  const bundle_cid = bundleCidOf(def);
  await persist(ctx, bundle_cid, def);
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
  const present = read.map((r) => r!.fact).filter((f): f is StoredFact => f !== null);
  const missing = def.fact_cids.filter((_, i) => read[i]!.fact === null);
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
