/**
 * temporal_route (docs/memory-insight.md): per band at one cell, whether the newest stored fact
 * can be cited now for what the caller means to do, or a fresh value should be fetched first.
 * Deterministic, from four things only: the band's cadence (registry), the age of the observation
 * the newest fact describes (observedAt: its capture time, else the end of its tslot, never later
 * than its signature), the stated intent classified by fixed word lists, and an explicit
 * max_age_s when given. When it was signed is shown beside it, but decides nothing: a value signed
 * a second ago about a slot a year back is a year old.
 *
 * Maximum age per band, first rule that applies:
 * 1. max_age_s given (one number, or per band) → that;
 * 2. static band (cadence 0) → any age;
 * 3. intent names the present (FRESH_WORDS) → the band's cadence;
 * 4. intent names the past (HISTORY_WORDS) → any age;
 * 5. otherwise → 1.5 × the cadence.
 * `cite_now` when a fact exists and its age is within that maximum; else `fetch_for_intent`
 * with the literal call that would bring a value. Nothing is fetched here.
 */
import { invalidArgument } from '../../protocol/errors.js';
import type { Receipt, Scope } from '../../protocol/receipt.js';
import { parseRfc3339 } from '../../protocol/rfc3339.js';
import { tslotRange } from '../../protocol/tslot.js';
import type { BandEntry } from '../../registry/registry.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { capturedAt, serveFact, type ServedFact } from '../facts/facts-view.js';
import { requireBand } from '../reads/common.js';
import { requestScope } from '../scopes/request.js';
import { resolveCell, type SignedResponse } from '../reads/recall.js';

export const TEMPORAL_ROUTE_MAX_BANDS = 32;
/** Longest max_age_s accepted (100 years): larger means "any age", which omitting says better. */
const MAX_AGE_CAP_S = 100 * 365 * 86_400;
/** Words (lower case, whole words) that ask for the present: the newest value must be within one cadence. */
export const FRESH_WORDS = ['now', 'current', 'currently', 'today', 'tonight', 'live', 'latest', 'realtime'] as const;
/** Words that ask about the past: any age will do. */
export const HISTORY_WORDS = ['history', 'historical', 'trend', 'trends', 'baseline', 'past', 'archive', 'archived', 'since'] as const;
/** Without an intent word, a value may be this many cadences old. */
export const DEFAULT_CADENCE_FACTOR = 1.5;

/** What an observation's age is measured from (see observedAt). */
export type AgeFrom = 'captured_at' | 'tslot_end' | 'signed_at' | 'accepted_at';

export type IntentClass = 'fresh' | 'historical' | 'default';
export type RouteRule = 'max_age_s_override' | 'static_band_any_age' | 'fresh_intent_one_cadence' | 'historical_intent_any_age' | 'default_1_5_cadence';

/** A temporal route, as the operation's schema admits it (types and bounds already checked). */
export interface TemporalRouteRequest {
  cell: string;
  bands?: string[];
  intent?: string;
  /** Seconds for every band, or per band (each band must be routed; at most MAX_AGE_CAP_S). */
  max_age_s?: number | Record<string, number>;
  scope?: Scope;
}

export interface FollowUp {
  method: 'POST';
  path: string;
  body: Record<string, unknown> | null;
  /** True when the call can bring a value from upstream (the band has a connector). */
  materializes: boolean;
  /** Only on writes: the body must be signed by an attester key (docs/writes.md). */
  auth?: 'attester_signature';
  why: string;
}

export interface BandRoute {
  band: string;
  decision: 'cite_now' | 'fetch_for_intent';
  reasoning: {
    cadence_s: number;
    newest_fact_cid: string | null;
    newest_kind: string | null;
    /** Age in seconds of the observation the newest fact describes (see observedAt); decides. */
    newest_age_s: number | null;
    /** What that age is measured from. */
    age_from: AgeFrom | null;
    /** Seconds since the newest fact was signed (null: no signed_at); shown only, never decides. */
    newest_signed_age_s: number | null;
    intent_class: IntentClass;
    /** null: any age. */
    max_age_s: number | null;
    rule: RouteRule;
    because: string;
  };
  follow_up: FollowUp | null;
}

