/**
 * Typed, bi-temporal edges between records (docs/memory.md). An edge is stated by a signed
 * record: a `memory.edge` record (its fact_cid is the edge_cid), or a derivative's own
 * `derivation.parents` (derived_from) or a fact's supersession (supersedes), whose edge_cid is
 * contentId({kind, from, to}). Valid time is what the record says; transaction time is when this
 * responder accepted it. A later record closes an earlier edge's valid time; nothing is erased,
 * so an as-of query in transaction time sees the edge as it stood then.
 */
import { contentId, isFactCid } from '../../protocol/cid.js';
import { invalidArgument } from '../../protocol/errors.js';
import { isoSeconds, type AsOf, type Scope } from '../../protocol/receipt.js';
import { parseRfc3339 } from '../../protocol/rfc3339.js';
import { EDGE_BAND, recordRef, type EdgeRow, type EdgeType } from '../../store/memory.js';
import { acceptBatch, type AttestRequest } from '../write/attest.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { requestScope } from '../scopes/request.js';
import { recordEdgeConflicts } from './edge-conflicts.js';
import { scopeKey } from '../../store/entry.js';

export const MAX_EDGES_PER_WRITE = 256;
export const MAX_EDGES_RETURNED = 500;

/** Write 1..256 `memory.edge` records signed by the caller (the attest envelope). */
export async function writeEdges(ctx: ServiceContext, req: AttestRequest) {
  const facts = req?.facts;
  if (!Array.isArray(facts) || facts.length === 0) throw invalidArgument('facts', 'expected 1..256 memory.edge records');
  if (facts.length > MAX_EDGES_PER_WRITE) throw invalidArgument('facts', `at most ${MAX_EDGES_PER_WRITE} edges per write`);
  facts.forEach((f, i) => {
    if ((f as { band?: unknown })?.band !== EDGE_BAND) throw invalidArgument(`facts[${i}].band`, `expected ${EDGE_BAND}`);
  });
  const res = await acceptBatch(ctx, req, 'edges');
  // Edges the caller's key may not close are contradicted instead (edge-conflicts.ts).
  const values = facts.map((f) => (f as { value: { type: string; from: string; to: string; invalidates?: unknown } }).value);
  const scope = requestScope((facts[0] as { scope?: unknown }).scope) ?? null;
  const contradicts = await recordEdgeConflicts(ctx, req.attester as string, scope, res.fact_cids, values);
  return {
    ...res,
    /** Responder-signed contradicts edges recorded because this write disagreed with another key's edges. */
    contradicts,
    edges: res.fact_cids.map((edge_cid, i) => {
      const v = (facts[i] as { value: Record<string, unknown> }).value;
      return { edge_cid, type: v.type, from: v.from, to: v.to, valid_from: v.valid_from, ...(v.valid_to ? { valid_to: v.valid_to } : {}) };
    }),
  };
}

/** An edge recall, as the operation's schema admits it (types and bounds already checked). */
export interface EdgesRecallRequest {
  record: string;
  direction: 'out' | 'in' | 'both';
  types?: readonly EdgeType[];
  valid_at?: string;
  recorded_at?: string;
  scope?: Record<string, string | undefined>;
  limit: number;
}

const iso = (s: number | null) => (s === null ? null : isoSeconds(s * 1000));

/** An edge as served: times in RFC 3339, with the end that holds as of the query. */
function served(e: EdgeRow) {
  const ends = [e.valid_to, e.closed_at].filter((x): x is number => x !== null);
  return {
    edge_cid: e.edge_cid,
    type: e.kind,
    from: e.from,
    to: e.to,
    valid_from: iso(e.valid_from),
    valid_to: iso(e.valid_to),
    closed_at: iso(e.closed_at),
    closed_by: e.closed_by,
    effective_valid_to: ends.length > 0 ? iso(Math.min(...ends)) : null,
    stated_by: e.stated_by,
    attester: e.attester,
    recorded_at: e.recorded_at,
  };
}

/**
 * Edges into or out of a record, filtered by type and both times. Besides the memory index, a
 * fact's own supersession link (out) is listed as a `supersedes` edge, as recall shows it.
 */
export async function recallEdges(ctx: ServiceContext, req: EdgesRecallRequest) {
  const record = recordRef(req.record);
  if (!record) throw invalidArgument('record', 'expected a fact_cid, an entity_cid, or an svc:fact:/svc:entity: token');
  const scope: Scope | null = requestScope(req.scope) ?? null;
  const { direction, types, limit } = req;
  let validAt: number | undefined;
  if (req.valid_at !== undefined) {
    const ms = parseRfc3339(req.valid_at);
    if (!Number.isFinite(ms)) throw invalidArgument('valid_at', 'expected an RFC 3339 timestamp');
    validAt = Math.floor(ms / 1000);
  }
  let recordedAt: string | undefined;
  if (req.recorded_at !== undefined) {
    const ms = parseRfc3339(req.recorded_at);
    if (!Number.isFinite(ms)) throw invalidArgument('recorded_at', 'expected an RFC 3339 timestamp');
    recordedAt = isoSeconds(ms);
  }
  const rows = await ctx.store.memory.edges({
    scope,
    record,
    direction,
    limit,
    ...(types ? { kinds: [...types] } : {}),
    ...(validAt !== undefined ? { valid_at: validAt } : {}),
    ...(recordedAt ? { recorded_at: recordedAt } : {}),
  });
  const edges = rows.map(served);
  // A stored fact's supersession, when it is visible in this scope and passes the filters.
  if (isFactCid(record) && direction !== 'in' && (!types || types.includes('supersedes')) && edges.length < limit) {
    const f = await ctx.store.getFact(record);
    if (f && f.supersedes && scopeKey(f.scope) === scopeKey(scope) && (!recordedAt || f.accepted_at <= recordedAt)) {
      const e = { kind: 'supersedes' as const, from: f.fact_cid, to: f.supersedes };
      edges.push({
        edge_cid: contentId(e),
        type: 'supersedes',
        from: e.from,
        to: e.to,
        valid_from: f.accepted_at,
        valid_to: null,
        closed_at: null,
        closed_by: null,
        effective_valid_to: null,
        stated_by: f.fact_cid,
        attester: f.attester,
        recorded_at: f.accepted_at,
      });
    }
  }
  const asOf: AsOf | undefined = recordedAt ? { transaction_time: recordedAt } : undefined;
  const stating = [...new Set(edges.map((e) => e.stated_by))];
  return {
    record,
    direction,
    ...(validAt !== undefined ? { valid_at: iso(validAt) } : {}),
    ...(recordedAt ? { recorded_at: recordedAt } : {}),
    edges,
    truncated: rows.length >= limit,
    receipt: issueReceipt(ctx, 'edges_recall', [], stating, {
      scope: scope ?? undefined,
      edge_cids: edges.map((e) => e.edge_cid),
      ...(asOf ? { as_of: asOf } : {}),
    }),
  };
}
