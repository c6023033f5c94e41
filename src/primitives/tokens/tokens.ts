/**
 * Memory tokens (docs/memory.md, "Tokens and bundles"): short addresses one agent hands to another.
 * A fact token names one signed fact by cid; its readable form also states a place, a date and a
 * band. Those claims are not signed by anyone, so resolving checks each against the signed body and
 * refuses a mismatch with 409 (`token_claim_mismatch`) instead of serving a fact under a false
 * label.
 *
 * Tokens name public facts: a scoped fact is neither minted into a token nor resolved from one
 * (factByCid answers cid_not_found without a bearer, and these calls carry none), because a token
 * is handed to agents outside the scope.
 *
 * A cell token names a place only (nothing signed), so resolving it answers the cell and says
 * where its facts are read. Entity tokens (current and legacy `meme:`) resolve to the public
 * entity record they name, as POST /v1/entity/resolve with that token answers.
 */
import { cellCenter, cellOf, isCell } from '../../protocol/cell64.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { StoredFact } from '../../store/contract.js';
import { resolveBundle } from './bundles.js';
import { parseToken, validDate } from '../../protocol/token-grammar.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact } from '../facts/facts-view.js';
import { factByCid } from '../reads/series.js';
import { DEFAULT_LIMIT, resolveEntity } from '../memory/entity-resolve.js';

/** UTC dates a fact was captured: the upstream capture time, else when it was signed. */
export function captureDates(f: StoredFact): string[] {
  const d = f.body.derivation as Record<string, unknown> | undefined;
  const at = typeof d?.captured_at === 'string' ? d.captured_at : typeof f.body.signed_at === 'string' ? f.body.signed_at : undefined;
  const t = at === undefined ? NaN : Date.parse(at);
  return Number.isFinite(t) ? [new Date(t).toISOString().slice(0, 10)] : [];
}

function mismatch(what: string, details: Record<string, unknown>): SvcError {
  return new SvcError('token_claim_mismatch', `token: ${what}`, { field: 'token', ...details });
}

/** A fact token to mint, as the operation's schema admits it (string lengths checked; the cid, cell and date forms are checked here). */
export interface MintTokenRequest {
  fact_cid: string;
  cell?: string;
  band?: string;
  observed_on?: string;
}

/** Mint a fact token; with band and observed_on, the readable form (claims checked before minting). */
export async function mintMemoryToken(ctx: ServiceContext, req: MintTokenRequest) {
  const { fact: f } = await factByCid(ctx, req.fact_cid, 'fact_cid');
  if (req.cell !== undefined) {
    if (!isCell(req.cell)) throw new SvcError('invalid_cell', `cell: ${JSON.stringify(String(req.cell).slice(0, 64))} is not a cell64`, { field: 'cell' });
    if (req.cell !== f.cell) throw new SvcError('token_claim_mismatch', `cell: the fact is at ${f.cell}, not ${req.cell}`, { field: 'cell', fact_cell: f.cell });
  }
  if ((req.band === undefined) !== (req.observed_on === undefined)) {
    throw invalidArgument(req.band === undefined ? 'band' : 'observed_on', 'the readable form needs both band and observed_on');
  }
  const prefix = ctx.config.prefix;
  let token = `${prefix}:fact:${f.cell}:${f.fact_cid}`;
  let form: 'cell' | 'readable' = 'cell';
  const { band, observed_on: observedOn } = req;
  // Both or neither (checked above).
  if (band !== undefined && observedOn !== undefined) {
    if (!validDate(observedOn)) throw invalidArgument('observed_on', 'expected a calendar date YYYY-MM-DD');
    if (band !== f.band) throw new SvcError('token_claim_mismatch', `band: the fact is ${f.band}, not ${band}`, { field: 'band', fact_band: f.band });
    const dates = captureDates(f);
    if (!dates.includes(observedOn)) {
      throw new SvcError('token_claim_mismatch', `observed_on: ${observedOn} is not a capture date of the fact (${dates.join(', ') || 'it records none'})`, {
        field: 'observed_on',
        capture_dates: dates,
      });
    }
    if (!isCell(f.cell)) throw invalidArgument('band', 'the readable form needs a fact addressed to a cell64 (this one names an entity)');
    const c = cellCenter(f.cell);
    token = `${prefix}:fact:${c.lat.toFixed(6)},${c.lng.toFixed(6)}@${observedOn}@${f.band}:${f.fact_cid}`;
    form = 'readable';
  }
  return {
    token,
    form,
    legacy_token: `memt:${token.slice(prefix.length + 6)}`,
    fact_cid: f.fact_cid,
    cell: f.cell,
    band: f.band,
    tslot: f.tslot,
    receipt: issueReceipt(ctx, 'memory_token', [f.cell], [f.fact_cid], { merkle_proof: f.proof, cost: { credits: 0, was_cached: false } }),
  };
}

