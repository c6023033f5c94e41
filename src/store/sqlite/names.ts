/**
 * Interned name tables of the SQLite index (cells, bands, scopes, attesters, memory record
 * references): name ↔ small integer id, with bounded caches both ways. Rows and their indexes
 * carry the ids; the caches only save a lookup, so they are dropped when full or when a
 * transaction that may have made up ids rolls back.
 */
import type { Database, Statement } from 'better-sqlite3';
import { SvcError } from '../../protocol/errors.js';

/**
 * Interning caches are dropped past this many names (they only save a lookup). Plain Maps, not
 * the shared LRU (lib/cache.ts): interning runs several times per ingested fact, and the LRU's
 * bookkeeping cost about a fifth of batch-256 ingest in `npm run bench ingest`.
 */
const NAME_CACHE_MAX = 1 << 16;

/** An interned name table: name ↔ id, with bounded caches both ways. */
export class Names {
  private readonly cache = new Map<string, number>();
  private readonly names = new Map<number, string>();
  private readonly find: Statement<[string], number>;
  private readonly add: Statement<[string]>;
  private readonly byId: Statement<[number], string>;

  constructor(
    db: Database,
    private readonly table: string,
    column: string,
  ) {
    this.find = db.prepare(`SELECT id FROM ${table} WHERE ${column} = ?`).pluck() as Statement<[string], number>;
    this.add = db.prepare(`INSERT INTO ${table} (${column}) VALUES (?)`);
    this.byId = db.prepare(`SELECT ${column} FROM ${table} WHERE id = ?`).pluck() as Statement<[number], string>;
  }

  /** The name of an id a row holds. */
  name(id: number): string {
    let name = this.names.get(id);
    if (name === undefined) {
      name = this.byId.get(id);
      if (name === undefined) throw new SvcError('internal', `index.sqlite: a row names a missing interned id ${id} (${this.table})`);
      if (this.names.size >= NAME_CACHE_MAX) this.names.clear();
      this.names.set(id, name);
    }
    return name;
  }

  /** The id of `name`, or undefined when no row uses it. */
  get(name: string): number | undefined {
    let id = this.cache.get(name);
    if (id === undefined) {
      id = this.find.get(name);
      if (id !== undefined) this.keep(name, id);
    }
    return id;
  }

  /** The id of `name`, added if new (inside the apply transaction). */
  intern(name: string): number {
    let id = this.get(name);
    if (id === undefined) {
      id = Number(this.add.run(name).lastInsertRowid);
      this.keep(name, id);
    }
    return id;
  }

  private keep(name: string, id: number): void {
    if (this.cache.size >= NAME_CACHE_MAX) this.cache.clear();
    this.cache.set(name, id);
  }

  /** Forget cached ids (a rolled-back transaction may have made some of them up). */
  reset(): void {
    this.cache.clear();
    this.names.clear();
  }
}
