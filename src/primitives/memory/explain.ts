/**
 * explain (docs/memory-insight.md): plain prose about a read an agent already holds, written by
 * fixed templates from the signed facts it cites (never by a language model), so the same input
 * always gives the same words. The given response is checked first with the whole-response
 * verifier (protocol/verify-response.ts); every cited fact is then read again from this
 * responder's store by fact_cid (a scoped one only with its scope's bearer) and described: band,
 * value and unit, cell and time, who signed it and when, its provenance class, and for an
 * absence its reason. The answer is NOT signed and carries no receipt: it is labelled
 * `signed: false`, and only the fact_cids it cites are evidence.
 */
import { cellCenter, isCell } from '../../protocol/cell64.js';
import { isFactCid } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import { tslotRange } from '../../protocol/tslot.js';
import { verifyResponse, type ResponseVerdict } from '../../protocol/verify-response.js';
import type { BandEntry } from '../../registry/registry.js';
import type { StoredFact } from '../../store/contract.js';
import { scopeKey } from '../../store/entry.js';
import type { ServiceContext } from '../context/context.js';
import { attesterRole } from '../facts/fact-meta.js';
import { capturedAt } from '../facts/facts-view.js';
import { isObject } from '../reads/common.js';
import { requestScope } from '../scopes/request.js';
import { factByCid } from '../reads/series.js';
import { GRID_CAVEAT } from '../reads/recall.js';
import type { Authorization } from '../scopes/access.js';

export const EXPLAIN_MAX_FACTS = 64;

const PROVENANCE_TEXT: Record<string, string> = {
  direct_sensor: 'a direct sensor reading',
  deterministic_index: 'computed deterministically from other values (anyone can recompute it)',
  model_output: 'the output of a model, not recomputable from a raw sensor source',
  human_curated: 'stated by a person or an agent',
  unclassified: 'of unclassified provenance',
};

const ABSENCE_TEXT: Record<string, string> = {
  unavailable_capability: 'the source had no value for this cell and time',
  outside_coverage: "the cell lies outside the source's coverage",
  archetype_seed_unavailable: 'the seed data the value is derived from was unavailable',
  gpu_unavailable: 'the compute needed to derive the value was unavailable',
  upstream_error: 'the source answered with an error',
  upstream_timeout: 'the source did not answer in time',
};

const ROLE_TEXT: Record<string, string> = {
  responder: 'this responder itself (fetched from the source and signed here)',
  operator: 'an operator-listed attester key',
  device: 'an enrolled device key',
  revoked: 'a key that has since been revoked',
  unlisted: 'a key this responder no longer lists',
};

/** An explanation request, as the operation's schema admits it (exactly one of response, fact_cids is checked here). */
export interface ExplainRequest {
  /** Any object: verified as a read response (what fails is reported, not refused). */
  response?: Record<string, unknown>;
  fact_cids?: string[];
  scope?: Scope;
}

export interface FactExplanation {
  fact_cid: string;
  found: boolean;
  band?: string;
  band_title?: string;
  cell?: string;
  tslot?: number;
  kind?: string;
  value?: unknown;
  unit?: string;
  value_text?: string;
  /** The time the tslot covers, or 'static'. */
  valid_time?: { from: string; to: string | null } | 'static';
  captured_at?: string;
  signed_at?: string | null;
  accepted_at?: string;
  attester?: string;
  attester_role?: string;
  provenance_class?: string;
  /** Who put the value here: this responder from the source, or an attester key stating it. */
  origin?: 'fetched_by_responder' | 'written_by_attester';
  absence_reason?: string;
  /** Response mode: what the verifier found about the copy of this fact the response showed. */
  in_response?: { shown: boolean; ok: boolean; failures: string[] };
  sentence: string;
}

