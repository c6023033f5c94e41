/** ULID (request_id, docs/protocol-notes.md §4): 48-bit millisecond time + 80 random bits, Crockford base32, monotonic. */

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ULID_RE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

let lastTime = -1;
const lastRandom = new Uint8Array(10);

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits → 16 characters of 5 bits, most significant first (two 40-bit halves).
  let out = '';
  for (let h = 0; h < 10; h += 5) {
    const hi = (bytes[h] << 12) | (bytes[h + 1] << 4) | (bytes[h + 2] >>> 4);
    const lo = ((bytes[h + 2] & 15) << 16) | (bytes[h + 3] << 8) | bytes[h + 4];
    out +=
      CROCKFORD[hi >>> 15] +
      CROCKFORD[(hi >>> 10) & 31] +
      CROCKFORD[(hi >>> 5) & 31] +
      CROCKFORD[hi & 31] +
      CROCKFORD[lo >>> 15] +
      CROCKFORD[(lo >>> 10) & 31] +
      CROCKFORD[(lo >>> 5) & 31] +
      CROCKFORD[lo & 31];
  }
  return out;
}

// Random bytes drawn in blocks: one getRandomValues call per 400 new milliseconds, not per id.
const pool = new Uint8Array(4000);
let poolAt = pool.length;

function freshRandom(into: Uint8Array): void {
  if (poolAt + into.length > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  // Each byte of the block is handed out once.
  into.set(pool.subarray(poolAt, poolAt + into.length));
  poolAt += into.length;
}

function increment(bytes: Uint8Array): boolean {
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] < 255) {
      bytes[i]++;
      return true;
    }
    bytes[i] = 0;
  }
  return false;
}

/**
 * A new ULID. Within one millisecond the random part increments, so ids from this process
 * sort in creation order; a clock that steps back reuses the last time to keep that order.
 */
export function ulid(nowMs: number = Date.now()): string {
  let t = Math.floor(nowMs);
  if (t <= lastTime) {
    t = lastTime;
    if (!increment(lastRandom)) {
      t = lastTime + 1; // 2^80 ids in one millisecond: move to the next one
      freshRandom(lastRandom);
    }
  } else {
    freshRandom(lastRandom);
  }
  lastTime = t;
  return encodeTime(t) + encodeRandom(lastRandom);
}

export function isUlid(text: unknown): text is string {
  return typeof text === 'string' && ULID_RE.test(text);
}

/** Millisecond timestamp of a ULID. */
export function ulidTime(id: string): number {
  if (!isUlid(id)) throw new RangeError('ulid: malformed');
  let t = 0;
  for (const ch of id.slice(0, 10)) t = t * 32 + CROCKFORD.indexOf(ch);
  return t;
}
