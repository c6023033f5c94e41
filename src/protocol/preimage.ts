/**
 * Segment-stream builder used by every signed object (docs/protocol-notes.md §5):
 * stream = prefix ".preimage.v1" ‖ 0x00 ‖ u32le(len(domain)) ‖ domain, then tagged segments.
 */
import { concatBytes, u32le, utf8 } from './bytes.js';
import { blake3 } from './hash.js';

export const DEFAULT_PREFIX = 'svc';

/** Header of a preimage for `domain`, with the deployment's prefix word. */
export function streamHeader(domain: string, prefix: string = DEFAULT_PREFIX): Uint8Array {
  const key = `${prefix}\u0000${domain}`;
  const known = headers.get(key);
  if (known !== undefined) return known.slice();
  if (typeof prefix !== 'string' || !/^[a-z][a-z0-9_-]{0,31}$/.test(prefix)) throw new RangeError('prefix: expected a short lowercase word');
  const d = utf8(domain);
  const h = concatBytes(utf8(`${prefix}.preimage.v1`), new Uint8Array([0]), u32le(d.length), d);
  if (headers.size < 256) headers.set(key, h);
  return h.slice();
}

// Headers repeat for every object of a domain (receipts on every read): build each once.
const headers = new Map<string, Uint8Array>();

/** Scalar segment: tag ‖ u32le(len) ‖ bytes. */
export function segment(tag: number, data: Uint8Array | string): Uint8Array {
  const b = typeof data === 'string' ? utf8(data) : data;
  return concatBytes(new Uint8Array([tag]), u32le(b.length), b);
}

/** List segment: tag ‖ u32le(count) ‖ (u32le(len) ‖ bytes)*; an empty list still writes its count. */
export function listSegment(tag: number, items: readonly (Uint8Array | string)[]): Uint8Array {
  const parts: Uint8Array[] = [new Uint8Array([tag]), u32le(items.length)];
  for (const it of items) {
    const b = typeof it === 'string' ? utf8(it) : it;
    parts.push(u32le(b.length), b);
  }
  return concatBytes(...parts);
}

/** H(stream(domain) ‖ segments…). */
export function domainDigest(domain: string, segments: Uint8Array[], prefix: string = DEFAULT_PREFIX): Uint8Array {
  return blake3(concatBytes(streamHeader(domain, prefix), ...segments));
}
