/**
 * SQLite index schema. Everything here except `witnesses` and `scope_claims` is derived from the
 * transparency log and can be rebuilt by deleting index.sqlite; rows are only ever inserted or,
 * for `meta`, overwritten.
 *
 * Version 2 keeps a fact in a ninth (batches of 256) to a fifth (single facts) of version 1's
 * bytes, because bytes written are what ingest pays for (WAL frames, checkpoints, splits):
 * - a fact's body is not copied: the row says where its canonical bytes sit in its log entry
 *   (`body_at`, `body_len`), and a read checks them against the fact's digest;
 * - proofs are not stored per fact: `entries.tree` holds each batch tree once, and a fact row
 *   keeps its proof index (`leaf`), which also locates its digest (the fact_cid), so the cid
 *   index needs only a 48-bit prefix of it (`cid_key`);
 * - cells, bands and scopes are interned, so the rows and the query index carry small integers;
 * - accepted_at is an integer that orders as its text did (digits of YYYYMMDDhhmmss);
 * - kind and provenance class are small codes; `supersedes` is the id of the superseded row
 *   (version 1 also kept that link as text in an `edges` table that no query read).
 * An index written by an older version is dropped (witnesses kept) and rebuilt from the log.
 *
 * Version 3 adds the agent-memory index (src/store/memory.ts), projected from memory records
 * and derivative facts as they are first indexed (memory-index.ts): notes with their full-text
 * table, tags, aliases, bi-temporal edges and their closures, derivations, and the shared slots
 * (keys written by two attesters) of every fact. Ordinary facts add nothing to these tables
 * except, when they supersede another attester's version, one shared-slot row.
 *
 * Version 4 indexes note and alias words with FTS5's `ascii` tokenizer over words folded by
 * memory-text.ts, so FTS5 can no longer split a scope-prefixed word (memory-text.ts says why);
 * a version-3 index is rebuilt from the log like any older one.
 *
 * Version 5 indexes notes by the terms src/store/note-terms.ts makes (the same on PostgreSQL),
 * pre-stemmed, so notes_fts tokenizes with `ascii` alone; it keeps each note's packed document,
 * speaker terms and thread, and per scope the document frequency of each term and the notes'
 * count and total length, which the ranking (primitives/memory/note-rank.ts) scores with.
 */
import type { Database } from 'better-sqlite3';
import { SvcError } from '../../protocol/errors.js';
import type { FactKind, ProvenanceClass } from '../contract.js';
import { FTS_TOKENIZE, NOTE_TOKENIZE } from './memory-text.js';

export const SCHEMA_VERSION = 5;

/** On-disk codes: append only, never reorder (rows store the position). */
export const KIND_CODES: readonly FactKind[] = ['primary', 'absence', 'derivative'];
export const PROVENANCE_CODES: readonly ProvenanceClass[] = ['direct_sensor', 'deterministic_index', 'model_output', 'human_curated', 'unclassified'];

