/**
 * Read statements of the PostgreSQL fact index, with the SQLite driver's semantics
 * (src/store/sqlite/queries.ts): latest = newest tslot within bounds, then newest accepted_at,
 * then highest (log_index, position); scopes match exactly with '' for unscoped; the same
 * provenance, tslot, as_of_tslot and as_of_signed_at filters. Dynamic filters map to a small
 * set of statement texts, each prepared once per connection.
 */
import type pg from 'pg';
import { decodeTrusted } from '../../protocol/cbor.js';
import type { MerkleProofJson } from '../../protocol/merkle-batch.js';
import type { Scope } from '../../protocol/receipt.js';
import { isoBound } from '../query-checks.js';
import type { CorpusStats, FactKind, FactQuery, ProvenanceClass, StoredFact, WitnessRecord } from '../contract.js';
import { scopeKey } from '../entry.js';
import type { PgBatchTrees } from './batch-trees.js';
import { int, rows } from './pg-db.js';
import type { Tables } from './tables.js';

/** A row of `facts` as node-postgres returns it (int8 as text, bytea as Buffer). */
interface FactRow {
  fact_cid: string;
  cell: string;
  band: string;
  tslot: string;
  accepted_at: string;
  kind: string;
  provenance_class: string;
  attester: string;
  scope_json: string | null;
  body: Buffer;
  proof_json: string | null;
  leaf: number | null;
  log_index: string;
  supersedes: string | null;
}

const COLUMNS = 'fact_cid, cell, band, tslot, accepted_at, kind, provenance_class, attester, scope_json, body, proof_json, leaf, log_index, supersedes';
/** Version order: valid time, then transaction time, then log order. */
const ORDER_NEWEST = 'tslot DESC, accepted_at DESC, log_index DESC, position DESC';
const ORDER_OLDEST = 'tslot ASC, accepted_at ASC, log_index ASC, position ASC';

export type HistoryQuery = FactQuery & { tslot_from?: number; tslot_to?: number; limit?: number };

/** StoredFact of an index row, its proof from `prove`. */
function rowToFact(r: FactRow, prove: (r: FactRow) => MerkleProofJson): StoredFact {
  return {
    fact_cid: r.fact_cid,
    body: decodeTrusted(new Uint8Array(r.body.buffer, r.body.byteOffset, r.body.byteLength)) as Record<string, unknown>,
    cell: r.cell,
    band: r.band,
    tslot: int(r.tslot),
    kind: r.kind as FactKind,
    provenance_class: r.provenance_class as ProvenanceClass,
    attester: r.attester,
    scope: r.scope_json === null ? null : (JSON.parse(r.scope_json) as Scope),
    accepted_at: r.accepted_at,
    proof: prove(r),
    log_index: int(r.log_index),
    supersedes: r.supersedes,
  };
}

