/** Question answering (docs/ask.md): POST /v1/ask, MCP tool `<prefix>_ask` (core). */
import { ask, type AskRequest } from '../../primitives/ask/ask.js';
import { ASK_REPLY_CAP_BYTES } from '../../primitives/ask/size.js';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../primitives/context/context.js';
import { STATE_KEEPS, resolveState } from '../../primitives/ask/state-store.js';
import { scopeSchema, type Operation } from '../operations.js';
import { runOperation } from '../routes/operations.js';

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

export const askOp: Operation = {
  name: 'ask',
  method: 'POST',
  path: '/v1/ask',
  summary: 'Answer a plain question about a place from signed facts: place, topic, facts, algorithms, next calls',
  description: DESCRIPTION,
  tags: ['ask'],
  input: {
    type: 'object',
    required: ['q'],
    additionalProperties: false,
    properties: {
      q: { type: 'string', minLength: 1, maxLength: 2000, description: 'the question, e.g. "Is Lyon flooded?", "How green is 東京 since 2020?", "places like the Sahara"' },
      place: { type: 'string', minLength: 1, maxLength: 300, description: 'place name (else the place named in q is used)' },
      cell: { type: 'string', minLength: 1, maxLength: 100, description: 'cell64 or svc:cell: token' },
      lat: { type: 'number', minimum: -90, maximum: 90, description: 'WGS-84 latitude (with lng)' },
      lng: { type: 'number', minimum: -180, maximum: 180, description: 'WGS-84 longitude (with lat)' },
      include_image: { type: 'boolean', description: 'add image_url, the cell\'s true-colour scene.png (default false)' },
      verbose: { type: 'boolean', description: `full formulas, band metadata and place polygons (default false: reply under ${ASK_REPLY_CAP_BYTES / 1000} KB)` },
      keep: {
        type: 'string', enum: [...STATE_KEEPS],
        description: 'where the answer step (your question text included) is kept for its svc:state: token: "transient" (default) outside the public log, deleted after the retention window (see /v1/limits); "public" as a signed fact in the public append-only log, forever; "scope" as a signed fact in your scope (with scope and its bearer)',
      },
      scope: { ...scopeSchema, description: 'with keep: "scope" only: the scope the answer step is kept in (send its bearer as Authorization: Bearer)' },
    },
  },
  mcp: 'core',
  // It keeps the answer step (outside the log by default): not a pure read.
  readOnly: false,
  run: (ctx, input: AskRequest, call) => ask(ctx, input, { deadline: call.deadline }),
};

const stateToken = { type: 'string', minLength: 1, maxLength: 120, description: 'an svc:state: token from /v1/ask, or its bare fact_cid' } as const;

export const stateResolveOp: Operation = {
  name: 'state_resolve',
  method: 'POST',
  path: '/v1/state/resolve',
  summary: 'Resolve an svc:state: token to the answer step it names (also GET /v1/state/<fact_cid>)',
  description: [
    'Use when an agent hands you an svc:state: token, or to re-read an answer of /v1/ask later exactly as it was given.',
    'Returns token, state (the step: question, routing, place, the cells and fact_cids its receipt bound, the answer text, and that receipt\'s request_id, served_at and signature),',
    'kept (transient: outside the log until kept_until; public or scope: a durable fact), record_cid (recompute it from state), fact (durable steps: the step as a responder-signed fact with its own receipt) and a receipt.',
    'Unknown or expired ids → cid_not_found; a step kept in a scope resolves only with that scope\'s bearer.',
    'Next: fetch any of state.fact_cids with fetch, or verify the whole answer with verify_receipt.',
  ].join(' '),
  tags: ['ask'],
  input: { type: 'object', required: ['token'], additionalProperties: false, properties: { token: stateToken } },
  mcp: 'full',
  run: (ctx, input: { token: string }, call) => resolveState(ctx, input.token, call.headers.authorization),
};

/** The operations of this file, for the operation table. */
export const ASK_OPS: readonly Operation[] = [askOp, stateResolveOp];

/** REST route with a path parameter: GET /v1/state/:cid. Register with `await stateRoutes(app, ctx)`. */
export async function stateRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get('/v1/state/:cid', {
    schema: { summary: stateResolveOp.summary, tags: stateResolveOp.tags, params: { type: 'object', required: ['cid'], properties: { cid: stateToken } } },
  }, async (req) => runOperation(ctx, stateResolveOp, { token: (req.params as { cid: string }).cid }, req.headers, 'rest', req.ip));
}
