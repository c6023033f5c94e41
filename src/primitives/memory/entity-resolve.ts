/**
 * Resolving a phrasing to entities (docs/entities.md): the store's alias index (aliases and
 * entity names, matched by its full-text engine) proposes candidates; each is ranked by
 * independent corroboration — how many distinct keys say the phrasing means it (aliases) or file
 * facts under it — then by text score, then by entity_cid, so the order is reproducible from the
 * evidence returned. The responder's own signatures never count as corroboration: it mints every
 * entity record for whoever asks, which says nothing about what a phrasing means.
 *
 * Scope-exact like every memory read: candidates, aliases and facts are those of the asked scope
 * only, and an entity whose record is not visible there is never a candidate.
 */
import { invalidArgument, SvcError } from '../../protocol/errors.js';
import type { Receipt, Scope } from '../../protocol/receipt.js';
import type { StoredFact } from '../../store/contract.js';
import { ENTITY_BAND, type AliasHit } from '../../store/memory.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { mapLimit, READ_CONCURRENCY } from '../reads/common.js';
import { requestScope } from '../scopes/request.js';
import { entityRecord, entityRef, entitySubject, entityToken } from './entities.js';

/** Alias matches read from the index per resolve. */
export const ALIAS_CANDIDATES = 200;
/** Distinct entities (best text score first) whose records and facts are read per resolve. */
export const MAX_ENTITIES_CONSIDERED = 50;
/** Facts under one entity's subject read to count fact attesters. */
export const FACT_SCAN = 1000;
export const DEFAULT_LIMIT = 5;
export const MAX_LIMIT = 20;

/** A resolve, as the operation's schema admits it (types and bounds checked; phrase vs token is checked here). */
export interface ResolveRequest {
  phrase?: string;
  token?: string;
  scope?: Scope;
  /** Default DEFAULT_LIMIT (the schema fills it in; internal callers may leave it out). */
  limit?: number;
  kind?: string;
}

export type Evidence = { type: 'name' | 'alias'; fact_cid: string; phrase: string; attester: string; text_score: number } | { type: 'facts'; attester: string; facts: number };

export interface Candidate {
  entity_cid: string;
  token: string;
  entity: unknown;
  /** Best text score among the matching aliases and name, relative to the best match of the response (0..1; 0 for a token). */
  score: number;
  corroboration: { distinct_attesters: number; alias_attesters: string[]; fact_attesters: string[] };
  evidence: Evidence[];
}

export interface ResolveResult {
  phrase: string | null;
  token: string | null;
  candidates: Candidate[];
  receipt: Receipt;
}

/** Fact counts per attester under the entity's subject (the responder's own records left out). */
async function factAttesters(ctx: ServiceContext, entityCid: string, scope: Scope | null): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const facts: StoredFact[] = await ctx.store.history({ cell: entitySubject(entityCid), scope, limit: FACT_SCAN });
  for (const f of facts) {
    if (f.attester === ctx.keys.publicKeyB32) continue;
    counts.set(f.attester, (counts.get(f.attester) ?? 0) + 1);
  }
  return counts;
}

/** One ranked candidate from its visible record, its matching alias hits and its fact counts. */
function candidate(ctx: ServiceContext, record: StoredFact, entityCid: string, hits: AliasHit[], facts: Map<string, number>): Candidate {
  const responder = ctx.keys.publicKeyB32;
  const evidence: Evidence[] = hits.map((h) => ({
    type: h.fact_cid === record.fact_cid ? ('name' as const) : ('alias' as const),
    fact_cid: h.fact_cid,
    phrase: h.phrase,
    attester: h.attester,
    text_score: h.text_score,
  }));
  const aliasAttesters = [...new Set(hits.filter((h) => h.attester !== responder && h.fact_cid !== record.fact_cid).map((h) => h.attester))].sort();
  const factKeys = [...facts.keys()].sort();
  for (const a of factKeys) evidence.push({ type: 'facts', attester: a, facts: facts.get(a)! });
  return {
    entity_cid: entityCid,
    token: entityToken(ctx, entityCid),
    entity: record.body.value,
    score: hits.reduce((m, h) => Math.max(m, h.text_score), 0),
    corroboration: { distinct_attesters: new Set([...aliasAttesters, ...factKeys]).size, alias_attesters: aliasAttesters, fact_attesters: factKeys },
    evidence,
  };
}

