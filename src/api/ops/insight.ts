/**
 * Memory insight over the API (docs/memory-insight.md): where attesters contradict each other,
 * whether a stored value is fresh enough for what the caller means to do, and plain prose about
 * a read. All three are reads in /mcp/full; a scope needs its bearer (the operation table's guard).
 *
 * memory_contradictions with `record: true` is a write the responder performs (one signed
 * `memory.edge` record per new pair), so it is REST only: a call that did not come through the
 * REST adapter (MCP, or an internal call) and asks to record is refused with invalid_argument
 * naming `record`. Over MCP the tool only lists.
 */
import { CONTRADICTION_LIMITS, VECTOR_AGREEMENT_COSINE, memoryContradictions } from '../../primitives/memory/contradictions.js';
import { EXPLAIN_MAX_FACTS, explain } from '../../primitives/memory/explain.js';
import { DEFAULT_CADENCE_FACTOR, FRESH_WORDS, HISTORY_WORDS, TEMPORAL_ROUTE_MAX_BANDS, temporalRoute } from '../../primitives/memory/temporal-route.js';
import { Type } from '@sinclair/typebox';
import { defineOperation, type Operation, type OperationCall } from '../operations.js';
import { B32Key, Cell, OneOf, Scope } from '../schemas/inputs.js';
import { AnyValue, Closed, Nullable, PlaceResolved, ServedFact, Signed } from '../schemas/responses.js';

const bandKey = Type.String({ minLength: 1, maxLength: 100 });
const Strings = Type.Array(Type.String());
const Caveats = Type.Array(Type.String(), { description: 'what the answer does not say' });

/** One side of a contradiction: a fact and who signed it. */
const Side = Closed({ fact_cid: Type.String(), attester: Type.String(), value: AnyValue, signed_at: Nullable(Type.String()), accepted_at: Type.String() });

/** How a pair was found to disagree, by band kind. */
const Measure = Type.Union([
  Closed({ abs_diff: Type.Number(), tolerance: Type.Number(), tolerance_source: OneOf(['registry', 'relative_default'] as const) }),
  Closed({ cosine: Nullable(Type.Number()), threshold: Type.Number() }),
  Closed({ equal: Type.Boolean() }),
]);

/** A call that would bring a fresher value (temporal_route's follow_up). */
const FollowUp = Closed({
  method: Type.Literal('POST'),
  path: Type.String(),
  body: Nullable(Type.Record(Type.String(), AnyValue)),
  materializes: Type.Boolean({ description: 'true when the call can bring a value from upstream' }),
  auth: Type.Optional(Type.Literal('attester_signature')),
  why: Type.String(),
});

/** One fact, explained. */
const FactExplanation = Closed({
  fact_cid: Type.String(),
  found: Type.Boolean({ description: 'false: not stored here (or in a scope the bearer does not open)' }),
  band: Type.Optional(Type.String()),
  band_title: Type.Optional(Type.String()),
  cell: Type.Optional(Type.String()),
  tslot: Type.Optional(Type.Integer()),
  kind: Type.Optional(Type.String()),
  value: Type.Optional(AnyValue),
  unit: Type.Optional(Type.String()),
  value_text: Type.Optional(Type.String()),
  valid_time: Type.Optional(Type.Union([Type.Literal('static'), Closed({ from: Type.String(), to: Nullable(Type.String()) })])),
  captured_at: Type.Optional(Type.String()),
  signed_at: Type.Optional(Nullable(Type.String())),
  accepted_at: Type.Optional(Type.String()),
  attester: Type.Optional(Type.String()),
  attester_role: Type.Optional(Type.String()),
  origin: Type.Optional(
    OneOf(['fetched_by_responder', 'written_by_attester'] as const, {
      description:
        "fetched_by_responder: this responder read it from the upstream source and signed it; written_by_attester: an attester key stated it (provenance_class is then the band's class, not a check of where the value came from)",
    }),
  ),
  provenance_class: Type.Optional(Type.String()),
  absence_reason: Type.Optional(Type.String()),
  in_response: Type.Optional(Closed({ shown: Type.Boolean(), ok: Type.Boolean(), failures: Strings })),
  sentence: Type.String(),
});

/** True for a call that came through the REST adapter. */
export function overRest(call: OperationCall): boolean {
  return call.channel === 'rest';
}

