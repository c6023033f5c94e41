/**
 * Note reads of the SQLite memory index (src/store/memory.ts `searchNotes`, `noteStats`,
 * `noteNeighbours`); memory-queries.ts delegates here. Every statement names one scope id, and
 * the full-text terms carry it too (memory-text.ts), so nothing here reads or counts another
 * scope's rows.
 *
 * The store does not rank: it hands the ranking (primitives/memory/note-rank.ts) candidates and
 * the scope's statistics, the same ones PostgreSQL hands it, so both rank alike. A term's
 * candidates are its newest `per_term` matches passing the filters: FTS5 walks the term's posting
 * list backwards (rowid = note id = log order) and stops at the bound, so a common term costs the
 * bound, not the size of the scope.
 */
import type { Statement } from 'better-sqlite3';
import { b32decode, b32encode } from '../../protocol/base32.js';
import type { Scope } from '../../protocol/receipt.js';
import { scopeKey } from '../entry.js';
import type { NoteCandidate, NoteHit, NoteNeighbours, NoteSearch, NoteStats } from '../memory.js';
import { distinctStrings, finite, isoBound, limitOf, MAX_PER_TERM, termBounds } from '../query-checks.js';
import { blobVector } from './memory-index.js';
import { queryTerms } from './memory-text.js';
import type { Queries } from './queries.js';
import { packedBound, unpackAcceptedAt } from './schema.js';

/** A box holding at most this many of the scope's notes is read through notes_geo. */
const SPARSE_BOX = 2000;

const COLS = 'n.id, n.cid, n.attester_id, n.accepted_at, n.observed_at, n.lat, n.lng, n.thread';

interface NoteOut {
  id: number;
  cid: Buffer;
  attester_id: number;
  accepted_at: number;
  observed_at: number | null;
  lat: number | null;
  lng: number | null;
  thread: string | null;
  vector?: Buffer | null;
}

/** WHERE terms over `n` (notes) with named parameters; `none` when no row can match. */
interface NoteFilters {
  where: string[];
  args: Record<string, unknown>;
  none: boolean;
  tags: string[];
  entityId: number | undefined;
  bbox: boolean;
}

export class NoteQueriesSqlite {
  constructor(
    private readonly q: Queries,
    private readonly prepared: (sql: string) => Statement,
  ) {}

  private scopeId(scope: Scope | null): number | undefined {
    return this.q.scopes.get(scopeKey(scope));
  }

  private hit(r: NoteOut): NoteHit {
    return {
      fact_cid: b32encode(r.cid),
      attester: this.q.attesters.name(r.attester_id),
      accepted_at: unpackAcceptedAt(r.accepted_at),
      observed_at: r.observed_at,
      lat: r.lat,
      lng: r.lng,
      vector: blobVector(r.vector ?? null),
      thread: r.thread,
      seq: r.id,
    };
  }

  searchNotes(s: NoteSearch): NoteHit[] {
    if (typeof s !== 'object' || s === null) throw new TypeError('query: expected an object');
    const limit = limitOf(s.limit);
    const f = this.noteFilters(s);
    const scopeId = this.scopeId(s.scope);
    if (limit === 0 || f.none || scopeId === undefined) return [];
    f.args.scope = scopeId;
    return this.newestNotes(f, s.vectors === false ? COLS : `${COLS}, n.vector`, limit).map((r) => this.hit(r));
  }

  /**
   * Each term's newest matches up to its bound, united: id, valid time and document only (a quarter of
   * reading whole rows, measured), the rest read by `notesAt` for the few that rank.
   */
  noteCandidates(s: NoteSearch): NoteCandidate[] {
    if (typeof s !== 'object' || s === null) throw new TypeError('query: expected an object');
    const terms = termBounds(s.terms, s.per_term, MAX_PER_TERM);
    const f = this.noteFilters(s);
    const scopeId = this.scopeId(s.scope);
    if (f.none || scopeId === undefined) return [];
    f.args.scope = scopeId;
    const rest = f.where.length > 0 ? ` AND ${f.where.join(' AND ')}` : '';
    if (terms.length === 0) {
      // Latest valid time first through notes_observed: a window's notes without walking a
      // common term's whole posting list past every note outside it.
      const limit = Math.max(0, Math.min(MAX_PER_TERM, Math.floor(finite('limit', s.limit))));
      const rows = this.prepared(
        `SELECT n.id, n.observed_at, n.doc FROM notes n INDEXED BY notes_observed
          WHERE n.scope_id = @scope AND n.observed_at IS NOT NULL${rest} ORDER BY n.observed_at DESC, n.id DESC LIMIT @limit`,
      ).all({ ...f.args, limit }) as Array<{ id: number; observed_at: number; doc: string }>;
      return rows.map((r) => ({ seq: r.id, observed_at: r.observed_at, doc: r.doc }));
    }
    // CROSS JOIN keeps FTS5 the outer loop, walking the term's postings newest first.
    const st = this.prepared(
      `SELECT n.id, n.observed_at, n.doc FROM notes_fts CROSS JOIN notes n ON n.id = notes_fts.rowid
        WHERE notes_fts MATCH @match AND n.scope_id = @scope${rest} ORDER BY notes_fts.rowid DESC LIMIT @cap`,
    );
    const seen = new Map<number, NoteCandidate>();
    const matches = queryTerms(
      scopeId,
      terms.map(([t]) => t),
    );
    matches.forEach((match, i) => {
      for (const r of st.all({ ...f.args, match, cap: terms[i][1] }) as Array<{ id: number; observed_at: number | null; doc: string }>) {
        seen.set(r.id, { seq: r.id, observed_at: r.observed_at, doc: r.doc });
      }
    });
    return [...seen.values()];
  }

