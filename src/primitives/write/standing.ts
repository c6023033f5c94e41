/**
 * How a key stands with this responder now (docs/devices.md): the operator's configuration
 * (SVC_REVOKED_KEYS, SVC_DEVICE_KEYS, SVC_ATTESTER_KEYS) combined with the records the responder
 * signed about the key (`device.enrollment`, `device.revocation`, `memory.bearer_revocation`),
 * all filed under one subject, `svc:entity:` + anchorId({key}), at tslot 0.
 *
 * Revocation takes effect at once for every process sharing the store: the records are read
 * from the store driver itself on every check (one indexed read of one subject, no hot cache and
 * no memo), so a revocation accepted by one responder is seen by the next request of any other.
 */
import { BoundedCache } from '../../lib/cache.js';
import { recordSubject } from '../../protocol/memory-records.js';
import { SvcError } from '../../protocol/errors.js';
import type { StoredFact } from '../../store/contract.js';
import type { ServiceContext } from '../context/context.js';

export const ENROLLMENT_BAND = 'device.enrollment';
export const REVOCATION_BAND = 'device.revocation';
export const BEARER_REVOCATION_BAND = 'memory.bearer_revocation';
const KEY_BANDS = [ENROLLMENT_BAND, REVOCATION_BAND, BEARER_REVOCATION_BAND] as const;

/** Who a key writes as (fact-rules.ts levels): the responder L3, a device or an operator key L2. */
export type Standing = 'responder' | 'device' | 'operator';

/** The subject the records about `key` are filed under. */
export function keySubject(key: string): string {
  return recordSubject(ENROLLMENT_BAND, { key });
}

/** The responder's records about one key. */
export interface KeyRecords {
  /** The first enrollment (re-enrolling returns it rather than minting another). */
  enrollment: StoredFact | null;
  /** The first revocation: a revoked key stays revoked. */
  revocation: StoredFact | null;
  /** The bearer revocation with the latest not_before (bearers issued before it are void). */
  bearerRevocation: StoredFact | null;
  /** not_before of `bearerRevocation` (Unix s), or null. */
  bearersNotBefore: number | null;
}

function notBeforeOf(f: StoredFact): number {
  const v = (f.body.value as { not_before?: unknown } | null)?.not_before;
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : -1;
}

async function readRecords(ctx: ServiceContext, key: string): Promise<KeyRecords> {
  // `history` goes to the driver (the hot cache fronts only getFact and latest): never stale.
  const rows = await ctx.store.history({ cell: keySubject(key), bands: KEY_BANDS, scope: null });
  // These bands are L3: only a responder's own key writes them, so any record of them in the
  // store was minted by a responder of this deployment (responders sharing a store may sign with
  // different keys, and a key rotated since still counts). No filter on the attester, then.
  const out: KeyRecords = { enrollment: null, revocation: null, bearerRevocation: null, bearersNotBefore: null };
  for (const f of rows) {
    if (f.kind !== 'primary' || (f.body.value as { key?: unknown } | null)?.key !== key) continue;
    if (f.band === ENROLLMENT_BAND) out.enrollment ??= f;
    else if (f.band === REVOCATION_BAND) out.revocation ??= f;
    else if (f.band === BEARER_REVOCATION_BAND) {
      const nb = notBeforeOf(f);
      if (nb >= 0 && (out.bearersNotBefore === null || nb > out.bearersNotBefore)) {
        out.bearerRevocation = f;
        out.bearersNotBefore = nb;
      }
    }
  }
  return out;
}

/**
 * The responder's records about `key`, read from the store now. Never memoised, not even
 * between concurrent requests: a request that starts after a revocation was acknowledged must
 * not join a read that started before it. Callers needing several answers about one key in one
 * request read once and pass the records along (keyStatus returns them).
 */
export function keyRecords(ctx: ServiceContext, key: string): Promise<KeyRecords> {
  return readRecords(ctx, key);
}

/** A key's standing, or why it has none; never throws (resolve answers show it). */
export interface KeyStatus {
  standing: Standing | 'revoked' | 'unlisted';
  /** Where a revocation comes from. */
  revoked_by?: 'configuration' | 'record';
  /** Whether an enrollment record makes it a device (beside SVC_DEVICE_KEYS). */
  enrolled: boolean;
  records: KeyRecords | null;
}

