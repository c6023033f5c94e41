/** Question answering (docs/ask.md): POST /v1/ask, MCP tool `<prefix>_ask` (core). */
import { Type } from '@sinclair/typebox';
import { ask } from '../../primitives/ask/ask.js';
import { ASK_REPLY_CAP_BYTES } from '../../primitives/ask/size.js';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../primitives/context/context.js';
import { STATE_KEEPS, resolveState } from '../../primitives/ask/state-store.js';
import { defineOperation, type Operation } from '../operations.js';
import { runOperation } from '../routes/operations.js';
import { OneOf, Scope } from '../schemas/inputs.js';
import { AnyValue, Closed, LocateResp, MaterializeNote, NextStep, Nullable, ServedFact, Signed } from '../schemas/responses.js';
import { HuntAlgorithm, HuntRegion, HuntSummary, Hotspot } from './hunt.js';

const DESCRIPTION = [
  'Use this first when you have a question in plain words about a place on Earth and do not know the band keys:',
  'vegetation, water, floods, fire, forests, air quality, weather, terrain, soil, snow, land cover, coasts, drought, methane and the other topics of GET /v1/topics.',
  'Give q (the question); name the place inside q ("NDVI in Lyon, France", "東京", "48.85, 2.35") or pass place, cell or lat+lng (at most one).',
  'Returns: answer (deterministic text built only from the signed facts returned: value, unit, date, source), topic_routing (matched_topics, matched_keywords = why it was routed, out_of_scope),',
  'facts.facts (each signed, with its own receipt), algorithms_for_question (formula and, where the cell has the inputs, the output), place_resolved (check selected.is_high_confidence: the place name is not signed),',
  'foundation_embeddings (neighbours for "places like X", the embedding change for "what changed since Y"), next_steps (literal calls: method, url, body — replay them to fill missing bands, sample the area, compare years),',
  'state.token (an svc:state: token for this answer step; by default kept outside the public log until state.kept_until, keep:"public" or keep:"scope" keeps it durably) and one receipt at the root binding every fact_cid (verify it with verify_receipt).',
  'Out of scope (no Earth-observation topic, e.g. "who is the mayor of Lyon") gives matched_topic null and topic_inventory. "Where are floods in X" is a hunt: /v1/hunt is not served yet, so next_steps holds the call and a workaround read.',
  `Missing or slow bands are said plainly in answer with the retry in next_steps, never filled with zeros. verbose:false (default) keeps the reply under ${ASK_REPLY_CAP_BYTES / 1000} KB; include_image adds the cell's scene.png URL.`,
  'Next: follow next_steps, or call recall / find_similar / trajectory with the cell and bands it names.',
].join(' ');

// ---- the answer's pieces ------------------------------------------------------------------------

/** A slot of an answer sentence: something printed from a signed fact or cell (docs/verification.md). */
const Slot = Type.Union([
  Closed({ reading: Type.String({ description: 'fact_cid of a primary fact: its number with its unit' }), unit: Type.Optional(Type.String()) }),
  Closed({ code: Type.String({ description: 'fact_cid of a categorical fact: its class code' }) }),
  Closed({ dims: Type.String({ description: 'fact_cid of an embedding fact: its dimension count' }) }),
  Closed({ json: Type.String({ description: 'fact_cid of a fact of another shape: its value as JSON' }) }),
  Closed({ absence: Type.String({ description: 'fact_cid of a signed absence: its reason' }) }),
  Closed({ observed: Type.String({ description: 'fact_cid: when it was observed' }), tempo: Type.String() }),
  Closed({ cell: Type.String({ description: 'a cell the receipt binds' }) }),
  Closed({ point: Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: '[lat, lng]' }), cell: Type.String() }),
  Closed({ hotspot: Type.String({ description: 'fact_cid of a hunt hotspot' }), rank: Type.Integer() }),
]);
const Sentence = Type.Array(Type.Union([Type.String(), Slot]));