  notesAt(a: { scope: Scope | null; seqs: number[]; vectors?: boolean }): NoteHit[] {
    if (!Array.isArray(a.seqs) || !a.seqs.every((x) => Number.isSafeInteger(x))) throw new TypeError('seqs: expected an array of integers');
    const scopeId = this.scopeId(a.scope);
    if (scopeId === undefined || a.seqs.length === 0) return [];
    const cols = a.vectors === false ? COLS : `${COLS}, n.vector`;
    const rows = this.prepared(`SELECT ${cols} FROM notes n WHERE n.id IN (SELECT value FROM json_each(?)) AND n.scope_id = ?`).all(JSON.stringify(a.seqs), scopeId) as NoteOut[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    return a.seqs.flatMap((id) => {
      const r = byId.get(id);
      return r ? [this.hit(r)] : [];
    });
  }

  noteStats(a: { scope: Scope | null; terms: string[] }): NoteStats {
    const terms = distinctStrings('terms', a.terms);
    const scopeId = this.scopeId(a.scope);
    const df = new Map<string, number>();
    let stats: { notes: number; tokens: number } | undefined;
    if (scopeId !== undefined) {
      stats = this.prepared(`SELECT notes, tokens FROM note_stats WHERE scope_id = ?`).get(scopeId) as typeof stats;
      const rows = this.prepared(`SELECT term, df FROM note_df WHERE scope_id = ? AND term IN (SELECT value FROM json_each(?))`).all(scopeId, JSON.stringify(terms)) as Array<{
        term: string;
        df: number;
      }>;
      for (const r of rows) df.set(r.term, r.df);
    }
    return { notes: stats?.notes ?? 0, tokens: stats?.tokens ?? 0, df: a.terms.map((t) => df.get(t) ?? 0) };
  }

  noteNeighbours(a: { scope: Scope | null; fact_cid: string; thread: string; n: number; accepted_before?: string }): NoteNeighbours {
    const n = Math.max(0, Math.min(20, Math.floor(finite('n', a.n))));
    const scopeId = this.scopeId(a.scope);
    if (typeof a.thread !== 'string') throw new TypeError('thread: expected a string');
    let digest: Uint8Array;
    try {
      digest = b32decode(a.fact_cid, 32);
    } catch {
      return { before: [], after: [] };
    }
    if (n === 0 || scopeId === undefined) return { before: [], after: [] };
    const bound = a.accepted_before === undefined ? '' : ' AND n.accepted_at <= @accepted_before';
    const args: Record<string, unknown> = { scope: scopeId, thread: a.thread, n };
    if (a.accepted_before !== undefined) args.accepted_before = packedBound(isoBound('accepted_before', a.accepted_before));
    const self = this.prepared(`SELECT id FROM notes INDEXED BY notes_thread WHERE scope_id = @scope AND thread = @thread AND cid = @cid`).get({
      scope: scopeId,
      thread: a.thread,
      cid: digest,
    }) as { id: number } | undefined;
    if (self === undefined) return { before: [], after: [] };
    args.id = self.id;
    const side = (op: string, order: string) =>
      this.prepared(`SELECT ${COLS} FROM notes n INDEXED BY notes_thread WHERE n.scope_id = @scope AND n.thread = @thread AND n.id ${op} @id${bound} ORDER BY n.id ${order} LIMIT @n`).all(
        args,
      ) as NoteOut[];
    return {
      before: side('<', 'DESC')
        .reverse()
        .map((r) => this.hit(r)),
      after: side('>', 'ASC').map((r) => this.hit(r)),
    };
  }

  /** The filters of a note search other than its terms, validated. */
  private noteFilters(s: NoteSearch): NoteFilters {
    const f: NoteFilters = { where: [], args: {}, none: false, tags: [], entityId: undefined, bbox: false };
    if (s.tags !== undefined) {
      f.tags = distinctStrings('tags', s.tags);
      if (f.tags.length > 0) {
        // Every tag present: one primary-key probe per tag.
        f.where.push(`(SELECT count(*) FROM note_tags t WHERE t.tag IN (SELECT value FROM json_each(@tags)) AND t.scope_id = n.scope_id AND t.note_id = n.id) = @ntags`);
        f.args.tags = JSON.stringify(f.tags);
        f.args.ntags = f.tags.length;
      }
    }
    if (s.entity !== undefined) {
      if (typeof s.entity !== 'string') throw new TypeError('entity: expected a string');
      f.entityId = this.q.refs.get(s.entity);
      if (f.entityId === undefined) f.none = true;
      f.where.push('n.entity_id = @entity');
      f.args.entity = f.entityId ?? -1;
    }
    if (s.bbox !== undefined) {
      const b = s.bbox;
      if (typeof b !== 'object' || b === null) throw new TypeError('bbox: expected an object');
      f.args.min_lat = finite('bbox.min_lat', b.min_lat);
      f.args.max_lat = finite('bbox.max_lat', b.max_lat);
      f.args.min_lng = finite('bbox.min_lng', b.min_lng);
      f.args.max_lng = finite('bbox.max_lng', b.max_lng);
      f.where.push('n.lat >= @min_lat AND n.lat <= @max_lat');
      // A box across the antimeridian comes as min_lng > max_lng.
      f.where.push(b.min_lng <= b.max_lng ? 'n.lng >= @min_lng AND n.lng <= @max_lng' : '(n.lng >= @min_lng OR n.lng <= @max_lng)');
      f.bbox = true;
    }
    if (s.observed_from !== undefined) {
      f.where.push('n.observed_at >= @observed_from');
      f.args.observed_from = finite('observed_from', s.observed_from);
    }
    if (s.observed_to !== undefined) {
      f.where.push('n.observed_at <= @observed_to');
      f.args.observed_to = finite('observed_to', s.observed_to);
    }
    if (s.accepted_before !== undefined) {
      f.where.push('n.accepted_at <= @accepted_before');
      f.args.accepted_before = packedBound(isoBound('accepted_before', s.accepted_before));
    }
    if (s.authors !== undefined) {
      const ids = distinctStrings('authors', s.authors).flatMap((a) => this.q.attesters.get(a) ?? []);
      if (ids.length === 0) f.none = true;
      f.where.push('n.attester_id IN (SELECT value FROM json_each(@authors))');
      f.args.authors = JSON.stringify(ids);
    }
    if (s.with_vector === true) f.where.push('n.vector IS NOT NULL');
    return f;
  }

  /**
   * Newest first without terms, from the narrowest index the filters allow: the entity's notes,
   * the first tag's, a sparse box's, the vector-bearing ones, else the scope's. Each is in id
   * (log) order, so the other filters are checked walking back from the newest, until the limit.
   */
  private newestNotes(f: NoteFilters, cols: string, limit: number): NoteOut[] {
    const rest = f.where.length > 0 ? ` AND ${f.where.join(' AND ')}` : '';
    const args: Record<string, unknown> = { ...f.args, limit };
    let sql: string;
    if (f.entityId !== undefined) {
      sql = `SELECT ${cols} FROM notes n INDEXED BY notes_entity WHERE n.scope_id = @scope${rest} ORDER BY n.id DESC LIMIT @limit`;
    } else if (f.tags.length > 0) {
      args.first_tag = f.tags[0];
      sql = `SELECT ${cols} FROM note_tags t0 CROSS JOIN notes n ON n.id = t0.note_id
             WHERE t0.tag = @first_tag AND t0.scope_id = @scope${rest} ORDER BY t0.note_id DESC LIMIT @limit`;
    } else if (f.bbox && this.sparseBox(args)) {
      sql = `SELECT ${cols} FROM notes n INDEXED BY notes_geo WHERE n.scope_id = @scope${rest} ORDER BY n.id DESC LIMIT @limit`;
    } else if (f.where.includes('n.vector IS NOT NULL')) {
      sql = `SELECT ${cols} FROM notes n INDEXED BY notes_vector WHERE n.scope_id = @scope${rest} ORDER BY n.id DESC LIMIT @limit`;
    } else {
      sql = `SELECT ${cols} FROM notes n INDEXED BY notes_scope WHERE n.scope_id = @scope${rest} ORDER BY n.id DESC LIMIT @limit`;
    }
    return this.prepared(sql).all(args) as NoteOut[];
  }

  /**
   * Whether the box holds few of the scope's notes (then sorting them beats walking the scope
   * newest first, which would pass over the many notes outside it). One bounded index walk.
   */
  private sparseBox(args: Record<string, unknown>): boolean {
    const lng = (args.min_lng as number) <= (args.max_lng as number) ? 'lng >= @min_lng AND lng <= @max_lng' : '(lng >= @min_lng OR lng <= @max_lng)';
    const n = this.prepared(`SELECT count(*) FROM (SELECT 1 FROM notes INDEXED BY notes_geo WHERE scope_id = @scope AND lat >= @min_lat AND lat <= @max_lat AND ${lng} LIMIT ${SPARSE_BOX + 1})`)
      .pluck()
      .get({ scope: args.scope, min_lat: args.min_lat, max_lat: args.max_lat, min_lng: args.min_lng, max_lng: args.max_lng }) as number;
    return n <= SPARSE_BOX;
  }
}
