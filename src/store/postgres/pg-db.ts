/**
 * Small helpers over node-postgres shared by the driver's modules: named prepared statements,
 * byte conversions and the contract's fault error.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { SvcError } from '../../protocol/errors.js';

/** A pool or one checked-out client: both run queries. */
export type Db = pg.Pool | pg.PoolClient;

const names = new Map<string, string>();

/**
 * Statement name for `text`: derived from the text itself, so equal texts share one server-side
 * prepared statement per connection and different texts (other schemas, other filter shapes)
 * can never collide under one name.
 */
function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = 's' + createHash('sha256').update(text).digest('hex').slice(0, 30);
    names.set(text, name);
  }
  return name;
}

/**
 * Run a parameterised statement, prepared once per connection; resolves its rows. `bound`
 * wraps the query (the log writer gives each of its statements a deadline).
 */
export async function rows<R extends pg.QueryResultRow>(db: Db, text: string, values: unknown[] = [], bound: <T>(q: Promise<T>) => Promise<T> = (q) => q): Promise<R[]> {
  const res = await bound(db.query<R>({ name: statementName(text), text, values }));
  return res.rows;
}

/**
 * Run a parameterised statement as an unnamed one, planned for its actual parameters each time.
 * For statements whose best plan depends on the values (full-text search: a rare word wants
 * the GIN index, a word in most rows a scan), where a cached generic plan can be many times
 * slower than the planning it saves.
 */
export async function rowsPlanned<R extends pg.QueryResultRow>(db: Db, text: string, values: unknown[] = []): Promise<R[]> {
  return (await db.query<R>(text, values)).rows;
}

/** A Buffer view of `u8` (no copy): node-postgres sends Buffers as bytea. */
export function buf(u8: Uint8Array): Buffer {
  return Buffer.isBuffer(u8) ? u8 : Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}

/** A plain Uint8Array copy of a bytea value (callers may keep it; Buffers can share pool slabs). */
export function bytes(b: Buffer): Uint8Array {
  return new Uint8Array(b);
}

/** int8 columns arrive as decimal text: convert, refusing anything beyond safe integers. */
export function int(v: string | number): number {
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isSafeInteger(n)) throw new SvcError('internal', `postgres store: ${String(v)} is not a safe integer`);
  return n;
}

/**
 * Wrap a database failure as the contract's real-fault error. SvcErrors and the argument errors
 * our own checks throw (RangeError, TypeError) pass through: they are not faults.
 */
export function pgFault(what: string, err: unknown): Error {
  if (err instanceof SvcError || err instanceof RangeError || err instanceof TypeError) return err;
  return new SvcError('internal', `postgres store: ${what}: ${(err as Error)?.message ?? String(err)}`, {}, { cause: err });
}
