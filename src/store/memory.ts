/**
 * The agent-memory index (docs/memory.md): what both drivers derive from memory records as they
 * index them, and the reads over it. Memory records are facts of the `memory.*` record bands,
 * signed and logged like any fact; the rows here are projections of their bodies (plus the
 * `derived_from` edges a derivative's `derivation.parents` state), so an index rebuilt from the
 * log rebuilds them exactly. This module is pure: both drivers call `projectMemory` on every fact
 * they index for the first time, in log order, inside the same transaction as the fact row.
 *
 * Visibility follows facts: every query names one scope (null: public records only) and sees
 * records written under exactly that scope; nothing here counts across scopes.
 */
import { cellCenter, isCell } from '../protocol/cell64.js';
import { contentId, isAnchorId, isFactCid } from '../protocol/cid.js';
import { parseRfc3339 } from '../protocol/rfc3339.js';
import type { Scope } from '../protocol/receipt.js';

export const NOTE_BAND = 'memory.note';
export const ALIAS_BAND = 'memory.alias';
export const EDGE_BAND = 'memory.edge';
export const ENTITY_BAND = 'memory.entity';

/**
 * Edge types. An exclusive type holds one `to` per `from` at a time: a newer edge of that type
 * from the same record to another target closes the older one's valid time at the newer one's
 * valid_from (Zep/Graphiti-style invalidation: nothing is erased, the older edge stays signed).
 */
export const EDGE_TYPES = ['supersedes', 'derived_from', 'contradicts', 'same_as', 'part_of', 'observed_with', 'located_in', 'owned_by', 'mentions', 'related_to'] as const;
export type EdgeType = (typeof EDGE_TYPES)[number];
export const EXCLUSIVE_EDGE_TYPES: ReadonlySet<string> = new Set(['part_of', 'located_in', 'owned_by']);

/** A note's searchable projection. */
export interface NoteRow {
  fact_cid: string;
  text: string;
  tags: string[];
  /** entity_cid (26 characters) the note is about, or null. */
  entity: string | null;
  cell: string | null;
  /** Centre of `cell` (radius filters), null without a cell. */
  lat: number | null;
  lng: number | null;
  /** Valid time the note speaks of (Unix s): observed_at, else its signed_at; null without either. */
  observed_at: number | null;
  /** Agent-supplied embedding, or null. */
  vector: Float32Array | null;
  /** Who said or wrote what the note records, or null. */
  speaker: string | null;
  /** The conversation or session the note belongs to, or null. */
  thread: string | null;
}

/** An edge as stated by a signed record. Times are Unix seconds. */
export interface EdgeRowIn {
  /** The stating record's fact_cid for a `memory.edge` record; contentId({kind, from, to}) for a derivative's derived_from. */
  edge_cid: string;
  kind: string;
  from: string;
  to: string;
  valid_from: number;
  /** As stated; null: open. */
  valid_to: number | null;
  /** fact_cid of the signed record that states the edge. */
  stated_by: string;
  /** edge_cids this record explicitly closes (at this edge's valid_from). */
  invalidates: string[];
}

export interface AliasRowIn {
  fact_cid: string;
  entity: string;
  phrase: string;
}

/** Rows one indexed fact adds to the memory index (all optional). */
export interface MemoryRows {
  note?: NoteRow;
  alias?: AliasRowIn;
  edges?: EdgeRowIn[];
  /** A derivative fact: listed by `derivedBy` under its batch's attester. */
  derivation?: true;
}

const str = (x: unknown): x is string => typeof x === 'string';
function unixOf(x: unknown): number | null {
  if (!str(x)) return null;
  const ms = parseRfc3339(x);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}
/** A record reference: a fact_cid or entity_cid, bare or as an svc:entity:/svc:fact: token's id. */
export function recordRef(x: unknown): string | null {
  if (!str(x)) return null;
  const bare = x.replace(/^[a-z]+:(?:entity|fact|state|trace|attestation):(?:.*:)?/, '');
  return isFactCid(bare) || isAnchorId(bare) ? bare : null;
}

