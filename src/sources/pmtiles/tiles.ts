/**
 * Decoded tiles of PMTiles archives, read through archive.ts and kept in one named bounded cache:
 * which tiles cover a rectangle of global tile units, and the tiles of a read, each decoded once
 * per archive version and shared by every read that needs it while it is being fetched (a read
 * needing a tile another read is fetching waits for that fetch instead of asking again).
 *
 * What a tile decodes to is the caller's: `decode` turns a tile's bytes (null when the archive has
 * no tile there) into the value kept, and `bytesOf` weighs it for the cache's byte bound.
 */
import type { Cache, Header, Source } from 'pmtiles';
import { BoundedCache } from '../../lib/cache.js';
import { readTiles } from './archive.js';
import { UNITS } from './mvt.js';

export interface TileAddress {
  z: number;
  x: number;
  y: number;
}

/** An axis-aligned rectangle in global tile units of one zoom (y grows southward: y0 is the north edge). */
export interface UnitRect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** The tiles at zoom z that a rectangle of global units at z reaches into (an edge on a tile edge reaches no further). */
export function tilesOfRect(r: UnitRect, z: number): TileAddress[] {
  const last = 2 ** z - 1;
  const tx0 = Math.max(0, Math.floor(r.x0 / UNITS));
  const ty0 = Math.max(0, Math.floor(r.y0 / UNITS));
  const tx1 = Math.min(last, Math.max(tx0, Math.ceil(r.x1 / UNITS) - 1));
  const ty1 = Math.min(last, Math.max(ty0, Math.ceil(r.y1 / UNITS) - 1));
  const out: TileAddress[] = [];
  for (let y = ty0; y <= ty1; y++) for (let x = tx0; x <= tx1; x++) out.push({ z, x, y });
  return out;
}

/** The bounds of a tile in global units of its zoom. */
export function tileRect(t: TileAddress): UnitRect {
  return { x0: t.x * UNITS, y0: t.y * UNITS, x1: (t.x + 1) * UNITS, y1: (t.y + 1) * UNITS };
}

export const tileKey = (t: TileAddress): string => `${t.z}/${t.x}/${t.y}`;

/** Decoded tiles of any number of archives, in one named bounded cache. */
export class DecodedTiles<T extends {}> {
  private readonly cache: BoundedCache<string, T>;
  private readonly reading = new Map<string, Promise<T>>();

  constructor(name: string, bounds: { max: number; maxBytes: number; ttlMs: number }, bytesOf: (v: T) => number) {
    this.cache = new BoundedCache<string, T>(name, { ...bounds, bytesOf });
  }

  /**
   * The tiles `want` of the archive behind `source`, decoded, in the order asked; `fromCache`
   * counts those that needed no fetch by this call.
   */
  async get(directories: Cache, source: Source, header: Header, want: readonly TileAddress[], decode: (bytes: Uint8Array | null, t: TileAddress) => T): Promise<{ tiles: T[]; fromCache: number }> {
    const key = (t: TileAddress) => `${source.getKey()}|${header.etag ?? ''}|${tileKey(t)}`;
    const out = new Map<string, T>();
    let fromCache = 0;
    for (const t of want) {
      const hit = this.cache.get(key(t));
      if (hit !== undefined) {
        out.set(key(t), hit);
        fromCache++;
      }
    }
    const missing = want.filter((t) => !out.has(key(t)));
    const mine = missing.filter((t) => !this.reading.has(key(t)));
    if (mine.length > 0) {
      const batch = readTiles(directories, source, header, mine).then((reads) => {
        const m = new Map<string, T>();
        for (const r of reads) {
          const v = decode(r.bytes, r);
          this.cache.set(key(r), v);
          m.set(key(r), v);
        }
        return m;
      });
      for (const t of mine) {
        const k = key(t);
        const p = batch.then((m) => m.get(k)!);
        this.reading.set(k, p);
        p.then(
          () => this.reading.delete(k),
          () => this.reading.delete(k),
        );
      }
    }
    // Taken before any await: a finished read leaves `reading` at once.
    const waits = missing.map((t) => this.reading.get(key(t))!);
    (await Promise.all(waits)).forEach((v, i) => out.set(key(missing[i]), v));
    return { tiles: want.map((t) => out.get(key(t))!), fromCache };
  }
}
