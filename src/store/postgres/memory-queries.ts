/**
 * Reads over the PostgreSQL memory index (src/store/memory.ts `MemoryReader`); the rows are
 * written by memory-index.ts in the sequencer's transaction. Every statement names one scope
 * (scope_key equality, '' for public records), so nothing here counts across scopes. Notes are
 * found by their terms (src/store/note-terms.ts) as keys of their scope (memory-keys.ts, the
 * `keys` array's GIN index) and ranked by
 * the service (primitives/memory/note-rank.ts), as on SQLite; alias search runs on a `tsvector`
 * column (config 'english', GIN) with a tsquery built from the caller text's word tokens only,
 * so caller text is never parsed as tsquery syntax.
 */
import type pg from 'pg';
import type { Scope } from '../../protocol/receipt.js';
import { scopeKey } from '../entry.js';
import { finite, isoBound, limitOf, MAX_PER_TERM, termBounds } from '../query-checks.js';
import type { AliasHit, EdgeQuery, EdgeRow, MemoryReader, NoteCandidate, NoteHit, NoteNeighbours, NoteSearch, NoteStats, SharedSlot } from '../memory.js';
import { pgText, vectorOf } from './memory-index.js';
import { countedTag, scopeCode, tagKey, termKey } from './memory-keys.js';
import { int, rows, rowsPlanned } from './pg-db.js';
import { Where } from './queries.js';

import type { Tables } from './tables.js';

/** Largest page any memory read returns (NoteSearch.limit is 1..1000). */
/** Distinct words a text query keeps: an OR over more words ranks no better and costs more. */
const MAX_WORDS = 32;
/** PostgreSQL ignores words longer than this (bytes) in documents and queries alike. */
const MAX_WORD_BYTES = 2047;
const WORD = /[\p{L}\p{N}]+/gu;

/**
 * The tsquery text for `text`: its distinct word tokens (runs of letters and digits), each
 * quoted as a lexeme and OR-combined (`'irrigation' | 'pump'`), or null without a word. A token
 * holds neither quotes, backslashes nor operator characters, so inside its quotes it is always
 * a literal word to `to_tsquery`: `"north`, `NEAR(pump`, `pump*`, `!@#` come out as words or
 * nothing. The english configuration then stems the words and drops stop words (a text of stop
 * words only, such as `AND`, makes an empty query that matches nothing).
 *
 * The words go to to_tsquery as the caller wrote them, never lowercased here: the note's
 * tsvector was lowercased by the database (the english configuration's lower(), by the
 * database's ctype), so the query must be lowercased by that same function, not by
 * JavaScript's. The two differ: "İstanbul" is "i̇stanbul" (with U+0307) to JavaScript and
 * "istanbul" to glibc, so a note saying İstanbul was never found, not even by "İstanbul".
 */
export function tsqueryWords(text: unknown): string[] | null {
  if (text === undefined || text === null) return null;
  if (typeof text !== 'string') throw new TypeError('text: expected a string');
  const words = new Set<string>();
  for (const m of text.matchAll(WORD)) {
    const w = m[0];
    if (Buffer.byteLength(w) > MAX_WORD_BYTES) continue;
    words.add(w);
    if (words.size === MAX_WORDS) break;
  }
  return words.size === 0 ? null : [...words].map((w) => `'${w}'`);
}

/** The whole query: its words OR-combined (see tsqueryWords). */
export function tsqueryText(text: unknown): string | null {
  return tsqueryWords(text)?.join(' | ') ?? null;
}

/**
 * Caller strings as parameters: what the index stores went through pgText, so matching goes
 * through it too, and a NUL (which PostgreSQL text cannot carry) finds nothing instead of
 * failing the statement.
 */
function str(field: string, v: unknown): string {
  if (typeof v !== 'string') throw new TypeError(`${field}: expected a string`);
  return pgText(v);
}

/**
 * A bound on a bigint column (Unix seconds, seq, tslot) as an integer with the same meaning:
 * the columns hold integers, so `col >= x` is `col >= ceil(x)` and `col <= x`, `col > x` are
 * `col <= floor(x)`, `col > floor(x)`; clamped to safe integers (a float parameter would fail
 * the bigint cast).
 */
