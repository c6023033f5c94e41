/**
 * Per-attester daily quotas (docs/writes.md, "Daily quota per attester"): how many facts one key
 * may have accepted per UTC day. The count comes from the store (one keyed lookup,
 * attesterFactsOn), so it survives restarts and is shared by every responder on one PostgreSQL
 * schema; batches of the same key still in flight in this process are added, so concurrent batches
 * here cannot all slip under the limit together. The responder's own key is never counted:
 * materialization must not run out.
 *
 * Two quotas read that one count: SVC_ATTESTER_DAILY_FACTS on every write (unlimited by
 * default), and SVC_NOTE_DAILY_QUOTA on note writes (on by default; docs/memory.md), whose
 * batches are the cheapest way to put volume on the disk. Each keeps its own in-flight tally,
 * so a batch checked against both is not counted twice by either.
 */
import { SvcError } from '../../protocol/errors.js';
import type { ServiceContext } from '../context/context.js';

const DAY_MS = 86_400_000;
const none = () => {};

/** One quota over the store's per-key daily count. */
export interface DailyQuota {
  /** The tally of batches in flight it keeps apart from the other quota's. */
  name: 'facts' | 'notes';
  /** Facts per key per UTC day; undefined: unlimited. */
  limit: number | undefined;
  /** The variable that sets it, for the refusal's message. */
  variable: string;
}

/** Facts of batches admitted but not yet stored, per store, quota and attester. */
const inFlight = new WeakMap<object, Map<string, number>>();

function pendingOf(store: object): Map<string, number> {
  let m = inFlight.get(store);
  if (!m) inFlight.set(store, (m = new Map()));
  return m;
}

/** Whole seconds from `nowMs` to the next UTC midnight (at least 1). */
export function secondsToUtcMidnight(nowMs: number): number {
  return Math.max(1, Math.ceil(((Math.floor(nowMs / DAY_MS) + 1) * DAY_MS - nowMs) / 1000));
}

/**
 * Admit `count` more facts from `attester` today, or refuse the whole batch. Resolves with the
 * release to call once the append has settled (stored facts are then in the store's count).
 */
export async function reserveDailyFacts(ctx: ServiceContext, attester: string, count: number): Promise<() => void> {
  return reserveDaily(ctx, { name: 'facts', limit: ctx.config.attesterDailyFacts, variable: 'SVC_ATTESTER_DAILY_FACTS' }, attester, count);
}

/** reserveDailyFacts under another quota over the same count (see the top of this file). */
export async function reserveDaily(ctx: ServiceContext, quota: DailyQuota, attester: string, count: number): Promise<() => void> {
  const { limit } = quota;
  if (limit === undefined) return none; // unlimited: no store read at all
  // The store stamps accepted_at from the wall clock (not ctx.now, which tests may move), and
  // its day is what the count is kept under, so the quota's day comes from the same clock.
  const nowMs = Date.now();
  const day = new Date(nowMs).toISOString().slice(0, 10);
  const used = await ctx.store.attesterFactsOn(attester, day);
  const pending = pendingOf(ctx.store);
  const key = `${quota.name}\u0000${attester}`;
  const held = pending.get(key) ?? 0;
  if (used + held + count > limit) {
    const retryAfter = secondsToUtcMidnight(nowMs);
    const inflight = held > 0 ? ` (and ${held} in flight)` : '';
    const scope = quota.name === 'notes' ? ' when it writes notes' : '';
    throw new SvcError(
      'compute_quota_exceeded',
      `facts: attester ${attester} may have ${limit} facts accepted per UTC day${scope} (${quota.variable}); ${used} were accepted on ${day}${inflight}, so this batch of ${count} would pass the limit (retry after ${retryAfter} s, at 00:00 UTC)`,
      { field: 'facts', quota: quota.name, attester, limit, used, in_flight: held, requested: count, day, retry_after: retryAfter },
    );
  }
  pending.set(key, held + count);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (pending.get(key) ?? count) - count;
    if (left > 0) pending.set(key, left);
    else pending.delete(key);
  };
}
