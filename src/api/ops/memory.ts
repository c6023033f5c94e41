/**
 * Agent memory over the API (docs/memory.md): notes and their search, typed edges and their
 * bi-temporal recall. Writes take the attest envelope signed by the agent's own key and are REST
 * only; reads are MCP tools in /mcp/full. A read naming a scope runs only with that scope's
 * bearer (the operation table's guard, docs/scopes.md).
 */
import { MAX_EDGES_PER_WRITE, MAX_EDGES_RETURNED, recallEdges, writeEdges } from '../../primitives/memory/edges.js';
import { MAX_NOTES_PER_WRITE, MAX_RADIUS_M, MAX_RESULTS, searchNotes, writeNotes } from '../../primitives/memory/notes.js';
import { Type } from '@sinclair/typebox';
import { EDGE_TYPES } from '../../store/memory.js';
import { defineOperation, type Operation } from '../operations.js';
import { B32Key, Cell, OneOf, Rfc3339, Scope } from '../schemas/inputs.js';
import { AttestAnswer, AnyValue, Closed, Nullable, ServedFact, Signed } from '../schemas/responses.js';
import { signedRecordsSchema } from './signed-batch.js';

const cid = Type.String({ description: 'fact_cid or entity_cid (b32)' });
const time = Nullable(Type.String({ description: 'RFC 3339' }));

/** An edge as recall serves it. */
const Edge = Closed({
  edge_cid: Type.String(),
  type: Type.String(),
  from: cid,
  to: cid,
  valid_from: time,
  valid_to: time,
  closed_at: time,
  closed_by: Nullable(Type.String()),
  effective_valid_to: time,
  stated_by: Nullable(Type.String()),
  attester: Type.String(),
  recorded_at: Type.String(),
});

/** A written edge as the write answers it. */
const WrittenEdge = Closed({ edge_cid: Type.String(), type: AnyValue, from: AnyValue, to: AnyValue, valid_from: AnyValue, valid_to: Type.Optional(AnyValue) });

export const memoryNotesOp = defineOperation({
  name: 'memory_notes',
  method: 'POST',
  path: '/v1/memory/notes',
  summary: 'Write 1..256 agent notes (memory.note records) signed with the agent key',
  description:
    'Each note value: {text (1..8000 chars), cell?, entity?, facts? (fact_cids), tags? (≤ 32), observed_at?, vector? (2..1024 numbers)}. A note in a scope needs a key bound to that scope. A key may write notes until it has SVC_NOTE_DAILY_QUOTA facts accepted in the UTC day (default 10 000, see /v1/limits): a batch passing it is refused whole, 429 compute_quota_exceeded with retry_after (seconds to 00:00 UTC). Returns the attest result (fact_cids, log_index, merkle_proofs, receipt) and notes[] {fact_cid, subject}. Search them with POST /v1/memory/search.',
  tags: ['memory'],
  input: signedRecordsSchema('memory.note', MAX_NOTES_PER_WRITE, 'memory.note records'),
  output: Signed({ ...AttestAnswer, notes: Type.Array(Closed({ fact_cid: Type.String(), subject: Type.String({ description: 'svc:entity:<anchor> the note is filed under' }) })) }),
  mcp: false,
  run: (ctx, input) => writeNotes(ctx, input),
});