/** The sentences answer and answer_md render from: words, and slots citing the signed facts and cells. */
const AnswerParts = Closed(
  { lead: Type.Array(Sentence), items: Type.Array(Sentence), notes: Type.Array(Sentence) },
  'answer and answer_md as parts: words, and slots a verifier renders again from the signed facts',
);

const MatchedKeyword = Closed({
  topic: Type.String(),
  keyword: Type.String(),
  matched: Type.String({ description: 'the words of the question that matched' }),
  how: OneOf(['exact', 'stem', 'phrase', 'pattern', 'synonym', 'typo'] as const),
  weight: Type.Number(),
  negated: Type.Optional(Type.Boolean({ description: 'a negation stands just before the match (still routed)' })),
});

/** Why the question went where it went. */
const Routing = Closed({
  method: Type.Literal('lexical'),
  router: Type.String(),
  intent: OneOf(['topical', 'hunt', 'similar', 'change', 'corpus', 'out_of_scope'] as const),
  matched_topic: Nullable(Type.String()),
  scores: Type.Array(Closed({ topic: Type.String(), score: Type.Number() })),
  negated: Type.Boolean(),
  hunt_event: Nullable(Closed({ event: Type.String(), term: Type.String(), algorithm: Nullable(Type.String()) })),
  cues: Type.Array(Type.String()),
  off_topic: Nullable(Type.String()),
  composite: Type.Optional(
    Closed({
      frame: Type.String({ description: 'the composite frame: health, climate, hazard or solar' }),
      cue: Type.String({ description: 'the cue pattern that matched' }),
      topics: Type.Array(Type.String(), { description: 'the other topics the question asks about; next_steps reads their bands' }),
    }),
  ),
  place_text: Nullable(Type.String()),
  place_source: Nullable(OneOf(['place', 'cell', 'latlng', 'question'] as const)),
});

/** An algorithm of the routed topic: its formula and, where the cell has the inputs, its output. */
const Algorithm = Closed({
  key: Type.String(),
  topic: Type.String(),
  formula: Type.String(),
  output: Type.Optional(
    Closed({
      value: Type.Union([Type.Number(), Type.Boolean(), Type.String(), Type.Record(Type.String(), Type.Number())]),
      unit: Type.Optional(Type.String()),
      verdict: Type.String(),
      fact_cids: Type.Array(Type.String()),
    }),
  ),
  missing_bands: Type.Optional(Type.Array(Type.String(), { description: 'input bands without a usable fact at the cell' })),
  needs: Type.Optional(Type.String({ description: 'why it is not computed from one cell' })),
  computed_by: Type.Optional(Type.String({ description: 'the shortcut that computes it' })),
});

/** The place as locate resolved it; verbose:false drops the boundary and shortens the lists. */
const AskPlace = Closed(
  { ...LocateResp.properties, polygon_sample_cells_total: Type.Optional(Type.Integer({ minimum: 0, description: 'verbose:false: how many sample cells the place has' })) },
  'the place as locate resolved it (not signed: check selected.is_high_confidence); verbose:false drops the boundary and shortens the lists',
);

/** The time window the question named. */
const AskTime = Closed({
  expression: Type.String({ description: 'the words of the question' }),
  kind: OneOf(['now', 'day', 'month', 'year', 'window'] as const),
  start_unix: Type.Integer(),
  end_unix: Type.Integer(),
  label: Type.String(),
  tslots: Type.Record(Type.String(), Type.Array(Type.Integer(), { minItems: 2, maxItems: 2 }), { description: 'the window as [first, last] tslot, per tempo' }),
  read_as: Nullable(OneOf(['current', 'history'] as const)),
});

