/**
 * PostgreSQL schema of the shared-log driver. Unlike the embedded driver, the transparency log
 * itself lives here (`log_entries`, `log_nodes`), so every responder process that opens the
 * same schema serves one log. The fact index tables carry the SQLite driver's columns and
 * meaning; text columns that are compared or ordered use COLLATE "C" so that range scans and
 * ORDER BY follow byte order exactly as SQLite (and JavaScript's default sort) do, whatever
 * the database's default collation is.
 */
import type pg from 'pg';
import { utf8 } from '../../protocol/bytes.js';
import { SvcError } from '../../protocol/errors.js';
import { blake3 } from '../../protocol/hash.js';
import { backfillMemory } from './memory-index.js';
import { checkSchemaName, tablesOf } from './tables.js';

/**
 * 1: log, facts, supersedes edges, attester days, claims, witnesses.
 * 2: the agent-memory index (mem_* tables) and shared_slots, built from the stored facts when
 *    a version-1 schema is opened (`migrate`).
 * 3: notes indexed by the terms src/store/note-terms.ts makes (the SQLite driver indexes the
 *    same): `terms` (GIN) and the packed document replace the english tsvector; per scope, the
 *    document frequency of each term and the notes' count and length (mem_note_df,
 *    mem_note_stats). A version-2 schema's notes are projected again from the stored facts.
 * 4: proofs kept once per entry: `log_entries.tree` (the batch tree, batch-tree.ts) and
 *    `facts.leaf` (the fact's proof index) instead of a proof as JSON per fact. Facts stored by
 *    an earlier version keep their `proof_json`; nothing is rewritten when a schema is opened.
 *    The unused (cell, band, tslot, signed_at) index is dropped. Notes are searched by keys that
 *    carry their scope (`mem_notes.keys`, memory-keys.ts) instead of bare terms: a version-3
 *    schema's notes and their term statistics are projected again from the stored facts.
 */
export const SCHEMA_VERSION = 4;
export const DEFAULT_SCHEMA = 'svc';

/**
 * The sequencer's advisory-lock key: the first 8 bytes of H("svc.pg.sequencer" ‖ 0 ‖ schema)
 * as a signed 64-bit integer (decimal text, since it exceeds JavaScript's safe integers).
 * Two schemas never share a sequencer; two processes on one schema always do.
 */
export function sequencerLockKey(schema: string): string {
  const d = blake3(utf8(`svc.pg.sequencer\u0000${schema}`));
  let x = 0n;
  for (let i = 0; i < 8; i++) x = (x << 8n) | BigInt(d[i]);
  return BigInt.asIntN(64, x).toString();
}