/** Corroboration desc, then text score desc, then entity_cid asc. */
function rank(a: Candidate, b: Candidate): number {
  return b.corroboration.distinct_attesters - a.corroboration.distinct_attesters || b.score - a.score || (a.entity_cid < b.entity_cid ? -1 : a.entity_cid > b.entity_cid ? 1 : 0);
}

/** POST /v1/entity/resolve: candidate entities for a phrasing (or the one a token names), with the evidence. */
export async function resolveEntity(ctx: ServiceContext, req: ResolveRequest): Promise<ResolveResult> {
  const scope = requestScope(req.scope);
  const limit = req.limit ?? DEFAULT_LIMIT;
  const kind = req.kind;
  if ((req.phrase === undefined) === (req.token === undefined)) throw invalidArgument(req.phrase === undefined ? 'phrase' : 'token', 'give exactly one of phrase, token');

  let candidates: Candidate[];
  let phrase: string | null = null;
  let token: string | null = null;
  if (req.token !== undefined) {
    const cid = entityRef(ctx, req.token, 'token');
    token = req.token;
    const record = await entityRecord(ctx, cid, scope ?? null);
    const kindOf = (record?.body.value as { kind?: unknown } | undefined)?.kind;
    if (!record || (kind !== undefined && kindOf !== kind)) {
      throw new SvcError('cid_not_found', `token: no entity ${cid} is stored here${scope ? ' in this scope' : ''}${kind !== undefined ? ` of kind ${kind}` : ''}`, { field: 'token', entity_cid: cid });
    }
    // A token matches no phrasing: the evidence is the record and the facts filed under it.
    const name = (record.body.value as { name?: unknown }).name;
    const self: AliasHit = { entity: cid, phrase: typeof name === 'string' ? name : '', fact_cid: record.fact_cid, attester: record.attester, text_score: 0 };
    candidates = [candidate(ctx, record, cid, [self], await factAttesters(ctx, cid, scope ?? null))];
  } else {
    phrase = (req.phrase ?? '').trim();
    if (phrase.length === 0) throw invalidArgument('phrase', 'expected 1..200 characters');
    // Scores are served relative to the best match (0..1): FTS5's raw bm25 folds in corpus-wide
    // statistics that other scopes' writes move, which a scoped reader must not watch.
    const raw = await ctx.store.memory.aliases({ scope: scope ?? null, text: phrase, limit: ALIAS_CANDIDATES });
    const top = raw.reduce((m, h) => Math.max(m, h.text_score), 0);
    const hits = raw.map((h) => ({ ...h, text_score: top > 0 ? Number((h.text_score / top).toFixed(6)) : 0 }));
    const byEntity = new Map<string, AliasHit[]>();
    for (const h of hits) {
      const list = byEntity.get(h.entity);
      if (list) list.push(h);
      else byEntity.set(h.entity, [h]);
    }
    const best = (l: AliasHit[]) => l.reduce((m, h) => Math.max(m, h.text_score), -Infinity);
    const considered = [...byEntity.entries()].sort(([ea, la], [eb, lb]) => best(lb) - best(la) || (ea < eb ? -1 : ea > eb ? 1 : 0)).slice(0, MAX_ENTITIES_CONSIDERED);
    const built = await mapLimit(considered, READ_CONCURRENCY, async ([cid, list]) => {
      const record = await entityRecord(ctx, cid, scope ?? null);
      if (!record || record.band !== ENTITY_BAND) return null;
      if (kind !== undefined && (record.body.value as { kind?: unknown }).kind !== kind) return null;
      return candidate(ctx, record, cid, list, await factAttesters(ctx, cid, scope ?? null));
    });
    candidates = built
      .filter((c): c is Candidate => !!c)
      .sort(rank)
      .slice(0, limit);
  }

  const cells = candidates.map((c) => entitySubject(c.entity_cid));
  const cids = [...new Set(candidates.flatMap((c) => c.evidence.flatMap((e) => ('fact_cid' in e ? [e.fact_cid] : []))))];
  return { phrase, token, candidates, receipt: issueReceipt(ctx, 'entity_resolve', cells, cids, { scope, cost: { credits: 0, was_cached: false } }) };
}
