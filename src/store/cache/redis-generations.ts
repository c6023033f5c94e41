/**
 * Cell generations kept in Redis, designed so that a generation is never issued twice for a
 * cell, whatever happens to Redis: restarted empty, flushed, restored from an older snapshot or
 * AOF, failed over to a replica, or one key evicted or expired.
 *
 * Why that matters: readers memoise query results in process under (cell, generation), and a
 * write makes them unreachable by changing the generation. With a counter that restarts at 0,
 * the next write after a restart reissues 1 and every answer memoised under 1 before the
 * restart becomes reachable again, stale (issue 13, item 1).
 *
 * So a generation is a random 52-bit number, not a count: a new one is drawn on every write to
 * the cell and whenever the stored one cannot be trusted. Trust comes from the era, a random
 * token under the deployment's prefix that names the Redis run it was drawn in
 * (`<run_id>/<random>`): each client checks it on every (re)connect before it uses any
 * generation, and a Redis that restarted (a new run_id) gets a new era. A cell's record
 * is `<era>|<legacy counter>|<generation>` and stands only while both the era and the legacy
 * counter still match; otherwise the next read draws a fresh generation. A flushed or evicted
 * record, or era, simply draws fresh ones.
 *
 * The legacy counter is the `g:<cell>` key of earlier builds, still incremented on every write
 * and checked on every read, so that during a rolling upgrade a write through an older
 * responder ends the newer ones' cached answers and vice versa.
 */
import { randomBytes } from 'node:crypto';

/** Key names under the deployment's prefix. */
export const ERA_KEY = 'era';
export const genKey = (cell: string): string => `gen:${cell}`;
export const legacyKey = (cell: string): string => `g:${cell}`;

/** A fresh generation: uniform in [0, 2^52), so two draws coincide with probability 2^-52. */
export function freshGeneration(): number {
  return Number(randomBytes(8).readBigUInt64BE() >> 12n);
}

/** A fresh era token for the Redis run `runId`. */
export function freshEra(runId: string): string {
  return `${runId}/${randomBytes(12).toString('hex')}`;
}

/** The run_id line of `INFO server` ('unknown' when absent: every connect then starts an era). */
export function runIdOf(info: string): string {
  return /^run_id:([0-9a-zA-Z]+)\s*$/m.exec(info)?.[1] ?? 'unknown';
}

/**
 * KEYS: era, gen:<cell>, g:<cell>. ARGV: fresh generation, record TTL (s), era to start if none.
 * Returns the cell's generation, drawing ARGV[1] when the record is missing or untrusted.
 */
export const GENERATION_LUA = `
local era = redis.call('GET', KEYS[1])
if not era then
  era = ARGV[3]
  redis.call('SET', KEYS[1], era)
end
local legacy = redis.call('GET', KEYS[3]) or '0'
local cur = redis.call('GET', KEYS[2])
if cur then
  local e, l, g = string.match(cur, '^([^|]*)|([^|]*)|(%d+)$')
  if e == era and l == legacy then return tonumber(g) end
end
redis.call('SET', KEYS[2], era .. '|' .. legacy .. '|' .. ARGV[1], 'EX', tonumber(ARGV[2]))
return tonumber(ARGV[1])
`;

/**
 * KEYS: era, gen:<cell>, g:<cell>. ARGV: fresh generation, record TTL (s).
 * A write: bump the legacy counter and draw a new generation. Without an era there is nothing
 * to keep (the next read starts an era and draws afresh), so the record is dropped.
 */
export const BUMP_LUA = `
local legacy = redis.call('INCR', KEYS[3])
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[2]))
local era = redis.call('GET', KEYS[1])
if era then
  redis.call('SET', KEYS[2], era .. '|' .. legacy .. '|' .. ARGV[1], 'EX', tonumber(ARGV[2]))
else
  redis.call('DEL', KEYS[2])
end
return 1
`;

/**
 * KEYS: era. ARGV: this connection's Redis run_id, a fresh era for it.
 * Keeps the era when it was started in this Redis run; otherwise (a restart, a restore, a
 * failover) starts the fresh one, which makes every cell's record untrusted.
 */
export const CHECK_ERA_LUA = `
local era = redis.call('GET', KEYS[1])
if era and ARGV[1] ~= 'unknown' and string.sub(era, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. '/' then return era end
redis.call('SET', KEYS[1], ARGV[2])
return ARGV[2]
`;
