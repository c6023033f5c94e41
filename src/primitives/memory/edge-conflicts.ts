/**
 * When one key's edge would end another key's statement (docs/security.md, "Edges"):
 * an `invalidates` naming another key's edge, or an exclusive edge (part_of, located_in,
 * owned_by) from the same record to another target while another key's edge there is open.
 * The index never closes across keys (store/memory.ts), so both statements stand; the
 * disagreement is recorded instead, as one responder-signed `memory.edge` record
 * {type: contradicts, from: the new edge, to: the other key's edge}, once per pair, in the
 * edge's scope. A reader then sees two open edges and the contradiction between them.
 */
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import { recordBody } from '../../protocol/memory-records.js';
import { EDGE_BAND, EXCLUSIVE_EDGE_TYPES, type EdgeRow } from '../../store/memory.js';
import { mintFacts } from '../write/attest.js';
import type { ServiceContext } from '../context/context.js';

/** The value of a memory.edge record as written (what conflicts need of it). */
interface EdgeValue {
  type: string;
  from: string;
  to: string;
  invalidates?: unknown;
}

/** Conflicts looked up per new edge at most (bounds the reads one write causes). */
const MAX_CONFLICTS_PER_EDGE = 32;

/**
 * Record, for the accepted edges `cids` (values `values`, written by `attester` in `scope`),
 * the other keys' edges they contradict; resolves with the contradicts edges minted.
 */
export async function recordEdgeConflicts(ctx: ServiceContext, attester: string, scope: Scope | null, cids: readonly string[], values: readonly EdgeValue[]): Promise<string[]> {
  const mem = ctx.store.memory;
  const bodies: Record<string, unknown>[] = [];
  const signedAt = isoSeconds(ctx.now());
  const seen = new Set<string>();
  for (let i = 0; i < cids.length; i++) {
    const v = values[i];
    const named = new Set(Array.isArray(v.invalidates) ? v.invalidates.filter((x): x is string => typeof x === 'string') : []);
    if (named.size === 0 && !EXCLUSIVE_EDGE_TYPES.has(v.type)) continue;
    const out = await mem.edges({ scope, record: v.from, direction: 'out', limit: 1000 });
    const others: EdgeRow[] = out
      .filter((e) => e.attester !== attester && e.edge_cid !== cids[i] && (named.has(e.edge_cid) || (EXCLUSIVE_EDGE_TYPES.has(v.type) && e.kind === v.type && e.to !== v.to && e.closed_at === null)))
      .slice(0, MAX_CONFLICTS_PER_EDGE);
    if (others.length === 0) continue;
    // Pairs recorded before (a re-sent edge): read once per new edge, not once per pair.
    const recorded = new Set((await mem.edges({ scope, record: cids[i], direction: 'out', kinds: ['contradicts'], limit: 100 })).map((e) => e.to));
    for (const o of others) {
      const key = `${cids[i]}:${o.edge_cid}`;
      if (seen.has(key) || recorded.has(o.edge_cid)) continue;
      seen.add(key);
      const reason = named.has(o.edge_cid)
        ? `key ${attester} asked to end this edge, stated by key ${o.attester}; only the stating key may end it`
        : `${v.type} holds one target at a time; key ${attester} says ${v.to}, key ${o.attester} says ${o.to}`;
      const value = { type: 'contradicts', from: cids[i], to: o.edge_cid, valid_from: signedAt, reason: reason.slice(0, 500) };
      bodies.push({ ...recordBody(EDGE_BAND, value, { signed_at: signedAt, scope: scope ?? undefined }), signer: ctx.keys.publicKeyB32 });
    }
  }
  if (bodies.length === 0) return [];
  return (await mintFacts(ctx, bodies, 'edge_conflicts')).fact_cids;
}