/** Upper bound of the byte-ordered range holding every string that starts with `prefix` ('' = none). */
export function prefixUpperBound(prefix: string): string {
  if (prefix.length === 0) return '';
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

function checkQuery(q: FactQuery): void {
  if (typeof q !== 'object' || q === null) throw new TypeError('query: expected an object');
  if (typeof q.cell !== 'string') throw new TypeError('query.cell: expected a string');
}

/** Collects `WHERE` terms with numbered parameters. */
export class Where {
  readonly terms: string[] = [];
  readonly args: unknown[] = [];
  add(term: (p: string) => string, value: unknown): void {
    this.args.push(value);
    this.terms.push(term(`$${this.args.length}`));
  }
}

/** Read statements over one schema. */
export class Queries {
  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
    private readonly trees: PgBatchTrees,
  ) {}

  /**
   * Filters shared by latest and history (cell, scope, provenance, valid and transaction time);
   * null when the query can match nothing (an empty provenance list).
   */
  private filters(q: FactQuery): Where | null {
    const w = new Where();
    w.add((p) => `cell = ${p}`, q.cell);
    w.add((p) => `scope_key = ${p}`, scopeKey(q.scope));
    if (q.provenance !== undefined) {
      if (q.provenance.length === 0) return null;
      w.add((p) => `provenance_class = ANY(${p}::text[])`, [...new Set(q.provenance)].sort());
    }
    if (q.tslot !== undefined) w.add((p) => `tslot = ${p}`, q.tslot);
    else if (q.as_of_tslot !== undefined) w.add((p) => `tslot <= ${p}`, q.as_of_tslot);
    if (q.as_of_signed_at !== undefined) {
      const bound = isoBound('as_of_signed_at', q.as_of_signed_at);
      // accepted_at is stored as YYYY-MM-DDTHH:MM:SSZ in byte order, so text order is time order.
      w.add((p) => `accepted_at <= ${p}`, bound);
    }
    return w;
  }

  private async toFacts(rs: FactRow[]): Promise<StoredFact[]> {
    if (rs.length === 0) return [];
    const prove = await this.trees.prover(rs);
    return rs.map((r) => rowToFact(r, prove));
  }

  async getFact(cid: string): Promise<StoredFact | null> {
    const [r] = await rows<FactRow>(this.pool, `SELECT ${COLUMNS} FROM ${this.t.facts} WHERE fact_cid = $1`, [cid]);
    return r ? (await this.toFacts([r]))[0] : null;
  }

  /** Newest version per band, ordered by band: one backward index seek per band. */
  async latest(q: FactQuery): Promise<StoredFact[]> {
    checkQuery(q);
    const w = this.filters(q);
    if (w === null) return [];
    let bands: string;
    if (q.bands !== undefined) {
      if (q.bands.length === 0) return [];
      w.args.push([...new Set(q.bands)].sort());
      bands = `unnest($${w.args.length}::text[]) AS b(band)`;
    } else {
      // Bands at the cell under the scope; filters apply per band below, as in the SQLite driver.
      bands = `(SELECT DISTINCT band FROM ${this.t.facts} WHERE cell = $1 AND scope_key = $2) AS b`;
    }
    const sql = `SELECT f.* FROM ${bands} CROSS JOIN LATERAL (
        SELECT ${COLUMNS} FROM ${this.t.facts} WHERE ${w.terms.join(' AND ')} AND band = b.band
         ORDER BY ${ORDER_NEWEST} LIMIT 1) f
      ORDER BY f.band`;
    return this.toFacts(await rows<FactRow>(this.pool, sql, w.args));
  }

  /** Every matching version, oldest first (valid time, then transaction time, then log order). */
  async history(q: HistoryQuery): Promise<StoredFact[]> {
    checkQuery(q);
    const w = this.filters(q);
    if (w === null) return [];
    if (q.bands !== undefined) {
      if (q.bands.length === 0) return [];
      w.add((p) => `band = ANY(${p}::text[])`, [...new Set(q.bands)].sort());
    }
    if (q.tslot_from !== undefined) w.add((p) => `tslot >= ${p}`, q.tslot_from);
    if (q.tslot_to !== undefined) w.add((p) => `tslot <= ${p}`, q.tslot_to);
    let sql = `SELECT ${COLUMNS} FROM ${this.t.facts} WHERE ${w.terms.join(' AND ')} ORDER BY ${ORDER_OLDEST}`;
    if (q.limit !== undefined) {
      if (!Number.isSafeInteger(q.limit) || q.limit < 0) throw new RangeError('limit: expected a non-negative integer');
      w.args.push(q.limit);
      sql += ` LIMIT $${w.args.length}`;
    }
    return this.toFacts(await rows<FactRow>(this.pool, sql, w.args));
  }

  /** Bands with at least one fact at the cell under exactly this scope, in byte order. */
  async bandsAt(cell: string, scope: Scope | null | undefined): Promise<string[]> {
    const got = await rows<{ band: string }>(this.pool, `SELECT DISTINCT band FROM ${this.t.facts} WHERE cell = $1 AND scope_key = $2 ORDER BY band`, [cell, scopeKey(scope)]);
    return got.map((r) => r.band);
  }

  /**
   * Up to `limit` distinct cells starting with `prefix`, in byte order. A recursive loose index
   * scan: one index seek per distinct cell, so a cell with a million facts costs one step; it
   * fetches one cell beyond the cap to say honestly whether more exist.
   */
  async cellsWithPrefix(prefix: string, limit: number, scope?: FactQuery['scope']): Promise<{ cells: string[]; truncated: boolean }> {
    if (typeof prefix !== 'string') throw new TypeError('prefix: expected a string');
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('limit: expected a non-negative integer');
    const upper = prefixUpperBound(prefix);
    const f = this.t.facts;
    // A skip scan over facts_cell_scope: one index seek per distinct cell; a scope (null:
    // unscoped) keeps only cells with a fact in it.
    const args: unknown[] = [prefix];
    const param = (v: unknown) => `$${args.push(v)}`;
    const bound = upper === '' ? '' : ` AND cell < ${param(upper)}`;
    const nextBound = upper === '' ? '' : ` AND n.cell < $${args.length}`;
    const inScope = scope === undefined ? '' : ` AND scope_key = ${param(scopeKey(scope))}`;
    const nextInScope = scope === undefined ? '' : ` AND n.scope_key = $${args.length}`;
    const lim = param(limit + 1);
    const sql = `WITH RECURSIVE walk(cell) AS (
        (SELECT cell FROM ${f} WHERE cell >= $1${bound}${inScope} ORDER BY cell LIMIT 1)
        UNION ALL
        SELECT (SELECT n.cell FROM ${f} n WHERE n.cell > walk.cell${nextBound}${nextInScope} ORDER BY n.cell LIMIT 1)
          FROM walk WHERE walk.cell IS NOT NULL)
      SELECT cell FROM walk WHERE cell IS NOT NULL LIMIT ${lim}`;
    const cells = (await rows<{ cell: string }>(this.pool, sql, args)).map((r) => r.cell);
    const truncated = cells.length > limit;
    return { cells: truncated ? cells.slice(0, limit) : cells, truncated };
  }

  /** Public (unscoped) fact, distinct cell and distinct band counts (the log size is the log's). */
  async counts(): Promise<Omit<CorpusStats, 'log_size'>> {
    // A subject with a colon (svc:entity:…) is a record's anchor, never a cell64.
    const [r] = await rows<{ facts: string; cells: string; subjects: string; bands: string }>(
      this.pool,
      `SELECT count(*) AS facts, count(DISTINCT cell) FILTER (WHERE strpos(cell, ':') = 0) AS cells,
              count(DISTINCT cell) FILTER (WHERE strpos(cell, ':') > 0) AS subjects, count(DISTINCT band) AS bands
         FROM ${this.t.facts} WHERE scope_key = ''`,
    );
    return { facts: int(r.facts), cells: int(r.cells), subjects: int(r.subjects), bands: int(r.bands) };
  }

  /** See Store.claimScope: the recorded owner, else the derived one or `claimant`, recorded. */
  async claimScope(key: string, claimant: string | null, exclude: string, at: string): Promise<string | null> {
    const recorded = await rows<{ attester: string }>(this.pool, `SELECT attester FROM ${this.t.scopeClaims} WHERE scope_key = $1`, [key]);
    if (recorded.length > 0) return recorded[0].attester;
    // `scope_key <> ''` lets the planner use the partial index facts_scoped.
    const [d] = await rows<{ first: string | null; holds: boolean }>(
      this.pool,
      `SELECT (SELECT attester FROM ${this.t.facts} WHERE scope_key = $1 AND scope_key <> '' AND attester <> $2 ORDER BY log_index, position LIMIT 1) AS first,
              EXISTS (SELECT 1 FROM ${this.t.facts} WHERE scope_key = $1 AND scope_key <> '') AS holds`,
      [key, exclude],
    );
    const owner = d.first ?? (d.holds ? null : claimant);
    if (owner === null) return null;
    // The primary key makes this the one atomic step: of racing claimants, one row wins and
    // every one of them reads it back.
    await rows(this.pool, `INSERT INTO ${this.t.scopeClaims} (scope_key, attester, claimed_at) VALUES ($1, $2, $3) ON CONFLICT (scope_key) DO NOTHING`, [key, owner, at]);
    const [won] = await rows<{ attester: string }>(this.pool, `SELECT attester FROM ${this.t.scopeClaims} WHERE scope_key = $1`, [key]);
    return won?.attester ?? null;
  }

  /** Record a co-signature once per (tree_size, witness); later copies are ignored. */
  async addWitness(w: WitnessRecord): Promise<void> {
    await rows(
      this.pool,
      `INSERT INTO ${this.t.witnesses} (tree_size, root, witness, signature, operator, received_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tree_size, witness) DO NOTHING`,
      [w.tree_size, w.root, w.witness, w.signature, w.operator, w.received_at],
    );
  }

  /** Facts first stored from `attester` on the UTC day `day` (YYYY-MM-DD). */
  async publicFactsByAttester(): Promise<Array<{ attester: string; facts: number }>> {
    const r = await rows<{ attester: string; facts: string }>(
      this.pool,
      `SELECT attester, count(*) AS facts FROM ${this.t.facts} WHERE scope_key = '' GROUP BY attester ORDER BY count(*) DESC, attester`,
    );
    return r.map((x) => ({ attester: x.attester, facts: int(x.facts) }));
  }

  async attesterFactsOn(attester: string, day: string): Promise<number> {
    const r = await rows<{ facts: string }>(this.pool, `SELECT facts FROM ${this.t.attesterDays} WHERE attester = $1 AND day = $2`, [attester, day]);
    return r.length === 0 ? 0 : int(r[0].facts);
  }

  async witnesses(): Promise<WitnessRecord[]> {
    const got = await rows<Omit<WitnessRecord, 'tree_size'> & { tree_size: string }>(
      this.pool,
      `SELECT tree_size, root, witness, signature, operator, received_at FROM ${this.t.witnesses} ORDER BY tree_size, witness`,
    );
    return got.map((r) => ({ tree_size: int(r.tree_size), root: r.root, witness: r.witness, signature: r.signature, operator: r.operator, received_at: r.received_at }));
  }
}
