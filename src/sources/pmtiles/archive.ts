/**
 * Reading a PMTiles v3 archive (https://github.com/protomaps/PMTiles, spec v3) by HTTP range
 * requests over the shared UpstreamClient, so the egress allow-list, timeouts, retries and the
 * caller's deadline apply to every byte. The `pmtiles` package supplies the format pieces
 * (header layout, tile ids on the Hilbert curve, directory lookup, the Source and Cache
 * interfaces); this module supplies the transport and the caching:
 *
 * - one request for the first 16 KiB: the 127-byte header and the root directory (the spec puts
 *   the root directory there);
 * - leaf directories on demand, each fetched once while several tiles wait for it;
 * - the tiles of an area fetched together: their byte ranges are sorted and runs closer than
 *   RUN_GAP_BYTES are read as one range, so tiles stored next to each other (a clustered
 *   archive stores them in tile-id order, and neighbouring tiles are mostly close on the
 *   Hilbert curve) cost one request, not one each.
 *
 * Header and directories are kept in one named bounded cache (`pmtiles_directories`); a
 * changed ETag invalidates them (EtagMismatch, as the pmtiles package does).
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { bytesToHeader, Compression, EtagMismatch, findTile, readVarint, zxyToTileId, type Cache, type Entry, type Header, type RangeResponse, type Source } from 'pmtiles';
import { BoundedCache } from '../../lib/cache.js';
import { UpstreamError, type UpstreamClient } from '../http.js';

/** Bytes read for the header and root directory (the spec keeps both inside them). */
export const HEADER_READ_BYTES = 16_384;
/** Two tile ranges this close are read as one range (the gap is read and dropped). */
export const RUN_GAP_BYTES = 65_536;
/** A coalesced read never exceeds this many bytes (a longer run is split). */
export const RUN_MAX_BYTES = 8 * 1024 * 1024;
/** Header and directories kept per process; an entry is dropped after DIRECTORY_TTL_MS. */
export const DIRECTORY_CACHE = { max: 512, maxBytes: 64 * 1024 * 1024, ttlMs: 60 * 60_000 } as const;
/** Range reads of one area in flight at once. */
const RUNS_AT_ONCE = 4;
/** Spec v3: at most three levels of leaf directories below the root. */
const MAX_DEPTH = 4;

/** What one read of an area cost: range requests sent and body bytes received. */
export interface ReadStats {
  requests: number;
  bytes: number;
}

/** The caller's budget for one read. */
export interface ReadBudget {
  deadline: number;
  signal?: AbortSignal;
  stats: ReadStats;
}

/** The format error of this module (bytes that are not what the archive declares). */
export function pmtilesFormat(message: string): UpstreamError {
  return new UpstreamError('format', `PMTiles: ${message}`);
}

const toArrayBuffer = (u: Uint8Array): ArrayBuffer => u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;

/** Decompress a directory, metadata or tile body by the header's declared codec. */
export function decompress(bytes: Uint8Array, compression: Compression): Uint8Array {
  switch (compression) {
    case Compression.None:
    case Compression.Unknown:
      return bytes;
    case Compression.Gzip:
      try {
        return new Uint8Array(gunzipSync(bytes));
      } catch (e) {
        throw pmtilesFormat(`gzip body does not inflate (${(e as Error).message})`);
      }
    case Compression.Brotli:
      try {
        return new Uint8Array(brotliDecompressSync(bytes));
      } catch (e) {
        throw pmtilesFormat(`brotli body does not inflate (${(e as Error).message})`);
      }
    default:
      throw pmtilesFormat(`compression ${compression} is not supported`);
  }
}