/** The id in an `svc:entity:<id>` subject, or null. */
export function entityOfSubject(cell: unknown): string | null {
  if (!str(cell)) return null;
  const m = /^[a-z]+:entity:([a-z2-7]{26})$/.exec(cell);
  return m ? m[1] : null;
}

/**
 * Memory rows of a fact being indexed for the first time, or null for an ordinary fact. Bodies
 * were validated on the write path (primitives/write/record-rules.ts); a body that is not well
 * formed (an entry some other writer logged) projects nothing rather than failing the index.
 */
export function projectMemory(body: Record<string, unknown>, factCid: string): MemoryRows | null {
  const band = body.band;
  if (body.kind === 'derivative') {
    const d = body.derivation as { parents?: unknown } | undefined;
    const parents = Array.isArray(d?.parents) ? d.parents.filter(isFactCid) : [];
    const from = unixOf(body.signed_at) ?? 0;
    const edges = [...new Set(parents)].map(
      (to): EdgeRowIn => ({
        edge_cid: contentId({ kind: 'derived_from', from: factCid, to }),
        kind: 'derived_from',
        from: factCid,
        to,
        valid_from: from,
        valid_to: null,
        stated_by: factCid,
        invalidates: [],
      }),
    );
    return { derivation: true, ...(edges.length > 0 ? { edges } : {}) };
  }
  if (!str(band) || !band.startsWith('memory.')) return null;
  const v = body.value as Record<string, unknown> | null;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  if (band === NOTE_BAND) {
    if (!str(v.text)) return null;
    // typeof first: isCell of a non-string throws and catches inside, which costs microseconds per note.
    const cell = typeof v.cell === 'string' && isCell(v.cell) ? v.cell : null;
    const centre = cell ? cellCenter(cell) : null;
    const vec = Array.isArray(v.vector) && v.vector.length > 0 && v.vector.every((x) => typeof x === 'number' && Number.isFinite(x)) ? Float32Array.from(v.vector as number[]) : null;
    return {
      note: {
        fact_cid: factCid,
        text: v.text,
        tags: Array.isArray(v.tags) ? [...new Set(v.tags.filter(str))] : [],
        entity: recordRef(v.entity),
        cell,
        lat: centre?.lat ?? null,
        lng: centre?.lng ?? null,
        observed_at: unixOf(v.observed_at) ?? unixOf(body.signed_at),
        vector: vec,
        speaker: str(v.speaker) ? v.speaker : null,
        thread: str(v.thread) ? v.thread : null,
      },
    };
  }
  if (band === ALIAS_BAND) {
    const entity = recordRef(v.entity);
    return entity && str(v.phrase) ? { alias: { fact_cid: factCid, entity, phrase: v.phrase } } : null;
  }
  if (band === ENTITY_BAND) {
    // An entity's own name is its first alias (stated by the entity record).
    const entity = entityOfSubject(body.cell);
    return entity && str(v.name) ? { alias: { fact_cid: factCid, entity, phrase: v.name } } : null;
  }
  if (band === EDGE_BAND) {
    const from = recordRef(v.from);
    const to = recordRef(v.to);
    const validFrom = unixOf(v.valid_from) ?? unixOf(body.signed_at);
    if (!str(v.type) || !from || !to || validFrom === null) return null;
    const inv = Array.isArray(v.invalidates) ? v.invalidates.filter(isFactCid) : [];
    return {
      edges: [{ edge_cid: factCid, kind: v.type, from, to, valid_from: validFrom, valid_to: unixOf(v.valid_to), stated_by: factCid, invalidates: inv }],
    };
  }
  return null;
}

// ---- reads ------------------------------------------------------------------------------------