function ddl(s: string): string {
  return `
CREATE SCHEMA IF NOT EXISTS ${s};

-- One row per log entry (one accepted batch). leaf_hash = H(0x00 ‖ entry) (RFC 6962 leaf);
-- entry_hash = H(entry) (the record hash of the segment format), so inclusion-by-hash accepts either.
CREATE TABLE IF NOT EXISTS ${s}.log_entries (
  idx         bigint PRIMARY KEY,
  leaf_hash   bytea  NOT NULL UNIQUE,
  entry_hash  bytea  NOT NULL,
  entry       bytea  NOT NULL,
  accepted_at text COLLATE "C" NOT NULL,
  -- The entry's batch tree (version 4; null for entries of earlier versions) and its leaf count.
  tree_leaves int,
  tree        bytea
);
ALTER TABLE ${s}.log_entries ADD COLUMN IF NOT EXISTS tree_leaves int, ADD COLUMN IF NOT EXISTS tree bytea;
CREATE INDEX IF NOT EXISTS log_entries_entry_hash ON ${s}.log_entries (entry_hash);

-- Every perfect-subtree hash: node (level, idx) covers leaves [idx·2^level, (idx+1)·2^level).
-- Level 0 repeats the leaf hashes so that one query serves any proof's node reads.
CREATE TABLE IF NOT EXISTS ${s}.log_nodes (
  level int    NOT NULL,
  idx   bigint NOT NULL,
  hash  bytea  NOT NULL,
  PRIMARY KEY (level, idx)
);

CREATE TABLE IF NOT EXISTS ${s}.facts (
  fact_cid         text COLLATE "C" PRIMARY KEY,
  cell             text COLLATE "C" NOT NULL,
  band             text COLLATE "C" NOT NULL,
  tslot            bigint NOT NULL,
  signed_at        text COLLATE "C",
  accepted_at      text COLLATE "C" NOT NULL,
  kind             text NOT NULL,
  provenance_class text NOT NULL,
  attester         text NOT NULL,
  scope_key        text COLLATE "C" NOT NULL,
  scope_json       text,
  body             bytea NOT NULL,
  -- Version 4: the proof index in the entry's tree; earlier versions: the proof as JSON.
  leaf             int,
  proof_json       text,
  log_index        bigint NOT NULL,
  position         int NOT NULL,
  supersedes       text
);
ALTER TABLE ${s}.facts ADD COLUMN IF NOT EXISTS leaf int, ALTER COLUMN proof_json DROP NOT NULL;
-- Version 4 drops the (cell, band, tslot, signed_at) index of earlier versions: no read used it,
-- and every fact paid for it on insert.
DROP INDEX IF EXISTS ${s}.facts_cell_band_tslot;
-- latest/history/bandsAt and the supersedes lookup: equality on (cell, scope_key, band), then
-- version order, so "newest per band" is one backward index seek; the leading cell column
-- also serves the cellsWithPrefix range walk.
CREATE INDEX IF NOT EXISTS facts_cell_scope ON ${s}.facts (cell, scope_key, band, tslot, accepted_at, log_index, position);

CREATE TABLE IF NOT EXISTS ${s}.edges (
  from_cid   text NOT NULL,
  to_cid     text NOT NULL,
  kind       text NOT NULL,
  created_at text NOT NULL,
  PRIMARY KEY (from_cid, to_cid, kind)
);
CREATE INDEX IF NOT EXISTS edges_to ON ${s}.edges (to_cid, kind);

-- Facts first stored per (attester, UTC day YYYY-MM-DD), written in the transaction that stores
-- them, so the per-attester daily quota is one key lookup. A schema created before this table
-- counts only facts stored after it appeared.
CREATE TABLE IF NOT EXISTS ${s}.attester_days (
  attester text COLLATE "C" NOT NULL,
  day      text COLLATE "C" NOT NULL,
  facts    bigint NOT NULL,
  PRIMARY KEY (attester, day)
);

CREATE TABLE IF NOT EXISTS ${s}.meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);

-- First claims on scopes (docs/scopes.md): scope_key → the key owning it. Not derivable from
-- the log alone (a key may claim a scope before writing into it); the primary key makes a claim
-- atomic across responders. A scope written before its claim was recorded falls back to its
-- first writer (facts_scoped).
CREATE TABLE IF NOT EXISTS ${s}.scope_claims (
  scope_key  text COLLATE "C" PRIMARY KEY,
  attester   text NOT NULL,
  claimed_at text NOT NULL
);
-- First writer of a scope, in log order; scoped facts only, so public ingest pays nothing.
CREATE INDEX IF NOT EXISTS facts_scoped ON ${s}.facts (scope_key, log_index, position) WHERE scope_key <> '';

-- Agent-memory index (src/store/memory.ts): projections of memory records' bodies, written by
-- the sequencer in the transaction that stores the facts (memory-index.ts), read by
-- memory-queries.ts. Named mem_* because edges above is the supersedes graph. Every reader
-- names one scope, so scope_key leads the b-tree indexes. Times: *_at text columns are
-- transaction times (ISO seconds, byte order = time order); valid times are Unix seconds.
CREATE TABLE IF NOT EXISTS ${s}.mem_notes (
  fact_cid    text COLLATE "C" PRIMARY KEY,
  scope_key   text COLLATE "C" NOT NULL,
  attester    text COLLATE "C" NOT NULL,
  accepted_at text COLLATE "C" NOT NULL,
  log_index   bigint NOT NULL,
  position    int NOT NULL,
  observed_at bigint,
  cell        text COLLATE "C",
  lat         float8,
  lng         float8,
  entity      text COLLATE "C",
  tags        text[] NOT NULL,
  -- float32 little-endian
  vector      bytea,
  thread      text COLLATE "C",
  -- note-terms.ts: the packed document and its text length in terms
  doc         text NOT NULL,
  -- The note's search keys (memory-keys.ts): each distinct term and each tag, prefixed with a
  -- code of the note's scope, so one key's postings are that scope's notes alone.
  keys        text[] NOT NULL,
  length      int NOT NULL
);
-- fastupdate off: a search then never scans a pending list of recent inserts (up to 4 MB: 8 ms
-- for a rare term after a bulk load, measured); each insert pays for its own keys instead.
CREATE INDEX IF NOT EXISTS mem_notes_keys ON ${s}.mem_notes USING gin (keys) WITH (fastupdate = off);
CREATE INDEX IF NOT EXISTS mem_notes_tags ON ${s}.mem_notes USING gin (tags);
-- Newest first without text, and the scope's share of every other filter.
CREATE INDEX IF NOT EXISTS mem_notes_recent ON ${s}.mem_notes (scope_key, log_index DESC, position DESC);
CREATE INDEX IF NOT EXISTS mem_notes_entity ON ${s}.mem_notes (scope_key, entity) WHERE entity IS NOT NULL;
CREATE INDEX IF NOT EXISTS mem_notes_lat ON ${s}.mem_notes (scope_key, lat, lng) WHERE lat IS NOT NULL;
CREATE INDEX IF NOT EXISTS mem_notes_observed ON ${s}.mem_notes (scope_key, observed_at DESC, log_index DESC, position DESC) WHERE observed_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS mem_notes_thread ON ${s}.mem_notes (scope_key, thread, log_index, position) WHERE thread IS NOT NULL;
-- Per scope: notes listing each term, and the notes' count and total text length (the ranking's
-- idf and length norm come from the searched scope alone).
CREATE TABLE IF NOT EXISTS ${s}.mem_note_df (
  scope_key text COLLATE "C" NOT NULL,
  term      text COLLATE "C" NOT NULL,
  df        bigint NOT NULL,
  PRIMARY KEY (scope_key, term)
);
CREATE TABLE IF NOT EXISTS ${s}.mem_note_stats (
  scope_key text COLLATE "C" PRIMARY KEY,
  notes     bigint NOT NULL,
  tokens    bigint NOT NULL
);

-- memory.alias phrases and memory.entity names.
CREATE TABLE IF NOT EXISTS ${s}.mem_aliases (
  fact_cid  text COLLATE "C" PRIMARY KEY,
  scope_key text COLLATE "C" NOT NULL,
  entity    text COLLATE "C" NOT NULL,
  phrase    text NOT NULL,
  attester  text COLLATE "C" NOT NULL,
  log_index bigint NOT NULL,
  position  int NOT NULL,
  tsv       tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, phrase)) STORED
);
CREATE INDEX IF NOT EXISTS mem_aliases_tsv ON ${s}.mem_aliases USING gin (tsv);

-- Edges as stated (memory.edge records, derivatives' derived_from); never updated: a later
-- record closes one by a row in mem_edge_closures, recorded at the closer's transaction time.
CREATE TABLE IF NOT EXISTS ${s}.mem_edges (
  edge_cid    text COLLATE "C" PRIMARY KEY,
  scope_key   text COLLATE "C" NOT NULL,
  kind        text COLLATE "C" NOT NULL,
  from_ref    text COLLATE "C" NOT NULL,
  to_ref      text COLLATE "C" NOT NULL,
  valid_from  bigint NOT NULL,
  valid_to    bigint,
  stated_by   text COLLATE "C" NOT NULL,
  attester    text COLLATE "C" NOT NULL,
  recorded_at text COLLATE "C" NOT NULL,
  log_index   bigint NOT NULL,
  position    int NOT NULL,
  ord         int NOT NULL
);
-- Out-edges (and the exclusive rule's siblings: same scope, from, kind), in-edges.
CREATE INDEX IF NOT EXISTS mem_edges_from ON ${s}.mem_edges (scope_key, from_ref, kind, valid_from);
CREATE INDEX IF NOT EXISTS mem_edges_to ON ${s}.mem_edges (scope_key, to_ref, kind, valid_from);
CREATE TABLE IF NOT EXISTS ${s}.mem_edge_closures (
  edge_cid    text COLLATE "C" NOT NULL,
  closed_at   bigint NOT NULL,
  closed_by   text COLLATE "C" NOT NULL,
  recorded_at text COLLATE "C" NOT NULL,
  log_index   bigint NOT NULL,
  position    int NOT NULL,
  PRIMARY KEY (edge_cid, closed_by, closed_at)
);

-- Derivative facts per batch attester; seq numbers them densely in log order (a cursor that a
-- rebuild from the log reproduces).
CREATE TABLE IF NOT EXISTS ${s}.mem_derivations (
  seq       bigint PRIMARY KEY,
  attester  text COLLATE "C" NOT NULL,
  scope_key text COLLATE "C" NOT NULL,
  fact_cid  text COLLATE "C" NOT NULL
);
CREATE INDEX IF NOT EXISTS mem_derivations_attester ON ${s}.mem_derivations (attester, scope_key, seq);

-- (cell, band, tslot) keys of a scope that facts from at least two attesters were written to;
-- inserted when a fact lands on a key whose newest version has another attester.
CREATE TABLE IF NOT EXISTS ${s}.shared_slots (
  scope_key text COLLATE "C" NOT NULL,
  cell      text COLLATE "C" NOT NULL,
  band      text COLLATE "C" NOT NULL,
  tslot     bigint NOT NULL,
  PRIMARY KEY (scope_key, cell, band, tslot)
);

-- Not derivable from the log: short-lived state (used statements, kept answer steps; see
-- transients.ts). expires_at is Unix milliseconds; an expired row counts as absent.
CREATE TABLE IF NOT EXISTS ${s}.transients (
  ns         text COLLATE "C" NOT NULL,
  key        text COLLATE "C" NOT NULL,
  value      text,
  expires_at bigint NOT NULL,
  PRIMARY KEY (ns, key)
);
CREATE INDEX IF NOT EXISTS transients_expiry ON ${s}.transients (expires_at);

-- Not derivable from the log: content-addressed documents (bundle definitions; see
-- documents.ts), shared by every responder of the schema. Never updated or deleted.
CREATE TABLE IF NOT EXISTS ${s}.documents (
  kind      text COLLATE "C" NOT NULL,
  cid       text COLLATE "C" NOT NULL,
  body      text NOT NULL,
  stored_at text NOT NULL,
  PRIMARY KEY (kind, cid)
);

-- Not derivable from the log: the geocoder answer cache (geo/geocache.ts; see geocache.ts).
-- Times are Unix milliseconds; an expired row counts as absent and is pruned as answers come.
CREATE TABLE IF NOT EXISTS ${s}.geocache (
  key        text COLLATE "C" PRIMARY KEY,
  source     text NOT NULL,
  payload    jsonb NOT NULL,
  stored_at  bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS geocache_expiry ON ${s}.geocache (expires_at);

-- Not derivable from the log, but derived data: artifacts (grids; see artifacts.ts), each
-- rebuildable from its signed derivation record. Descriptions stay after an eviction; the
-- bytes go. Times are Unix milliseconds.
CREATE TABLE IF NOT EXISTS ${s}.artifacts (
  cid        text COLLATE "C" PRIMARY KEY,
  media_type text NOT NULL,
  size       bigint NOT NULL,
  rebuild    text,
  stored_at  bigint NOT NULL,
  used_at    bigint NOT NULL,
  evicted_at bigint
);
CREATE TABLE IF NOT EXISTS ${s}.artifact_bytes (
  cid   text COLLATE "C" PRIMARY KEY,
  bytes bytea NOT NULL
);

-- Not derivable from the log: witnesses' co-signatures arrive over HTTP.
CREATE TABLE IF NOT EXISTS ${s}.witnesses (
  tree_size   bigint NOT NULL,
  root        text NOT NULL,
  witness     text COLLATE "C" NOT NULL,
  signature   text NOT NULL,
  operator    text NOT NULL,
  received_at text NOT NULL,
  UNIQUE (tree_size, witness)
);
`;
}