export const memoryContradictionsOp = defineOperation({
  name: 'memory_contradictions',
  method: 'POST',
  path: '/v1/memory_contradictions',
  summary: 'Where signed values of different attesters disagree at one (cell, band, tslot): both facts, both attesters, the measure',
  description: [
    'Use to find conflicting evidence before citing a value, or to audit a place, a band or a scope.',
    'Filters (all optional, at most one place filter): cell (cell64 or place name), cells (≤ 256), bbox [west, south, east, north] or polygon (GeoJSON; narrowed to ≤ 256 cells), bands (≤ 64; record bands are never compared), scope (needs its bearer).',
    'Each attester counts with its newest fact at the slot; absences are left out. Disagreement by band kind:',
    `scalar |a − b| > the band's agreement_tolerance (GET /v1/bands; default 1e-6 relative); vector cosine < ${VECTOR_AGREEMENT_COSINE}; categorical different class.`,
    'Returns contradictions[] {cell, band, tslot, kind, a (newer: fact_cid, attester, value, signed_at, accepted_at), b (older), measure: {abs_diff, tolerance} | {cosine, threshold} | {equal: false}},',
    `next_after (pass back as after; null when done; at most ${CONTRADICTION_LIMITS.slots_scanned} slots are examined per call), slots_examined, caveats and a receipt binding every cited fact_cid and cell (and the scope).`,
    "record: true (REST only; refused over MCP) also writes one responder-signed memory.edge {type: contradicts, from: newer, to: older} per pair not yet joined by one, in the facts' scope; recorded.edge_fact_cids lists them and the receipt binds them as edge_cids.",
    "Next: fetch both fact_cids, GET /v1/contributors for the attesters' reputation, POST /v1/edges/recall on a fact_cid for recorded contradictions, explain for prose.",
  ].join(' '),
  tags: ['memory'],
  input: Type.Object(
    {
      cell: Type.Optional(Cell),
      cells: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: CONTRADICTION_LIMITS.cells, description: 'cell64s (or svc:cell: tokens)' })),
      bbox: Type.Optional(Type.Array(Type.Number(), { minItems: 4, maxItems: 4, description: '[west, south, east, north] in degrees' })),
      // Any object here: its rings are checked by the primitive (parsePolygon), naming the path.
      polygon: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'GeoJSON Polygon or MultiPolygon ([lng, lat] positions)' })),
      bands: Type.Optional(Type.Array(bandKey, { minItems: 1, maxItems: CONTRADICTION_LIMITS.bands, description: 'namespaced band keys (see /v1/bands)' })),
      scope: Type.Optional(Scope),
      after: Type.Optional(Type.String({ minLength: 1, maxLength: 600, description: 'next_after of a previous answer' })),
      limit: Type.Integer({
        minimum: CONTRADICTION_LIMITS.limit.min,
        maximum: CONTRADICTION_LIMITS.limit.max,
        default: CONTRADICTION_LIMITS.limit.default,
        description: "contradictions per page; a slot's pairs are never split, so a page may pass it only when one slot alone has more",
      }),
      record: Type.Boolean({ default: false, description: 'REST only (refused over MCP): also record each new pair as a responder-signed contradicts edge' }),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    contradictions: Type.Array(
      Closed({
        cell: Type.String(),
        band: Type.String(),
        tslot: Type.Integer(),
        kind: OneOf(['scalar', 'vector', 'categorical'] as const),
        a: { ...Side, description: 'the newer fact (a recorded contradicts edge points from it)' },
        b: { ...Side, description: 'the older fact' },
        measure: Measure,
      }),
    ),
    next_after: Nullable(Type.String({ description: 'pass back as after; null when done' })),
    slots_examined: Type.Integer(),
    filters: Closed({ cells: Nullable(Type.Integer()), bands: Nullable(Strings), region: Type.Optional(Closed({ method: Type.String(), exhaustive: Type.Boolean() })) }),
    recorded: Type.Optional(
      Closed(
        {
          edges: Type.Array(Closed({ edge_cid: Type.String(), from: Type.String(), to: Type.String(), created: Type.Boolean({ description: 'false: a contradicts edge already joined the pair' }) })),
          edge_fact_cids: Strings,
          created: Type.Integer(),
        },
        'only with record: true',
      ),
    ),
    caveats: Caveats,
  }),
  mcp: 'full',
  run: (ctx, input, call) => memoryContradictions(ctx, input, { allowRecord: overRest(call), deadline: call.deadline, ip: call.ip }),
});