export interface NoteSearch {
  /** Exact scope; null: public notes only. */
  scope: Scope | null;
  /**
   * Terms (src/store/note-terms.ts, as the ranking made them), for `noteCandidates`: for each
   * term, the newest `per_term` notes listing it that pass the filters, united. `searchNotes`
   * ignores them (newest first).
   */
  terms?: string[];
  /** Candidates per term (1..4000), with `terms`: one bound for all, or one per term in order. */
  per_term?: number | number[];
  /**
   * Hints for `noteCandidates`, as the caller read them from `noteStats`: each term's document
   * frequency in the scope (in `terms` order) and the scope's note count. A store may use them to
   * choose how it finds the candidates; they never change which notes come back.
   */
  hint?: { df: number[]; notes: number };
  /** Every tag must be present. */
  tags?: string[];
  /** entity_cid the note is about. */
  entity?: string;
  /** Notes whose cell centre lies in this box (a radius filter's bounding box; the caller refines). */
  bbox?: { min_lat: number; min_lng: number; max_lat: number; max_lng: number };
  /** Valid-time window on observed_at (Unix s, inclusive). */
  observed_from?: number;
  observed_to?: number;
  /** Transaction-time bound: only notes accepted at or before this ISO instant. */
  accepted_before?: string;
  /** Only notes signed by these keys. */
  authors?: string[];
  /** Only notes carrying a vector (for vector-only searches). */
  with_vector?: boolean;
  /** Whether hits carry their vectors (default true); a text-only ranking needs none. */
  vectors?: boolean;
  /** Notes wanted (1..1000; `noteCandidates` without terms: up to 4 000); with terms, `noteCandidates` ignores it (its bounds are per term). */
  limit: number;
}

/** A text candidate: where the note sits in the log (`NoteHit.seq`), its valid time and its packed document. */
export interface NoteCandidate {
  seq: number;
  observed_at: number | null;
  doc: string;
}

export interface NoteHit {
  fact_cid: string;
  attester: string;
  accepted_at: string;
  observed_at: number | null;
  lat: number | null;
  lng: number | null;
  vector: Float32Array | null;
  thread: string | null;
  /**
   * The note's place in log order within its store (larger is newer; the values are the
   * driver's own, the order is the log's on every driver): ties between equal scores go to the
   * newer note, and `notesAt` finds a candidate by it.
   */
  seq: number;
}

/** A scope's note statistics for a set of terms: what idf and the length norm need. */
export interface NoteStats {
  /** Notes in the scope. */
  notes: number;
  /** Text terms of those notes in all. */
  tokens: number;
  /** Notes listing each term, in the order asked (0 for a term none lists). */
  df: number[];
}

/** The notes just before and after one in its thread (log order), nearest last / first. */
export interface NoteNeighbours {
  before: NoteHit[];
  after: NoteHit[];
}

export interface EdgeQuery {
  scope: Scope | null;
  /** fact_cid or entity_cid the edges touch. */
  record: string;
  direction: 'out' | 'in' | 'both';
  kinds?: string[];
  /** Valid-time as-of (Unix s): edges whose effective valid interval contains it. Absent: any. */
  valid_at?: number;
  /** Transaction-time as-of (ISO): only edges and closures recorded at or before it. Absent: now. */
  recorded_at?: string;
  limit: number;
}

export interface EdgeRow {
  edge_cid: string;
  kind: string;
  from: string;
  to: string;
  valid_from: number;
  /** As stated by the edge's own record. */
  valid_to: number | null;
  /** Closure seen as of the query's transaction time (the earliest, if several), else null. */
  closed_at: number | null;
  closed_by: string | null;
  stated_by: string;
  attester: string;
  /** Transaction time of the stating record (ISO). */
  recorded_at: string;
}

export interface AliasHit {
  entity: string;
  phrase: string;
  fact_cid: string;
  attester: string;
  text_score: number;
}

export interface SharedSlot {
  cell: string;
  band: string;
  tslot: number;
}