/**
 * Create the schema if needed and check its version. Runs under the sequencer lock, because
 * CREATE ... IF NOT EXISTS races between processes opening a fresh schema at the same time.
 */
export async function migrate(client: pg.PoolClient, schema: string): Promise<void> {
  const s = `"${checkSchemaName(schema)}"`;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [sequencerLockKey(schema)]);
    // Read before the DDL, which may not apply to an older shape (a missing meta: a new schema).
    const hasMeta = (await client.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [`${s}.meta`])).rows[0].ok;
    const had = hasMeta ? await client.query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE key = 'schema_version'`) : { rows: [] };
    // Versions 2 and 3 index notes in another shape (an english tsvector; bare terms): the notes
    // and their statistics are dropped here, then projected again from the facts below.
    const before = had.rows.length > 0 ? Number(had.rows[0].value) : SCHEMA_VERSION;
    if (before === 2 || before === 3) await client.query(`DROP TABLE IF EXISTS ${s}.mem_notes, ${s}.mem_note_df, ${s}.mem_note_stats`);
    await client.query(ddl(s));
    const r = await client.query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE key = 'schema_version'`);
    if (r.rows.length === 0) {
      await client.query(`INSERT INTO ${s}.meta (key, value) VALUES ('schema_version', $1)`, [String(SCHEMA_VERSION)]);
    } else if (Number(r.rows[0].value) > SCHEMA_VERSION) {
      throw new SvcError('internal', `postgres schema ${schema}: version ${r.rows[0].value} is newer than this build (${SCHEMA_VERSION})`);
    } else if (Number(r.rows[0].value) === 2 || Number(r.rows[0].value) === 3) {
      // Notes were indexed by words of the english configuration, or by bare terms: index them
      // again by scoped keys (version 3's facts keep their JSON proofs: nothing else changes).
      await backfillMemory(client, tablesOf(schema), { notesOnly: true });
      await client.query(`UPDATE ${s}.meta SET value = $1 WHERE key = 'schema_version'`, [String(SCHEMA_VERSION)]);
    } else if (Number(r.rows[0].value) < 2) {
      // The memory tables were just created empty over facts stored without them: project
      // those facts now, in log order, so the index is what indexing them would have built.
      // Writers of other processes wait on the lock meanwhile (a one-off, bounded by the
      // number of memory facts; ordinary facts are read by one GROUP BY for shared slots).
      await backfillMemory(client, tablesOf(schema));
      await client.query(`UPDATE ${s}.meta SET value = $1 WHERE key = 'schema_version'`, [String(SCHEMA_VERSION)]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