function intBound(field: string, v: unknown, round: 'floor' | 'ceil'): number {
  const x = Math[round](finite(field, v));
  return Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, x));
}

function strings(field: string, v: unknown): string[] {
  if (!Array.isArray(v)) throw new TypeError(`${field}: expected an array of strings`);
  return [...new Set(v.map((x, i) => str(`${field}[${i}]`, x)))];
}

interface NoteRowOut {
  fact_cid: string;
  attester: string;
  accepted_at: string;
  observed_at: string | null;
  lat: number | null;
  lng: number | null;
  thread: string | null;
  log_index: string;
  position: number;
  vector?: Buffer | null;
}

/** Positions of one log entry a seq leaves room for (a batch holds at most 4 096 facts). */
const SEQ_POSITIONS = 2 ** 20;

/** A note's seq (memory.ts NoteHit.seq): its log position as one number, in log order. */
function seqOf(logIndex: string | number, position: number): number {
  return int(logIndex) * SEQ_POSITIONS + position;
}

const HIT_COLS = 'fact_cid, attester, accepted_at, observed_at, lat, lng, thread, log_index, position';

function hitOf(r: NoteRowOut): NoteHit {
  return {
    fact_cid: r.fact_cid,
    attester: r.attester,
    accepted_at: r.accepted_at,
    observed_at: r.observed_at === null ? null : int(r.observed_at),
    lat: r.lat,
    lng: r.lng,
    vector: vectorOf(r.vector ?? null),
    thread: r.thread,
    seq: seqOf(r.log_index, r.position),
  };
}

interface CandidateRow {
  log_index: string;
  position: number;
  observed_at: string | null;
  doc: string;
}

function candidateOf(r: CandidateRow): NoteCandidate {
  return { seq: seqOf(r.log_index, r.position), observed_at: r.observed_at === null ? null : int(r.observed_at), doc: r.doc };
}

interface EdgeRowOut {
  edge_cid: string;
  kind: string;
  from_ref: string;
  to_ref: string;
  valid_from: string;
  valid_to: string | null;
  closed_at: string | null;
  closed_by: string | null;
  stated_by: string;
  attester: string;
  recorded_at: string;
}