/** Reads over the memory index; every method is side-effect free and scope-exact. */
export interface MemoryReader {
  /** Notes passing the filters, newest first (terms ignored). */
  searchNotes(q: NoteSearch): Promise<NoteHit[]>;
  /**
   * Text candidates of `q.terms` (see NoteSearch.terms), in no particular order. Without terms:
   * the `limit` notes passing the filters latest in valid time (observed_at descending, then
   * newest first) — a time window's own candidates, read through the valid-time index.
   */
  noteCandidates(q: NoteSearch): Promise<NoteCandidate[]>;
  /** The scope's notes at these `seq`s, in the order asked (a seq not found is left out). */
  notesAt(q: { scope: Scope | null; seqs: number[]; vectors?: boolean }): Promise<NoteHit[]>;
  /** The scope's note count, total text length and each term's document frequency. */
  noteStats(q: { scope: Scope | null; terms: string[] }): Promise<NoteStats>;
  /** Up to `n` notes before and after `fact_cid` in `thread` under the scope, in log order (accepted_before as in NoteSearch). */
  noteNeighbours(q: { scope: Scope | null; fact_cid: string; thread: string; n: number; accepted_before?: string }): Promise<NoteNeighbours>;
  edges(q: EdgeQuery): Promise<EdgeRow[]>;
  /** Aliases (and entity names) matching the phrase's words, best first. */
  aliases(q: { scope: Scope | null; text: string; limit: number }): Promise<AliasHit[]>;
  /** Derivative facts from batches signed by `attester`, in log order, after `after` (a previous `seq`). */
  derivedBy(q: { scope: Scope | null; attester: string; after?: number; limit: number }): Promise<Array<{ fact_cid: string; seq: number }>>;
  /**
   * (cell, band, tslot) keys written by at least two distinct attesters under the scope, in
   * key order, optionally restricted to cells and bands; `after` is the last slot of a previous page.
   */
  sharedSlots(q: { scope: Scope | null; cells?: string[]; bands?: string[]; after?: SharedSlot; limit: number }): Promise<SharedSlot[]>;
}

/** An edge already indexed, as the closure rule needs it. */
export interface IndexedEdge {
  edge_cid: string;
  kind: string;
  from: string;
  to: string;
  valid_from: number;
  /** The key whose batch stated it (a driver may use its own interned form, compared as text). */
  attester: string;
}

/** A closure: `edge_cid`'s valid time ends at `closed_at`, stated by `closed_by`, recorded at the closer's transaction time. */
export interface EdgeClosure {
  edge_cid: string;
  closed_at: number;
  closed_by: string;
}

/**
 * Closures caused by indexing `edge` (same scope only). `sameFrom` are the indexed edges of the
 * same scope, kind and `from` (the exclusive rule's candidates); `named` the indexed edges of the
 * same scope whose cids `edge.invalidates` lists. Both drivers apply exactly these rows, recorded
 * at the new edge's transaction time, so the index is a function of the log:
 * - `invalidates`: each named edge closes at the new edge's valid_from;
 * - exclusive kinds: an older-valid edge to another target closes at the new valid_from, and
 *   the new edge closes at the earliest later-valid edge to another target (an edge learned
 *   late still holds one target at a time).
 * Only edges stated by the same key (`attester`) close one another: one key never ends another
 * key's statement. Where keys disagree both edges stay open, and the disagreement is recorded as
 * a `contradicts` edge by the write path (primitives/memory/edges.ts), not by this rule.
 */
export function edgeClosures(edge: EdgeRowIn, attester: string, sameFrom: readonly IndexedEdge[], named: readonly IndexedEdge[]): EdgeClosure[] {
  const out: EdgeClosure[] = [];
  const wanted = new Set(edge.invalidates);
  for (const e of named) {
    if (wanted.has(e.edge_cid) && e.edge_cid !== edge.edge_cid && e.attester === attester) out.push({ edge_cid: e.edge_cid, closed_at: edge.valid_from, closed_by: edge.stated_by });
  }
  if (EXCLUSIVE_EDGE_TYPES.has(edge.kind)) {
    let later: IndexedEdge | null = null;
    for (const e of sameFrom) {
      if (e.edge_cid === edge.edge_cid || e.kind !== edge.kind || e.from !== edge.from || e.to === edge.to || e.attester !== attester) continue;
      if (e.valid_from < edge.valid_from) out.push({ edge_cid: e.edge_cid, closed_at: edge.valid_from, closed_by: edge.stated_by });
      else if (e.valid_from > edge.valid_from && (later === null || e.valid_from < later.valid_from)) later = e;
    }
    if (later) out.push({ edge_cid: edge.edge_cid, closed_at: later.valid_from, closed_by: later.edge_cid });
  }
  return out;
}
