/** Loads a golden vector file from test/vectors/. */
import { readFileSync } from 'node:fs';

export function loadVectors<T = any>(path: string): T {
  return JSON.parse(readFileSync(new URL(`../vectors/${path}`, import.meta.url), 'utf8')) as T;
}

/** Decodes the tagged JSON values used by the CBOR vector files. */
export function cborValueOf(v: any): any {
  if (Array.isArray(v)) return v.map(cborValueOf);
  if (v && typeof v === 'object') {
    if ('int' in v) return BigInt(v.int);
    if ('float' in v) return v.float === '-0' ? -0 : Number(v.float);
    if ('bytes' in v) return Uint8Array.from(Buffer.from(v.bytes, 'hex'));
    if ('map' in v) return Object.fromEntries(Object.entries(v.map).map(([k, x]) => [k, cborValueOf(x)]));
  }
  return v;
}
