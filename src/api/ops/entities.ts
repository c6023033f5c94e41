/**
 * Entity operations (docs/entities.md): mint an identity for a real-world object, say that a
 * phrasing means it, resolve a phrasing to ranked candidates, and read everything known about an
 * entity. MCP: resolve and recall are reads (full tier); minting is exposed there too, like
 * minting a memory bundle: it is anonymous, idempotent (same content → same entity, nothing new
 * stored the second time) and metered per client address. Aliases are signed writes: REST only.
 * The scope bearer check of every operation here taking a `scope` (minting included: it writes on
 * behalf of a reader of that scope) is the operation table's guard (index.ts, guardScopedRead).
 */
import { Type } from '@sinclair/typebox';
import { MAX_ALIASES_PER_WRITE, recallEntity, writeAliases, mintEntity } from '../../primitives/memory/entities.js';
import { DEFAULT_LIMIT, MAX_LIMIT, resolveEntity } from '../../primitives/memory/entity-resolve.js';
import { defineOperation, type Operation } from '../operations.js';
import { Bands, OneOf, Scope } from '../schemas/inputs.js';
import { AttestAnswer, Closed, PlaceResolved, ServedFact, Signed, SignedResponse } from '../schemas/responses.js';
import { signedRecordsSchema } from './signed-batch.js';

const EntityRef = Type.String({ minLength: 1, maxLength: 100, description: 'entity_cid (26 base32 characters), svc:entity:<entity_cid> or legacy meme:<entity_cid>' });

const Polygon = Type.Object(
  { type: OneOf(['Polygon'] as const), coordinates: Type.Array(Type.Array(Type.Unknown()), { minItems: 1, maxItems: 64 }) },
  { description: 'GeoJSON Polygon: [[[lng, lat], …]], first ring the boundary, further rings holes; rings closed; at most 4096 positions' },
);

/** A flat attribute value (one JSON Schema type list, as the record rules name it). */
const AttributeValue = Type.Unsafe<string | number | boolean>({ type: ['string', 'number', 'boolean'] });

/** The signed value of an entity record: the identity itself (docs/entities.md). */
const EntityValue = Closed(
  {
    kind: Type.String(),
    name: Type.String(),
    geometry: Type.Union([
      Closed({ cell: Type.String({ description: 'cell64' }) }),
      Closed({
        polygon: Closed({
          type: Type.Literal('Polygon'),
          coordinates: Type.Array(Type.Array(Type.Array(Type.Number(), { minItems: 2, maxItems: 2 })), { description: 'one ring of [lng, lat] positions' }),
        }),
      }),
    ]),
    attributes: Type.Optional(Type.Record(Type.String(), AttributeValue)),
  },
  'the entity (the signed value of its memory.entity record)',
);

const Evidence = Type.Union([
  Closed({
    type: OneOf(['name', 'alias'] as const),
    fact_cid: Type.String(),
    phrase: Type.String(),
    attester: Type.String(),
    text_score: Type.Number({ description: 'relative to the best match (0..1)' }),
  }),
  Closed({ type: Type.Literal('facts'), attester: Type.String(), facts: Type.Integer({ minimum: 0, description: 'facts this key filed under the entity' }) }),
]);

const Candidate = Closed({
  entity_cid: Type.String(),
  token: Type.String(),
  entity: EntityValue,
  score: Type.Number({ description: 'best text score among the matching aliases and name (0..1; 0 for a token)' }),
  corroboration: Closed({
    distinct_attesters: Type.Integer({ minimum: 0 }),
    alias_attesters: Type.Array(Type.String()),
    fact_attesters: Type.Array(Type.String()),
  }),
  evidence: Type.Array(Evidence),
});

export const entityOp = defineOperation({
  name: 'entity',
  method: 'POST',
  path: '/v1/entity',
  summary: 'Get the one stable identity (entity_cid, token svc:entity:<cid>) of a real-world object: a field, building, river, farm …',
  description:
    'Use this before writing or reading anything about a named object, so every agent refers to it by the same id. ' +
    'The identity IS the content {kind, name, geometry, attributes?}: entity_cid = anchor of that value, so the same content always returns the same entity (created: false the second time) and different attributes give a different entity. ' +
    'name is trimmed (case kept); geometry is {cell} (a cell64, svc:cell: token or place name, stored as the cell64) or {polygon} (GeoJSON Polygon). ' +
    'Response {entity_cid, token, created, entity (the signed value), cells (its cell, or up to 64 sample cells of its polygon), fact (the responder-signed memory.entity record with its receipt), place (only when geometry.cell was a place name: check is_high_confidence), receipt}. ' +
    "Next: POST /v1/entity/alias to record other names for it (signed by you), POST /v1/entity/resolve to find it from a phrasing, POST /v1/entity/recall to read its facts and its cells' facts; " +
    "file facts about it with subject (cell) svc:entity:<entity_cid>. A `scope` keeps it private to that scope (needs the scope's Authorization: Bearer header, over REST or MCP). New entities count against a per-address quota (429 rate_limited).",
  tags: ['entities'],
  input: Type.Object(
    {
      kind: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'what sort of object: field, building, river, farm …' }),
      name: Type.String({ minLength: 1, maxLength: 400, description: '1..200 characters after trimming' }),
      geometry: Type.Object(
        { cell: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'cell64, svc:cell: token or place name' })), polygon: Type.Optional(Polygon) },
        { additionalProperties: false, description: 'exactly one of cell, polygon' },
      ),
      attributes: Type.Optional(Type.Record(Type.String(), AttributeValue, { maxProperties: 64, description: 'flat: string, number or boolean values (part of the identity)' })),
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    entity_cid: Type.String({ description: 'anchor of the entity value (26 base32 characters)' }),
    token: Type.String({ description: 'svc:entity:<entity_cid>, to hand to other agents' }),
    created: Type.Boolean({ description: 'false when the same content was minted before' }),
    entity: EntityValue,
    cells: Type.Array(Type.String(), { description: 'its cell, or up to 64 sample cells of its polygon' }),
    fact: { ...ServedFact, description: 'the responder-signed memory.entity record, with its receipt' },
    place: Type.Optional(PlaceResolved),
  }),
  mcp: 'full',
  // It stores what it mints (an entity record in the log; a bundle definition): not a pure read.
  readOnly: false,
  run: (ctx, input, call) => mintEntity(ctx, input, { ip: call.ip }),
});

