/**
 * Reads over the SQLite memory index (src/store/memory.ts `MemoryReader`; the rows are written by
 * memory-index.ts). Every statement names one scope id, and the full-text terms carry it too
 * (memory-text.ts), so nothing here reads or counts another scope's rows.
 *
 * Text search ranks by FTS5's bm25 (text_score = −bm25), but never over an unbounded set: bm25
 * scores every match before the LIMIT applies, so a word found in most of a large scope's notes
 * would make one query score all of them (about 0.15 s for 180 000 matches). A search therefore
 *  1. counts its matches, stopping past EXACT_MATCHES; under that, ranks them all (exact);
 *  2. else ranks the matches of its rarer words only (each in at most `rareCap` notes of the
 *     scope, together at most EXACT_MATCHES): notes holding a rare word are the ones bm25 puts
 *     first, and a common word's weight in their scores is small;
 *  3. and, when that leaves places free, fills them with the best of the NEWEST_WINDOW newest
 *     matches of its FILL_WORDS least common other words.
 * So a search costs at most a few thousand bm25 evaluations whatever the corpus, and is exact
 * whenever its words match at most EXACT_MATCHES notes of the scope.
 *
 * The work per query is bounded whatever its length (up to MAX_QUERY_WORDS words): counting the
 * words in step 2 examines at most about COUNT_BUDGET rows in all (the rarity cap shrinks as the
 * words grow: 2 000 up to four words, 250 at 32), and step 3 ranks at most FILL_WORDS words,
 * because bm25 walks each ranked word's whole posting list to count its documents, and 32
 * common words cost 32 such walks (≈ 100–200 ms at 100 000 notes, measured).
 */
import type { Statement } from 'better-sqlite3';
import { BoundedCache } from '../../lib/cache.js';
import { b32encode } from '../../protocol/base32.js';
import type { Scope } from '../../protocol/receipt.js';
import { scopeKey } from '../entry.js';
import { distinctStrings, finite, isoBound, limitOf } from '../query-checks.js';
import type { AliasHit, EdgeQuery, EdgeRow, MemoryReader, NoteCandidate, NoteHit, NoteNeighbours, NoteSearch, NoteStats, SharedSlot } from '../memory.js';
import { NoteQueriesSqlite } from './note-queries.js';
import { matchOf, queryTerms, queryWords } from './memory-text.js';
import type { Queries } from './queries.js';
import { packedBound, unpackAcceptedAt } from './schema.js';

/** Largest page any memory read returns (NoteSearch.limit is 1..1000); larger asks are capped. */
/** A text search ranks every match up to this many (step 1 above). */
const EXACT_MATCHES = 4000;
/** A word in at most this many of the scope's notes is rare (step 2), for queries of up to four words. */
const RARE_NOTES = 2000;
/** Rows the rarity counts of step 2 examine in all; longer queries lower the cap per word, to no less than MIN_RARE_NOTES. */
const COUNT_BUDGET = 8000;
const MIN_RARE_NOTES = 250;
/** Words the fill (step 3) ranks at most. */
const FILL_WORDS = 4;
/** Newest matches the fill ranks (step 3). */
const NEWEST_WINDOW = 2000;

/** A transaction-time bound as the packed accepted_at it compares with. */
function packedIso(field: string, v: unknown): number {
  return packedBound(isoBound(field, v));
}

/** A full-text table and the rows it indexes (rowid = row id). */
interface TextTable {
  fts: 'notes_fts' | 'aliases_fts';
  rows: 'notes' | 'aliases';
  /** Columns of `n` (the rows table) a hit returns. */
  cols: string;
}

const ALIASES: TextTable = { fts: 'aliases_fts', rows: 'aliases', cols: 'n.id, n.entity_id, n.phrase, n.cid, n.attester_id' };

export class MemoryIndexSqlite implements MemoryReader {
  private readonly cache = new BoundedCache<string, Statement>('sqlite_memory_statements', { max: 256 });

  private readonly notes: NoteQueriesSqlite;

  constructor(private readonly q: Queries) {
    this.notes = new NoteQueriesSqlite(q, (sql) => this.prepared(sql));
  }