export interface ExplainResult {
  explanation: string;
  signed: false;
  /** fact_cids the explanation describes (found in this responder's store): the only evidence. */
  cites: string[];
  /** Response mode: the response verified and every receipt is this responder's; null when only fact_cids were given. */
  verified: boolean | null;
  verification?: {
    valid: boolean;
    signers: string[];
    signed_by_this_responder: boolean;
    receipts: number;
    facts_checked: number;
    failures: string[];
    errors: string[];
  };
  per_fact: FactExplanation[];
  caveats: string[];
}

function fmtNumber(x: number): string {
  return Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(8)));
}

function unitText(unit: string | undefined): string {
  return !unit || unit === 'unitless' ? '' : ` ${unit}`;
}

/** The value of a fact in words. */
export function valueText(f: StoredFact, band: BandEntry | undefined): string {
  const v = f.body.value;
  const unit = typeof f.body.unit === 'string' ? f.body.unit : band?.unit;
  if (f.kind === 'absence') {
    const r = typeof f.body.absence_reason === 'string' ? f.body.absence_reason : 'unstated';
    return `no value (a signed absence: ${r}, meaning ${ABSENCE_TEXT[r] ?? 'no reason this responder knows'})`;
  }
  if (band?.value_kind === 'record' || (isObject(v) && !Array.isArray(v))) {
    const keys = isObject(v) ? Object.keys(v).sort() : [];
    if (f.band === 'memory.edge' && isObject(v))
      return `a ${String(v.type)} edge from ${String(v.from)} to ${String(v.to)}, valid from ${String(v.valid_from)}${typeof v.reason === 'string' ? ` (${v.reason})` : ''}`;
    if (f.band === 'memory.note' && isObject(v) && typeof v.text === 'string') return `a note reading "${v.text.length > 200 ? `${v.text.slice(0, 200)}…` : v.text}"`;
    return `a ${f.band} record with fields ${keys.join(', ') || '(none)'}`;
  }
  if (Array.isArray(v)) {
    const bits = band?.unit === 'bit';
    return `a ${v.length}-component ${bits ? 'binary code' : 'vector'}${
      bits
        ? ''
        : ` (first components ${v
            .slice(0, 3)
            .map((x) => (typeof x === 'number' ? fmtNumber(x) : String(x)))
            .join(', ')}${v.length > 3 ? ', …' : ''})`
    }`;
  }
  if (typeof v === 'number' && band?.value_kind === 'categorical') {
    const label = band.classes?.[String(v)];
    return `class ${v}${label ? ` (${label})` : ''}`;
  }
  if (typeof v === 'number') return `${fmtNumber(v)}${unitText(unit)}`;
  return JSON.stringify(v) ?? 'nothing';
}

function validTime(f: StoredFact, band: BandEntry | undefined): NonNullable<FactExplanation['valid_time']> {
  if (!band || band.tempo === 'static') return 'static';
  const r = tslotRange(f.tslot, band.tempo);
  return { from: isoSeconds(r.start_unix * 1000), to: r.end_unix === null ? null : isoSeconds(r.end_unix * 1000) };
}

function where(cell: string): string {
  if (!isCell(cell)) return `subject ${cell}`;
  const c = cellCenter(cell);
  return `cell ${cell} (centre ${c.lat.toFixed(5)}, ${c.lng.toFixed(5)})`;
}