export interface TemporalRouteResult {
  cell: string;
  place?: SignedResponse['place'];
  intent: { text: string | null; class: IntentClass; matched: string[] };
  routes: BandRoute[];
  /** The facts to cite now (decision cite_now), each signed with its own receipt. */
  facts: ServedFact[];
  caveats: string[];
  receipt: Receipt;
}

/** The intent's class and the words that decided it; present-tense words win over past ones. */
export function classifyIntent(intent: string | undefined): { class: IntentClass; matched: string[] } {
  const words = new Set((intent ?? '').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  const fresh = FRESH_WORDS.filter((w) => words.has(w));
  if (fresh.length > 0) return { class: 'fresh', matched: fresh };
  const past = HISTORY_WORDS.filter((w) => words.has(w));
  if (past.length > 0) return { class: 'historical', matched: past };
  return { class: 'default', matched: [] };
}

/** The maximum age (null: any) a band's newest value may have for the intent, and the rule that set it. */
export function maxAgeFor(band: BandEntry, intent: IntentClass, override: number | undefined): { max_age_s: number | null; rule: RouteRule } {
  if (override !== undefined) return { max_age_s: override, rule: 'max_age_s_override' };
  if (band.cadence_s === 0) return { max_age_s: null, rule: 'static_band_any_age' };
  if (intent === 'fresh') return { max_age_s: band.cadence_s, rule: 'fresh_intent_one_cadence' };
  if (intent === 'historical') return { max_age_s: null, rule: 'historical_intent_any_age' };
  return { max_age_s: Math.round(band.cadence_s * DEFAULT_CADENCE_FACTOR), rule: 'default_1_5_cadence' };
}

/**
 * The latest instant the observation a fact describes can have been made, and what fixes it:
 * - `captured_at`: the upstream capture time its derivation records;
 * - else the end of its tslot (`tslot_end`): the observation lies inside its slot. The end, not
 *   the start, so that a value is never made to look older than it may be: the age is "at least
 *   this old", and a slot wholly in the past (a year-old slot signed now) reads its true age;
 * - but never after the fact was signed (`signed_at`; `accepted_at` when unsigned): nothing can
 *   be signed before it was observed. This is what places a value in the current, unfinished
 *   slot, and a static band's value, which has no slot to place it in.
 */
export function observedAt(f: StoredFact, band: BandEntry): { ms: number; from: AgeFrom } {
  const cap = parseRfc3339(capturedAt(f));
  if (Number.isFinite(cap)) return { ms: cap, from: 'captured_at' };
  const signed = parseRfc3339(f.body.signed_at);
  const bound: { ms: number; from: AgeFrom } = Number.isFinite(signed) ? { ms: signed, from: 'signed_at' } : { ms: Date.parse(f.accepted_at), from: 'accepted_at' };
  if (band.tempo !== 'static') {
    const end = tslotRange(f.tslot, band.tempo).end_unix! * 1000;
    if (end < bound.ms) return { ms: end, from: 'tslot_end' };
  }
  return bound;
}

/** Age in seconds at `nowMs` of the observation a fact describes, and what it is measured from. */
export function factAge(f: StoredFact, band: BandEntry, nowMs: number): { age_s: number; from: AgeFrom } {
  const { ms, from } = observedAt(f, band);
  return { age_s: Math.max(0, Math.round((nowMs - ms) / 1000)), from };
}

/** Seconds since a fact was signed, or null when its body has no valid signed_at. */
function signedAge(f: StoredFact, nowMs: number): number | null {
  const signed = parseRfc3339(f.body.signed_at);
  return Number.isFinite(signed) ? Math.max(0, Math.round((nowMs - signed) / 1000)) : null;
}

/** Whether a fetch now would go upstream for this band (as recall decides: missing, or the stored fact fell due). */
function fetchRefreshes(f: StoredFact | undefined, band: BandEntry, nowMs: number): boolean {
  if (!f) return true;
  let due = Infinity;
  if (band.tempo !== 'static') due = (tslotRange(f.tslot, band.tempo).end_unix ?? Infinity) * 1000;
  if (f.kind === 'absence' && band.cadence_s > 0) due = Math.min(due, Date.parse(f.accepted_at) + band.cadence_s * 1000 + 1);
  return nowMs >= due;
}

function parseOverrides(v: TemporalRouteRequest['max_age_s'], bands: readonly BandEntry[]): Map<string, number> {
  const out = new Map<string, number>();
  if (v === undefined) return out;
  // The schema admits non-negative integers; the cap is checked here.
  const check = (x: number, field: string): number => {
    if (!Number.isSafeInteger(x) || x > MAX_AGE_CAP_S) throw invalidArgument(field, `expected an integer number of seconds 0..${MAX_AGE_CAP_S}`);
    return x;
  };
  if (typeof v === 'number') {
    const s = check(v, 'max_age_s');
    for (const b of bands) out.set(b.key, s);
    return out;
  }
  for (const [k, x] of Object.entries(v)) {
    if (!bands.some((b) => b.key === k)) throw invalidArgument(`max_age_s.${k}`, 'names a band that is not routed here (list it in bands)');
    out.set(k, check(x, `max_age_s.${k}`));
  }
  return out;
}

function followUp(ctx: ServiceContext, cell: string, band: BandEntry, scope: Scope | undefined, stored: StoredFact | undefined, nowMs: number): FollowUp {
  if (!ctx.materializers.forBand(band.key)) {
    return {
      method: 'POST',
      path: '/v1/attest',
      body: null,
      materializes: false,
      auth: 'attester_signature',
      why: `${band.key} has no connector on this responder: only an attester can write a newer value (a signed batch, docs/writes.md); nothing can be fetched`,
    };
  }
  const refreshes = fetchRefreshes(stored, band, nowMs);
  const why = refreshes
    ? `materializes ${band.key} at the cell for the band's current slot from its source and answers the signed fact`
    : `the stored fact is still in the band's current slot, so this call answers it unchanged until the slot ends; the source has nothing newer to give before then`;
  return { method: 'POST', path: '/v1/fetch', body: { cell, band: band.key, ...(scope ? { scope } : {}) }, materializes: refreshes, why };
}

function because(route: BandRoute['reasoning'], decision: BandRoute['decision']): string {
  const limit = route.max_age_s === null ? 'any age will do' : `the value may be at most ${route.max_age_s} s old`;
  const why: Record<RouteRule, string> = {
    max_age_s_override: 'max_age_s was given',
    static_band_any_age: 'the band is static (cadence 0)',
    fresh_intent_one_cadence: `the intent asks for the present, so one cadence (${route.cadence_s} s)`,
    historical_intent_any_age: 'the intent asks about the past',
    default_1_5_cadence: `no intent word decided it, so ${DEFAULT_CADENCE_FACTOR} × the cadence (${route.cadence_s} s)`,
  };
  const from: Record<AgeFrom, string> = {
    captured_at: 'its capture time',
    tslot_end: 'the end of its tslot',
    signed_at: 'its signed_at',
    accepted_at: 'when it was accepted here',
  };
  const signed = route.newest_signed_age_s !== null && route.age_from !== 'signed_at' ? `; it was signed ${route.newest_signed_age_s} s ago` : '';
  const fact =
    route.newest_fact_cid === null ? 'no fact is stored for this band at the cell' : `the newest fact describes an observation ${route.newest_age_s} s old (from ${from[route.age_from!]})${signed}`;
  return `${fact}; ${limit}: ${why[route.rule]}. ${decision === 'cite_now' ? 'Cite it now.' : 'Fetch before citing.'}`;
}

export async function temporalRoute(ctx: ServiceContext, req: TemporalRouteRequest): Promise<TemporalRouteResult> {
  const r = req;
  const { cell, place } = await resolveCell(ctx, r.cell, 'cell');
  const scope = requestScope(r.scope);
  const caveats: string[] = [];
  let bands: BandEntry[];
  if (r.bands !== undefined) {
    bands = [...new Set(r.bands)].map((b, i) => {
      const e = requireBand(ctx, b, `bands[${i}]`);
      if (e.value_kind === 'record') throw invalidArgument(`bands[${i}]`, `${e.key} is a record band: records are statements, not observations with a cadence`);
      return e;
    });
  } else {
    const at = (await ctx.store.bandsAt(cell, scope ?? null)).map((k) => ctx.registry.bands.get(k)).filter((b): b is BandEntry => b !== undefined && b.value_kind !== 'record');
    at.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    if (at.length > TEMPORAL_ROUTE_MAX_BANDS) caveats.push(`The cell holds ${at.length} bands; the first ${TEMPORAL_ROUTE_MAX_BANDS} by key are routed (name bands for the rest).`);
    bands = at.slice(0, TEMPORAL_ROUTE_MAX_BANDS);
    if (bands.length === 0) caveats.push('No band is stored at this cell yet: name the bands you need (bands) to get the calls that fetch them.');
  }
  const overrides = parseOverrides(r.max_age_s, bands);
  const intentText = r.intent;
  const intent = classifyIntent(intentText);
  const nowMs = ctx.now().getTime();

  const latest = bands.length === 0 ? [] : await ctx.store.latest({ cell, bands: bands.map((b) => b.key), scope: scope ?? null });
  const byBand = new Map(latest.map((f) => [f.band, f]));
  const routes: BandRoute[] = [];
  const cite: StoredFact[] = [];
  const cited: StoredFact[] = [];
  for (const band of bands) {
    const f = byBand.get(band.key);
    const { max_age_s, rule } = maxAgeFor(band, intent.class, overrides.get(band.key));
    const age = f ? factAge(f, band, nowMs) : null;
    const fresh = f !== undefined && (max_age_s === null || age!.age_s <= max_age_s);
    const decision: BandRoute['decision'] = fresh ? 'cite_now' : 'fetch_for_intent';
    const reasoning: BandRoute['reasoning'] = {
      cadence_s: band.cadence_s,
      newest_fact_cid: f?.fact_cid ?? null,
      newest_kind: f?.kind ?? null,
      newest_age_s: age?.age_s ?? null,
      age_from: age?.from ?? null,
      newest_signed_age_s: f ? signedAge(f, nowMs) : null,
      intent_class: intent.class,
      max_age_s,
      rule,
      because: '',
    };
    reasoning.because = because(reasoning, decision);
    routes.push({ band: band.key, decision, reasoning, follow_up: fresh ? null : followUp(ctx, cell, band, scope, f, nowMs) });
    if (f) cited.push(f);
    if (fresh) cite.push(f);
  }
  if (cite.some((f) => f.kind === 'absence')) caveats.push('A cited absence is a signed statement that the source had no value, not a measurement.');
  if (place && place.is_high_confidence === false) caveats.push(`"${place.query}" resolved with low confidence to ${place.cell64}: check the cell first.`);
  const facts = await Promise.all(cite.map((f) => serveFact(ctx, f)));
  const receipt = issueReceipt(
    ctx,
    'temporal_route',
    [cell],
    cited.map((f) => f.fact_cid),
    {
      scope,
      merkle_proof: cited[0]?.proof,
      cost: { credits: 0, was_cached: false },
    },
  );
  const out: TemporalRouteResult = { cell, intent: { text: intentText ?? null, class: intent.class, matched: intent.matched }, routes, facts, caveats, receipt };
  if (place) out.place = place;
  return out;
}
