/**
 * Single-use nonces for signed requests (issue 13, item 13: a signed backfill request ran again
 * when replayed). A nonce is kept until the expiry its request was signed with; past that
 * the request is refused as expired anyway, so the memory holds at most the requests of one
 * maximum lifetime. Memory is per process: see docs/reliability.md for what a restart allows.
 */

/** Kept nonces are swept of expired ones at most this often. */
const SWEEP_MS = 60_000;

export class ReplayGuard {
  private readonly seen = new Map<string, number>();
  private nextSweep = 0;

  /**
   * Use `key` (e.g. attester and nonce) until `expiresAt` (ms). False when it was used already
   * and has not expired: the request is a replay.
   */
  claim(key: string, expiresAt: number, now: number): boolean {
    if (now >= this.nextSweep) {
      for (const [k, until] of this.seen) if (until <= now) this.seen.delete(k);
      this.nextSweep = now + SWEEP_MS;
    }
    const until = this.seen.get(key);
    if (until !== undefined && until > now) return false;
    this.seen.set(key, expiresAt);
    return true;
  }

  /** Nonces kept now (tests, metrics). */
  get size(): number {
    return this.seen.size;
  }
}