const DDL = `
CREATE TABLE IF NOT EXISTS facts (
  id          INTEGER PRIMARY KEY,
  cid_key     INTEGER NOT NULL,
  cell_id     INTEGER NOT NULL,
  scope_id    INTEGER NOT NULL,
  band_id     INTEGER NOT NULL,
  tslot       INTEGER NOT NULL,
  accepted_at INTEGER NOT NULL,
  log_index   INTEGER NOT NULL,
  position    INTEGER NOT NULL,
  kind        INTEGER NOT NULL,
  provenance  INTEGER NOT NULL,
  leaf        INTEGER NOT NULL,
  body_at     INTEGER NOT NULL,
  body_len    INTEGER NOT NULL,
  supersedes  INTEGER,
  -- Only when the log entry does not hold the body's canonical bytes verbatim (an entry some
  -- other writer encoded differently); NULL costs one header byte.
  body        BLOB
);
-- latest/history/bandsAt/newest-of-key: equality on (cell, scope, band), then walked in version
-- order, so "newest per band" is one backwards index seek.
CREATE INDEX IF NOT EXISTS facts_key ON facts (cell_id, scope_id, band_id, tslot, accepted_at, log_index, position);

-- fact_cid to row: keyed on the digest's first 48 bits (batch-tree.ts cidKey); a lookup
-- confirms the full digest against the candidate's leaf in its entry's batch tree.
CREATE INDEX IF NOT EXISTS facts_cid ON facts (cid_key);

-- One row per distinct cell with at least one fact: prefix scans and counts read it directly.
CREATE TABLE IF NOT EXISTS cells (id INTEGER PRIMARY KEY, cell TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS bands (id INTEGER PRIMARY KEY, band TEXT NOT NULL UNIQUE);
-- scopeKey() text; id 0 is the unscoped ''.
CREATE TABLE IF NOT EXISTS scopes (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
INSERT OR IGNORE INTO scopes (id, key) VALUES (0, '');

-- One row per applied log entry: what its facts share.
CREATE TABLE IF NOT EXISTS entries (
  log_index INTEGER PRIMARY KEY,
  attester  TEXT NOT NULL,
  leaves    INTEGER NOT NULL,
  tree      BLOB NOT NULL
);

-- Facts first indexed per (attester, UTC day as YYYYMMDD), so the per-attester daily quota is
-- one key lookup rather than a count over the day's facts. Derived: replay rebuilds it (an index
-- created before this table counts only entries applied after it appeared).
CREATE TABLE IF NOT EXISTS attester_days (
  attester TEXT NOT NULL,
  day      INTEGER NOT NULL,
  facts    INTEGER NOT NULL,
  PRIMARY KEY (attester, day)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- Cells and bands holding at least one public (unscoped) fact, so the public counts of stats()
-- are three cheap counts instead of a distinct scan of every fact (about 0.3 s at a million).
CREATE TABLE IF NOT EXISTS public_cells (cell_id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS public_bands (band_id INTEGER PRIMARY KEY);

-- First claims on scopes (docs/scopes.md): scopeKey() text → the key owning it. Not derivable
-- from the log alone (a key may claim a scope before writing into it), so kept on upgrade; a
-- scope written before its claim was recorded falls back to its first writer (facts_scoped).
CREATE TABLE IF NOT EXISTS scope_claims (
  scope      TEXT PRIMARY KEY,
  attester   TEXT NOT NULL,
  claimed_at TEXT NOT NULL
) WITHOUT ROWID;
-- First writer of a scope, in log order; scoped facts only, so public ingest pays nothing.
CREATE INDEX IF NOT EXISTS facts_scoped ON facts (scope_id, log_index, position) WHERE scope_id <> 0;

-- ---- agent-memory index (version 3; memory-index.ts writes it, memory-queries.ts reads it) ----

-- Interned attester keys and the records edges, notes and aliases refer to (fact_cids,
-- entity_cids): rows carry small integers, so an edge row and its indexes are tens of bytes.
CREATE TABLE IF NOT EXISTS attesters (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS mem_refs (id INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE);

-- One row per memory.note, in log order (id is also its notes_fts rowid). The fact's digest is
-- kept (fact_cid is its base32) so a hit needs no batch tree; vector: float32 little endian.
CREATE TABLE IF NOT EXISTS notes (
  id          INTEGER PRIMARY KEY,
  scope_id    INTEGER NOT NULL,
  cid         BLOB NOT NULL,
  attester_id INTEGER NOT NULL,
  accepted_at INTEGER NOT NULL,
  observed_at INTEGER,
  lat         REAL,
  lng         REAL,
  entity_id   INTEGER,
  thread      TEXT,
  -- note-terms.ts packDocument: the text, speaker and tag terms the ranking scores
  doc         TEXT NOT NULL,
  -- last: a vector may be kilobytes (overflow pages), and a read of the columns before it never
  -- walks them (a ranking reads the document of every candidate)
  vector      BLOB
);
-- Newest first within a scope (searches without words), and the narrower starting points.
CREATE INDEX IF NOT EXISTS notes_scope ON notes (scope_id, id);
CREATE INDEX IF NOT EXISTS notes_entity ON notes (entity_id, scope_id, id) WHERE entity_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS notes_vector ON notes (scope_id, id) WHERE vector IS NOT NULL;
CREATE INDEX IF NOT EXISTS notes_geo ON notes (scope_id, lat, lng) WHERE lat IS NOT NULL;
-- A time window's notes, latest valid time first (search's window candidates).
CREATE INDEX IF NOT EXISTS notes_observed ON notes (scope_id, observed_at, id) WHERE observed_at IS NOT NULL;
-- A hit's neighbours in its thread (search's context), in log order.
CREATE INDEX IF NOT EXISTS notes_thread ON notes (scope_id, thread, id) WHERE thread IS NOT NULL;
-- Per scope: how many notes list each term (any field), and the notes' count and total text
-- length, so a search's idf and length norm come from its own scope alone.
CREATE TABLE IF NOT EXISTS note_df (
  scope_id INTEGER NOT NULL,
  term     TEXT NOT NULL,
  df       INTEGER NOT NULL,
  PRIMARY KEY (scope_id, term)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS note_stats (
  scope_id INTEGER PRIMARY KEY,
  notes    INTEGER NOT NULL,
  tokens   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS note_tags (
  tag      TEXT NOT NULL,
  scope_id INTEGER NOT NULL,
  note_id  INTEGER NOT NULL,
  PRIMARY KEY (tag, scope_id, note_id)
) WITHOUT ROWID;
-- The distinct terms of each note (note-terms.ts), every one prefixed with its scope id
-- (memory-text.ts), so a term's posting list holds one scope's notes only and a search reads
-- nothing of another scope. Terms are stemmed already, so FTS5 only splits them (ascii).
-- Contentless: the text is in the log already.
CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(words, content='', tokenize='${NOTE_TOKENIZE}');

-- memory.alias phrases and memory.entity names; aliases_fts as notes_fts.
CREATE TABLE IF NOT EXISTS aliases (
  id          INTEGER PRIMARY KEY,
  scope_id    INTEGER NOT NULL,
  entity_id   INTEGER NOT NULL,
  cid         BLOB NOT NULL,
  attester_id INTEGER NOT NULL,
  phrase      TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS aliases_fts USING fts5(words, content='', tokenize='${FTS_TOKENIZE}');

-- Edges as stated (memory.edge records, derivatives' derived_from), in log order. Cids are kept
-- as their 32-byte digests: stated is the stating fact's, edge_cid the edge's own when it is
-- not that (derived_from: contentId({kind, from, to})). recorded_at: the stating entry's
-- accepted_at, packed.
CREATE TABLE IF NOT EXISTS mem_edges (
  id          INTEGER PRIMARY KEY,
  scope_id    INTEGER NOT NULL,
  kind        TEXT NOT NULL,
  from_id     INTEGER NOT NULL,
  to_id       INTEGER NOT NULL,
  valid_from  INTEGER NOT NULL,
  valid_to    INTEGER,
  stated      BLOB NOT NULL,
  edge_cid    BLOB,
  attester_id INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL
);
-- Out: a record's edges (and the exclusive rule's siblings: same scope, kind and from). In: by
-- valid time. By cid: the edges an invalidates list names.
CREATE INDEX IF NOT EXISTS mem_edges_out ON mem_edges (from_id, scope_id, kind, valid_from);
CREATE INDEX IF NOT EXISTS mem_edges_in ON mem_edges (to_id, scope_id, valid_from);
CREATE INDEX IF NOT EXISTS mem_edges_stated ON mem_edges (stated);
CREATE INDEX IF NOT EXISTS mem_edges_cid ON mem_edges (edge_cid) WHERE edge_cid IS NOT NULL;
-- Closures (memory.ts edgeClosures), recorded at the closer's transaction time; a read takes
-- the earliest closed_at among those recorded by its bound (index order: closed_at, then log order).
CREATE TABLE IF NOT EXISTS mem_closures (
  id          INTEGER PRIMARY KEY,
  edge_id     INTEGER NOT NULL,
  closed_at   INTEGER NOT NULL,
  closed_by   BLOB NOT NULL,
  recorded_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS mem_closures_edge ON mem_closures (edge_id, closed_at);

-- Derivative facts per batch attester; seq (log order) is the derivedBy cursor.
CREATE TABLE IF NOT EXISTS derivations (
  seq         INTEGER PRIMARY KEY,
  attester_id INTEGER NOT NULL,
  scope_id    INTEGER NOT NULL,
  cid         BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS derivations_by ON derivations (attester_id, scope_id, seq);

-- (cell, band, tslot) keys holding facts of at least two attesters, per scope. Names as text so
-- the primary key is the read order (cell, band, tslot) and a page is one range.
CREATE TABLE IF NOT EXISTS shared_slots (
  scope_id INTEGER NOT NULL,
  cell     TEXT NOT NULL,
  band     TEXT NOT NULL,
  tslot    INTEGER NOT NULL,
  PRIMARY KEY (scope_id, cell, band, tslot)
) WITHOUT ROWID;

-- Not derivable from the log: witnesses' co-signatures arrive over HTTP.
CREATE TABLE IF NOT EXISTS witnesses (
  tree_size   INTEGER NOT NULL,
  root        TEXT NOT NULL,
  witness     TEXT NOT NULL,
  signature   TEXT NOT NULL,
  operator    TEXT NOT NULL,
  received_at TEXT NOT NULL,
  UNIQUE (tree_size, witness)
);
`;

