/** ULID (spec 2.2 request_id): 48-bit millisecond time + 80 random bits, Crockford base32, monotonic. */

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
  // 80 bits → 16 characters of 5 bits, most significant first.
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let out = '';
  for (let i = 15; i >= 0; i--) out += CROCKFORD[Number((bits >> BigInt(i * 5)) & 31n)];
  return out;
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
      crypto.getRandomValues(lastRandom);
    }
  } else {
    crypto.getRandomValues(lastRandom);
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
