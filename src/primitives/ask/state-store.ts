/**
 * Keeping and serving answer steps (docs/ask.md, "The `svc:state:` token" and "Where a step is
 * kept").
 *
 * A question can carry personal data and the public log can never forget, so by default a step
 * is kept OUTSIDE the log: in the store's transient table (contract.ts, TransientStore) under
 * its record's content id, for SVC_ASK_STATE_RETENTION_SECS, shared by every responder of the
 * deployment; after that the token stops resolving and the text is gone. Nothing about it
 * enters the log. A caller may opt in to a durable record instead (`keep`):
 *  - `public`: a responder-signed fact of the record band `ask.state` in the public log;
 *  - `scope`: the same fact written into the caller's scope (its entry in the log publishes a
 *    leaf hash only, and it resolves only for a bearer of that scope).
 * A durable step is filed under an `svc:entity:` subject, never under a cell, so no read of a
 * place ever returns it.
 */
import { anchorId, contentId, isFactCid } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { isoSeconds, type Receipt, type Scope } from '../../protocol/receipt.js';
import { mintedBody, mintFacts } from '../write/attest.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import { mayReadScope, type Authorization } from '../scopes/access.js';
import type { AskState, AskStateRecord } from './state-record.js';

export const STATE_BAND = 'ask.state';
/** Namespace of kept steps in the transient table. */
const STATE_NS = 'ask_state';

/** Where a step is kept: outside the log for a while (default), or durably in the log. */
export type StateKeep = 'transient' | 'public' | 'scope';
export const STATE_KEEPS: readonly StateKeep[] = ['transient', 'public', 'scope'];

/** Sign and keep a step's record as a fact (public, or in `scope`); resolves with its fact_cid. */
async function keepAsFact(ctx: ServiceContext, record: object, parents: readonly string[], scope?: Scope): Promise<string> {
  const body = mintedBody(ctx, {
    kind: 'primary',
    cell: `svc:entity:${anchorId(record)}`,
    band: STATE_BAND,
    tslot: 0,
    value: record,
    unit: 'record',
    provenance: `${ctx.config.prefix}.ask`,
    derivation: { fn: 'ask@1', sources: ['ask'], ...(parents.length > 0 ? { parents: [...parents] } : {}) },
    ...(scope ? { scope } : {}),
  });
  const res = await mintFacts(ctx, [body], 'ask_state');
  return res.fact_cids[0];
}

/**
 * Keep `state` as asked and fill in its token. Transient steps are named by their record cid
 * (anyone holding the record recomputes it); durable ones by the fact_cid of the kept fact.
 */
export async function keepState(ctx: ServiceContext, state: AskState, parents: readonly string[], keep: StateKeep, scope?: Scope): Promise<void> {
  let cid: string;
  let keptUntil: string | null = null;
  if (keep === 'transient') {
    const until = ctx.now().getTime() + ctx.config.askStateRetentionSecs * 1000;
    keptUntil = isoSeconds(until);
    await ctx.store.transients.put(STATE_NS, state.record_cid, JSON.stringify({ kept_until: keptUntil, record: state.record }), until);
    cid = state.record_cid;
  } else {
    cid = await keepAsFact(ctx, state.record, parents, keep === 'scope' ? scope : undefined);
  }
  Object.assign(state, { cid, token: `${ctx.config.prefix}:state:${cid}`, persisted: true, kept: keep, kept_until: keptUntil });
}

export interface StateAnswer {
  token: string;
  state: unknown;
  /** How the step is kept: `transient` (outside the log, until kept_until), `public` or `scope`. */
  kept: StateKeep;
  kept_until: string | null;
  /** Content id of `state` (BLAKE3 of its canonical CBOR): recompute it to check the record. */
  record_cid: string;
  /** The step as a responder-signed fact (durable steps only). */
  fact?: ServedFact;
  receipt: Receipt;
}

const strings = (x: unknown): string[] => (Array.isArray(x) ? x.filter((v): v is string => typeof v === 'string') : []);

function notFound(cid: string): SvcError {
  return new SvcError('cid_not_found', `cid: no answer step is kept under ${cid} here (transient steps expire after their retention window)`, { field: 'cid' });
}

/** The step a `svc:state:` token (or its bare id) names, as kept. */
export async function resolveState(ctx: ServiceContext, tokenOrCid: string, authorization?: Authorization): Promise<StateAnswer> {
  const prefix = `${ctx.config.prefix}:state:`;
  const cid = tokenOrCid.startsWith(prefix) ? tokenOrCid.slice(prefix.length) : tokenOrCid;
  if (!isFactCid(cid)) throw invalidArgument('cid', `expected ${prefix}<52 base32 characters> or the bare id`);

  const raw = await ctx.store.transients.get(STATE_NS, cid);
  if (raw !== null) {
    const { record, kept_until: keptUntil } = JSON.parse(raw) as { record: AskStateRecord; kept_until: string };
    // The table is the responder's own, but the id is a promise about the content: keep it.
    if (contentId(record) !== cid) throw new SvcError('internal', `state ${cid}: the kept record does not hash to its id`);
    const cells = strings(record.cells);
    const cids = [...new Set([cid, ...strings(record.fact_cids)])];
    return {
      token: `${prefix}${cid}`,
      state: record,
      kept: 'transient',
      kept_until: keptUntil,
      record_cid: cid,
      receipt: issueReceipt(ctx, 'state', cells, cids),
    };
  }

  const f = (await ctx.store.readFact(cid)).fact;
  if (!f || f.band !== STATE_BAND) throw notFound(cid);
  // A step kept in a scope answers its bearer only, and everyone else exactly as a step never kept.
  if (f.scope && !(await mayReadScope(ctx, authorization, f.scope))) throw notFound(cid);
  const fact = await serveFact(ctx, f);
  // The receipt binds the step and every fact it cited, so the record's lists verify as references.
  const rec = f.body.value as { cells?: unknown; fact_cids?: unknown };
  const cells = [...new Set([f.cell, ...strings(rec.cells)])];
  const cids = [...new Set([cid, ...strings(rec.fact_cids)])];
  return {
    token: `${prefix}${cid}`,
    state: f.body.value,
    kept: f.scope ? 'scope' : 'public',
    kept_until: null,
    record_cid: contentId(f.body.value),
    fact,
    receipt: issueReceipt(ctx, 'state', cells, cids, { merkle_proof: f.proof, ...(f.scope ? { scope: f.scope } : {}) }),
  };
}
