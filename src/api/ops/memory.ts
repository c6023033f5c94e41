/**
 * Agent memory over the API (docs/memory.md): notes and their search, typed edges and their
 * bi-temporal recall. Writes take the attest envelope signed by the agent's own key and are REST
 * only; reads are MCP tools in /mcp/full. A read naming a scope runs only with that scope's
 * bearer (the operation table's guard, docs/scopes.md).
 */
import { MAX_EDGES_PER_WRITE, MAX_EDGES_RETURNED, recallEdges, writeEdges } from '../../primitives/memory/edges.js';
import { MAX_NOTES_PER_WRITE, writeNotes } from '../../primitives/memory/notes.js';
import { MAX_CONTEXT, MAX_RADIUS_M, MAX_RESULTS, searchNotes } from '../../primitives/memory/note-search.js';
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
    'Each note value: {text (1..8000 chars), cell?, entity?, facts? (fact_cids), tags? (≤ 32), observed_at?, vector? (2..1024 numbers), speaker? (who said it, ≤ 100 chars: searched as its own field), thread? (conversation or session id, ≤ 128 chars: search context returns neighbours in it)}. A note in a scope needs a key bound to that scope. A key may write notes until it has SVC_NOTE_DAILY_QUOTA facts accepted in the UTC day (default 10 000, see /v1/limits): a batch passing it is refused whole, 429 compute_quota_exceeded with retry_after (seconds to 00:00 UTC). Returns the attest result (fact_cids, log_index, merkle_proofs, receipt) and notes[] {fact_cid, subject}. Search them with POST /v1/memory/search.',
  tags: ['memory'],
  input: signedRecordsSchema('memory.note', MAX_NOTES_PER_WRITE, 'memory.note records'),
  output: Signed({ ...AttestAnswer, notes: Type.Array(Closed({ fact_cid: Type.String(), subject: Type.String({ description: 'svc:entity:<anchor> the note is filed under' }) })) }),
  mcp: false,
  run: (ctx, input) => writeNotes(ctx, input),
});

/** A note as search serves it (a hit or a neighbour in its thread). */
const NoteServed = {
  fact_cid: Type.String(),
  attester: Type.String(),
  accepted_at: Type.String(),
  observed_at: Nullable(Type.String({ description: "the note's valid time: its observed_at, else its signed_at" })),
  note: AnyValue,
  fact: ServedFact,
};

const { fact_cid: _cid, ...ContextServed } = NoteServed;

export const memorySearchOp = defineOperation({
  name: 'memory_search',
  method: 'POST',
  path: '/v1/memory/search',
  summary:
    'Search agent notes: BM25F over text, speaker and tags (same on every store), time expressions, cosine over agent vectors, thread context, filters by scope, place, time, tags, entity and author',
  description:
    'Use to recall what agents wrote or heard: facts about a place, entity, person or topic, and when. query: natural words or a question ("when did Caroline go camping?"); question words are set aside, the rest ranked by BM25F over the note text, its speaker and its tags with the searched scope\'s own statistics, a proximity bonus (feedback: true adds terms from the best notes of a first pass); a time expression in the query ("in May 2023", "last week", "since 2024") boosts notes observed inside it (time: "off" to disable; interpretation says what was read). vector: your own embedding of the query, compared with the vectors stored on notes. text_score: the note\'s score over the best candidate\'s (0..1). Score: text only → text_score; vector only → max(0, cosine)/best_cosine; both → weighted blend (weights, default 0.5/0.5; both parts 0..1, so a weight means what it says); ×10 inside the query\'s time window (so those notes come first); filters only → newest first, score null. Returns results[] {fact_cid, score, text_score, cosine, observed_at (answer "when" from it), in_time_window?, distance_m?, attester, accepted_at, note (text, speaker, thread, tags…), fact (signed body + receipt), context? {before, after}: with context: n, the n notes on each side in the note\'s thread}, interpretation {terms, set_aside, feedback?, time?}, and one receipt binding every note returned. Without scope only public notes are searched; with scope, send its bearer (HTTP header Authorization: Bearer, on the REST or the MCP request). Busy: at most SVC_MEMORY_SEARCH_CONCURRENCY searches run at once per process; more get 503 overloaded with retry_after (retry then). Next: a narrower query or observed_from/observed_to, context: 2 to read around a hit, POST /v1/edges/recall on a result fact_cid, or /v1/entity/resolve for an entity it names.',
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
      time: Type.Optional(OneOf(['auto', 'off'] as const, { description: 'auto (default): a time expression in the query boosts notes observed inside it; off: words only' })),
      feedback: Type.Optional(
        Type.Boolean({ description: 'pseudo-relevance feedback: terms from the best notes of a first pass join the query at lower weight (default false: it did not help on the evaluation set)' }),
      ),
      context: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_CONTEXT, description: "notes to return on each side of every hit in the hit's thread (default 0)" })),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    query: Nullable(Type.String()),
    ranking: OneOf(['text', 'vector', 'hybrid', 'newest'] as const),
    engine: Type.Literal('bm25f', { description: "the service's own BM25F over text, speaker and tags (docs/memory.md), the same on every store" }),
    index: OneOf(['sqlite_fts5', 'postgres_gin'] as const, { description: 'the store index that found the candidates' }),
    weights: Type.Optional(Type.Object({ text: Type.Number(), vector: Type.Number() }, { additionalProperties: false })),
    interpretation: Closed({
      terms: Type.Array(Type.String(), { description: 'the terms ranked by (stemmed)' }),
      set_aside: Type.Array(Type.String(), { description: 'question words left out of the ranking' }),
      feedback: Type.Optional(Type.Array(Closed({ term: Type.String(), weight: Type.Number() }), { description: 'feedback terms added, with their weights' })),
      time: Type.Optional(
        Closed({
          expression: Type.String(),
          from: Type.String(),
          to: Type.String(),
          applied: OneOf(['boost', 'filter', 'none'] as const, { description: 'none: observed_from/observed_to were given and win' }),
          boost: Type.Optional(Type.Number({ description: 'the multiplier of a score in the window (with applied: boost)' })),
        }),
      ),
    }),
    results: Type.Array(
      Closed({
        ...NoteServed,
        score: Nullable(Type.Number()),
        text_score: Nullable(Type.Number()),
        cosine: Nullable(Type.Number()),
        distance_m: Type.Optional(Type.Number()),
        in_time_window: Type.Optional(Type.Boolean()),
        context: Type.Optional(
          Closed(
            { before: Type.Array(Closed(ContextServed)), after: Type.Array(Closed(ContextServed)) },
            "the notes just before and after the hit in its thread (log order); each names itself by its signed fact, bound by the fact's own receipt",
          ),
        ),
      }),
    ),
    vector_scan_truncated: Type.Optional(Type.Boolean()),
    best_cosine: Type.Optional(Nullable(Type.Number({ description: 'the best candidate cosine; a vector score is max(0, cosine) / best_cosine' }))),
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
