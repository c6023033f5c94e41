/**
 * Small pieces shared by the read primitives beyond recall: field validation that names the
 * field, bounded fan-out, vector arithmetic and the per-band value checks. Kept free of HTTP so
 * REST and MCP see identical behaviour.
 */
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { checkTslot } from '../../protocol/tslot.js';
import type { BandEntry } from '../../registry/registry.js';
import type { StoredFact } from '../../store/contract.js';
import type { ServiceContext } from '../context/context.js';

/** Fan-out used by the multi-cell reads: enough to overlap store latency, small enough to be polite. */
export const READ_CONCURRENCY = 16;

/**
 * How a long primitive reports how far it got (MCP notifications/progress, docs/reads.md "MCP"):
 * `progress` grows with every call, `total` is the work when known. Reporting never changes what
 * the primitive does or answers; a caller without a listener passes nothing.
 */
export type ProgressFn = (p: { progress: number; total?: number; message?: string }) => void;

/** `fn` that also reports, after each item settles, how many of `total` items are done. */
export function counting<T, R>(fn: (item: T, i: number) => Promise<R>, total: number, onProgress: ProgressFn | undefined, what: string): (item: T, i: number) => Promise<R> {
  if (!onProgress) return fn;
  let done = 0;
  return (item, i) =>
    fn(item, i).finally(() => {
      done++;
      onProgress({ progress: done, total, message: `${done} of ${total} ${what}` });
    });
}

/**
 * Run `fn` over `items` with at most `limit` in flight, results in input order. `shouldStart`
 * is asked before each item starts; when it says no, the item is left undone (result undefined)
 * and so are all later ones — this is how time budgets stop starting new work.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>, shouldStart: () => boolean = () => true): Promise<Array<R | undefined>> {
  const out: Array<R | undefined> = new Array(items.length).fill(undefined);
  let next = 0;
  let stopped = false;
  const worker = async () => {
    while (!stopped && next < items.length) {
      if (!shouldStart()) {
        stopped = true;
        return;
      }
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

/** A required registered band, or band_not_in_registry naming the field. */
export function requireBand(ctx: ServiceContext, key: unknown, field: string): BandEntry {
  if (typeof key !== 'string' || key.length === 0) throw invalidArgument(field, 'expected a band key (see /v1/bands)');
  const e = ctx.registry.bands.get(key);
  if (e) return e;
  const hint = ctx.registry.bandList.find((b) => b.key.endsWith(`.${key}`))?.key;
  throw new SvcError('band_not_in_registry', `${field}: ${key} is not in the active manifest; bands need their namespace prefix (see /v1/bands)`, {
    field,
    band: key,
    did_you_mean: hint ? [hint] : [],
  });
}

/** Validate an optional tslot for a band (invalid_argument / tslot_mismatch name the field). */
export function optionalTslot(ctx: ServiceContext, v: unknown, band: BandEntry, field: string): number | undefined {
  if (v === undefined) return undefined;
  try {
    return checkTslot(v, band.tempo, band.key, ctx.now().getTime());
  } catch (e) {
    if (e instanceof SvcError) throw new SvcError(e.code, e.message.replace(/^tslot:/, `${field}:`), { ...e.details, field }, { status: e.httpStatus });
    throw e;
  }
}

/**
 * A Unix-seconds window [start, end] (inclusive): two non-negative integers, as the operations'
 * schemas admit them; checked here for what a schema cannot say (safe integers, start ≤ end).
 */
export function parseWindow(v: readonly number[], field: string): [number, number] {
  if (v.length !== 2) throw invalidArgument(field, 'expected [start_unix, end_unix]');
  const [a, b] = v;
  if (!Number.isSafeInteger(a)) throw invalidArgument(`${field}[0]`, 'expected a non-negative integer (Unix seconds)');
  if (!Number.isSafeInteger(b)) throw invalidArgument(`${field}[1]`, 'expected a non-negative integer (Unix seconds)');
  if (a > b) throw invalidArgument(field, `start ${a} is after end ${b}`);
  return [a, b];
}

/** True for a finite JSON number. */
export function isNum(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

/** True for a non-empty array of finite numbers (of length `dim` when given). */
export function isVec(x: unknown, dim?: number): x is number[] {
  return Array.isArray(x) && x.length > 0 && (dim === undefined || x.length === dim) && x.every(isNum);
}

/** Largest |x| of a vector (0 for a zero vector). */
export function maxAbs(v: readonly number[]): number {
  let m = 0;
  for (const x of v) m = Math.max(m, Math.abs(x));
  return m;
}

/**
 * Cosine similarity in [-1, 1]; null when either vector has zero length. Each vector is divided
 * by its largest |value| first (cosine ignores scale), so no sum overflows or underflows.
 */
export function cosine(a: readonly number[], b: readonly number[]): number | null {
  const sa = maxAbs(a);
  const sb = maxAbs(b);
  if (sa === 0 || sb === 0) return null;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] / sa;
    const y = b[i] / sb;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return Math.max(-1, Math.min(1, dot / Math.sqrt(na * nb)));
}

/** Euclidean length of a vector (scaled so the squares stay finite). */
export function norm(v: readonly number[]): number {
  const m = maxAbs(v);
  if (m === 0 || !Number.isFinite(m)) return m;
  let s = 0;
  for (const x of v) s += (x / m) ** 2;
  return m * Math.sqrt(s);
}

/** Euclidean distance between two equal-length vectors. */
export function l2(a: readonly number[], b: readonly number[]): number {
  return norm(a.map((x, i) => b[i] - x));
}

/** Rounds away float noise in derived numbers (never applied to signed values). */
export function round(x: number, digits = 12): number {
  return Number(x.toPrecision(digits));
}

/** A stored fact's value when it is usable for its band's kind, else undefined (absences, bad data). */
export function usableValue(f: StoredFact, band: BandEntry | undefined): number | number[] | undefined {
  if (f.kind === 'absence') return undefined;
  const v = f.body.value;
  if (!band) return isNum(v) ? v : isVec(v) ? v : undefined;
  if (band.value_kind === 'vector') return isVec(v, band.dim) ? v : undefined;
  return isNum(v) ? v : undefined;
}

/** Newest version per tslot from a history list (oldest first), ordered by tslot ascending. */
export function newestPerTslot(history: readonly StoredFact[]): StoredFact[] {
  const by = new Map<number, StoredFact>();
  for (const f of history) by.set(f.tslot, f); // later entries are newer versions
  return [...by.values()].sort((a, b) => a.tslot - b.tslot);
}

/** Deterministically pick `k` items spread evenly over `list` (keeps order). */
export function evenPick<T>(list: readonly T[], k: number): T[] {
  if (list.length <= k) return [...list];
  const out: T[] = [];
  for (let i = 0; i < k; i++) out.push(list[Math.floor(((i + 0.5) * list.length) / k)]);
  return out;
}

/** Plain-object check used by hand validation of nested inputs. */
export function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
