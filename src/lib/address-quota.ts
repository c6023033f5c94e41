/**
 * A fixed-window quota per client address, on a count and a byte total (issue 13, item 9: an
 * anonymous caller stored 300 bundle files in 0.3 s). What it meters is what a caller makes the
 * responder keep on disk, which the request rate limit (600/min) bounds far too loosely.
 *
 * The window opens at an address's first charge and lasts `windowSecs`; a refusal says how long
 * until it ends. Windows live in process memory: a restart forgets them (the next window simply
 * starts early), and responders that share a data directory meter separately.
 */
import { SvcError } from '../protocol/errors.js';

export interface QuotaLimits {
  count: number;
  /** Bytes per window; absent: only the count is metered. */
  bytes?: number;
  windowSecs: number;
}

interface Window {
  start: number;
  count: number;
  bytes: number;
}

/** Windows kept before expired ones are swept (an address costs about 100 bytes). */
const SWEEP_ABOVE = 10_000;

/**
 * The key an address is metered under: IPv4 as is (also when IPv4-mapped), IPv6 by its /64,
 * since one host is routinely given a whole /64 and could otherwise take a fresh quota per address.
 */
export function addressKey(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!ip.includes(':')) return ip;
  const bare = ip.toLowerCase().split('%')[0];
  const [head, tail] = bare.split('::');
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...new Array(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export class AddressQuota {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly limits: QuotaLimits,
    /** What is metered, for messages ("bundles"). */
    private readonly what: string,
  ) {}

  /**
   * Charge `items` items of `bytes` in all to `key` at `now` (ms), all or none, or throw
   * `rate_limited` with the seconds until the window ends. Returns a refund for items that were
   * not stored after all.
   */
  take(key: string, bytes: number, now: number, items = 1): () => void {
    const L = this.limits;
    let w = this.windows.get(key);
    if (!w || now >= w.start + L.windowSecs * 1000) {
      if (this.windows.size >= SWEEP_ABOVE) this.sweep(now);
      w = { start: now, count: 0, bytes: 0 };
      this.windows.set(key, w);
    }
    const over = w.count + items > L.count ? `${L.count} new ${this.what}` : L.bytes !== undefined && w.bytes + bytes > L.bytes ? `${L.bytes} bytes of new ${this.what}` : null;
    if (over) {
      const retryAfter = Math.max(1, Math.ceil((w.start + L.windowSecs * 1000 - now) / 1000));
      throw new SvcError('rate_limited', `quota: at most ${over} per ${L.windowSecs} s per client address`, {
        retry_after: retryAfter,
        quota: { count: L.count, bytes: L.bytes, window_s: L.windowSecs },
        used: { count: w.count, bytes: w.bytes },
      });
    }
    w.count += items;
    w.bytes += bytes;
    const charged = w;
    return () => {
      charged.count -= items;
      charged.bytes -= bytes;
    };
  }

  private sweep(now: number): void {
    const span = this.limits.windowSecs * 1000;
    for (const [k, w] of this.windows) if (now >= w.start + span) this.windows.delete(k);
  }
}

/**
 * One quota per owner (a service instance: tests run several in one process), made on first use.
 * Windows live with their owner and go with it.
 */
export function quotaPerOwner<O extends object>(make: (owner: O) => AddressQuota): (owner: O) => AddressQuota {
  const made = new WeakMap<O, AddressQuota>();
  return (owner) => {
    let q = made.get(owner);
    if (!q) made.set(owner, (q = make(owner)));
    return q;
  };
}
