/**
 * Derivations (docs/writes.md, "Derivations"): `derive` writes one derivative
 * fact through the ordinary write path (acceptBatch checks its parents, cell, function and, for
 * a recomputable function, its value) and answers with the derivation and the derived_from
 * edges it states; `derivedList` pages the public derivatives one key signed.
 */
import { contentId, factBody } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { scopeFieldsSet, type Scope } from '../../protocol/receipt.js';
import { acceptBatch, type AttestRequest } from '../write/attest.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact } from '../facts/facts-view.js';
import { DERIVE_FUNCTIONS } from '../write/derive-functions.js';

export interface DerivedEdge {
  edge_cid: string;
  kind: 'derived_from';
  from: string;
  to: string;
}

/** The derived_from edges a derivative states, as the memory index projects them (store/memory.ts). */
export function derivedFromEdges(factCid: string, parents: readonly string[]): DerivedEdge[] {
  return [...new Set(parents)].map((to) => ({ edge_cid: contentId({ kind: 'derived_from', from: factCid, to }), kind: 'derived_from', from: factCid, to }));
}

/** POST /v1/derive: the attest envelope with exactly one fact, a derivative. */
export async function derive(ctx: ServiceContext, req: AttestRequest) {
  // Exactly one object in facts: the operation's schema (minItems = maxItems = 1).
  const raw = req.facts[0];
  if (raw.kind !== 'derivative') throw invalidArgument('facts[0].kind', `derive writes derivative facts only (kind: "derivative", derivation: {fn, parents}); got ${JSON.stringify(raw.kind)}`);
  const res = await acceptBatch(ctx, req, 'derive');
  const body = factBody(raw) as Record<string, unknown>;
  const d = body.derivation as { fn: string; parents: string[] };
  const cid = res.fact_cids[0];
  const cell = body.cell as string;
  const edges = derivedFromEdges(cid, d.parents);
  const scope = scopeFieldsSet(body.scope as Scope | undefined);
  const receipt = issueReceipt(ctx, 'derive', [cell], [cid], {
    merkle_proof: res.merkle_proofs?.[cid],
    edge_cids: edges.map((e) => e.edge_cid),
    ...(scope ? { scope } : {}),
  });
  return {
    accepted: true as const,
    derivation: {
      fact_cid: cid,
      cell,
      band: body.band as string,
      fn: d.fn,
      parents: d.parents,
      value: body.value,
      // Accepted, so a recomputable function's value matched its recomputation.
      recomputed: DERIVE_FUNCTIONS.has(d.fn),
    },
    edges,
    fact_cids: res.fact_cids,
    duplicates: res.duplicates,
    batch_root: res.batch_root,
    log_index: res.log_index,
    accepted_at: res.accepted_at,
    merkle_proofs: res.merkle_proofs,
    tree_head: res.tree_head,
    log_inclusion: res.log_inclusion,
    receipt,
  };
}

/** A page of derivatives, as the operation's schema admits it (key form, bounds and the default limit filled in). */
export interface DerivedListRequest {
  attester: string;
  after?: number;
  limit: number;
}

export const DERIVED_LIMIT_DEFAULT = 50;
export const DERIVED_LIMIT_MAX = 200;

/**
 * GET /v1/derived: public derivative facts from batches `attester` signed, in log order after
 * `after` (a previous page's next_after), each served with its own receipt, and one receipt
 * binding the page. Scoped derivatives are never listed here.
 */
export async function derivedList(ctx: ServiceContext, req: DerivedListRequest) {
  const { limit } = req;
  const memory = ctx.store.memory;
  if (!memory) throw new SvcError('not_yet_implemented', 'derived: this store does not index derivations yet', { workaround: 'read a derivative by its fact_cid (GET /v1/fetch)' });
  const rows = await memory.derivedBy({ scope: null, attester: req.attester, after: req.after, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const stored = await Promise.all(page.map((r) => ctx.store.getFact(r.fact_cid)));
  const facts = await Promise.all(stored.filter((f): f is NonNullable<typeof f> => f !== null).map((f) => serveFact(ctx, f)));
  const cids = facts.map((f) => f.fact_cid);
  const cells = [...new Set(facts.map((f) => f.cell as string))];
  return {
    attester: req.attester,
    count: facts.length,
    facts,
    ...(rows.length > limit ? { next_after: page[page.length - 1].seq } : {}),
    receipt: issueReceipt(ctx, 'derived', cells, cids),
  };
}