/** The svc:state: token of the answer step and the record it names (docs/ask.md). */
const AskState = Closed({
  token: Type.String(),
  cid: Type.String(),
  record_cid: Type.String({ description: 'content id of record' }),
  record: Type.Optional(
    Closed(
      {
        schema: Type.String(),
        step: Type.Literal('ask'),
        question: Type.String(),
        routing: Closed({
          intent: Type.String(),
          matched_topic: Nullable(Type.String()),
          matched_topics: Type.Array(Type.String()),
          out_of_scope: Type.Boolean(),
          hunt_event: Nullable(Type.String()),
          time: Nullable(Closed({ expression: Type.String(), start_unix: Type.Integer(), end_unix: Type.Integer() })),
        }),
        place: Nullable(Closed({ cell64: Type.String(), label: Type.String(), via: Type.String(), lat: Type.Number(), lng: Type.Number(), is_high_confidence: Type.Boolean() })),
        cells: Type.Array(Type.String()),
        fact_cids: Type.Array(Type.String()),
        answer: Type.String(),
        receipt: Closed({ request_id: Type.String(), served_at: Type.String(), primitive: Type.String(), signature: Type.String() }),
        responder: Type.String(),
        registry_cid: Type.String(),
        schema_cid: Type.String(),
      },
      'the answer step; absent from a non-verbose reply trimmed to its cap (trimmed says so; state_resolve returns it)',
    ),
  ),
  persisted: Type.Boolean({ description: 'whether the token resolves on this responder' }),
  kept: Nullable(OneOf(STATE_KEEPS)),
  kept_until: Nullable(Type.String({ description: 'transient steps: when the token stops resolving' })),
});

export const askOp = defineOperation({
  name: 'ask',
  method: 'POST',
  path: '/v1/ask',
  summary: 'Answer a plain question about a place from signed facts: place, topic, facts, algorithms, next calls',
  description: DESCRIPTION,
  tags: ['ask'],
  input: Type.Object(
    {
      q: Type.String({ minLength: 1, maxLength: 2000, description: 'the question, e.g. "Is Lyon flooded?", "How green is 東京 since 2020?", "places like the Sahara"' }),
      place: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'place name (else the place named in q is used)' })),
      cell: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'cell64 or svc:cell: token' })),
      lat: Type.Optional(Type.Number({ minimum: -90, maximum: 90, description: 'WGS-84 latitude (with lng)' })),
      lng: Type.Optional(Type.Number({ minimum: -180, maximum: 180, description: 'WGS-84 longitude (with lat)' })),
      include_image: Type.Optional(Type.Boolean({ description: "add image_url, the cell's true-colour scene.png (default false)" })),
      verbose: Type.Optional(Type.Boolean({ description: `full formulas, band metadata and place polygons (default false: reply under ${ASK_REPLY_CAP_BYTES / 1000} KB)` })),
      keep: OneOf(STATE_KEEPS, {
        default: 'transient',
        description:
          'where the answer step (your question text included) is kept for its svc:state: token: "transient" (default) outside the public log, deleted after the retention window (see /v1/limits); "public" as a signed fact in the public append-only log, forever; "scope" as a signed fact in your scope (with scope and its bearer)',
      }),
      scope: Type.Optional({ ...Scope, description: 'with keep: "scope" only: the scope the answer step is kept in (send its bearer as Authorization: Bearer)' }),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    hunt: Type.Optional(
      Closed(
        {
          event: Type.String(),
          algorithm: HuntAlgorithm,
          region: HuntRegion,
          cells_sampled: Type.Integer({ minimum: 0 }),
          hotspots: Type.Array(Hotspot),
          empty_reason: Type.Optional(Type.String()),
          summary: HuntSummary,
        },
        "a hunt question over a place with extent: the hunt's hotspots (POST /v1/hunt gives its samples)",
      ),
    ),
    answer: Type.String({ description: 'deterministic text built only from the signed facts returned' }),
    answer_md: Type.String({ description: 'the same as Markdown (empty when trimmed)' }),
    answer_parts: AnswerParts,
    matched_topic: Nullable(Type.String({ description: 'the top topic; null when out of scope' })),
    topic_routing: Closed({ matched_topics: Type.Array(Type.String()), matched_keywords: Type.Array(MatchedKeyword), out_of_scope: Type.Boolean(), routing: Routing }),
    topic_inventory: Type.Optional(Type.Array(Closed({ key: Type.String(), title: Type.String(), description: Type.Optional(Type.String()) }), { description: 'out of scope: every topic served' })),
    facts: Closed({
      facts: Type.Array(ServedFact),
      bands_already_attested_at_cell: Type.Array(Type.String()),
      band_info: Type.Optional(Type.Record(Type.String(), Nullable(Type.Record(Type.String(), AnyValue)), { description: 'verbose: the catalogue entry of each band' })),
    }),
    algorithms_for_question: Type.Array(Algorithm),
    caveats: Type.Array(Type.String()),
    materialize_notes: Type.Array(MaterializeNote),
    place_resolved: Nullable(AskPlace),
    foundation_embeddings: Type.Record(Type.String(), AnyValue, { description: 'per encoder: neighbours (places like X) or the change between two years' }),
    next_steps: Type.Array(NextStep),
    time: Nullable(AskTime),
    image_url: Type.Optional(Type.String()),
    corpus: Type.Optional(Type.Record(Type.String(), AnyValue, { description: "corpus questions: the corpus counts, and the availability of the topic's bands" })),
    state: AskState,
    trimmed: Type.Optional(Type.Array(Type.String(), { description: 'verbose:false: what was cut to fit the cap' })),
  }),
  mcp: 'core',
  // It keeps the answer step (outside the log by default): not a pure read.
  readOnly: false,
  run: (ctx, input, call) => ask(ctx, input, { deadline: call.deadline }),
});

