/**
 * Per-IP token bucket (docs/security.md, "Quotas and bounds (defaults)"; docs/reliability.md,
 * "MCP batches and the rate limit"): `rps` tokens per second refill continuously up to `burst`;
 * an empty bucket answers 429 `rate_limited` with Retry-After: 1 and retry_after in the body.
 * An HTTP request takes one token here; an MCP batch takes one more per further message (mcp.ts).
 */
import type { FastifyInstance } from 'fastify';
import { SvcError } from '../protocol/errors.js';

export interface RateLimitOptions {
  rps: number;
  burst: number;
  /** Paths never limited (the liveness and readiness probes). */
  exempt?: readonly string[];
  now?: () => number;
  /** Buckets kept at most (idle full buckets are dropped first). */
  maxClients?: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBuckets {
  private buckets = new Map<string, Bucket>();
  constructor(private readonly o: RateLimitOptions) {}

  /** Take one token for `key`; false when the bucket is empty. */
  take(key: string): boolean {
    const now = (this.o.now ?? Date.now)();
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= (this.o.maxClients ?? 100_000)) this.prune(now);
      b = { tokens: this.o.burst, at: now };
      this.buckets.set(key, b);
    } else {
      b.tokens = Math.min(this.o.burst, b.tokens + ((now - b.at) / 1000) * this.o.rps);
      b.at = now;
    }
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** Drop buckets that have refilled completely (they behave like new ones). */
  prune(now: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.o.rps >= this.o.burst) this.buckets.delete(k);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}

/**
 * What adapters that carry several calls in one HTTP request (MCP batches) use to count each
 * call against the same bucket as the request itself.
 */
export interface RateLimiter {
  /** Take one token for `ip`; false when its bucket is empty. */
  take(ip: string): boolean;
  /** The error a refused request or call answers. */
  refusal(): SvcError;
}

export function installRateLimit(app: FastifyInstance, o: RateLimitOptions): RateLimiter {
  const buckets = new TokenBuckets(o);
  const exempt = new Set(o.exempt ?? ['/health', '/ready']);
  const timer = setInterval(() => buckets.prune(Date.now()), 60_000);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
  const perMinute = Math.round(o.rps * 60);
  const refusal = () =>
    new SvcError('rate_limited', `rate limit: ${perMinute} requests per minute per IP (burst ${o.burst}) exceeded`, { retry_after: 1, limit_per_minute: perMinute, burst: o.burst });
  // A callback hook (no promise per request); the path check needs no allocation.
  app.addHook('onRequest', (req, _reply, done) => {
    const q = req.url.indexOf('?');
    if (exempt.has(q < 0 ? req.url : req.url.slice(0, q)) || buckets.take(req.ip)) return done();
    done(refusal());
  });
  return { take: (ip) => buckets.take(ip), refusal };
}
