/**
 * Write side of the agent-memory index (src/store/memory.ts) in the SQLite driver. insertEntries
 * (queries.ts) hands every fact it indexes for the first time, in log order, inside the apply's
 * savepoint, to `add` with the rows `projectMemory` gave (indexed-entry.ts computes them only
 * for `memory.*` bands and derivatives, so ordinary facts never get here). The rows therefore
 * commit, roll back and replay with the fact row: an index rebuilt from the log is the same.
 *
 * Closures follow memory.ts `edgeClosures` exactly: its candidates are the edges indexed before
 * this one (earlier entries, and earlier facts of the same apply, which this transaction sees),
 * and each closure it returns is stored with the closer's transaction time.
 */
import type { Database, Statement } from 'better-sqlite3';
import { b32decode, b32encode } from '../../protocol/base32.js';
import { edgeClosures, EXCLUSIVE_EDGE_TYPES, type AliasRowIn, type EdgeRowIn, type IndexedEdge, type MemoryRows, type NoteRow } from '../memory.js';
import { documentTerms, noteDocument, packDocument } from '../note-terms.js';
import { indexedTerms, indexedWords } from './memory-text.js';
import type { Names } from './names.js';

/** A fact being indexed for the first time, as its memory rows need it. */
export interface MemoryFact {
  digest: Uint8Array;
  scopeId: number;
  attester: string;
  /** Packed accepted_at of its entry (schema.ts packAcceptedAt). */
  acceptedAt: number;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A vector as stored: float32, little endian. */
export function vectorBlob(v: Float32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
  const b = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) b.writeFloatLE(v[i], i * 4);
  return b;
}

/** The vector `vectorBlob` stored (a copy, aligned). */
export function blobVector(b: Buffer | null): Float32Array | null {
  if (b === null) return null;
  const n = b.length >>> 2;
  if (LITTLE_ENDIAN) {
    const copy = new Uint8Array(n * 4);
    copy.set(b.subarray(0, n * 4));
    return new Float32Array(copy.buffer);
  }
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) v[i] = b.readFloatLE(i * 4);
  return v;
}

/** An indexed edge as the closure rule's candidate lookups return it (edge_cid: its digest). */
interface CandidateRow {
  id: number;
  edge_cid: Buffer;
  kind: string;
  from_id: number;
  to_id: number;
  valid_from: number;
  attester_id: number;
}

export class MemoryWriter {
  private readonly insertNote: Statement<unknown[]>;
  private readonly insertNoteText: Statement<[number, string]>;
  private readonly insertTag: Statement<[string, number, number]>;
  private readonly countTerm: Statement<[number, string, number]>;
  private readonly countNote: Statement<[number, number, number]>;
  /**
   * Term and note counts of the notes added since the last `flush`, per scope: a batch's notes
   * share most of their words, so one upsert per distinct (scope, term) replaces one per note
   * and term.
   */
  private pendingDf = new Map<number, Map<string, number>>();
  private pendingNotes = new Map<number, { notes: number; tokens: number }>();
  private readonly insertAlias: Statement<unknown[]>;
  private readonly insertAliasText: Statement<[number, string]>;
  private readonly insertDerivation: Statement<[number, number, Uint8Array]>;
  private readonly insertEdge: Statement<unknown[]>;
  private readonly insertClosure: Statement<[number, number, Uint8Array, number]>;
  private readonly siblings: Statement<[number, number, string], CandidateRow>;
  private readonly named: Statement<[Uint8Array, number, Uint8Array, number], CandidateRow>;

