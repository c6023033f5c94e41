/**
 * Admission of note searches: how many run at once per store, and the turns they yield so
 * requests that arrive meanwhile are read (docs/memory.md, "Limits").
 */
import { SvcError } from '../../protocol/errors.js';
import type { ServiceContext } from '../context/context.js';

/**
 * Searches running now, per store (one per process in a deployment). A search holds the event
 * loop while SQLite ranks, so searches beyond a few only queue behind each other: 50 heavy ones
 * at once answered in seconds. Past the limit a search is refused at once, 503 overloaded with
 * retry_after, rather than queued.
 */
const running = new WeakMap<object, number>();

/**
 * Let the event loop read what arrived. The embedded store ranks synchronously, so a search
 * that never yields runs to its end before the next request is even read: the others wait
 * unseen in the socket buffers (never refused, answered seconds later, 50 heavy ones at once:
 * p99 1.7 s with no refusal, measured). A search therefore yields before and after each store
 * call, and the requests that arrived meanwhile meet the limit while it is still running.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function admitSearch(ctx: ServiceContext): () => void {
  const limit = ctx.config.memorySearchConcurrency;
  const now = running.get(ctx.store) ?? 0;
  if (now >= limit) {
    throw new SvcError('overloaded', `memory search: ${limit} searches are running, as many as this responder runs at once (SVC_MEMORY_SEARCH_CONCURRENCY); retry after 1 s`, {
      reason: 'memory_search_concurrency',
      limit,
      retry_after: 1,
    });
  }
  running.set(ctx.store, now + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const left = (running.get(ctx.store) ?? 1) - 1;
    if (left > 0) running.set(ctx.store, left);
    else running.delete(ctx.store);
  };
}