/** One fact, explained: the fields and one sentence built from them. */
export function explainFact(ctx: ServiceContext, f: StoredFact): FactExplanation {
  const band = ctx.registry.bands.get(f.band);
  const role = attesterRole(ctx, f.attester);
  const vt = validTime(f, band);
  const captured = capturedAt(f);
  const signedAt = typeof f.body.signed_at === 'string' ? f.body.signed_at : null;
  const e: FactExplanation = {
    fact_cid: f.fact_cid,
    found: true,
    band: f.band,
    band_title: band?.title ?? f.band,
    cell: f.cell,
    tslot: f.tslot,
    kind: f.kind,
    value: f.body.value ?? null,
    unit: typeof f.body.unit === 'string' ? f.body.unit : band?.unit,
    value_text: valueText(f, band),
    valid_time: vt,
    signed_at: signedAt,
    accepted_at: f.accepted_at,
    attester: f.attester,
    attester_role: role,
    provenance_class: f.provenance_class,
    origin: role === 'responder' ? 'fetched_by_responder' : 'written_by_attester',
    sentence: '',
  };
  if (captured) e.captured_at = captured;
  if (f.kind === 'absence' && typeof f.body.absence_reason === 'string') e.absence_reason = f.body.absence_reason;
  const when = vt === 'static' ? 'a static band (one value for all time)' : `the slot ${vt.from} to ${vt.to ?? 'open'}`;
  const d = f.body.derivation as { fn?: unknown; parents?: unknown } | undefined;
  const derived = f.kind === 'derivative' && d && typeof d.fn === 'string' ? ` It is derived by ${d.fn} from ${Array.isArray(d.parents) ? d.parents.length : 0} parent fact(s).` : '';
  e.sentence =
    `${e.band_title} (${f.band}) at ${where(f.cell)}, ${when}: ${e.value_text}.${derived}` +
    `${captured ? ` Captured upstream at ${captured}.` : ''}` +
    ` Signed${signedAt ? ` at ${signedAt}` : ''} by ${f.attester}, ${ROLE_TEXT[role] ?? role}; accepted here at ${f.accepted_at}.` +
    (role === 'responder'
      ? ` Provenance class ${f.provenance_class}: ${PROVENANCE_TEXT[f.provenance_class] ?? f.provenance_class}.`
      : // The class belongs to the band; an attester's value is a statement, whatever the band's class says.
        ` The value was stated by that key, not fetched from the source by this responder; ${f.provenance_class} is the band's provenance class, not a check of where this value came from.`) +
    `${f.scope ? " Written under a scope: only that scope's readers can see it." : ''}`;
  return e;
}

/** The fact_cids a response cites: the facts it shows, then the ones its root receipt lists. */
function citedBy(doc: unknown, v: ResponseVerdict): string[] {
  const out: string[] = [];
  for (const f of v.facts) out.push(f.fact_cid);
  for (const r of v.references) out.push(r.fact_cid);
  const root = isObject(doc) && isObject(doc.receipt) && Array.isArray(doc.receipt.fact_cids) ? doc.receipt.fact_cids : isObject(doc) && Array.isArray(doc.fact_cids) ? doc.fact_cids : [];
  for (const c of root) if (typeof c === 'string') out.push(c);
  return [...new Set(out.filter(isFactCid))];
}

function verificationSentence(ver: NonNullable<ExplainResult['verification']>): string {
  if (ver.valid && ver.signed_by_this_responder) {
    return `The response verified: its ${ver.receipts} receipt(s) are signed by this responder, and each of the ${ver.facts_checked} fact(s) it shows recomputes to its fact_cid and is bound by a receipt.`;
  }
  if (ver.valid) {
    return `The response's signatures verify, but they are by ${ver.signers.join(', ')}, not this responder's key: this responder cannot vouch for those facts, and cites only those it stores itself.`;
  }
  const why = ver.failures.length > 0 ? ver.failures.join(', ') : 'no checkable receipt';
  return `The response did NOT verify (${why}): do not rely on the copy you hold; the facts below are read again from this responder's store by fact_cid.`;
}

