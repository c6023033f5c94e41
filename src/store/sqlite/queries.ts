/**
 * Read and write statements of the SQLite index. Statements are prepared once per distinct SQL
 * text and reused; dynamic filters (band lists, provenance lists, bounds) map to a small set
 * of SQL shapes, so the cache stays bounded.
 */
import type { Database, Statement } from 'better-sqlite3';
import { decodeTrusted } from '../../protocol/cbor.js';
import { invalidArgument, SvcError } from '../../protocol/errors.js';
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import type { FactKind, FactQuery, ProvenanceClass, StoredFact, WitnessRecord } from '../contract.js';
import { scopeKey, type ExpandedFact } from '../entry.js';

/** A row of `facts` as better-sqlite3 returns it. */
export interface FactRow {
  fact_cid: string;
  cell: string;
  band: string;
  tslot: number;
  accepted_at: string;
  kind: string;
  provenance_class: string;
  attester: string;
  scope_json: string | null;
  body: Buffer;
  proof_json: string;
  log_index: number;
  supersedes: string | null;
}

const FACT_COLUMNS = 'fact_cid, cell, band, tslot, accepted_at, kind, provenance_class, attester, scope_json, body, proof_json, log_index, supersedes';
/** Version order: valid time, then transaction time, then log order. */
const ORDER_NEWEST = 'tslot DESC, accepted_at DESC, log_index DESC, position DESC';
const ORDER_OLDEST = 'tslot ASC, accepted_at ASC, log_index ASC, position ASC';

/** StoredFact of an index row. */
export function rowToFact(r: FactRow): StoredFact {
  return {
    fact_cid: r.fact_cid,
    body: decodeTrusted(new Uint8Array(r.body.buffer, r.body.byteOffset, r.body.byteLength)) as Record<string, unknown>,
    cell: r.cell,
    band: r.band,
    tslot: r.tslot,
    kind: r.kind as FactKind,
    provenance_class: r.provenance_class as ProvenanceClass,
    attester: r.attester,
    scope: r.scope_json === null ? null : (JSON.parse(r.scope_json) as Scope),
    accepted_at: r.accepted_at,
    proof: JSON.parse(r.proof_json),
    log_index: r.log_index,
    supersedes: r.supersedes,
  };
}

/** Upper bound of the text range holding every string that starts with `prefix` ('' = none). */
export function prefixUpperBound(prefix: string): string {
  if (prefix.length === 0) return '';
  const last = prefix.charCodeAt(prefix.length - 1);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}

function checkQuery(q: FactQuery): void {
  if (typeof q !== 'object' || q === null) throw new TypeError('query: expected an object');
  if (typeof q.cell !== 'string') throw new TypeError('query.cell: expected a string');
}

/** Prepared statements over one database. */
export class Queries {
  private readonly cache = new Map<string, Statement>();
  readonly getFact: Statement<[string], FactRow>;
  readonly placement: Statement<[string], { log_index: number; accepted_at: string }>;
  readonly newestOfKey: Statement<[string, string, number, string], { fact_cid: string }>;
  readonly insertFact: Statement;
  readonly insertEdge: Statement;
  readonly setMeta: Statement<[string, string]>;
  readonly getMeta: Statement<[string], { value: string }>;
  readonly bandsAt: Statement<[string, string], { band: string }>;
  readonly nextCell: Statement<[string], { cell: string }>;
  readonly nextCellBounded: Statement<[string, string], { cell: string }>;
  readonly insertWitness: Statement;
  readonly witnesses: Statement<[], WitnessRecord>;
  readonly counts: Statement<[], { facts: number; cells: number; bands: number }>;