  constructor(
    db: Database,
    private readonly attesters: Names,
    private readonly refs: Names,
  ) {
    this.insertNote = db.prepare(`INSERT INTO notes (scope_id, cid, attester_id, accepted_at, observed_at, lat, lng, entity_id, thread, doc, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.countTerm = db.prepare(`INSERT INTO note_df (scope_id, term, df) VALUES (?, ?, ?) ON CONFLICT (scope_id, term) DO UPDATE SET df = df + excluded.df`);
    this.countNote = db.prepare(
      `INSERT INTO note_stats (scope_id, notes, tokens) VALUES (?, ?, ?) ON CONFLICT (scope_id) DO UPDATE SET notes = notes + excluded.notes, tokens = tokens + excluded.tokens`,
    );
    this.insertNoteText = db.prepare(`INSERT INTO notes_fts (rowid, words) VALUES (?, ?)`);
    this.insertTag = db.prepare(`INSERT OR IGNORE INTO note_tags (tag, scope_id, note_id) VALUES (?, ?, ?)`);
    this.insertAlias = db.prepare(`INSERT INTO aliases (scope_id, entity_id, cid, attester_id, phrase) VALUES (?, ?, ?, ?, ?)`);
    this.insertAliasText = db.prepare(`INSERT INTO aliases_fts (rowid, words) VALUES (?, ?)`);
    this.insertDerivation = db.prepare(`INSERT INTO derivations (attester_id, scope_id, cid) VALUES (?, ?, ?)`);
    this.insertEdge = db.prepare(
      `INSERT INTO mem_edges (scope_id, kind, from_id, to_id, valid_from, valid_to, stated, edge_cid, attester_id, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertClosure = db.prepare(`INSERT INTO mem_closures (edge_id, closed_at, closed_by, recorded_at) VALUES (?, ?, ?, ?)`);
    const candidate = `SELECT e.id, COALESCE(e.edge_cid, e.stated) AS edge_cid, e.kind, e.from_id, e.to_id, e.valid_from, e.attester_id FROM mem_edges e`;
    // The exclusive rule's candidates: same scope, kind and from (mem_edges_out), in log order
    // (of two later siblings starting at the same instant, the rule closes at the first it sees).
    this.siblings = db.prepare(`${candidate} WHERE e.from_id = ? AND e.scope_id = ? AND e.kind = ? ORDER BY e.id`);
    // An `invalidates` entry: a memory.edge record's cid (its stating fact), or a derived_from edge's own cid.
    this.named = db.prepare(`${candidate} WHERE e.stated = ? AND e.scope_id = ? AND e.edge_cid IS NULL UNION ALL ${candidate} WHERE e.edge_cid = ? AND e.scope_id = ?`);
  }

  /** Write the counts of the notes added since the last flush (inside the same transaction). */
  flush(): void {
    for (const [scopeId, terms] of this.pendingDf) for (const [term, n] of terms) this.countTerm.run(scopeId, term, n);
    for (const [scopeId, c] of this.pendingNotes) this.countNote.run(scopeId, c.notes, c.tokens);
    this.reset();
  }

  /** Drop counts not flushed (their transaction failed). */
  reset(): void {
    this.pendingDf = new Map();
    this.pendingNotes = new Map();
  }

  /** Write the memory rows of one fact (inside the caller's savepoint). */
  add(rows: MemoryRows, f: MemoryFact): void {
    const attesterId = this.attesters.intern(f.attester);
    if (rows.note) this.note(rows.note, f, attesterId);
    if (rows.alias) this.alias(rows.alias, f, attesterId);
    if (rows.derivation) this.insertDerivation.run(attesterId, f.scopeId, f.digest);
    for (const e of rows.edges ?? []) this.edge(e, f, attesterId);
  }

  private note(n: NoteRow, f: MemoryFact, attesterId: number): void {
    const entityId = n.entity === null ? null : this.refs.intern(n.entity);
    const vector = n.vector === null ? null : vectorBlob(n.vector);
    const doc = noteDocument(n.text, n.speaker, n.tags);
    const id = Number(this.insertNote.run(f.scopeId, f.digest, attesterId, f.acceptedAt, n.observed_at, n.lat, n.lng, entityId, n.thread, packDocument(doc), vector).lastInsertRowid);
    const terms = documentTerms(doc);
    if (terms.length > 0) this.insertNoteText.run(id, indexedTerms(f.scopeId, terms));
    let df = this.pendingDf.get(f.scopeId);
    if (df === undefined) this.pendingDf.set(f.scopeId, (df = new Map()));
    for (const t of terms) df.set(t, (df.get(t) ?? 0) + 1);
    const count = this.pendingNotes.get(f.scopeId) ?? { notes: 0, tokens: 0 };
    count.notes++;
    count.tokens += doc.text.length;
    this.pendingNotes.set(f.scopeId, count);
    for (const tag of n.tags) this.insertTag.run(tag, f.scopeId, id);
  }

  private alias(a: AliasRowIn, f: MemoryFact, attesterId: number): void {
    const id = Number(this.insertAlias.run(f.scopeId, this.refs.intern(a.entity), f.digest, attesterId, a.phrase).lastInsertRowid);
    const words = indexedWords(f.scopeId, a.phrase);
    if (words !== '') this.insertAliasText.run(id, words);
  }

  /**
   * Insert an edge and the closures it causes. Candidates are compared by interned ids (written
   * as `#<id>` into IndexedEdge's from/to, the same for the new edge), so no reference is turned
   * back into text; edge cids are text for the rule (closures name them) and digests in rows.
   */
  private edge(e: EdgeRowIn, f: MemoryFact, attesterId: number): void {
    const fromId = this.refs.intern(e.from);
    const toId = this.refs.intern(e.to);
    const asIndexed = (r: CandidateRow): IndexedEdge => ({
      edge_cid: b32encode(r.edge_cid),
      kind: r.kind,
      from: `#${r.from_id}`,
      to: `#${r.to_id}`,
      valid_from: r.valid_from,
      attester: `#${r.attester_id}`,
    });
    const sameFrom = EXCLUSIVE_EDGE_TYPES.has(e.kind) ? this.siblings.all(fromId, f.scopeId, e.kind) : [];
    const named: CandidateRow[] = [];
    for (const cid of new Set(e.invalidates)) {
      const d = digestOf(cid);
      if (d !== null) named.push(...this.named.all(d, f.scopeId, d, f.scopeId));
    }
    // stated_by is the fact being indexed (memory.ts), edge_cid its cid or a contentId.
    const stated = digestOf(e.stated_by) ?? f.digest;
    const own = e.edge_cid === e.stated_by ? null : digestOf(e.edge_cid);
    const id = Number(this.insertEdge.run(f.scopeId, e.kind, fromId, toId, e.valid_from, e.valid_to, stated, own, attesterId, f.acceptedAt).lastInsertRowid);
    if (sameFrom.length === 0 && named.length === 0) return;
    const siblings = sameFrom.map(asIndexed);
    const namedEdges = named.map(asIndexed);
    const closures = edgeClosures({ ...e, from: `#${fromId}`, to: `#${toId}` }, `#${attesterId}`, siblings, namedEdges);
    // Edge cid → rows (one in practice: a cid names one fact's edge); the new edge is its own.
    const ids = new Map<string, Set<number>>([[e.edge_cid, new Set([id])]]);
    [...sameFrom, ...named].forEach((r, i) => {
      const cid = (i < siblings.length ? siblings[i] : namedEdges[i - siblings.length]).edge_cid;
      if (cid === e.edge_cid) return;
      let s = ids.get(cid);
      if (s === undefined) ids.set(cid, (s = new Set()));
      s.add(r.id);
    });
    // An edge both named and an older sibling is closed twice alike: one row is enough.
    const done = new Set<string>();
    for (const c of closures) {
      const key = `${c.edge_cid}\u0000${c.closed_at}\u0000${c.closed_by}`;
      if (done.has(key)) continue;
      done.add(key);
      const closedBy = digestOf(c.closed_by);
      if (closedBy === null) continue; // not a cid: memory.ts only closes with fact_cids and contentIds
      for (const edgeId of ids.get(c.edge_cid) ?? []) this.insertClosure.run(edgeId, c.closed_at, closedBy, f.acceptedAt);
    }
  }
}

/** The 32-byte digest a fact_cid or contentId names, or null for any other text. */
function digestOf(cid: string): Uint8Array | null {
  try {
    return b32decode(cid, 32);
  } catch {
    return null;
  }
}