export async function explain(ctx: ServiceContext, req: ExplainRequest, opts: { authorization?: Authorization } = {}): Promise<ExplainResult> {
  const r = req;
  if ((r.response === undefined) === (r.fact_cids === undefined)) throw invalidArgument(r.response === undefined ? 'response' : 'fact_cids', 'give exactly one of response, fact_cids');
  const scope = requestScope(r.scope);
  const caveats: string[] = [
    'This explanation is unsigned text, written by fixed templates from the signed facts: cite the fact_cids in cites, not these words.',
    'A signature proves who signed and that the bytes are unchanged, not that the value is correct.',
  ];
  let cids: string[];
  let verification: ExplainResult['verification'];
  let verdict: ResponseVerdict | undefined;
  if (r.response !== undefined) {
    verdict = verifyResponse(r.response, { prefix: ctx.config.prefix, backend: ctx.ed25519 });
    const ours = new Set([ctx.keys.publicKeyB32, ...ctx.keys.retired.map((k) => k.public_key)]);
    verification = {
      valid: verdict.valid,
      signers: verdict.signers,
      signed_by_this_responder: verdict.signers.length > 0 && verdict.signers.every((s) => ours.has(s)),
      receipts: verdict.receipts.length,
      facts_checked: verdict.facts.length,
      failures: verdict.failures,
      errors: verdict.errors.slice(0, 8),
    };
    cids = citedBy(r.response, verdict);
    if (cids.length === 0) caveats.push('The response cites no fact_cid: there is nothing signed to explain.');
  } else {
    cids = [...new Set(r.fact_cids ?? [])];
  }
  if (cids.length > EXPLAIN_MAX_FACTS) {
    caveats.push(`The response cites ${cids.length} facts; the first ${EXPLAIN_MAX_FACTS} are explained (pass fact_cids for the rest).`);
    cids = cids.slice(0, EXPLAIN_MAX_FACTS);
  }

  const perFact: FactExplanation[] = [];
  const seenCaveat = new Set<string>();
  let onCell = false;
  for (const [i, cid] of cids.entries()) {
    let f: StoredFact | undefined;
    try {
      f = (await factByCid(ctx, cid, `cites[${i}]`, opts.authorization)).fact;
    } catch (e) {
      if (!(e instanceof SvcError) || e.code !== 'cid_not_found') throw e;
    }
    // A scope named in the request limits the facts to public ones and that scope's.
    if (f && f.scope && scope && scopeKey(f.scope) !== scopeKey(scope)) f = undefined;
    let e: FactExplanation;
    if (!f) {
      e = { fact_cid: cid, found: false, sentence: `${cid}: not stored here (a fact_cid of another responder, or of a scope your bearer does not open).` };
    } else {
      e = explainFact(ctx, f);
      onCell ||= isCell(f.cell);
      if ((f.provenance_class === 'model_output' || f.provenance_class === 'human_curated') && !seenCaveat.has(f.band)) {
        seenCaveat.add(f.band);
        caveats.push(`${f.band}: provenance class ${f.provenance_class}, not recomputable from a raw sensor source.`);
      }
    }
    const shown = verdict?.facts.find((x) => x.fact_cid === cid);
    if (verdict) {
      e.in_response = { shown: shown !== undefined, ok: shown ? shown.ok : true, failures: shown ? shown.failures : [] };
      if (shown && !shown.ok) e.sentence += ` The copy in the given response failed its checks (${shown.failures.join(', ')}): the stored fact above is the signed one.`;
    }
    perFact.push(e);
  }
  if (onCell) caveats.push(GRID_CAVEAT);

  const found = perFact.filter((e) => e.found);
  const lines: string[] = [];
  lines.push(verification ? verificationSentence(verification) : "No response was given to verify: each fact below was read from this responder's store by its fact_cid.");
  lines.push(found.length === perFact.length ? `${perFact.length} fact(s) are explained.` : `${found.length} of ${perFact.length} cited fact(s) are stored here and explained.`);
  perFact.forEach((e, i) => lines.push(`${i + 1}. ${e.sentence}${e.found ? ` [${e.fact_cid}]` : ''}`));
  lines.push(`Caveats: ${caveats.join(' ')}`);
  const out: ExplainResult = {
    explanation: lines.join('\n'),
    signed: false,
    cites: found.map((e) => e.fact_cid),
    verified: verification ? verification.valid && verification.signed_by_this_responder : null,
    per_fact: perFact,
    caveats,
  };
  if (verification) out.verification = verification;
  return out;
}