/** A directory's entries (spec v3 §4: varint columns of tile ids, run lengths, lengths, offsets). */
export function parseDirectory(bytes: Uint8Array): Entry[] {
  const p = { buf: bytes, pos: 0 };
  const n = readVarint(p);
  if (!Number.isSafeInteger(n) || n > bytes.length) throw pmtilesFormat(`directory declares ${n} entries in ${bytes.length} bytes`);
  const entries: Entry[] = [];
  let id = 0;
  for (let i = 0; i < n; i++) {
    id += readVarint(p);
    entries.push({ tileId: id, offset: 0, length: 0, runLength: 1 });
  }
  for (const e of entries) e.runLength = readVarint(p);
  for (const e of entries) e.length = readVarint(p);
  entries.forEach((e, i) => {
    const v = readVarint(p);
    e.offset = v === 0 && i > 0 ? entries[i - 1].offset + entries[i - 1].length : v - 1;
  });
  if (p.pos > bytes.length) throw pmtilesFormat('directory is truncated');
  return entries;
}

/** pmtiles' Source over the UpstreamClient, counting requests and bytes of one read. */
export class UpstreamRangeSource implements Source {
  constructor(
    private readonly client: UpstreamClient,
    private readonly url: string,
    private readonly budget: ReadBudget,
  ) {}

  getKey(): string {
    return this.url;
  }

  async getBytes(offset: number, length: number, signal?: AbortSignal, etag?: string): Promise<RangeResponse> {
    const res = await this.client.request(this.url, { range: [offset, offset + length - 1], deadline: this.budget.deadline, signal: signal ?? this.budget.signal, maxBytes: length });
    this.budget.stats.requests++;
    this.budget.stats.bytes += res.body.length;
    if (res.status === 200 && offset > 0) throw pmtilesFormat(`${new URL(this.url).host} ignored the Range header (HTTP 200 for bytes ${offset}-)`);
    const got = res.headers.get('etag');
    const strong = got && !got.startsWith('W/') ? got : undefined;
    if (etag && strong && strong !== etag) throw new EtagMismatch(`archive changed while it was read (ETag ${strong}, expected ${etag})`);
    return { data: toArrayBuffer(res.body), etag: strong };
  }
}

type Cached = { header: Header } | { entries: Entry[] };

/**
 * pmtiles' Cache over a named BoundedCache: the header and root directory from one read, leaf
 * directories by (archive, etag, offset, length), one fetch shared by concurrent callers.
 */
export class DirectoryCache implements Cache {
  private readonly cache = new BoundedCache<string, Cached>('pmtiles_directories', {
    ...DIRECTORY_CACHE,
    bytesOf: (v) => ('header' in v ? 256 : 64 + v.entries.length * 48),
  });
  private readonly inflight = new Map<string, Promise<Cached>>();

