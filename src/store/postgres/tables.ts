/**
 * Schema-qualified table names of the PostgreSQL driver and the schema-name check they rest on.
 * Kept apart from schema.ts (the DDL and migrations) because the query modules and the memory
 * index need only the names, while migrating needs the memory index's backfill: with the names
 * in schema.ts the two modules imported each other.
 */
import { SvcError } from '../../protocol/errors.js';

/** Unquoted-identifier grammar: no quoting surprises, no case folding, at most 63 bytes. */
const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws unless `name` is a plain lowercase PostgreSQL identifier; returns it. */
export function checkSchemaName(name: string): string {
  if (typeof name !== 'string' || !SCHEMA_RE.test(name)) {
    throw new SvcError('internal', `schema: ${JSON.stringify(name)} is not a lowercase identifier ([a-z_][a-z0-9_]{0,62})`);
  }
  return name;
}

/** Schema-qualified table names, for building statement texts. */
export interface Tables {
  entries: string;
  nodes: string;
  facts: string;
  edges: string;
  meta: string;
  witnesses: string;
  attesterDays: string;
  scopeClaims: string;
  notes: string;
  noteDf: string;
  noteStats: string;
  aliases: string;
  memEdges: string;
  closures: string;
  derivations: string;
  sharedSlots: string;
  transients: string;
  documents: string;
  geocache: string;
  artifacts: string;
  artifactBytes: string;
}

/** The qualified names of the driver's tables in `schema`. */
export function tablesOf(schema: string): Tables {
  const s = `"${checkSchemaName(schema)}"`;
  return {
    entries: `${s}.log_entries`,
    nodes: `${s}.log_nodes`,
    facts: `${s}.facts`,
    edges: `${s}.edges`,
    meta: `${s}.meta`,
    witnesses: `${s}.witnesses`,
    attesterDays: `${s}.attester_days`,
    scopeClaims: `${s}.scope_claims`,
    notes: `${s}.mem_notes`,
    noteDf: `${s}.mem_note_df`,
    noteStats: `${s}.mem_note_stats`,
    aliases: `${s}.mem_aliases`,
    memEdges: `${s}.mem_edges`,
    closures: `${s}.mem_edge_closures`,
    derivations: `${s}.mem_derivations`,
    sharedSlots: `${s}.shared_slots`,
    transients: `${s}.transients`,
    documents: `${s}.documents`,
    geocache: `${s}.geocache`,
    artifacts: `${s}.artifacts`,
    artifactBytes: `${s}.artifact_bytes`,
  };
}