export const memorySearchOp = defineOperation({
  name: 'memory_search',
  method: 'POST',
  path: '/v1/memory/search',
  summary: 'Search agent notes: full-text ranking by the store engine, cosine over agent vectors, filters by scope, place, time, tags, entity and author',
  description:
    'Use to recall what agents wrote about a place, entity or topic. query: free words (ranked by SQLite FTS5 bm25 or PostgreSQL ts_rank_cd; no operators); vector: your own embedding of the query, compared with the vectors agents stored on notes. text_score: the engine score divided by the best candidate score (0..1). Score: text only → text_score; vector only → (cosine+1)/2; both → weighted blend (weights, default 0.5/0.5); filters only → newest first, score null. Returns results[] {fact_cid, score, text_score, cosine, distance_m?, attester, accepted_at, note, fact (signed body + receipt)} and one receipt binding every result. Without scope only public notes are searched; with scope, send its bearer (HTTP header Authorization: Bearer, on the REST or the MCP request). Busy: at most SVC_MEMORY_SEARCH_CONCURRENCY searches run at once per process; more get 503 overloaded with retry_after (retry then). Next: POST /v1/edges/recall on a result fact_cid, or /v1/entity/resolve for an entity it names.',
  tags: ['memory'],
  input: Type.Object(
    {
      query: Type.Optional(Type.String({ maxLength: 1000 })),
      vector: Type.Optional(Type.Array(Type.Number(), { minItems: 2, maxItems: 1024 })),
      scope: Type.Optional(Scope),
      tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32, description: 'every tag must be on the note' })),
      entity: Type.Optional(Type.String({ minLength: 26, maxLength: 200, description: 'entity_cid or svc:entity: token the notes are about' })),
      cell: Type.Optional({ ...Cell, description: 'notes at this cell (cell64, token or place name); with radius_m, around its centre' }),
      radius_m: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_RADIUS_M })),
      observed_from: Type.Optional(Rfc3339),
      observed_to: Type.Optional(Rfc3339),
      as_of: Type.Optional({ ...Rfc3339, description: 'transaction time: only notes this responder had accepted by then' }),
      authors: Type.Optional(Type.Array(B32Key, { maxItems: 32 })),
      limit: Type.Integer({ minimum: 1, maximum: MAX_RESULTS, default: 10 }),
      weights: Type.Optional(
        Type.Object({ text: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })), vector: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })) }, { additionalProperties: false }),
      ),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    query: Nullable(Type.String()),
    ranking: OneOf(['text', 'vector', 'hybrid', 'newest'] as const),
    engine: Type.String({ description: 'the store engine that ranked the text' }),
    weights: Type.Optional(Type.Object({ text: Type.Number(), vector: Type.Number() }, { additionalProperties: false })),
    results: Type.Array(
      Closed({
        fact_cid: Type.String(),
        score: Nullable(Type.Number()),
        text_score: Nullable(Type.Number()),
        cosine: Nullable(Type.Number()),
        distance_m: Type.Optional(Type.Number()),
        attester: Type.String(),
        accepted_at: Type.String(),
        note: AnyValue,
        fact: ServedFact,
      }),
    ),
    vector_scan_truncated: Type.Optional(Type.Boolean()),
  }),
  mcp: 'full',
  run: (ctx, input) => searchNotes(ctx, input),
});

export const edgesWriteOp = defineOperation({
  name: 'edges',
  method: 'POST',
  path: '/v1/edges',
  summary: 'Write 1..256 typed, bi-temporal edges (memory.edge records) signed with the agent key',
  description: `Each edge value: {type (${EDGE_TYPES.filter((t) => t !== 'supersedes' && t !== 'derived_from').join(', ')}), from, to (fact_cid or entity_cid), valid_from, valid_to?, invalidates? (edge_cids it closes), reason?}. part_of, located_in and owned_by hold one target at a time: a newer one closes the older one's valid time. Nothing is erased. Returns the attest result and edges[] {edge_cid (= the record's fact_cid), type, from, to, valid_from}.`,
  tags: ['memory'],
  input: signedRecordsSchema('memory.edge', MAX_EDGES_PER_WRITE, 'memory.edge records'),
  output: Signed({ ...AttestAnswer, contradicts: Type.Unknown({ description: 'responder-signed contradicts edges this write caused (docs/memory.md)' }), edges: Type.Array(WrittenEdge) }),
  mcp: false,
  run: (ctx, input) => writeEdges(ctx, input),
});

export const edgesRecallOp = defineOperation({
  name: 'edges_recall',
  method: 'POST',
  path: '/v1/edges/recall',
  summary: 'Typed edges into or out of a record, as of a valid time and a transaction time',
  description:
    'Use to follow what a fact or entity is linked to (derived_from, contradicts, part_of, same_as …) and to ask what held at a time (valid_at) as it was known at a time (recorded_at). Returns edges[] {edge_cid, type, from, to, valid_from, valid_to, closed_at, closed_by, effective_valid_to, stated_by, attester, recorded_at} and a receipt whose edge_cids bind the listed edges and whose fact_cids are the records stating them (fetch them with /v1/fetch). Next: /v1/fetch or /v1/memory_token/resolve on from/to.',
  tags: ['memory'],
  input: Type.Object(
    {
      record: Type.String({ minLength: 26, maxLength: 400, description: 'fact_cid, entity_cid, or an svc:fact:/svc:entity: token' }),
      direction: OneOf(['out', 'in', 'both'] as const, { default: 'both' }),
      types: Type.Optional(Type.Array(OneOf(EDGE_TYPES), { maxItems: EDGE_TYPES.length })),
      valid_at: Type.Optional({ ...Rfc3339, description: 'valid-time as-of: edges whose valid interval (closures included) contains this instant' }),
      recorded_at: Type.Optional({ ...Rfc3339, description: 'transaction-time as-of: edges and closures recorded by then only' }),
      scope: Type.Optional(Scope),
      limit: Type.Integer({ minimum: 1, maximum: MAX_EDGES_RETURNED, default: 100 }),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    record: Type.String(),
    direction: Type.String(),
    valid_at: Type.Optional(Type.String()),
    recorded_at: Type.Optional(Type.String()),
    edges: Type.Array(Edge),
    truncated: Type.Boolean(),
  }),
  mcp: 'full',
  run: (ctx, input) => recallEdges(ctx, input),
});

export const MEMORY_OPS: Operation[] = [memoryNotesOp, memorySearchOp, edgesWriteOp, edgesRecallOp];