export const temporalRouteOp = defineOperation({
  name: 'temporal_route',
  method: 'POST',
  path: '/v1/temporal_route',
  summary: "Per band at a cell: cite the stored value now, or fetch first — from the band cadence, the newest fact's age and your intent",
  description: [
    'Use before answering a question that depends on time ("is it raining now", "trend since 2020") to know which stored facts are fresh enough to cite.',
    'Give cell (cell64 or place), bands (1..32; default: the bands stored at the cell), intent (your task in words), max_age_s (seconds for every band, or {band: seconds}; overrides the rules), scope.',
    `Rules, first that applies: max_age_s; static band → any age; intent words ${FRESH_WORDS.join('/')} → one cadence; ${HISTORY_WORDS.join('/')} → any age; otherwise ${DEFAULT_CADENCE_FACTOR} × cadence. Age is the observation's: from the fact's capture time, else the end of its tslot, never later than its signed_at (a value signed now about a slot a year back is a year old).`,
    'Returns routes[] {band, decision: cite_now | fetch_for_intent, reasoning {cadence_s, newest_fact_cid, newest_age_s, age_from, newest_signed_age_s (shown, never decides), intent_class, max_age_s (null: any), rule, because}, follow_up (the literal call: method, path, body; materializes false when it would bring nothing new)},',
    'facts[] (the cite_now facts, each signed) and a receipt binding every fact the routes name. Nothing is fetched here.',
    'Next: replay each follow_up, then recall or fetch the band; cite the facts of cite_now routes directly.',
  ].join(' '),
  tags: ['memory'],
  input: Type.Object(
    {
      cell: Cell,
      bands: Type.Optional(Type.Array(bandKey, { minItems: 1, maxItems: TEMPORAL_ROUTE_MAX_BANDS, description: 'namespaced band keys (default: the bands already stored at the cell)' })),
      intent: Type.Optional(Type.String({ maxLength: 2000, description: 'what you mean to do, in words ("current conditions for a hike today", "10-year trend")' })),
      max_age_s: Type.Optional(
        Type.Union([Type.Integer({ minimum: 0 }), Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { maxProperties: TEMPORAL_ROUTE_MAX_BANDS })], {
          description: 'maximum age in seconds: one integer for every band, or {band: seconds}',
        }),
      ),
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    cell: Type.String(),
    place: Type.Optional(PlaceResolved),
    intent: Closed({
      text: Nullable(Type.String()),
      class: OneOf(['fresh', 'historical', 'default'] as const),
      matched: Type.Array(Type.String(), { description: 'the words that decided the class' }),
    }),
    routes: Type.Array(
      Closed({
        band: Type.String(),
        decision: OneOf(['cite_now', 'fetch_for_intent'] as const),
        reasoning: Closed({
          cadence_s: Type.Number(),
          newest_fact_cid: Nullable(Type.String()),
          newest_kind: Nullable(Type.String()),
          newest_age_s: Nullable(Type.Number({ description: 'age of the observation the newest fact describes; decides' })),
          age_from: Nullable(OneOf(['captured_at', 'tslot_end', 'signed_at', 'accepted_at'] as const)),
          newest_signed_age_s: Nullable(Type.Number({ description: 'seconds since the newest fact was signed; shown, never decides' })),
          intent_class: OneOf(['fresh', 'historical', 'default'] as const),
          max_age_s: Nullable(Type.Number({ description: 'null: any age' })),
          rule: Type.String(),
          because: Type.String(),
        }),
        follow_up: Nullable(FollowUp),
      }),
    ),
    facts: Type.Array(ServedFact, { description: 'the cite_now facts, each signed' }),
    caveats: Caveats,
  }),
  mcp: 'full',
  run: (ctx, input) => temporalRoute(ctx, input),
});

export const explainOp = defineOperation({
  name: 'explain',
  method: 'POST',
  path: '/v1/explain',
  summary: 'Plain-prose explanation of a read you hold (or of fact_cids), verified first; the prose is NOT signed',
  description: [
    'Use to turn a read (recall, fetch, a shortcut, query_region…) into sentences for a person, or to check what a saved response says.',
    `Give response (the whole read response: facts and receipt) or fact_cids (1..${EXPLAIN_MAX_FACTS}); scope and its bearer to include scoped facts.`,
    "The response is checked with the whole-response verifier first; each cited fact is read again from this responder's store and described by fixed templates (no language model):",
    'band title, value and unit (class label, absence reason), cell and time, who signed it and when, provenance class.',
    'Returns {explanation (text), signed: false, cites (the fact_cids described: the only evidence), verified (response verified and signed by this responder; null for fact_cids), verification, per_fact[], caveats}.',
    'There is no receipt: this answer is unsigned. Cite the fact_cids, never the prose; verify_receipt re-checks the original response.',
  ].join(' '),
  tags: ['memory'],
  input: Type.Object(
    {
      // Any object: what is wrong with it is part of the answer (verification), not a 422.
      response: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'a read response as returned (facts[] and receipt)' })),
      fact_cids: Type.Optional(Type.Array(B32Key, { minItems: 1, maxItems: EXPLAIN_MAX_FACTS })),
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Closed({
    explanation: Type.String({ description: 'plain prose, NOT signed' }),
    signed: Type.Literal(false),
    cites: Type.Array(Type.String(), { description: 'the fact_cids described: the only evidence' }),
    verified: Nullable(Type.Boolean({ description: 'response verified and signed by this responder; null for fact_cids' })),
    verification: Type.Optional(
      Closed({
        valid: Type.Boolean(),
        signers: Strings,
        signed_by_this_responder: Type.Boolean(),
        receipts: Type.Integer(),
        facts_checked: Type.Integer(),
        failures: Strings,
        errors: Strings,
      }),
    ),
    per_fact: Type.Array(FactExplanation),
    caveats: Caveats,
  }),
  mcp: 'full',
  run: (ctx, input, call) => explain(ctx, input, { authorization: call.headers.authorization }),
});

/** The operations of this file, for the operation table. */
export const INSIGHT_OPS: readonly Operation[] = [memoryContradictionsOp, temporalRouteOp, explainOp];