  constructor(readonly db: Database) {
    this.getFact = db.prepare(`SELECT ${FACT_COLUMNS} FROM facts WHERE fact_cid = ?`);
    this.placement = db.prepare(`SELECT log_index, accepted_at FROM facts WHERE fact_cid = ?`);
    this.newestOfKey = db.prepare(
      `SELECT fact_cid FROM facts WHERE cell = ? AND scope_key = ? AND tslot = ? AND band = ?
       ORDER BY accepted_at DESC, log_index DESC, position DESC LIMIT 1`,
    );
    this.insertFact = db.prepare(
      `INSERT OR IGNORE INTO facts (fact_cid, cell, band, tslot, signed_at, accepted_at, kind, provenance_class, attester,
         scope_key, scope_json, body, proof_json, log_index, position, supersedes)
       VALUES (@fact_cid, @cell, @band, @tslot, @signed_at, @accepted_at, @kind, @provenance_class, @attester,
         @scope_key, @scope_json, @body, @proof_json, @log_index, @position, @supersedes)`,
    );
    this.insertEdge = db.prepare(`INSERT OR IGNORE INTO edges (from_cid, to_cid, kind, created_at) VALUES (?, ?, 'supersedes', ?)`);
    this.setMeta = db.prepare(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
    this.getMeta = db.prepare(`SELECT value FROM meta WHERE key = ?`);
    this.bandsAt = db.prepare(`SELECT DISTINCT band FROM facts WHERE cell = ? AND scope_key = ? ORDER BY band`);
    // One index seek per distinct cell: a cell with a million facts costs one step, not a million.
    this.nextCell = db.prepare(`SELECT cell FROM facts WHERE cell > ? ORDER BY cell LIMIT 1`);
    this.nextCellBounded = db.prepare(`SELECT cell FROM facts WHERE cell > ? AND cell < ? ORDER BY cell LIMIT 1`);
    this.insertWitness = db.prepare(
      `INSERT OR IGNORE INTO witnesses (tree_size, root, witness, signature, operator, received_at)
       VALUES (@tree_size, @root, @witness, @signature, @operator, @received_at)`,
    );
    this.witnesses = db.prepare(`SELECT tree_size, root, witness, signature, operator, received_at FROM witnesses ORDER BY tree_size, witness`);
    this.counts = db.prepare(
      `SELECT (SELECT COUNT(*) FROM facts) AS facts,
              (SELECT COUNT(*) FROM (SELECT DISTINCT cell FROM facts)) AS cells,
              (SELECT COUNT(*) FROM (SELECT DISTINCT band FROM facts)) AS bands`,
    );
  }

  private prepared(sql: string): Statement {
    let st = this.cache.get(sql);
    if (!st) {
      // Shapes vary only with list lengths; a cap still guards against pathological callers.
      if (this.cache.size >= 512) this.cache.clear();
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }

  /** Filters shared by latest and history (everything but the band). */
  private filters(q: FactQuery): { where: string[]; args: unknown[] } {
    const where = ['cell = ?', 'scope_key = ?'];
    const args: unknown[] = [q.cell, scopeKey(q.scope)];
    if (q.provenance !== undefined) {
      if (q.provenance.length === 0) return { where: ['0'], args: [] };
      const list = [...new Set(q.provenance)].sort();
      where.push(`provenance_class IN (${list.map(() => '?').join(', ')})`);
      args.push(...list);
    }
    if (q.tslot !== undefined) {
      where.push('tslot = ?');
      args.push(q.tslot);
    } else if (q.as_of_tslot !== undefined) {
      where.push('tslot <= ?');
      args.push(q.as_of_tslot);
    }
    if (q.as_of_signed_at !== undefined) {
      // accepted_at is stored as YYYY-MM-DDTHH:MM:SSZ, so text order is time order.
      let bound: string;
      try {
        bound = isoSeconds(q.as_of_signed_at);
      } catch {
        throw invalidArgument('as_of_signed_at', `${JSON.stringify(q.as_of_signed_at)} is not an RFC 3339 time`);
      }
      where.push('accepted_at <= ?');
      args.push(bound);
    }
    return { where, args };
  }

  /** Bands a query ranges over: the requested ones (deduplicated, sorted) or all at the cell. */
  private bandsOf(q: FactQuery): string[] {
    if (q.bands !== undefined) return [...new Set(q.bands)].sort();
    return this.bandsAt.all(q.cell, scopeKey(q.scope)).map((r) => r.band);
  }

  /** Newest version per band (see FactReader.latest), ordered by band. */
  latest(q: FactQuery): StoredFact[] {
    checkQuery(q);
    const { where, args } = this.filters(q);
    if (where[0] === '0') return [];
    const st = this.prepared(`SELECT ${FACT_COLUMNS} FROM facts WHERE ${where.join(' AND ')} AND band = ? ORDER BY ${ORDER_NEWEST} LIMIT 1`);
    const out: StoredFact[] = [];
    for (const band of this.bandsOf(q)) {
      const row = st.get(...args, band) as FactRow | undefined;
      if (row) out.push(rowToFact(row));
    }
    return out;
  }

  /** Every matching version, oldest first (valid time, then transaction time). */
  history(q: FactQuery & { tslot_from?: number; tslot_to?: number; limit?: number }): StoredFact[] {
    checkQuery(q);
    const { where, args } = this.filters(q);
    if (where[0] === '0') return [];
    if (q.bands !== undefined) {
      const bands = [...new Set(q.bands)].sort();
      if (bands.length === 0) return [];
      where.push(`band IN (${bands.map(() => '?').join(', ')})`);
      args.push(...bands);
    }
    if (q.tslot_from !== undefined) {
      where.push('tslot >= ?');
      args.push(q.tslot_from);
    }
    if (q.tslot_to !== undefined) {
      where.push('tslot <= ?');
      args.push(q.tslot_to);
    }
    let sql = `SELECT ${FACT_COLUMNS} FROM facts WHERE ${where.join(' AND ')} ORDER BY ${ORDER_OLDEST}`;
    if (q.limit !== undefined) {
      if (!Number.isSafeInteger(q.limit) || q.limit < 0) throw new RangeError('limit: expected a non-negative integer');
      sql += ' LIMIT ?';
      args.push(q.limit);
    }
    return (this.prepared(sql).all(...args) as FactRow[]).map(rowToFact);
  }

  /** Up to `limit` distinct cells starting with `prefix`, in text order. */
  cellsWithPrefix(prefix: string, limit: number): { cells: string[]; truncated: boolean } {
    if (typeof prefix !== 'string') throw new TypeError('prefix: expected a string');
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('limit: expected a non-negative integer');
    const upper = prefixUpperBound(prefix);
    // The first seek includes the prefix itself (`>=`); later ones step past the previous cell.
    const first = this.prepared(
      upper === '' ? `SELECT cell FROM facts WHERE cell >= ? ORDER BY cell LIMIT 1` : `SELECT cell FROM facts WHERE cell >= ? AND cell < ? ORDER BY cell LIMIT 1`,
    );
    const next = (after: string | null): string | undefined => {
      let row: unknown;
      if (after === null) row = upper === '' ? first.get(prefix) : first.get(prefix, upper);
      else row = upper === '' ? this.nextCell.get(after) : this.nextCellBounded.get(after, upper);
      return (row as { cell: string } | undefined)?.cell;
    };
    const cells: string[] = [];
    let cur: string | null = null;
    while (cells.length < limit) {
      const c = next(cur);
      if (c === undefined) return { cells, truncated: false };
      cells.push(c);
      cur = c;
    }
    // The cap was reached: truncated only if another matching cell exists.
    return { cells, truncated: next(cur) !== undefined };
  }

  /** Insert one expanded fact (idempotent); returns true when the row is new. */
  insertExpanded(x: ExpandedFact): boolean {
    const f = x.fact;
    // Computed before the insert: the newest version already indexed under the same key.
    const prev = this.newestOfKey.get(f.cell, x.scopeKey, f.tslot, f.band);
    if (prev?.fact_cid === f.fact_cid) return false;
    const supersedes = prev?.fact_cid ?? null;
    const res = this.insertFact.run({
      fact_cid: f.fact_cid,
      cell: f.cell,
      band: f.band,
      tslot: f.tslot,
      signed_at: x.signedAt,
      accepted_at: f.accepted_at,
      kind: f.kind,
      provenance_class: f.provenance_class,
      attester: f.attester,
      scope_key: x.scopeKey,
      scope_json: x.scopeKey === '' ? null : x.scopeKey,
      body: x.bodyBytes,
      proof_json: JSON.stringify(f.proof),
      log_index: f.log_index,
      position: x.position,
      supersedes,
    });
    if (res.changes === 0) return false;
    f.supersedes = supersedes;
    if (supersedes !== null) this.insertEdge.run(f.fact_cid, supersedes, f.accepted_at);
    return true;
  }

  /** The stored meta value for `key`, or undefined. */
  meta(key: string): string | undefined {
    return this.getMeta.get(key)?.value;
  }
}

/** Wrap a better-sqlite3 failure as the contract's real-fault error. */
export function internal(what: string, err: unknown): SvcError {
  return new SvcError('internal', `sqlite store: ${what}: ${(err as Error)?.message ?? String(err)}`, {}, { cause: err });
}
