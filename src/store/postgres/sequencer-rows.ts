/**
 * The rows one sequencer transaction writes (log entries, tree nodes, facts, supersedes edges,
 * shared slots, memory-index rows), gathered as column arrays and written in one statement of
 * multi-row INSERTs over unnest(): one round trip per group, whatever its size.
 */
import type pg from 'pg';
import type { BuiltTree } from '../batch-tree.js';
import { MemoryIndexer } from './memory-index.js';
import { buf, rows } from './pg-db.js';
import type { NodeRow } from './pg-log.js';
import type { Tables } from './tables.js';

/** Index rows of one transaction, as column arrays for unnest(). */
export class Rows {
  entries = { idx: [] as number[], leaf: [] as Buffer[], hash: [] as Buffer[], entry: [] as Buffer[], at: [] as string[], leaves: [] as number[], tree: [] as Buffer[] };
  nodes: NodeRow[] = [];
  /** The batch tree of each entry written, for the read side's cache once committed. */
  trees: { logIndex: number; tree: BuiltTree }[] = [];
  facts = {
    cid: [] as string[],
    cell: [] as string[],
    band: [] as string[],
    tslot: [] as number[],
    signed_at: [] as (string | null)[],
    accepted_at: [] as string[],
    kind: [] as string[],
    pclass: [] as string[],
    attester: [] as string[],
    scope_key: [] as string[],
    scope_json: [] as (string | null)[],
    body: [] as Buffer[],
    leaf: [] as number[],
    log_index: [] as number[],
    position: [] as number[],
    supersedes: [] as (string | null)[],
  };
  edges = { from: [] as string[], to: [] as string[], at: [] as string[] };
  slots = { scope_key: [] as string[], cell: [] as string[], band: [] as string[], tslot: [] as number[], seen: new Set<string>() };
}

/**
 * Write the transaction's rows in one statement: a multi-row INSERT per table, as CTEs (the
 * memory index's only when `mem` has rows, so ordinary ingest runs the plain statement).
 */
export async function insertRows(client: pg.PoolClient, t: Tables, r: Rows, mem: MemoryIndexer | null, bounded: <T>(q: Promise<T>) => Promise<T>): Promise<void> {
  if (r.entries.idx.length === 0) return;
  const e = r.entries;
  const f = r.facts;
  const sl = r.slots;
  await rows(
    client,
    `WITH e AS (
       INSERT INTO ${t.entries} (idx, leaf_hash, entry_hash, entry, accepted_at, tree_leaves, tree)
       SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::bytea[], $5::text[], $32::int[], $33::bytea[])),
     n AS (
       INSERT INTO ${t.nodes} (level, idx, hash) SELECT * FROM unnest($6::int[], $7::bigint[], $8::bytea[])),
     f AS (
       INSERT INTO ${t.facts} (fact_cid, cell, band, tslot, signed_at, accepted_at, kind, provenance_class, attester,
         scope_key, scope_json, body, leaf, log_index, position, supersedes)
       SELECT * FROM unnest($9::text[], $10::text[], $11::text[], $12::bigint[], $13::text[], $14::text[], $15::text[], $16::text[],
         $17::text[], $18::text[], $19::text[], $20::bytea[], $21::int[], $22::bigint[], $23::int[], $24::text[])),
     d AS (
       -- Only first placements are in the fact arrays, so duplicates add nothing.
       INSERT INTO ${t.attesterDays} (attester, day, facts)
       SELECT a, left(at, 10), count(*) FROM unnest($17::text[], $14::text[]) AS x(a, at) GROUP BY 1, 2
       ON CONFLICT (attester, day) DO UPDATE SET facts = ${t.attesterDays}.facts + excluded.facts),
     s AS (
       INSERT INTO ${t.edges} (from_cid, to_cid, kind, created_at)
       SELECT a, b, 'supersedes', c FROM unnest($25::text[], $26::text[], $27::text[]) AS x(a, b, c)
       ON CONFLICT DO NOTHING),${
         mem
           ? `
     ${MemoryIndexer.insertCtes(t, 34)},`
           : ''
       }
     sl AS (
       INSERT INTO ${t.sharedSlots} (scope_key, cell, band, tslot)
       SELECT * FROM unnest($28::text[], $29::text[], $30::text[], $31::bigint[])
       ON CONFLICT DO NOTHING)
     SELECT 1`,
    [
      e.idx,
      e.leaf,
      e.hash,
      e.entry,
      e.at,
      r.nodes.map((n) => n.level),
      r.nodes.map((n) => n.idx),
      r.nodes.map((n) => buf(n.hash)),
      f.cid,
      f.cell,
      f.band,
      f.tslot,
      f.signed_at,
      f.accepted_at,
      f.kind,
      f.pclass,
      f.attester,
      f.scope_key,
      f.scope_json,
      f.body,
      f.leaf,
      f.log_index,
      f.position,
      f.supersedes,
      r.edges.from,
      r.edges.to,
      r.edges.at,
      sl.scope_key,
      sl.cell,
      sl.band,
      sl.tslot,
      e.leaves,
      e.tree,
      ...(mem ? mem.insertParams() : []),
    ],
    bounded,
  );
}
