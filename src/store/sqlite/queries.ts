/**
 * Read and write statements of the SQLite index (schema.ts). Statements are prepared once per
 * distinct SQL text and reused; dynamic filters (band lists, provenance lists, bounds) map to a
 * small set of SQL shapes, so the cache stays bounded. Fact rows carry interned ids (resolved
 * through small caches, names.ts) and no bodies or proofs: fact-rows.ts completes them from the
 * log and the entry's batch tree. The memory index has its own modules (memory-index.ts writes
 * it, driven by insertEntries; memory-queries.ts reads it).
 */
import type { Database, Statement } from 'better-sqlite3';
import { BoundedCache } from '../../lib/cache.js';
import { SvcError } from '../../protocol/errors.js';
import { isoBound } from '../query-checks.js';
import type { FactQuery, WitnessRecord } from '../contract.js';
import { scopeKey } from '../entry.js';
import { cidKey, TreeCache } from './tree-cache.js';
import type { IndexedEntry } from './indexed-entry.js';
import { MemoryWriter } from './memory-index.js';
import { Names } from './names.js';
import { packedBound, PROVENANCE_CODES } from './schema.js';

/** A fact row (see schema.ts for the columns); interned names resolve through Queries' tables. */
export interface FactRow {
  cell_id: number;
  band_id: number;
  scope_id: number;
  tslot: number;
  accepted_at: number;
  kind: number;
  provenance: number;
  log_index: number;
  leaf: number;
  body_at: number;
  body_len: number;
  body: Buffer | null;
  /** Placement of the superseded fact, whose digest is a leaf of its own entry's tree. */
  sup_log_index: number | null;
  sup_leaf: number | null;
}

const FACT_SELECT = `SELECT f.cell_id, f.band_id, f.scope_id, f.tslot, f.accepted_at, f.kind, f.provenance, f.log_index, f.leaf,
  f.body_at, f.body_len, f.body, p.log_index AS sup_log_index, p.leaf AS sup_leaf
  FROM facts f LEFT JOIN facts p ON p.id = f.supersedes`;