/** Resolve a token: a fact token to its signed fact after checking every claim; bundle tokens to their facts. */
export async function resolveToken(ctx: ServiceContext, req: { token: string }) {
  const p = parseToken(ctx.config.prefix, req.token);
  if (p.kind === 'bundle') return { kind: 'bundle' as const, legacy: p.legacy, ...(await resolveBundle(ctx, `memb:${p.rest}`)) };
  if (p.kind === 'entity') {
    return { kind: 'entity' as const, legacy: p.legacy, ...(await resolveEntity(ctx, { token: `${ctx.config.prefix}:entity:${p.entity_cid}`, limit: DEFAULT_LIMIT })) };
  }
  if (p.kind === 'cell') return resolveCellToken(ctx, req.token, p.cell);
  const { fact: f } = await factByCid(ctx, p.fact_cid, 'token');
  const checks: Record<string, boolean> = {};
  const problems: string[] = [];
  const details: Record<string, unknown> = { fact_cell: f.cell };
  if (p.form === 'cell') {
    checks.cell = p.subject === f.cell;
    if (!checks.cell) problems.push(`the fact is at ${f.cell}, the token says ${p.subject}`);
  } else {
    const claimed = cellOf(p.lat, p.lng);
    checks.cell = claimed === f.cell;
    if (!checks.cell) problems.push(`${p.lat},${p.lng} is cell ${claimed}; the fact is at ${f.cell}`);
    checks.band = p.band === f.band;
    if (!checks.band) problems.push(`the fact is ${f.band}, the token says ${p.band}`);
    const dates = captureDates(f);
    checks.date = dates.includes(p.date);
    if (!checks.date) problems.push(`${p.date} is not a capture date of the fact (${dates.join(', ') || 'it records none'})`);
    Object.assign(details, { claimed_cell: claimed, fact_band: f.band, capture_dates: dates });
  }
  if (problems.length > 0) throw mismatch(problems.join('; '), { ...details, checks });
  const provenance_class = ctx.registry.bands.get(f.band)?.provenance_class ?? f.provenance_class;
  const out: Record<string, unknown> = {
    kind: 'fact',
    form: p.form,
    legacy: p.legacy,
    token: req.token,
    fact: await serveFact(ctx, f),
    fact_cid: f.fact_cid,
    provenance_class,
    checks,
  };
  if (provenance_class === 'model_output' || provenance_class === 'human_curated') {
    out.caution = `${f.band} is ${provenance_class}: the signature proves who signed these bytes, not that the value is right; it cannot be recomputed from a raw sensor source.`;
  }
  out.receipt = issueReceipt(ctx, 'memory_token_resolve', [f.cell], [f.fact_cid], { merkle_proof: f.proof, cost: { credits: 0, was_cached: false } });
  return out;
}

/**
 * A cell token resolves to its cell and nothing more: it is an address, not signed content.
 * The receipt binds the cell and lists no facts; the facts are read with recall.
 */
function resolveCellToken(ctx: ServiceContext, token: string, cell: string) {
  const centre = cellCenter(cell);
  return {
    kind: 'cell' as const,
    legacy: false,
    token,
    cell,
    lat: centre.lat,
    lng: centre.lng,
    address_only: true,
    note: 'A cell token is an address only: it names a place, not signed bytes, so no fact comes with it. Read what is stored there with POST /v1/recall, which accepts the token as its cell.',
    next: { method: 'POST', path: '/v1/recall', body: { cell: token } },
    receipt: issueReceipt(ctx, 'memory_token_resolve', [cell], [], { cost: { credits: 0, was_cached: false } }),
  };
}