export const entityAliasOp = defineOperation({
  name: 'entity_alias',
  method: 'POST',
  path: '/v1/entity/alias',
  summary: 'Record, signed by your key, that phrasings mean entities (1..64 memory.alias records)',
  description:
    'The attest envelope (batch_root, attester, signature, facts; docs/writes.md) whose facts are memory.alias records {entity: entity_cid, phrase, lang?}, each filed under svc:entity:<anchorId(value)>. ' +
    "Every named entity must exist in the batch's scope (else 404 cid_not_found naming facts[i].value.entity, checked after the signature; nothing is written). " +
    'Response: the attest result plus aliases [{fact_cid, entity_cid, phrase}]. Distinct keys aliasing an entity corroborate it in POST /v1/entity/resolve.',
  tags: ['entities', 'write'],
  input: signedRecordsSchema('memory.alias', MAX_ALIASES_PER_WRITE, '1..64 memory.alias records, value {entity: entity_cid, phrase: 1..200 characters, lang?}'),
  output: Signed({ ...AttestAnswer, aliases: Type.Array(Closed({ fact_cid: Type.String(), entity_cid: Type.String(), phrase: Type.String() })) }),
  mcp: false,
  run: (ctx, input) => writeAliases(ctx, input),
});

export const entityResolveOp = defineOperation({
  name: 'entity_resolve',
  method: 'POST',
  path: '/v1/entity/resolve',
  summary: "Which entity does a phrasing mean? Ranked candidates with the evidence (distinct attesters' aliases and facts)",
  description:
    'Use this when a user or document names an object ("the north field", "Hoeve de Linde") and you need its entity_cid. ' +
    'Give phrase (matched against entity names and aliases by full text) or token (svc:entity:<cid> / meme:<cid>: that entity alone, or 404 cid_not_found). ' +
    'Candidates are ranked by corroboration.distinct_attesters (distinct keys that aliased the entity with a matching phrase or filed facts under it; the responder, which mints every entity, never counts), then score (best text score), then entity_cid. ' +
    'Response {phrase, token, candidates: [{entity_cid, token, entity, score, corroboration: {distinct_attesters, alias_attesters, fact_attesters}, evidence: [{type: name|alias, fact_cid, phrase, attester, text_score} | {type: facts, attester, facts}]}], receipt (binds every cited fact_cid)}. ' +
    'An empty list means nothing matches here (in this scope). Next: POST /v1/entity/recall with the chosen entity_cid.',
  tags: ['entities'],
  input: Type.Object(
    {
      phrase: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      token: Type.Optional(EntityRef),
      kind: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'only entities of this kind' })),
      limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'candidates returned' }),
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    phrase: Type.Union([Type.String(), Type.Null()], { description: 'the phrase matched (trimmed); null for a token' }),
    token: Type.Union([Type.String(), Type.Null()], { description: 'the token given; null for a phrase' }),
    candidates: Type.Array(Candidate),
  }),
  mcp: 'full',
  run: (ctx, input) => resolveEntity(ctx, input),
});

/** One cell of an entity: recall_many's answer with bands; else its stored facts under a receipt of its own. */
const EntityCell = Type.Union([SignedResponse, Signed({ cell: Type.String(), facts: Type.Array(ServedFact) })]);

export const entityRecallOp = defineOperation({
  name: 'entity_recall',
  method: 'POST',
  path: '/v1/entity/recall',
  summary: 'Everything known about an entity: facts filed under it, plus the facts at its cells',
  description:
    "Recall by entity (POST /v1/recall takes cells; an entity covers one cell or a polygon's sample cells). " +
    'Response {entity_cid, token, entity, cells, own_facts (newest fact per band filed under svc:entity:<cid>, its memory.entity record included), by_cell: {<cell>: {cell, facts, receipt, …}}, receipt (binds own_facts)}. ' +
    "Without bands the cells' stored facts are returned and nothing is fetched; with bands each cell is read like recall_many (materialized on a miss, one receipt per cell). " +
    'Unknown entity (or not in this scope) → 404 cid_not_found.',
  tags: ['entities', 'read'],
  input: Type.Object({ entity: EntityRef, bands: Type.Optional(Bands), scope: Type.Optional(Scope) }, { additionalProperties: false }),
  output: Signed({
    entity_cid: Type.String(),
    token: Type.String(),
    entity: EntityValue,
    cells: Type.Array(Type.String()),
    own_facts: Type.Array(ServedFact, { description: 'newest fact per band filed under svc:entity:<cid>, its memory.entity record included' }),
    by_cell: Type.Record(Type.String(), EntityCell, { description: 'per cell of the entity: its facts and a receipt of its own' }),
  }),
  mcp: 'full',
  run: (ctx, input, call) => recallEntity(ctx, input, { deadline: call.deadline }),
});

/** Every operation of this file, in table order. */
export const ENTITY_OPS: readonly Operation[] = [entityOp, entityAliasOp, entityResolveOp, entityRecallOp];