/** The memory index of one schema. */
export class MemoryQueries implements MemoryReader {
  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
  ) {}

  /**
   * The filters of a note search as WHERE terms; null when no row can match. `tagsInKeys`: the
   * caller matches the tags as keys (noteCandidates), so they are not repeated here.
   */
  private noteWhere(q: NoteSearch, tagsInKeys = false): Where | null {
    const w = new Where();
    w.add((p) => `scope_key = ${p}`, scopeKey(q.scope));
    if (q.tags !== undefined && !tagsInKeys) {
      const tags = strings('tags', q.tags);
      if (tags.length > 0) w.add((p) => `tags @> ${p}::text[]`, tags);
    }
    if (q.entity !== undefined) {
      w.add((p) => `entity = ${p}`, str('entity', q.entity));
    }
    if (q.bbox !== undefined) {
      const b = q.bbox;
      if (typeof b !== 'object' || b === null) throw new TypeError('bbox: expected an object');
      w.add((p) => `lat >= ${p}`, finite('bbox.min_lat', b.min_lat));
      w.add((p) => `lat <= ${p}`, finite('bbox.max_lat', b.max_lat));
      const lo = finite('bbox.min_lng', b.min_lng);
      const hi = finite('bbox.max_lng', b.max_lng);
      // A box across the antimeridian comes as min_lng > max_lng.
      w.args.push(lo, hi);
      const [pl, ph] = [`$${w.args.length - 1}`, `$${w.args.length}`];
      w.terms.push(lo <= hi ? `lng >= ${pl} AND lng <= ${ph}` : `(lng >= ${pl} OR lng <= ${ph})`);
    }
    if (q.observed_from !== undefined) w.add((p) => `observed_at >= ${p}`, intBound('observed_from', q.observed_from, 'ceil'));
    if (q.observed_to !== undefined) w.add((p) => `observed_at <= ${p}`, intBound('observed_to', q.observed_to, 'floor'));
    if (q.accepted_before !== undefined) w.add((p) => `accepted_at <= ${p}`, isoBound('accepted_before', q.accepted_before));
    if (q.authors !== undefined) {
      const authors = strings('authors', q.authors);
      if (authors.length === 0) return null;
      w.add((p) => `attester = ANY(${p}::text[])`, authors);
    }
    if (q.with_vector === true) w.terms.push('vector IS NOT NULL');
    return w;
  }

  /** Newest first under the filters, LIMIT in SQL (memory.ts MemoryReader.searchNotes). */
  async searchNotes(q: NoteSearch): Promise<NoteHit[]> {
    const limit = limitOf(q.limit);
    const w = this.noteWhere(q);
    if (w === null || limit === 0) return [];
    const cols = `${HIT_COLS}${q.vectors === false ? '' : ', vector'}`;
    w.args.push(limit);
    const sql = `SELECT ${cols} FROM ${this.t.notes} WHERE ${w.terms.join(' AND ')} ORDER BY log_index DESC, position DESC LIMIT $${w.args.length}`;
    // Planned per call: how many notes a tag or filter matches decides between the indexes.
    return (await rowsPlanned<NoteRowOut>(this.pool, sql, w.args)).map(hitOf);
  }

  /**
   * Per term its newest matches up to its bound, united, in one statement: log position and
   * document only; `notesAt` reads the rest for the few that rank. A single common term (the
   * caller's hint says so) walks the scope's newest notes instead (`walkCandidates`).
   */
  async noteCandidates(q: NoteSearch): Promise<NoteCandidate[]> {
    const terms = termBounds(q.terms, q.per_term, MAX_PER_TERM).map(([t, cap]): [string, number] => [pgText(t), cap]);
    const w = this.noteWhere(q, terms.length > 0);
    if (w === null) return [];
    if (terms.length === 0) {
      // Latest valid time first (mem_notes_observed): a window's own candidates.
      w.args.push(Math.max(0, Math.min(MAX_PER_TERM, Math.floor(finite('limit', q.limit)))));
      const got = await rowsPlanned<CandidateRow>(
        this.pool,
        `SELECT log_index, position, observed_at, doc FROM ${this.t.notes} WHERE ${w.terms.join(' AND ')} AND observed_at IS NOT NULL
          ORDER BY observed_at DESC, log_index DESC, position DESC LIMIT $${w.args.length}`,
        w.args,
      );
      return got.map(candidateOf);
    }
    // Each branch: the scope's notes holding the term and every asked tag, by their keys. Without
    // other filters the scope's own condition is written so that no index serves it
    // (`scope_key || ''`): the keys already name the scope, and the planner, taking the two as
    // independent, would otherwise intersect the key's postings with every note of the scope
    // (113 000 row ids for the public scope at 1 M notes: 4–8 ms) and misjudge how many match.
    const code = scopeCode(scopeKey(q.scope));
    const tags = q.tags === undefined ? [] : strings('tags', q.tags);
    const keysOf = (term: string) => [termKey(code, term), ...tags.map((g) => tagKey(code, g))];
    // Only with no filter beyond the scope and tags: how much a box, an entity, authors or times
    // thin the matches is unknown, and a walk that keeps widening costs more than the postings.
    if (terms.length === 1 && w.terms.length === 1) {
      const walked = await this.walkCandidates(q, w, keysOf(terms[0][0]), tags, terms[0][1]);
      if (walked !== null) return walked;
    }
    // With other filters the scope's indexes (box, entity, times …) lead with scope_key and may
    // serve them, so the condition stays indexable.
    const base = w.terms.length === 1 ? `(scope_key || '') = $1` : w.terms.join(' AND ');
    const branches = terms.map(([term, cap]) => {
      w.args.push(keysOf(term));
      return `(SELECT log_index, position, observed_at, doc FROM ${this.t.notes} WHERE ${base} AND keys @> $${w.args.length}::text[]
                ORDER BY log_index DESC, position DESC LIMIT ${cap})`;
    });
    const got = await rowsPlanned<CandidateRow>(this.pool, `SELECT DISTINCT * FROM (${branches.join(' UNION ALL ')}) u`, w.args);
    return got.map(candidateOf);
  }

  /**
   * A common term's newest `cap` matches by walking the scope's newest notes (mem_notes_recent)
   * instead of reading every match through the key's postings: when the caller's hint says the
   * term is in a share f of the scope's notes, the newest cap / f notes or so hold cap matches,
   * fewer rows than the term's df. The window is read newest first with the filters and then
   * matched; a window that holds `cap` matches, or is the whole scope, holds exactly the newest
   * `cap` matches. Null when the window would grow past the postings (the caller reads those).
   */
  private async walkCandidates(q: NoteSearch, w: Where, keys: string[], tags: readonly string[], cap: number): Promise<NoteCandidate[] | null> {
    const termDf = q.hint?.df?.[0];
    const notes = q.hint?.notes;
    if (typeof termDf !== 'number' || typeof notes !== 'number' || !(termDf > 0) || !(notes >= termDf)) return null;
    // With tags, the rarest asked tag's count thins the expected matches (taken as independent of
    // the term), and bounds the postings read otherwise.
    let df = termDf;
    let share = termDf / notes;
    if (tags.length > 0) {
      const got = await rows<{ df: string }>(this.pool, `SELECT min(df) AS df FROM ${this.t.noteDf} WHERE scope_key = $1 AND term = ANY($2::text[])`, [scopeKey(q.scope), tags.map(countedTag)]);
      const tagDf = got[0]?.df ? int(got[0].df) : 0;
      if (tagDf === 0) return null;
      df = Math.min(df, tagDf);
      share *= tagDf / notes;
    }
    // A tag that goes with the term less often than by chance thins the matches further: a window
    // short of `cap` matches is widened fourfold, while it stays below the postings' size.
    for (let window = Math.ceil((cap * 1.5) / share) + 64; window < df; window *= 4) {
      const args = [...w.args, window, keys];
      const sql = `SELECT log_index, position, observed_at, doc FROM (
          SELECT log_index, position, observed_at, doc, keys FROM ${this.t.notes} WHERE ${w.terms.join(' AND ')}
           ORDER BY log_index DESC, position DESC LIMIT $${args.length - 1}) n
        WHERE keys @> $${args.length}::text[] ORDER BY log_index DESC, position DESC LIMIT ${cap}`;
      const got = await rowsPlanned<CandidateRow>(this.pool, sql, args);
      if (got.length >= cap || window >= notes) return got.map(candidateOf);
    }
    return null;
  }

  async notesAt(a: { scope: Scope | null; seqs: number[]; vectors?: boolean }): Promise<NoteHit[]> {
    if (!Array.isArray(a.seqs) || !a.seqs.every((x) => Number.isSafeInteger(x) && x >= 0)) throw new TypeError('seqs: expected an array of non-negative integers');
    if (a.seqs.length === 0) return [];
    const cols = `${HIT_COLS}${a.vectors === false ? '' : ', vector'}`;
    const got = await rows<NoteRowOut>(this.pool, `SELECT ${cols} FROM ${this.t.notes} WHERE scope_key = $1 AND (log_index, position) IN (SELECT * FROM unnest($2::bigint[], $3::int[]))`, [
      scopeKey(a.scope),
      a.seqs.map((x) => Math.floor(x / SEQ_POSITIONS)),
      a.seqs.map((x) => x % SEQ_POSITIONS),
    ]);
    const bySeq = new Map(got.map((r) => [seqOf(r.log_index, r.position), r]));
    return a.seqs.flatMap((x) => {
      const r = bySeq.get(x);
      return r ? [hitOf(r)] : [];
    });
  }

  async noteStats(a: { scope: Scope | null; terms: string[] }): Promise<NoteStats> {
    const key = scopeKey(a.scope);
    const terms = strings('terms', a.terms);
    const [stats] = await rows<{ notes: string; tokens: string }>(this.pool, `SELECT notes, tokens FROM ${this.t.noteStats} WHERE scope_key = $1`, [key]);
    const df = new Map<string, number>();
    if (terms.length > 0) {
      const got = await rows<{ term: string; df: string }>(this.pool, `SELECT term, df FROM ${this.t.noteDf} WHERE scope_key = $1 AND term = ANY($2::text[])`, [key, terms]);
      for (const r of got) df.set(r.term, int(r.df));
    }
    return { notes: stats ? int(stats.notes) : 0, tokens: stats ? int(stats.tokens) : 0, df: a.terms.map((t) => df.get(pgText(t)) ?? 0) };
  }

  async noteNeighbours(a: { scope: Scope | null; fact_cid: string; thread: string; n: number; accepted_before?: string }): Promise<NoteNeighbours> {
    const n = Math.max(0, Math.min(20, Math.floor(finite('n', a.n))));
    if (n === 0) return { before: [], after: [] };
    const args: unknown[] = [scopeKey(a.scope), str('thread', a.thread), str('fact_cid', a.fact_cid), n];
    let bound = '';
    if (a.accepted_before !== undefined) {
      args.push(isoBound('accepted_before', a.accepted_before));
      bound = ' AND x.accepted_at <= $5';
    }
    const cols = 'x.fact_cid, x.attester, x.accepted_at, x.observed_at, x.lat, x.lng, x.thread, x.log_index, x.position';
    const side = (op: string, order: string) =>
      rows<NoteRowOut>(
        this.pool,
        `SELECT ${cols} FROM ${this.t.notes} self JOIN ${this.t.notes} x ON x.scope_key = self.scope_key AND x.thread = self.thread
          WHERE self.scope_key = $1 AND self.thread = $2 AND self.fact_cid = $3 AND (x.log_index, x.position) ${op} (self.log_index, self.position)${bound}
          ORDER BY x.log_index ${order}, x.position ${order} LIMIT $4`,
        args,
      );
    const [before, after] = await Promise.all([side('<', 'DESC'), side('>', 'ASC')]);
    return { before: before.reverse().map(hitOf), after: after.map(hitOf) };
  }

  /**
   * Edges touching `record`, as of a transaction time R (edges and closures recorded ≤ R) and a
   * valid time V (valid_from ≤ V < min(stated valid_to, earliest visible closure); no end is
   * open). The earliest visible closure is one lateral index probe per edge.
   */
  async edges(q: EdgeQuery): Promise<EdgeRow[]> {
    const limit = limitOf(q.limit);
    const record = str('record', q.record);
    const w = new Where();
    w.add((p) => `e.scope_key = ${p}`, scopeKey(q.scope));
    w.args.push(record);
    const rec = `$${w.args.length}`;
    if (q.direction === 'out') w.terms.push(`e.from_ref = ${rec}`);
    else if (q.direction === 'in') w.terms.push(`e.to_ref = ${rec}`);
    else if (q.direction === 'both') w.terms.push(`(e.from_ref = ${rec} OR e.to_ref = ${rec})`);
    else throw new RangeError('direction: expected out, in or both');
    if (q.kinds !== undefined) {
      const kinds = strings('kinds', q.kinds);
      if (kinds.length === 0) return [];
      w.add((p) => `e.kind = ANY(${p}::text[])`, kinds);
    }
    let closureBound = '';
    if (q.recorded_at !== undefined) {
      w.add((p) => `e.recorded_at <= ${p}`, isoBound('recorded_at', q.recorded_at));
      closureBound = ` AND c.recorded_at <= $${w.args.length}`;
    }
    if (q.valid_at !== undefined) {
      // valid_from ≤ V and V < end hold for floor(V) exactly as for V: both bounds are integers.
      w.add((p) => `e.valid_from <= ${p}`, intBound('valid_at', q.valid_at, 'floor'));
      // least() skips NULLs: the end is the stated valid_to, the closure, the earlier of both, or none.
      const v = `$${w.args.length}`;
      w.terms.push(`(least(e.valid_to, c.closed_at) IS NULL OR ${v} < least(e.valid_to, c.closed_at))`);
    }
    w.args.push(limit);
    const got = await rows<EdgeRowOut>(
      this.pool,
      `SELECT e.edge_cid, e.kind, e.from_ref, e.to_ref, e.valid_from, e.valid_to, c.closed_at, c.closed_by, e.stated_by, e.attester, e.recorded_at
         FROM ${this.t.memEdges} e
         LEFT JOIN LATERAL (
           SELECT c.closed_at, c.closed_by FROM ${this.t.closures} c WHERE c.edge_cid = e.edge_cid${closureBound}
            ORDER BY c.closed_at, c.log_index, c.position, c.closed_by LIMIT 1) c ON true
        WHERE ${w.terms.join(' AND ')}
        ORDER BY e.valid_from, e.log_index, e.position, e.ord LIMIT $${w.args.length}`,
      w.args,
    );
    return got.map((r) => ({
      edge_cid: r.edge_cid,
      kind: r.kind,
      from: r.from_ref,
      to: r.to_ref,
      valid_from: int(r.valid_from),
      valid_to: r.valid_to === null ? null : int(r.valid_to),
      closed_at: r.closed_at === null ? null : int(r.closed_at),
      closed_by: r.closed_by,
      stated_by: r.stated_by,
      attester: r.attester,
      recorded_at: r.recorded_at,
    }));
  }

  /** Aliases and entity names matching the text's words, by ts_rank_cd, then newest first. */
  async aliases(q: { scope: Scope | null; text: string; limit: number }): Promise<AliasHit[]> {
    const limit = limitOf(q.limit);
    const query = tsqueryText(q.text);
    if (query === null || limit === 0) return [];
    const got = await rowsPlanned<AliasHit>(
      this.pool,
      `SELECT entity, phrase, fact_cid, attester, ts_rank_cd(tsv, to_tsquery('english', $2)) AS text_score FROM ${this.t.aliases}
        WHERE scope_key = $1 AND tsv @@ to_tsquery('english', $2)
        ORDER BY text_score DESC, log_index DESC, position DESC LIMIT $3`,
      [scopeKey(q.scope), query, limit],
    );
    return got.map((r) => ({ ...r, text_score: Number(r.text_score) }));
  }

  /** Derivatives of `attester`'s batches under the scope, in log order, after the `seq` cursor. */
  async derivedBy(q: { scope: Scope | null; attester: string; after?: number; limit: number }): Promise<Array<{ fact_cid: string; seq: number }>> {
    const limit = limitOf(q.limit);
    const attester = str('attester', q.attester);
    const after = q.after === undefined ? 0 : intBound('after', q.after, 'floor');
    const got = await rows<{ fact_cid: string; seq: string }>(this.pool, `SELECT fact_cid, seq FROM ${this.t.derivations} WHERE attester = $1 AND scope_key = $2 AND seq > $3 ORDER BY seq LIMIT $4`, [
      attester,
      scopeKey(q.scope),
      after,
      limit,
    ]);
    return got.map((r) => ({ fact_cid: r.fact_cid, seq: int(r.seq) }));
  }

  /** Shared (cell, band, tslot) keys under the scope in key order (byte order, then tslot), after `after`. */
  async sharedSlots(q: { scope: Scope | null; cells?: string[]; bands?: string[]; after?: SharedSlot; limit: number }): Promise<SharedSlot[]> {
    const limit = limitOf(q.limit);
    const w = new Where();
    w.add((p) => `scope_key = ${p}`, scopeKey(q.scope));
    if (q.cells !== undefined) {
      const cells = strings('cells', q.cells);
      if (cells.length === 0) return [];
      w.add((p) => `cell = ANY(${p}::text[])`, cells);
    }
    if (q.bands !== undefined) {
      const bands = strings('bands', q.bands);
      if (bands.length === 0) return [];
      w.add((p) => `band = ANY(${p}::text[])`, bands);
    }
    if (q.after !== undefined) {
      const a = q.after;
      if (typeof a !== 'object' || a === null) throw new TypeError('after: expected a slot');
      w.args.push(str('after.cell', a.cell), str('after.band', a.band), intBound('after.tslot', a.tslot, 'floor'));
      const n = w.args.length;
      // Row comparison on the primary key's trailing columns: one index range, in key order.
      w.terms.push(`(cell, band, tslot) > ($${n - 2}::text, $${n - 1}::text, $${n}::bigint)`);
    }
    w.args.push(limit);
    const got = await rows<{ cell: string; band: string; tslot: string }>(
      this.pool,
      `SELECT cell, band, tslot FROM ${this.t.sharedSlots} WHERE ${w.terms.join(' AND ')} ORDER BY cell, band, tslot LIMIT $${w.args.length}`,
      w.args,
    );
    return got.map((r) => ({ cell: r.cell, band: r.band, tslot: int(r.tslot) }));
  }
}
