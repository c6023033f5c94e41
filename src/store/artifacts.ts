/**
 * Argument rules and the eviction order of the artifact store (contract.ts, ArtifactStore),
 * shared by both drivers so they refuse exactly the same calls and evict the same artifacts.
 */
import { isoSeconds } from '../protocol/receipt.js';
import type { ArtifactInfo } from './contract.js';

/** Default bound on stored artifact bytes (SVC_ARTIFACT_MAX_BYTES; declared with the configuration). */
export { ARTIFACT_MAX_BYTES_DEFAULT } from '../config.js';
/** Largest single artifact (a 4096 × 4096 float32 grid is 64 MiB). */
export const MAX_ARTIFACT_BYTES = 64 * 1024 * 1024;
/** Longest rebuild hint (a token). */
export const MAX_REBUILD_CHARS = 1024;
/**
 * A read refreshes an artifact's last use only when the recorded one is at least this old: on
 * PostgreSQL a refresh is a row update, and a popular artifact would otherwise be written on
 * every read. Eviction is least recently used at this resolution (ties: oldest stored first).
 */
export const ARTIFACT_TOUCH_MS = 1000;

const CID_RE = /^[a-z2-7]{52}$/;
const MEDIA_TYPE_RE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;

/** Throws unless `cid` is an artifact cid (52 lowercase base32 characters). */
export function checkArtifactCid(cid: string): void {
  if (typeof cid !== 'string' || !CID_RE.test(cid)) throw new TypeError('cid: expected 52 lowercase base32 characters (b32 of a BLAKE3 digest)');
}

/** Throws unless (mediaType, bytes, rebuild) may be stored. */
export function checkArtifactPut(mediaType: string, bytes: Uint8Array, rebuild: string | null | undefined): void {
  if (typeof mediaType !== 'string' || !MEDIA_TYPE_RE.test(mediaType)) throw new TypeError('mediaType: expected a lowercase type/subtype without parameters');
  if (!(bytes instanceof Uint8Array)) throw new TypeError('bytes: expected a Uint8Array');
  if (bytes.length === 0 || bytes.length > MAX_ARTIFACT_BYTES) throw new RangeError(`bytes: ${bytes.length} bytes, expected 1..${MAX_ARTIFACT_BYTES}`);
  if (rebuild !== undefined && rebuild !== null && (typeof rebuild !== 'string' || rebuild.length === 0 || rebuild.length > MAX_REBUILD_CHARS)) {
    throw new RangeError(`rebuild: expected 1..${MAX_REBUILD_CHARS} characters`);
  }
}

/** Throws unless `range` is an inclusive byte range (start ≤ end, both non-negative integers). */
export function checkArtifactRange(range: { start: number; end: number } | undefined): void {
  if (range === undefined) return;
  const ok = Number.isSafeInteger(range.start) && Number.isSafeInteger(range.end) && range.start >= 0 && range.end >= range.start;
  if (!ok) throw new RangeError('range: expected integers 0 <= start <= end');
}

/** One stored artifact as eviction sees it. */
export interface EvictionCandidate {
  cid: string;
  size: number;
  used_at: number;
  stored_at: number;
}

/**
 * The cids to evict so that the stored bytes fit `maxBytes` once `keep` is stored: least
 * recently used first, then oldest stored, then by cid (a total order, so both drivers pick the
 * same). `keep` itself is never chosen; when it alone passes the bound, everything else goes.
 */
export function evictionOrder(candidates: readonly EvictionCandidate[], keep: string, maxBytes: number): string[] {
  let total = candidates.reduce((n, c) => n + c.size, 0);
  if (total <= maxBytes) return [];
  const order = candidates.filter((c) => c.cid !== keep).sort((a, b) => a.used_at - b.used_at || a.stored_at - b.stored_at || (a.cid < b.cid ? -1 : a.cid > b.cid ? 1 : 0));
  const out: string[] = [];
  for (const c of order) {
    if (total <= maxBytes) break;
    out.push(c.cid);
    total -= c.size;
  }
  return out;
}

/** An artifact's description as both drivers keep it (times in Unix milliseconds). */
export interface InfoRow {
  cid: string;
  media_type: string;
  size: number | string;
  rebuild: string | null;
  stored_at: number | string;
  evicted_at: number | string | null;
}

/** The contract's description of a row (times as ISO seconds). */
export function infoOf(row: InfoRow): ArtifactInfo {
  return {
    cid: row.cid,
    media_type: row.media_type,
    size: Number(row.size),
    rebuild: row.rebuild,
    stored_at: isoSeconds(Number(row.stored_at)),
    state: row.evicted_at === null ? 'stored' : 'evicted',
    evicted_at: row.evicted_at === null ? null : isoSeconds(Number(row.evicted_at)),
  };
}
