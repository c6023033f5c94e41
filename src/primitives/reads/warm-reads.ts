/**
 * Prepared warm reads: what a repeated read would compute again from the same stored facts
 * (the facts with their receipts, caveats, notes, ETag), kept per request shape so a warm
 * repeat only signs its own receipt. An entry stands while three things hold:
 * - the cell's generation is the one read before the entry was prepared (any write to the cell,
 *   from this process or another sharing the hot cache, bumps it);
 * - the clock has not reached `validUntilMs`, the first moment a stored fact of the answer could
 *   become due for a refresh (next slot boundary, absence cadence);
 * - nothing was fetched upstream while preparing it (only answers served from the store are kept).
 * Entries are frozen: every response that carries one shares it.
 */
import { BoundedCache } from '../../lib/cache.js';
import type { ServiceContext } from '../context/context.js';

export interface WarmEntry<T> {
  readonly cell: string;
  readonly generation: number;
  readonly validUntilMs: number;
  readonly value: T;
}

const CAP = 10_000;
const byContext = new WeakMap<ServiceContext, BoundedCache<string, WarmEntry<unknown>>>();

function table(ctx: ServiceContext): BoundedCache<string, WarmEntry<unknown>> {
  let t = byContext.get(ctx);
  if (!t) {
    t = new BoundedCache<string, WarmEntry<unknown>>('warm_reads', { max: CAP });
    byContext.set(ctx, t);
  }
  return t;
}

/** A still-valid prepared answer for `key`, or undefined. */
export async function warmGet<T>(ctx: ServiceContext, key: string, nowMs: number): Promise<T | undefined> {
  const t = table(ctx);
  const e = t.get(key);
  if (!e) return undefined;
  if (nowMs >= e.validUntilMs || (await ctx.store.generation(e.cell)) !== e.generation) {
    t.delete(key);
    return undefined;
  }
  return e.value as T;
}

/** Keep a prepared answer (the caller froze it); the least recently used go first past the cap. */
export function warmSet<T>(ctx: ServiceContext, key: string, entry: WarmEntry<T>, nowMs: number): void {
  if (entry.generation < 0 || !(entry.validUntilMs > nowMs)) return;
  const t = table(ctx);
  t.set(key, entry);
}