/**
 * What the records last said of keys this process has checked (enrolled or revoked), for
 * `fact_meta` roles, which are computed synchronously when a fact is served. Only a hint for
 * display: every write and bearer use reads the records again.
 */
const SEEN_CAP = 10_000;
const seen = new BoundedCache<string, 'device' | 'revoked'>('key_standing', { max: SEEN_CAP });

/** The standing records gave `key` when this process last checked it, if they gave one. */
export function recordStanding(key: string): 'device' | 'revoked' | undefined {
  return seen.get(key);
}

function noteStanding(key: string, standing: 'device' | 'revoked' | null): void {
  if (standing === null) {
    seen.delete(key);
    return;
  }
  seen.set(key, standing);
}

export async function keyStatus(ctx: ServiceContext, key: string): Promise<KeyStatus> {
  if (ctx.config.revokedKeys.includes(key)) return { standing: 'revoked', revoked_by: 'configuration', enrolled: false, records: null };
  // The responder's own key is never revoked by a record (it is rotated instead), so its mints read nothing.
  if (key === ctx.keys.publicKeyB32) return { standing: 'responder', enrolled: false, records: null };
  const records = await keyRecords(ctx, key);
  const enrolled = records.enrollment !== null;
  noteStanding(key, records.revocation ? 'revoked' : enrolled ? 'device' : null);
  if (records.revocation) return { standing: 'revoked', revoked_by: 'record', enrolled, records };
  if (ctx.config.deviceKeys.includes(key) || enrolled) return { standing: 'device', enrolled, records };
  if (ctx.config.attesterKeys.includes(key)) return { standing: 'operator', enrolled, records };
  return { standing: 'unlisted', enrolled, records };
}

/** The refusal for a revoked key. */
export function revokedError(key: string, field: string, status: KeyStatus): SvcError {
  const rev = status.records?.revocation;
  const by = status.revoked_by === 'record' && rev ? `revoked by the responder's record ${rev.fact_cid} (POST /v1/device_platforms/revoke)` : 'revoked by the operator (SVC_REVOKED_KEYS)';
  return new SvcError('attester_revoked', `${field}: key ${key} is ${by}`, {
    field,
    ...(rev && status.revoked_by === 'record' ? { revocation: rev.fact_cid } : {}),
  });
}

/**
 * Which writer `key` is: 'responder', 'device' (SVC_DEVICE_KEYS or enrolled) or 'operator'
 * (SVC_ATTESTER_KEYS). Throws `attester_revoked` (403) for a revoked key and `unauthorized`
 * (403) for any other key.
 */
export async function keyStanding(ctx: ServiceContext, key: string, field = 'attester'): Promise<Standing> {
  const s = await keyStatus(ctx, key);
  if (s.standing === 'revoked') throw revokedError(key, field, s);
  if (s.standing === 'unlisted') {
    throw new SvcError('unauthorized', `${field}: key ${key} is not the responder's, an enrolled device key or an operator-listed key`, { field }, { status: 403 });
  }
  return s.standing;
}

/**
 * Throws `attester_revoked` unless `key` is in good standing as far as revocation goes (it may
 * still be unlisted: a configured scope key reads without writing). Resolves with the key's
 * records (null for the responder's own key), for callers that look further (bearer revocation).
 */
export async function refuseRevoked(ctx: ServiceContext, key: string, field: string): Promise<KeyRecords | null> {
  const s = await keyStatus(ctx, key);
  if (s.standing === 'revoked') throw revokedError(key, field, s);
  return s.records;
}

/** Whether SVC_SCOPE_KEYS lists `key` for some scope member (it may then hold read bearers without writing). */
export function isScopeKey(ctx: ServiceContext, key: string): boolean {
  return Object.values(ctx.config.scopeKeys).some((keys) => keys.includes(key));
}

// One mint at a time per key in this process, so a burst of equal requests makes one record.
const locks = new WeakMap<ServiceContext, Map<string, Promise<unknown>>>();

/** Run `fn` after any other `withKeyLock` of the same key (this process) has finished. */
export async function withKeyLock<T>(ctx: ServiceContext, key: string, fn: () => Promise<T>): Promise<T> {
  let m = locks.get(ctx);
  if (!m) locks.set(ctx, (m = new Map()));
  const before = m.get(key) ?? Promise.resolve();
  const run = before.then(fn, fn);
  const tail = run.catch(() => undefined);
  m.set(key, tail);
  try {
    return await run;
  } finally {
    if (m.get(key) === tail) m.delete(key);
  }
}