  private shared(key: string, load: () => Promise<Cached>): Promise<Cached> {
    const hit = this.cache.get(key);
    if (hit) return Promise.resolve(hit);
    let p = this.inflight.get(key);
    if (!p) {
      p = load().finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  async getHeader(source: Source): Promise<Header> {
    const got = await this.shared(`${source.getKey()}|header`, async () => {
      const res = await source.getBytes(0, HEADER_READ_BYTES);
      const buf = new Uint8Array(res.data);
      if (buf.length < 127 || buf[0] !== 0x50 || buf[1] !== 0x4d) throw pmtilesFormat('the file does not start with the PMTiles magic number');
      if (buf[7] !== 3) throw pmtilesFormat(`spec version ${buf[7]} (only v3 is read)`);
      const header = bytesToHeader(toArrayBuffer(buf.subarray(0, 127)), res.etag);
      const end = header.rootDirectoryOffset + header.rootDirectoryLength;
      if (end > buf.length) throw pmtilesFormat(`root directory ends at byte ${end}, beyond the ${buf.length} bytes of the first read`);
      const root = parseDirectory(decompress(buf.subarray(header.rootDirectoryOffset, end), header.internalCompression));
      this.cache.set(dirKey(source, header, header.rootDirectoryOffset, header.rootDirectoryLength), { entries: root });
      const v = { header };
      this.cache.set(`${source.getKey()}|header`, v);
      return v;
    });
    return (got as { header: Header }).header;
  }

  async getDirectory(source: Source, offset: number, length: number, header: Header): Promise<Entry[]> {
    const key = dirKey(source, header, offset, length);
    const got = await this.shared(key, async () => {
      const res = await source.getBytes(offset, length, undefined, header.etag);
      const entries = parseDirectory(decompress(new Uint8Array(res.data), header.internalCompression));
      if (entries.length === 0) throw pmtilesFormat(`empty directory at byte ${offset}`);
      const v = { entries };
      this.cache.set(key, v);
      return v;
    });
    return (got as { entries: Entry[] }).entries;
  }

  async invalidate(source: Source): Promise<void> {
    this.cache.delete(`${source.getKey()}|header`);
  }
}

function dirKey(source: Source, header: Header, offset: number, length: number): string {
  return `${source.getKey()}|${header.etag ?? ''}|${offset}|${length}`;
}

/** Where one tile's bytes lie in the archive, or null when the archive has no such tile. */
export async function locateTile(cache: Cache, source: Source, header: Header, z: number, x: number, y: number): Promise<{ offset: number; length: number } | null> {
  const id = zxyToTileId(z, x, y);
  let offset = header.rootDirectoryOffset;
  let length = header.rootDirectoryLength;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const entries = await cache.getDirectory(source, offset, length, header);
    const e = findTile(entries, id);
    if (!e) return null;
    if (e.runLength > 0) return { offset: header.tileDataOffset + e.offset, length: e.length };
    offset = header.leafDirectoryOffset + e.offset;
    length = e.length;
  }
  throw pmtilesFormat(`directories deeper than ${MAX_DEPTH} levels`);
}

/** One tile asked for, and its decompressed bytes (null: the archive has no tile there). */
export interface TileRead {
  z: number;
  x: number;
  y: number;
  bytes: Uint8Array | null;
}

/**
 * The tiles `want` from the archive: located through the directories, then read in coalesced
 * ranges (identical tiles, which the spec lets share one range, are read once).
 */
export async function readTiles(cache: Cache, source: Source, header: Header, want: ReadonlyArray<{ z: number; x: number; y: number }>): Promise<TileRead[]> {
  const where = await Promise.all(want.map((t) => locateTile(cache, source, header, t.z, t.x, t.y)));
  const ranges = [...new Map(where.filter((w): w is { offset: number; length: number } => w !== null).map((w) => [w.offset, w])).values()].sort((a, b) => a.offset - b.offset);
  const runs: Array<{ offset: number; end: number }> = [];
  for (const r of ranges) {
    const last = runs[runs.length - 1];
    if (last && r.offset - last.end <= RUN_GAP_BYTES && r.offset + r.length - last.offset <= RUN_MAX_BYTES) last.end = Math.max(last.end, r.offset + r.length);
    else runs.push({ offset: r.offset, end: r.offset + r.length });
  }
  const bodies = new Map<number, Uint8Array>();
  for (let i = 0; i < runs.length; i += RUNS_AT_ONCE) {
    await Promise.all(
      runs.slice(i, i + RUNS_AT_ONCE).map(async (run) => {
        const res = await source.getBytes(run.offset, run.end - run.offset, undefined, header.etag);
        const buf = new Uint8Array(res.data);
        if (buf.length !== run.end - run.offset) throw pmtilesFormat(`asked for ${run.end - run.offset} bytes at ${run.offset}, got ${buf.length}`);
        for (const r of ranges) if (r.offset >= run.offset && r.offset + r.length <= run.end) bodies.set(r.offset, buf.subarray(r.offset - run.offset, r.offset - run.offset + r.length));
      }),
    );
  }
  const inflated = new Map<number, Uint8Array>();
  return want.map((t, i) => {
    const w = where[i];
    if (!w) return { ...t, bytes: null };
    let bytes = inflated.get(w.offset);
    if (!bytes) {
      bytes = decompress(bodies.get(w.offset)!, header.tileCompression);
      inflated.set(w.offset, bytes);
    }
    return { ...t, bytes };
  });
}