  private prepared(sql: string): Statement {
    let st = this.cache.get(sql);
    if (!st) {
      // Shapes vary only with which filters are present; the cap guards regardless.
      st = this.q.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }

  private scopeId(scope: Scope | null): number | undefined {
    return this.q.scopes.get(scopeKey(scope));
  }

  async searchNotes(s: NoteSearch): Promise<NoteHit[]> {
    return this.notes.searchNotes(s);
  }

  async noteCandidates(s: NoteSearch): Promise<NoteCandidate[]> {
    return this.notes.noteCandidates(s);
  }

  async notesAt(a: { scope: Scope | null; seqs: number[]; vectors?: boolean }): Promise<NoteHit[]> {
    return this.notes.notesAt(a);
  }

  async noteStats(a: { scope: Scope | null; terms: string[] }): Promise<NoteStats> {
    return this.notes.noteStats(a);
  }

  async noteNeighbours(a: { scope: Scope | null; fact_cid: string; thread: string; n: number; accepted_before?: string }): Promise<NoteNeighbours> {
    return this.notes.noteNeighbours(a);
  }

  /**
   * The scope's matches of a MATCH expression, counted up to `cap` + 1. The terms carry the
   * scope already; the row's own scope is checked as well, so that even a token that reached
   * another scope's posting list (a tokenizer disagreement, memory-text.ts) could never count
   * here, push the search off its exact path or fill its newest window.
   */
  private matches(t: TextTable, scopeId: number, match: string, cap: number): number {
    return this.prepared(
      `SELECT count(*) FROM (SELECT 1 FROM ${t.fts} CROSS JOIN ${t.rows} n ON n.id = ${t.fts}.rowid
        WHERE ${t.fts} MATCH @match AND n.scope_id = @scope LIMIT ${cap + 1})`,
    )
      .pluck()
      .get({ match, scope: scopeId }) as number;
  }

  /**
   * Best first by bm25 over every match of `match` passing the filters (ties: newest first). The
   * inner query sorts ids and scores only; the columns (a vector may be kilobytes) are read for
   * the page alone. CROSS JOIN keeps FTS5 the outer loop: with a scope and box (or entity) term
   * the planner would otherwise walk notes_geo and run the MATCH once per note, bm25's document
   * counts included (20 ms instead of 2 at 100 000 notes, measured).
   */
  private ranked(t: TextTable, match: string, where: string[], args: Record<string, unknown>, limit: number): Array<{ id: number; score: number }> {
    const rest = where.length > 0 ? ` AND ${where.join(' AND ')}` : '';
    return this.prepared(
      `SELECT ${t.cols}, r.score FROM (
         SELECT n.id AS id, -${t.fts}.rank AS score FROM ${t.fts} CROSS JOIN ${t.rows} n ON n.id = ${t.fts}.rowid
          WHERE ${t.fts} MATCH @match${rest} ORDER BY score DESC, n.id DESC LIMIT @limit) r
       JOIN ${t.rows} n ON n.id = r.id ORDER BY r.score DESC, r.id DESC`,
    ).all({ ...args, match, limit }) as Array<{ id: number; score: number }>;
  }

  /**
   * Best first by bm25 among the NEWEST_WINDOW newest matches of `match` in the scope (checked
   * on the row, as in `matches`) that pass the filters.
   */
  private newestRanked(t: TextTable, match: string, where: string[], args: Record<string, unknown>, limit: number): Array<{ id: number; score: number }> {
    const rest = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
    return this.prepared(
      `SELECT ${t.cols}, r.score FROM (
         SELECT n.id AS id, c.score AS score FROM (
           SELECT ${t.fts}.rowid AS id, -bm25(${t.fts}) AS score FROM ${t.fts} CROSS JOIN ${t.rows} s ON s.id = ${t.fts}.rowid
            WHERE ${t.fts} MATCH @match AND s.scope_id = @scope ORDER BY ${t.fts}.rowid DESC LIMIT ${NEWEST_WINDOW}) c
         CROSS JOIN ${t.rows} n ON n.id = c.id${rest} ORDER BY c.score DESC, n.id DESC LIMIT @limit) r
       JOIN ${t.rows} n ON n.id = r.id ORDER BY r.score DESC, r.id DESC`,
    ).all({ ...args, match, limit }) as Array<{ id: number; score: number }>;
  }

  /** Rows matching the words under the scope, best first, in bounded work (see the top of this file). */
  private rankedText(t: TextTable, scopeId: number, words: string[], filters: string[], filterArgs: Record<string, unknown>, limit: number): Array<{ id: number; score: number }> {
    const terms = queryTerms(scopeId, words);
    // The terms carry the scope already (memory-text.ts); the row's own scope is checked too, for free.
    const where = ['n.scope_id = @scope', ...filters];
    const args = { ...filterArgs, scope: scopeId };
    const all = matchOf(terms);
    if (this.matches(t, scopeId, all, EXACT_MATCHES) <= EXACT_MATCHES) return this.ranked(t, all, where, args, limit);
    const rareCap = Math.min(RARE_NOTES, Math.max(MIN_RARE_NOTES, Math.floor(COUNT_BUDGET / terms.length)));
    // Least common first; words counted past the cap tie, and keep the caller's order.
    const counted = terms.map((term, i) => ({ term, i, n: this.matches(t, scopeId, term, rareCap) })).sort((a, b) => a.n - b.n || a.i - b.i);
    const rare: string[] = [];
    let budget = EXACT_MATCHES;
    for (const { term, n } of counted) {
      if (n > rareCap || n > budget) break;
      rare.push(term);
      budget -= n;
    }
    const hits = rare.length > 0 ? this.ranked(t, matchOf(rare), where, args, limit) : [];
    if (hits.length < limit) {
      // Every match of a rare word is ranked already, so the fill needs the others only; a note
      // without a rare word scores the same under both expressions (absent words add nothing).
      const fill = counted.slice(rare.length, rare.length + FILL_WORDS).map((c) => c.term);
      const seen = new Set(hits.map((h) => h.id));
      for (const h of fill.length === 0 ? [] : this.newestRanked(t, matchOf(fill), where, args, limit)) {
        if (hits.length === limit) break;
        if (!seen.has(h.id)) hits.push(h);
      }
    }
    return hits;
  }

  /**
   * Edges touching the record as of transaction time R (edges and closures recorded ≤ R; no
   * bound: all) and valid time V (valid_from ≤ V < min(stated valid_to, earliest visible
   * closure); no end is open). The earliest visible closure is one index probe per edge.
   */
  async edges(e: EdgeQuery): Promise<EdgeRow[]> {
    if (typeof e !== 'object' || e === null) throw new TypeError('query: expected an object');
    const limit = limitOf(e.limit);
    if (typeof e.record !== 'string') throw new TypeError('record: expected a string');
    const where: string[] = ['e.scope_id = @scope'];
    const args: Record<string, unknown> = { limit };
    if (e.direction === 'out') where.push('e.from_id = @rec');
    else if (e.direction === 'in') where.push('e.to_id = @rec');
    else if (e.direction === 'both') where.push('(e.from_id = @rec OR e.to_id = @rec)');
    else throw new RangeError('direction: expected out, in or both');
    let none = false;
    if (e.kinds !== undefined) {
      const kinds = distinctStrings('kinds', e.kinds);
      if (kinds.length === 0) none = true;
      where.push('e.kind IN (SELECT value FROM json_each(@kinds))');
      args.kinds = JSON.stringify(kinds);
    }
    let closureBound = '';
    if (e.recorded_at !== undefined) {
      args.recorded = packedIso('recorded_at', e.recorded_at);
      where.push('e.recorded_at <= @recorded');
      closureBound = ' AND x.recorded_at <= @recorded';
    }
    if (e.valid_at !== undefined) {
      args.valid = finite('valid_at', e.valid_at);
      where.push('e.valid_from <= @valid', '(e.valid_to IS NULL OR @valid < e.valid_to)', '(c.closed_at IS NULL OR @valid < c.closed_at)');
    }
    const scopeId = this.scopeId(e.scope);
    const rec = this.q.refs.get(e.record);
    if (none || limit === 0 || scopeId === undefined || rec === undefined) return [];
    args.scope = scopeId;
    args.rec = rec;
    const rows = this.prepared(
      `SELECT e.id, e.kind, e.from_id, e.to_id, e.valid_from, e.valid_to, e.stated, e.edge_cid, e.attester_id, e.recorded_at, c.closed_at, c.closed_by
         FROM mem_edges e
         LEFT JOIN mem_closures c ON c.id = (SELECT x.id FROM mem_closures x WHERE x.edge_id = e.id${closureBound} ORDER BY x.closed_at, x.id LIMIT 1)
        WHERE ${where.join(' AND ')} ORDER BY e.valid_from, e.id LIMIT @limit`,
    ).all(args) as Array<{
      kind: string;
      from_id: number;
      to_id: number;
      valid_from: number;
      valid_to: number | null;
      stated: Buffer;
      edge_cid: Buffer | null;
      attester_id: number;
      recorded_at: number;
      closed_at: number | null;
      closed_by: Buffer | null;
    }>;
    const refs = this.q.refs;
    return rows.map((r) => {
      const statedBy = b32encode(r.stated);
      return {
        edge_cid: r.edge_cid === null ? statedBy : b32encode(r.edge_cid),
        kind: r.kind,
        from: refs.name(r.from_id),
        to: refs.name(r.to_id),
        valid_from: r.valid_from,
        valid_to: r.valid_to,
        closed_at: r.closed_at,
        closed_by: r.closed_by === null ? null : b32encode(r.closed_by),
        stated_by: statedBy,
        attester: this.q.attesters.name(r.attester_id),
        recorded_at: unpackAcceptedAt(r.recorded_at),
      };
    });
  }

  /** Aliases and entity names matching the text's words under the scope, best first (ties: newest first). */
  async aliases(a: { scope: Scope | null; text: string; limit: number }): Promise<AliasHit[]> {
    if (typeof a !== 'object' || a === null) throw new TypeError('query: expected an object');
    const limit = limitOf(a.limit);
    const words = queryWords(a.text);
    const scopeId = this.scopeId(a.scope);
    if (words.length === 0 || limit === 0 || scopeId === undefined) return [];
    const rows = this.rankedText(ALIASES, scopeId, words, [], {}, limit) as unknown as Array<{ entity_id: number; phrase: string; cid: Buffer; attester_id: number; score: number }>;
    return rows.map((r) => ({
      entity: this.q.refs.name(r.entity_id),
      phrase: r.phrase,
      fact_cid: b32encode(r.cid),
      attester: this.q.attesters.name(r.attester_id),
      text_score: r.score,
    }));
  }

  /** Derivatives of `attester`'s batches under the scope, in log order, after the `seq` cursor. */
  async derivedBy(d: { scope: Scope | null; attester: string; after?: number; limit: number }): Promise<Array<{ fact_cid: string; seq: number }>> {
    if (typeof d !== 'object' || d === null) throw new TypeError('query: expected an object');
    const limit = limitOf(d.limit);
    if (typeof d.attester !== 'string') throw new TypeError('attester: expected a string');
    const after = d.after === undefined ? 0 : finite('after', d.after);
    const scopeId = this.scopeId(d.scope);
    const attesterId = this.q.attesters.get(d.attester);
    if (limit === 0 || scopeId === undefined || attesterId === undefined) return [];
    const rows = this.prepared(`SELECT seq, cid FROM derivations WHERE attester_id = ? AND scope_id = ? AND seq > ? ORDER BY seq LIMIT ?`).all(attesterId, scopeId, after, limit) as Array<{
      seq: number;
      cid: Buffer;
    }>;
    return rows.map((r) => ({ fact_cid: b32encode(r.cid), seq: r.seq }));
  }

  /** Shared (cell, band, tslot) keys under the scope in key order (byte order, then tslot), after `after`. */
  async sharedSlots(q: { scope: Scope | null; cells?: string[]; bands?: string[]; after?: SharedSlot; limit: number }): Promise<SharedSlot[]> {
    if (typeof q !== 'object' || q === null) throw new TypeError('query: expected an object');
    const limit = limitOf(q.limit);
    const where = ['scope_id = @scope'];
    const args: Record<string, unknown> = { limit };
    let none = false;
    if (q.cells !== undefined) {
      const cells = distinctStrings('cells', q.cells);
      if (cells.length === 0) none = true;
      where.push('cell IN (SELECT value FROM json_each(@cells))');
      args.cells = JSON.stringify(cells);
    }
    if (q.bands !== undefined) {
      const bands = distinctStrings('bands', q.bands);
      if (bands.length === 0) none = true;
      where.push('band IN (SELECT value FROM json_each(@bands))');
      args.bands = JSON.stringify(bands);
    }
    if (q.after !== undefined) {
      const a = q.after;
      if (typeof a?.cell !== 'string' || typeof a.band !== 'string') throw new TypeError('after: expected a slot');
      // Row comparison on the primary key's trailing columns: one index range, in key order.
      where.push('(cell, band, tslot) > (@after_cell, @after_band, @after_tslot)');
      Object.assign(args, { after_cell: a.cell, after_band: a.band, after_tslot: finite('after.tslot', a.tslot) });
    }
    const scopeId = this.scopeId(q.scope);
    if (none || limit === 0 || scopeId === undefined) return [];
    args.scope = scopeId;
    return this.prepared(`SELECT cell, band, tslot FROM shared_slots WHERE ${where.join(' AND ')} ORDER BY cell, band, tslot LIMIT @limit`).all(args) as SharedSlot[];
  }
}