const stateToken = Type.String({ minLength: 1, maxLength: 120, description: 'an svc:state: token from /v1/ask, or its bare fact_cid' });

export const stateResolveOp = defineOperation({
  name: 'state_resolve',
  method: 'POST',
  path: '/v1/state/resolve',
  summary: 'Resolve an svc:state: token to the answer step it names (also GET /v1/state/<fact_cid>)',
  description: [
    'Use when an agent hands you an svc:state: token, or to re-read an answer of /v1/ask later exactly as it was given.',
    "Returns token, state (the step: question, routing, place, the cells and fact_cids its receipt bound, the answer text, and that receipt's request_id, served_at and signature),",
    'kept (transient: outside the log until kept_until; public or scope: a durable fact), record_cid (recompute it from state), fact (durable steps: the step as a responder-signed fact with its own receipt) and a receipt.',
    "Unknown or expired ids → cid_not_found; a step kept in a scope resolves only with that scope's bearer.",
    'Next: fetch any of state.fact_cids with fetch, or verify the whole answer with verify_receipt.',
  ].join(' '),
  tags: ['ask'],
  input: Type.Object({ token: stateToken }, { additionalProperties: false }),
  output: Signed({
    token: Type.String(),
    state: { ...AnyValue, description: 'the answer step as kept (its record)' },
    kept: OneOf(STATE_KEEPS),
    kept_until: Nullable(Type.String({ description: 'transient steps: when the token stops resolving' })),
    record_cid: Type.String({ description: 'content id of state: recompute it to check the record' }),
    fact: Type.Optional({ ...ServedFact, description: 'durable steps: the step as a responder-signed fact' }),
  }),
  mcp: 'full',
  run: (ctx, input, call) => resolveState(ctx, input.token, call.headers.authorization),
});

/** The operations of this file, for the operation table. */
export const ASK_OPS: readonly Operation[] = [askOp, stateResolveOp];

/** REST route with a path parameter: GET /v1/state/:cid. Register with `await stateRoutes(app, ctx)`. */
export async function stateRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get(
    '/v1/state/:cid',
    {
      schema: { summary: stateResolveOp.summary, tags: stateResolveOp.tags, params: Type.Object({ cid: stateToken }) },
    },
    async (req) => runOperation(ctx, stateResolveOp, { token: (req.params as { cid: string }).cid }, req.headers, 'rest', req.ip),
  );
}
