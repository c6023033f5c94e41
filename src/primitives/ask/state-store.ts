/**
 * Keeping and serving answer steps (the `svc:state:` token, spec 2.5). A step's record is minted
 * as a responder-signed fact of the record band `ask.state`, through the same write path as
 * every fact: it gets a fact_cid, a batch proof, a log entry and a receipt, replicates with the
 * store, and verifies offline like any served fact. It is filed under an `svc:entity:` subject
 * derived from the record, never under a cell, so no read of a place ever returns it.
 */
import { anchorId, isFactCid } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { mintedBody, mintFacts } from '../attest.js';
import { issueReceipt, type ServiceContext } from '../context.js';
import { serveFact, type ServedFact } from '../facts-view.js';
import type { Receipt } from '../../protocol/receipt.js';

export const STATE_BAND = 'ask.state';

/** Sign and keep a step's record; resolves with its fact_cid (the token's id). */
export async function keepState(ctx: ServiceContext, record: object, parents: readonly string[]): Promise<string> {
  const body = mintedBody(ctx, {
    kind: 'primary', cell: `svc:entity:${anchorId(record)}`, band: STATE_BAND, tslot: 0, value: record, unit: 'record',
    provenance: `${ctx.config.prefix}.ask`,
    derivation: { fn: 'ask@1', sources: ['ask'], ...(parents.length > 0 ? { parents: [...parents] } : {}) },
  });
  const res = await mintFacts(ctx, [body], 'ask_state');
  return res.fact_cids[0];
}

export interface StateAnswer {
  token: string;
  state: unknown;
  fact: ServedFact;
  receipt: Receipt;
}

/** The step a `svc:state:` token (or its bare fact_cid) names, as signed. */
export async function resolveState(ctx: ServiceContext, tokenOrCid: unknown): Promise<StateAnswer> {
  if (typeof tokenOrCid !== 'string') throw invalidArgument('cid', 'expected an svc:state: token or its fact_cid');
  const prefix = `${ctx.config.prefix}:state:`;
  const cid = tokenOrCid.startsWith(prefix) ? tokenOrCid.slice(prefix.length) : tokenOrCid;
  if (!isFactCid(cid)) throw invalidArgument('cid', `expected ${prefix}<52 base32 characters> or the bare fact_cid`);
  const f = (await ctx.store.readFact(cid)).fact;
  if (!f || f.band !== STATE_BAND) throw new SvcError('cid_not_found', `cid: no answer step is stored under ${cid} here`, { field: 'cid' });
  const fact = await serveFact(ctx, f);
  // The receipt binds the step and every fact it cited, so the record's lists verify as references.
  const rec = f.body.value as { cells?: unknown; fact_cids?: unknown };
  const strings = (x: unknown): string[] => (Array.isArray(x) ? x.filter((v): v is string => typeof v === 'string') : []);
  const cells = [...new Set([f.cell, ...strings(rec.cells)])];
  const cids = [...new Set([cid, ...strings(rec.fact_cids)])];
  return { token: `${prefix}${cid}`, state: f.body.value, fact, receipt: issueReceipt(ctx, 'state', cells, cids, { merkle_proof: f.proof }) };
}
