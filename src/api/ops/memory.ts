/**
 * Agent memory over the API (docs/memory.md): notes and their search, typed edges and their
 * bi-temporal recall. Writes take the attest envelope signed by the agent's own key and are REST
 * only; reads are MCP tools in /mcp/full. A read naming a scope runs only with that scope's
 * bearer (the operation table's guard, docs/scopes.md).
 */
import { MAX_EDGES_PER_WRITE, MAX_EDGES_RETURNED, recallEdges, writeEdges } from '../../primitives/memory/edges.js';
import { MAX_NOTES_PER_WRITE, MAX_RADIUS_M, MAX_RESULTS, searchNotes, writeNotes } from '../../primitives/memory/notes.js';
import { EDGE_TYPES } from '../../store/memory.js';
import { b32KeySchema, cellSchema, scopeSchema, type Operation } from '../operations.js';
import { signedRecordsSchema } from './signed-batch.js';

const rfc3339 = { type: 'string', minLength: 10, maxLength: 40, description: 'RFC 3339 time' } as const;

export const memoryNotesOp: Operation = {
  name: 'memory_notes',
  method: 'POST',
  path: '/v1/memory/notes',
  summary: 'Write 1..256 agent notes (memory.note records) signed with the agent key',
  description: 'Each note value: {text (1..8000 chars), cell?, entity?, facts? (fact_cids), tags? (≤ 32), observed_at?, vector? (2..1024 numbers)}. A note in a scope needs a key bound to that scope. A key may write notes until it has SVC_NOTE_DAILY_QUOTA facts accepted in the UTC day (default 10 000, see /v1/limits): a batch passing it is refused whole, 429 compute_quota_exceeded with retry_after (seconds to 00:00 UTC). Returns the attest result (fact_cids, log_index, merkle_proofs, receipt) and notes[] {fact_cid, subject}. Search them with POST /v1/memory/search.',
  tags: ['memory'],
  input: signedRecordsSchema('memory.note', MAX_NOTES_PER_WRITE, 'memory.note records'),
  mcp: false,
  run: (ctx, input) => writeNotes(ctx, input),
};

export const memorySearchOp: Operation = {
  name: 'memory_search',
  method: 'POST',
  path: '/v1/memory/search',
  summary: 'Search agent notes: full-text ranking by the store engine, cosine over agent vectors, filters by scope, place, time, tags, entity and author',
  description: 'Use to recall what agents wrote about a place, entity or topic. query: free words (ranked by SQLite FTS5 bm25 or PostgreSQL ts_rank_cd; no operators); vector: your own embedding of the query, compared with the vectors agents stored on notes. text_score: the engine score divided by the best candidate score (0..1). Score: text only → text_score; vector only → (cosine+1)/2; both → weighted blend (weights, default 0.5/0.5); filters only → newest first, score null. Returns results[] {fact_cid, score, text_score, cosine, distance_m?, attester, accepted_at, note, fact (signed body + receipt)} and one receipt binding every result. Without scope only public notes are searched; with scope, send its bearer (HTTP header Authorization: Bearer, on the REST or the MCP request). Busy: at most SVC_MEMORY_SEARCH_CONCURRENCY searches run at once per process; more get 503 overloaded with retry_after (retry then). Next: POST /v1/edges/recall on a result fact_cid, or /v1/entity/resolve for an entity it names.',
  tags: ['memory'],
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      query: { type: 'string', maxLength: 1000 },
      vector: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 1024 },
      scope: scopeSchema,
      tags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, maxItems: 32, description: 'every tag must be on the note' },
      entity: { type: 'string', minLength: 26, maxLength: 200, description: 'entity_cid or svc:entity: token the notes are about' },
      cell: { ...cellSchema, description: 'notes at this cell (cell64, token or place name); with radius_m, around its centre' },
      radius_m: { type: 'number', minimum: 0, maximum: MAX_RADIUS_M },
      observed_from: rfc3339,
      observed_to: rfc3339,
      as_of: { ...rfc3339, description: 'transaction time: only notes this responder had accepted by then' },
      authors: { type: 'array', items: b32KeySchema, maxItems: 32 },
      limit: { type: 'integer', minimum: 1, maximum: MAX_RESULTS, default: 10 },
      weights: { type: 'object', additionalProperties: false, properties: { text: { type: 'number', minimum: 0, maximum: 1 }, vector: { type: 'number', minimum: 0, maximum: 1 } } },
    },
  },
  mcp: 'full',
  run: (ctx, input) => searchNotes(ctx, input),
};

export const edgesWriteOp: Operation = {
  name: 'edges',
  method: 'POST',
  path: '/v1/edges',
  summary: 'Write 1..256 typed, bi-temporal edges (memory.edge records) signed with the agent key',
  description: `Each edge value: {type (${EDGE_TYPES.filter((t) => t !== 'supersedes' && t !== 'derived_from').join(', ')}), from, to (fact_cid or entity_cid), valid_from, valid_to?, invalidates? (edge_cids it closes), reason?}. part_of, located_in and owned_by hold one target at a time: a newer one closes the older one's valid time. Nothing is erased. Returns the attest result and edges[] {edge_cid (= the record's fact_cid), type, from, to, valid_from}.`,
  tags: ['memory'],
  input: signedRecordsSchema('memory.edge', MAX_EDGES_PER_WRITE, 'memory.edge records'),
  mcp: false,
  run: (ctx, input) => writeEdges(ctx, input),
};

export const edgesRecallOp: Operation = {
  name: 'edges_recall',
  method: 'POST',
  path: '/v1/edges/recall',
  summary: 'Typed edges into or out of a record, as of a valid time and a transaction time',
  description: 'Use to follow what a fact or entity is linked to (derived_from, contradicts, part_of, same_as …) and to ask what held at a time (valid_at) as it was known at a time (recorded_at). Returns edges[] {edge_cid, type, from, to, valid_from, valid_to, closed_at, closed_by, effective_valid_to, stated_by, attester, recorded_at} and a receipt whose edge_cids bind the listed edges and whose fact_cids are the records stating them (fetch them with /v1/fetch). Next: /v1/fetch or /v1/memory_token/resolve on from/to.',
  tags: ['memory'],
  input: {
    type: 'object',
    required: ['record'],
    additionalProperties: false,
    properties: {
      record: { type: 'string', minLength: 26, maxLength: 400, description: 'fact_cid, entity_cid, or an svc:fact:/svc:entity: token' },
      direction: { type: 'string', enum: ['out', 'in', 'both'], default: 'both' },
      types: { type: 'array', items: { type: 'string', enum: [...EDGE_TYPES] }, maxItems: EDGE_TYPES.length },
      valid_at: { ...rfc3339, description: 'valid-time as-of: edges whose valid interval (closures included) contains this instant' },
      recorded_at: { ...rfc3339, description: 'transaction-time as-of: edges and closures recorded by then only' },
      scope: scopeSchema,
      limit: { type: 'integer', minimum: 1, maximum: MAX_EDGES_RETURNED, default: 100 },
    },
  },
  mcp: 'full',
  run: (ctx, input) => recallEdges(ctx, input),
};

export const MEMORY_OPS: Operation[] = [memoryNotesOp, memorySearchOp, edgesWriteOp, edgesRecallOp];