/**
 * Every table any version derived from the log (dropped on upgrade, then replayed): version 1's
 * facts and edges, version 2's, and version 3's memory index. What is not listed stays:
 * witnesses and scope_claims (not in the log) and meta (its watermark is reset). An FTS5 table
 * takes its shadow tables with it.
 */
const DERIVED = [
  'facts',
  'edges',
  'entries',
  'cells',
  'bands',
  'scopes',
  'attester_days',
  'public_cells',
  'public_bands',
  'attesters',
  'mem_refs',
  'notes',
  'note_tags',
  'notes_fts',
  'note_df',
  'note_stats',
  'aliases',
  'aliases_fts',
  'mem_edges',
  'mem_closures',
  'derivations',
  'shared_slots',
];

function storedVersion(db: Database): number | undefined {
  const hasMeta = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).get() !== undefined;
  if (!hasMeta) return undefined;
  const row = db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string } | undefined;
  return row === undefined ? undefined : Number(row.value);
}

/**
 * Apply pragmas and create the schema; refuses an index written by a newer schema. An older
 * index loses its derived tables (and its applied watermark), so opening replays the whole log.
 * Returns the version found, if it was older.
 */
export function migrate(db: Database): { upgradedFrom?: number } {
  // The log is the durable source of truth, so the index may lose its last transactions on a
  // power cut (replay heals it); NORMAL under WAL keeps commits cheap without risking corruption.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = OFF');
  // Ingest dirties pages of two randomly keyed B-trees per fact (facts_cid, facts_key): a 32 MiB
  // page cache instead of the default 2 MiB cut the apply cost by about a sixth at 100k facts.
  // Page size, checkpoint interval and locking mode measured within noise and stay default.
  db.pragma('cache_size = -32768');
  // history's ORDER BY sorts in a temp B-tree; keep it off the disk.
  db.pragma('temp_store = MEMORY');
  const version = storedVersion(db);
  if (version !== undefined && version > SCHEMA_VERSION) {
    throw new SvcError('internal', `index.sqlite: schema version ${version} is newer than this build (${SCHEMA_VERSION})`);
  }
  let upgradedFrom: number | undefined;
  if (version !== undefined && version < SCHEMA_VERSION) {
    db.transaction(() => {
      for (const t of DERIVED) db.exec(`DROP TABLE IF EXISTS ${t}`);
      db.prepare(`DELETE FROM meta WHERE key <> 'schema_version'`).run();
    })();
    db.exec('VACUUM'); // give the dropped pages back, so the file reflects the new layout
    upgradedFrom = version;
  }
  const hadPublicSets = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'public_cells'`).get() !== undefined;
  db.transaction(() => {
    db.exec(DDL);
    // An index written before the public sets existed: fill them once from its facts.
    if (!hadPublicSets) {
      db.exec(`INSERT OR IGNORE INTO public_cells SELECT DISTINCT cell_id FROM facts WHERE scope_id = 0;
               INSERT OR IGNORE INTO public_bands SELECT DISTINCT band_id FROM facts WHERE scope_id = 0;`);
    }
    db.prepare(`INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run(String(SCHEMA_VERSION));
  })();
  return { upgradedFrom };
}

/** accepted_at text (YYYY-MM-DDTHH:MM:SSZ) as the integer YYYYMMDDhhmmss: same order, 6 bytes. */
export function packAcceptedAt(iso: string): number {
  return Number(iso.slice(0, 4) + iso.slice(5, 7) + iso.slice(8, 10) + iso.slice(11, 13) + iso.slice(14, 16) + iso.slice(17, 19));
}

/** Inverse of packAcceptedAt. */
export function unpackAcceptedAt(n: number): string {
  const d = String(n).padStart(14, '0');
  return `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}T${d.slice(8, 10)}:${d.slice(10, 12)}:${d.slice(12, 14)}Z`;
}

const ISO_SECONDS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/**
 * An `accepted_at <= bound` bound as a packed integer, matching how the text column compared:
 * a bound outside the four-digit-year form (isoSeconds of a year before 0 or after 9999 starts
 * with '-' or '+', which sorts before every digit) admitted nothing.
 */
export function packedBound(iso: string): number {
  return ISO_SECONDS_RE.test(iso) ? packAcceptedAt(iso) : -1;
}
