/**
 * SQLite index schema. Everything here except `witnesses` is derived from the transparency log
 * and can be rebuilt by deleting index.sqlite; rows are only ever inserted (facts, edges) or, for
 * `meta`, overwritten.
 */
import type { Database } from 'better-sqlite3';
import { SvcError } from '../../protocol/errors.js';

export const SCHEMA_VERSION = 1;

const DDL = `
CREATE TABLE IF NOT EXISTS facts (
  fact_cid         TEXT PRIMARY KEY,
  cell             TEXT NOT NULL,
  band             TEXT NOT NULL,
  tslot            INTEGER NOT NULL,
  signed_at        TEXT,
  accepted_at      TEXT NOT NULL,
  kind             TEXT NOT NULL,
  provenance_class TEXT NOT NULL,
  attester         TEXT NOT NULL,
  scope_key        TEXT NOT NULL,
  scope_json       TEXT,
  body             BLOB NOT NULL,
  proof_json       TEXT NOT NULL,
  log_index        INTEGER NOT NULL,
  position         INTEGER NOT NULL,
  supersedes       TEXT
);
-- Cross-scope lookups by the (cell, band, tslot) join key.
CREATE INDEX IF NOT EXISTS facts_cell_band_tslot ON facts (cell, band, tslot, signed_at);
-- latest/history/bandsAt: equality on (cell, scope_key, band), then walked in version order,
-- so "newest per band" is one backwards index seek. Its leading cell column also serves the
-- cellsWithPrefix range scans (cell >= ? AND cell < ?).
CREATE INDEX IF NOT EXISTS facts_cell_scope ON facts (cell, scope_key, band, tslot, accepted_at, log_index, position);

CREATE TABLE IF NOT EXISTS edges (
  from_cid   TEXT NOT NULL,
  to_cid     TEXT NOT NULL,
  kind       TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (from_cid, to_cid, kind)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_to ON edges (to_cid, kind);

CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
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

/** Apply pragmas and create the schema; refuses an index written by a newer schema. */
export function migrate(db: Database): void {
  // The log is the durable source of truth, so the index may lose its last transactions on a
  // power cut (replay heals it); NORMAL under WAL keeps commits cheap.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = OFF');
  db.exec(DDL);
  const row = db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string } | undefined;
  if (row === undefined) {
    db.prepare(`INSERT INTO meta (key, value) VALUES ('schema_version', ?)`).run(String(SCHEMA_VERSION));
  } else if (Number(row.value) > SCHEMA_VERSION) {
    throw new SvcError('internal', `index.sqlite: schema version ${row.value} is newer than this build (${SCHEMA_VERSION})`);
  }
}