/** Version order: valid time, then transaction time, then log order. */
const ORDER_NEWEST = 'f.tslot DESC, f.accepted_at DESC, f.log_index DESC, f.position DESC';
const ORDER_OLDEST = 'f.tslot ASC, f.accepted_at ASC, f.log_index ASC, f.position ASC';

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
  private readonly cache = new BoundedCache<string, Statement>('sqlite_statements', { max: 512 });
  readonly cells: Names;
  readonly bands: Names;
  readonly scopes: Names;
  /** Batch attester keys and memory record references (fact_cids, entity_cids) of the memory index. */
  readonly attesters: Names;
  readonly refs: Names;
  /** Writes the memory index rows of facts indexed for the first time. */
  private readonly memory: MemoryWriter;
  /** Whether a (cell, scope, band, tslot) key holds a fact of another attester than the given one. */
  private readonly otherAttesterSt: Statement<[number, number, number, number, string], number>;
  private readonly insertSharedSlot: Statement<[number, string, string, number]>;
  /** Batch trees of entries: fact_cids and proofs. */
  readonly trees: TreeCache;
  private readonly byCidKey: Statement<[number], FactRow>;
  readonly placement: Statement<[number], { log_index: number; accepted_at: number; position: number }>;
  private readonly candidates: Statement<[number], { id: number; log_index: number; leaf: number }>;
  private readonly maxId: Statement<[], number>;
  private readonly insertFact: Statement<unknown[]>;
  /** The superseded row id of a fact row just inserted (its page is in the cache). */
  private readonly supersedesOf: Statement<[number], number | null>;
  private readonly insertEntry: Statement<[number, string, number, Uint8Array]>;
  private readonly addDayFacts: Statement<[string, number, number]>;
  /** Facts first indexed from `attester` on the packed UTC day (YYYYMMDD). */
  readonly dayFacts: Statement<[string, number], number>;
  /** Unscoped facts per attester (scope id 0 is the unscoped one). */
  readonly publicByAttester: Statement<[], { attester: string; facts: number }>;
  readonly setMeta: Statement<[string, string]>;
  readonly getMeta: Statement<[string], { value: string }>;
  private readonly bandsAtSt: Statement<[number, number], string>;
  readonly insertWitness: Statement;
  readonly witnesses: Statement<[], WitnessRecord>;
  /** Public (unscoped) fact, distinct cell and distinct band counts. */
  readonly counts: Statement<[], { facts: number; cells: number; subjects: number; bands: number }>;
  /** The recorded owner of a scope (by scopeKey text). */
  readonly claimOf: Statement<[string], string>;
  readonly insertClaim: Statement<[string, string, string]>;
  private readonly firstWriterSt: Statement<[number, string], string>;
  private readonly holdsSt: Statement<[number], number>;
  private readonly insertPublicCell: Statement<[number]>;
  private readonly insertPublicBand: Statement<[number]>;

  constructor(readonly db: Database) {
    this.cells = new Names(db, 'cells', 'cell');
    this.bands = new Names(db, 'bands', 'band');
    this.scopes = new Names(db, 'scopes', 'key');
    this.attesters = new Names(db, 'attesters', 'key');
    this.refs = new Names(db, 'mem_refs', 'ref');
    this.memory = new MemoryWriter(db, this.attesters, this.refs);
    this.otherAttesterSt = db
      .prepare(
        `SELECT 1 FROM facts f JOIN entries e ON e.log_index = f.log_index
         WHERE f.cell_id = ? AND f.scope_id = ? AND f.band_id = ? AND f.tslot = ? AND e.attester <> ? LIMIT 1`,
      )
      .pluck() as Statement<[number, number, number, number, string], number>;
    this.insertSharedSlot = db.prepare(`INSERT OR IGNORE INTO shared_slots (scope_id, cell, band, tslot) VALUES (?, ?, ?, ?)`);
    const entryTree = db.prepare(`SELECT attester, leaves, tree FROM entries WHERE log_index = ?`) as Statement<[number], { attester: string; leaves: number; tree: Buffer }>;
    this.trees = new TreeCache((i) => entryTree.get(i));
    this.byCidKey = db.prepare(`${FACT_SELECT} WHERE f.cid_key = ?`);
    this.placement = db.prepare(`SELECT log_index, accepted_at, position FROM facts WHERE id = ?`);
    this.candidates = db.prepare(`SELECT id, log_index, leaf FROM facts WHERE cid_key = ?`);
    this.maxId = db.prepare(`SELECT COALESCE(MAX(id), 0) FROM facts`).pluck() as Statement<[], number>;
    // `supersedes` is the newest version already indexed under the same (cell, scope, band,
    // tslot), found by the subquery before the row exists: one statement per fact, not two.
    this.insertFact = db.prepare(
      `INSERT INTO facts (id, cid_key, cell_id, scope_id, band_id, tslot, accepted_at, log_index, position, kind, provenance, leaf, body_at, body_len, body, supersedes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
         (SELECT id FROM facts WHERE cell_id = ? AND scope_id = ? AND band_id = ? AND tslot = ?
          ORDER BY accepted_at DESC, log_index DESC, position DESC LIMIT 1))`,
    );
    // Read back by rowid rather than with RETURNING, which made the insert about eight times
    // slower (≈ 45 µs a fact, measured): the shared-slot check needs to know whether it superseded.
    this.supersedesOf = db.prepare(`SELECT supersedes FROM facts WHERE id = ?`).pluck() as Statement<[number], number | null>;
    this.insertEntry = db.prepare(`INSERT OR IGNORE INTO entries (log_index, attester, leaves, tree) VALUES (?, ?, ?, ?)`);
    this.addDayFacts = db.prepare(`INSERT INTO attester_days (attester, day, facts) VALUES (?, ?, ?) ON CONFLICT (attester, day) DO UPDATE SET facts = facts + excluded.facts`);
    this.dayFacts = db.prepare(`SELECT facts FROM attester_days WHERE attester = ? AND day = ?`).pluck() as Statement<[string, number], number>;
    this.publicByAttester = db.prepare(
      `SELECT e.attester AS attester, COUNT(*) AS facts FROM facts f JOIN entries e ON e.log_index = f.log_index WHERE f.scope_id = 0 GROUP BY e.attester ORDER BY facts DESC, attester`,
    );
    this.setMeta = db.prepare(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
    this.getMeta = db.prepare(`SELECT value FROM meta WHERE key = ?`);
    this.bandsAtSt = db.prepare(`SELECT band FROM bands WHERE id IN (SELECT DISTINCT band_id FROM facts WHERE cell_id = ? AND scope_id = ?) ORDER BY band`).pluck() as Statement<
      [number, number],
      string
    >;
    this.insertWitness = db.prepare(
      `INSERT OR IGNORE INTO witnesses (tree_size, root, witness, signature, operator, received_at)
       VALUES (@tree_size, @root, @witness, @signature, @operator, @received_at)`,
    );
    this.witnesses = db.prepare(`SELECT tree_size, root, witness, signature, operator, received_at FROM witnesses ORDER BY tree_size, witness`);
    // Scope id 0 is the unscoped one: all facts less the scoped ones (the partial index
    // facts_scoped holds those only), and the public cell and band sets kept by insertEntries.
    this.counts = db.prepare(
      `SELECT (SELECT COUNT(*) FROM facts) - (SELECT COUNT(*) FROM facts WHERE scope_id <> 0) AS facts,
              (SELECT COUNT(*) FROM public_cells p JOIN cells c ON c.id = p.cell_id WHERE instr(c.cell, ':') = 0) AS cells,
              (SELECT COUNT(*) FROM public_cells p JOIN cells c ON c.id = p.cell_id WHERE instr(c.cell, ':') > 0) AS subjects,
              (SELECT COUNT(*) FROM public_bands) AS bands`,
    );
    this.insertPublicCell = db.prepare(`INSERT OR IGNORE INTO public_cells (cell_id) VALUES (?)`);
    this.insertPublicBand = db.prepare(`INSERT OR IGNORE INTO public_bands (band_id) VALUES (?)`);
    this.claimOf = db.prepare(`SELECT attester FROM scope_claims WHERE scope = ?`).pluck() as Statement<[string], string>;
    this.insertClaim = db.prepare(`INSERT OR IGNORE INTO scope_claims (scope, attester, claimed_at) VALUES (?, ?, ?)`);
    // `scope_id <> 0` lets the planner use the partial index facts_scoped.
    this.firstWriterSt = db
      .prepare(
        `SELECT e.attester FROM facts f JOIN entries e ON e.log_index = f.log_index
         WHERE f.scope_id = ? AND f.scope_id <> 0 AND e.attester <> ? ORDER BY f.log_index, f.position LIMIT 1`,
      )
      .pluck() as Statement<[number, string], string>;
    this.holdsSt = db.prepare(`SELECT 1 FROM facts WHERE scope_id = ? AND scope_id <> 0 LIMIT 1`).pluck() as Statement<[number], number>;
  }

  private prepared(sql: string): Statement {
    let st = this.cache.get(sql);
    if (!st) {
      // Shapes vary only with list lengths; a cap still guards against pathological callers.
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }

  /**
   * Filters shared by latest and history (everything but the band); null for an empty
   * provenance list. `none` says no row can match (a cell or scope never indexed): callers still
   * validate the rest of the query, as they did when the SQL itself found nothing.
   */
  private filters(q: FactQuery): { where: string[]; args: unknown[]; none: boolean } | null {
    const cellId = this.cells.get(q.cell);
    const scopeId = this.scopes.get(scopeKey(q.scope));
    const where = ['f.cell_id = ?', 'f.scope_id = ?'];
    const args: unknown[] = [cellId, scopeId];
    if (q.provenance !== undefined) {
      if (q.provenance.length === 0) return null;
      // A class no row can carry matches nothing, as its text did.
      const list = [...new Set(q.provenance.map((p) => PROVENANCE_CODES.indexOf(p)))].sort((a, b) => a - b);
      where.push(`f.provenance IN (${list.map(() => '?').join(', ')})`);
      args.push(...list);
    }
    if (q.tslot !== undefined) {
      where.push('f.tslot = ?');
      args.push(q.tslot);
    } else if (q.as_of_tslot !== undefined) {
      where.push('f.tslot <= ?');
      args.push(q.as_of_tslot);
    }
    if (q.as_of_signed_at !== undefined) {
      const bound = isoBound('as_of_signed_at', q.as_of_signed_at);
      where.push('f.accepted_at <= ?');
      args.push(packedBound(bound));
    }
    return { where, args, none: cellId === undefined || scopeId === undefined };
  }

  /**
   * Who owns a scope with no recorded claim: its first writer other than `exclude`; null when
   * it holds facts from `exclude` only (unclaimable); undefined when it holds none (claimable).
   */
  derivedOwner(key: string, exclude: string): string | null | undefined {
    const scopeId = this.scopes.get(key);
    if (scopeId === undefined || scopeId === 0) return undefined;
    const first = this.firstWriterSt.get(scopeId, exclude);
    if (first !== undefined) return first;
    return this.holdsSt.get(scopeId) === undefined ? undefined : null;
  }

  /** Bands with a fact at (cell, scope), in text order. */
  bandsAt(cell: string, scope: FactQuery['scope']): string[] {
    const cellId = this.cells.get(cell);
    const scopeId = this.scopes.get(scopeKey(scope));
    return cellId === undefined || scopeId === undefined ? [] : this.bandsAtSt.all(cellId, scopeId);
  }

  /** Bands a query ranges over: the requested ones (deduplicated, sorted) or all at the cell. */
  private bandsOf(q: FactQuery): string[] {
    if (q.bands !== undefined) return [...new Set(q.bands)].sort();
    return this.bandsAt(q.cell, q.scope);
  }

  /** Newest version per band (see FactReader.latest), ordered by band. */
  latest(q: FactQuery): FactRow[] {
    checkQuery(q);
    const f = this.filters(q);
    if (f === null || f.none) return [];
    const st = this.prepared(`${FACT_SELECT} WHERE ${f.where.join(' AND ')} AND f.band_id = ? ORDER BY ${ORDER_NEWEST} LIMIT 1`);
    const out: FactRow[] = [];
    for (const band of this.bandsOf(q)) {
      const bandId = this.bands.get(band);
      if (bandId === undefined) continue;
      const row = st.get(...f.args, bandId) as FactRow | undefined;
      if (row) out.push(row);
    }
    return out;
  }

  /** Every matching version, oldest first (valid time, then transaction time). */
  history(q: FactQuery & { tslot_from?: number; tslot_to?: number; limit?: number }): FactRow[] {
    checkQuery(q);
    const f = this.filters(q);
    if (f === null) return [];
    const { where, args } = f;
    let none = f.none;
    if (q.bands !== undefined) {
      const bands = [...new Set(q.bands)];
      if (bands.length === 0) return [];
      const ids = bands.map((b) => this.bands.get(b)).filter((id) => id !== undefined);
      // No band indexed under any of the names: nothing matches (but the limit is still checked).
      if (ids.length === 0) none = true;
      ids.sort((a, b) => a - b);
      where.push(`f.band_id IN (${ids.map(() => '?').join(', ')})`);
      args.push(...ids);
    }
    if (q.tslot_from !== undefined) {
      where.push('f.tslot >= ?');
      args.push(q.tslot_from);
    }
    if (q.tslot_to !== undefined) {
      where.push('f.tslot <= ?');
      args.push(q.tslot_to);
    }
    let sql = `${FACT_SELECT} WHERE ${where.join(' AND ')} ORDER BY ${ORDER_OLDEST}`;
    if (q.limit !== undefined) {
      if (!Number.isSafeInteger(q.limit) || q.limit < 0) throw new RangeError('limit: expected a non-negative integer');
      sql += ' LIMIT ?';
      args.push(q.limit);
    }
    return none ? [] : (this.prepared(sql).all(...args) as FactRow[]);
  }

  /** Up to `limit` distinct cells starting with `prefix`, in text order (see FactReader.cellsWithPrefix for `scope`). */
  cellsWithPrefix(prefix: string, limit: number, scope?: FactQuery['scope']): { cells: string[]; truncated: boolean } {
    if (typeof prefix !== 'string') throw new TypeError('prefix: expected a string');
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('limit: expected a non-negative integer');
    const upper = prefixUpperBound(prefix);
    let scopeId: number | undefined;
    if (scope !== undefined) {
      scopeId = this.scopes.get(scopeKey(scope));
      if (scopeId === undefined) return { cells: [], truncated: false }; // no fact was ever written in that scope
    }
    // `cells` holds each cell once: one range scan, with one row past the cap to tell truncation;
    // a scope keeps the cells with a fact in it (one seek per cell on facts_key).
    const visible = scopeId === undefined ? '' : ' AND EXISTS (SELECT 1 FROM facts f WHERE f.cell_id = cells.id AND f.scope_id = ?)';
    const st = this.prepared(`SELECT cell FROM cells WHERE cell >= ?${upper === '' ? '' : ' AND cell < ?'}${visible} ORDER BY cell LIMIT ?`).pluck();
    const args: unknown[] = [prefix, ...(upper === '' ? [] : [upper]), ...(scopeId === undefined ? [] : [scopeId]), limit + 1];
    const cells = st.all(...args) as string[];
    const truncated = cells.length > limit;
    if (truncated) cells.length = limit;
    return { cells, truncated };
  }

  /** True when the fact at (logIndex, leaf) has the digest `digest`. */
  private isDigest(logIndex: number, leaf: number, digest: Uint8Array): boolean {
    const d = this.trees.digest(logIndex, leaf);
    for (let i = 0; i < 32; i++) if (d[i] !== digest[i]) return false;
    return true;
  }

  /** Row id of the fact whose digest is `digest`, if indexed. */
  factId(digest: Uint8Array): number | undefined {
    return this.candidates.all(cidKey(digest)).find((c) => this.isDigest(c.log_index, c.leaf, digest))?.id;
  }

  /** The row of the fact whose digest is `digest`, if indexed (one query: candidates with their rows). */
  getFact(digest: Uint8Array): FactRow | undefined {
    return this.byCidKey.all(cidKey(digest)).find((r) => this.isDigest(r.log_index, r.leaf, digest));
  }

  /**
   * Insert the facts of applied entries (one transaction, the caller's): per entry its tree, per
   * fact its row unless its cid is already indexed (the first placement stays, as INSERT OR
   * IGNORE on the cid would keep it). Returns, per entry, which facts were new.
   */
  insertEntries(items: IndexedEntry[]): boolean[][] {
    let nextId = this.maxId.get()! + 1;
    const out = items.map((e) => {
      // Written first, so a fact repeated later in this entry finds its earlier copy's leaf.
      this.insertEntry.run(e.logIndex, e.attester, e.tree.count, e.tree.blob);
      const inserted = e.facts.map((x) => {
        if (this.factId(x.digest) !== undefined) return false;
        const cellId = this.cells.intern(x.cell);
        const scopeId = this.scopes.intern(x.scopeKey);
        const bandId = this.bands.intern(x.band);
        const id = nextId++;
        this.insertFact.run(
          id,
          cidKey(x.digest),
          cellId,
          scopeId,
          bandId,
          x.tslot,
          e.acceptedAt,
          e.logIndex,
          x.position,
          x.kind,
          x.provenance,
          x.leaf,
          x.bodyAt,
          x.bodyLen,
          x.inline,
          cellId,
          scopeId,
          bandId,
          x.tslot,
        );
        if (scopeId === 0) {
          this.insertPublicCell.run(cellId);
          this.insertPublicBand.run(bandId);
        }
        // A key written before, now by another attester too: a shared slot (memory.ts sharedSlots).
        if (this.supersedesOf.get(id) != null && this.otherAttesterSt.get(cellId, scopeId, bandId, x.tslot, e.attester) !== undefined) {
          this.insertSharedSlot.run(scopeId, x.cell, x.band, x.tslot);
        }
        if (x.memory !== null) this.memory.add(x.memory, { digest: x.digest, scopeId, attester: e.attester, acceptedAt: e.acceptedAt });
        return true;
      });
      const fresh = inserted.reduce((n, ok) => n + (ok ? 1 : 0), 0);
      // acceptedAt is YYYYMMDDhhmmss: its day is the leading eight digits.
      if (fresh > 0) this.addDayFacts.run(e.attester, Math.floor(e.acceptedAt / 1_000_000), fresh);
      return inserted;
    });
    // The notes' term counts, once per (scope, term) for all of these entries.
    this.memory.flush();
    return out;
  }

  /** After a failed transaction: cached ids may name rows that were rolled back. */
  resetCaches(): void {
    this.trees.clear();
    this.cells.reset();
    this.bands.reset();
    this.scopes.reset();
    this.attesters.reset();
    this.refs.reset();
    this.memory.reset();
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
