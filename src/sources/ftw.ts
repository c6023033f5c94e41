/**
 * Fields of The World (FTW) global field boundaries (docs/field-boundaries.md): predicted
 * agricultural field polygons, one global PMTiles v3 archive of gzip-compressed vector tiles
 * (one layer per year, `field-<year>-01-01 00:00:00`), read by range requests. The connector
 * fetches no band: it answers `readFields(box)` with the polygons of the tiles covering a box,
 * at the read zoom, in global tile units; clipping, merging across tiles and signing are the
 * field-boundaries primitive's.
 *
 * Read zoom: the archive's maximum zoom, at most 15. The tiler keeps every polygon, at full
 * precision, only at its maximum zoom (lower zooms drop and simplify the small fields a map
 * does not need at that scale), so a lower zoom would silently lose fields. At z15 one tile
 * unit is about 0.3 m at the equator, thirty times finer than the 10 m Sentinel-2 pixels the
 * polygons come from, so deeper zooms would add bytes and requests, not precision.
 */
import { EtagMismatch, type Header } from 'pmtiles';
import { BoundedCache } from '../lib/cache.js';
import type { ConnectorFactory, Materializer } from './contract.js';
import { UpstreamError } from './http.js';
import { DirectoryCache, readTiles, UpstreamRangeSource, type ReadStats } from './pmtiles/archive.js';
import { decodePolygons, toUnits, UNITS, type PolygonPiece } from './pmtiles/mvt.js';

export const FTW_SOURCE = 'ftw';
/** The deepest zoom read (see the module note). */
export const FTW_MAX_READ_ZOOM = 15;
/** Decoded tiles kept per process (polygons by layer), weighed by their coordinates. */
export const FTW_TILE_CACHE = { max: 4096, maxBytes: 128 * 1024 * 1024, ttlMs: 60 * 60_000 } as const;

/** A box in degrees (south-west and north-east corners; no antimeridian crossing). */
export interface FieldBox {
  min_lat: number;
  min_lng: number;
  max_lat: number;
  max_lng: number;
}

export interface FieldReadRequest {
  box: FieldBox;
  deadline: number;
  signal?: AbortSignal;
  /** Refuse (`too_many_tiles`) rather than read more tiles than this. */
  maxTiles: number;
}

/** What the archive says about itself, as the answer reports it. */
export interface ArchiveInfo {
  /** The archive's version as this read saw it: its ETag, else its size. */
  version: string;
  zoom: number;
  min_zoom: number;
  max_zoom: number;
  bounds: FieldBox;
}

export type FieldRead =
  | {
      status: 'ok';
      archive: ArchiveInfo;
      /** False when the box lies outside the archive's bounds (no tile was read). */
      inside_bounds: boolean;
      tiles: { covering: number; present: number; from_cache: number };
      /** Every layer name seen in the tiles read. */
      layers: string[];
      pieces: PolygonPiece[];
      stats: ReadStats;
    }
  | { status: 'too_many_tiles'; zoom: number; tiles: number; max: number }
  | { status: 'timeout'; reason: string; stats: ReadStats }
  | { status: 'error'; reason: string; format_mismatch?: boolean; stats: ReadStats };

export interface FieldBoundaryConnector extends Materializer {
  /** The archive URL (SVC_UPSTREAM_FTW_URL or the registry's default). */
  readonly url: string;
  readFields(req: FieldReadRequest): Promise<FieldRead>;
}

/** The wired FTW connector among `list`, if any. */
export function fieldBoundaryConnector(list: readonly Materializer[]): FieldBoundaryConnector | undefined {
  const m = list.find((x) => x.key === FTW_SOURCE);
  return m && typeof (m as Partial<FieldBoundaryConnector>).readFields === 'function' ? (m as FieldBoundaryConnector) : undefined;
}

/** The tiles at zoom z covering a box. */
export function tilesCovering(box: FieldBox, z: number): Array<{ z: number; x: number; y: number }> {
  const [x0, y0] = toUnits(box.min_lng, box.max_lat, z);
  const [x1, y1] = toUnits(box.max_lng, box.min_lat, z);
  const last = 2 ** z - 1;
  const tx0 = Math.max(0, Math.floor(x0 / UNITS));
  const ty0 = Math.max(0, Math.floor(y0 / UNITS));
  // A box edge exactly on a tile edge does not reach into the next tile.
  const tx1 = Math.min(last, Math.max(tx0, Math.ceil(x1 / UNITS) - 1));
  const ty1 = Math.min(last, Math.max(ty0, Math.ceil(y1 / UNITS) - 1));
  const out: Array<{ z: number; x: number; y: number }> = [];
  for (let y = ty0; y <= ty1; y++) for (let x = tx0; x <= tx1; x++) out.push({ z, x, y });
  return out;
}

const overlaps = (a: FieldBox, b: FieldBox) => a.min_lat <= b.max_lat && b.min_lat <= a.max_lat && a.min_lng <= b.max_lng && b.min_lng <= a.max_lng;

function archiveInfo(h: Header): ArchiveInfo {
  const zoom = Math.max(h.minZoom, Math.min(h.maxZoom, FTW_MAX_READ_ZOOM));
  const version = h.etag ? `etag:${h.etag}` : `bytes:${h.tileDataOffset + (h.tileDataLength ?? 0)}`;
  return { version, zoom, min_zoom: h.minZoom, max_zoom: h.maxZoom, bounds: { min_lat: h.minLat, min_lng: h.minLon, max_lat: h.maxLat, max_lng: h.maxLon } };
}

function failure(e: unknown, stats: ReadStats): FieldRead {
  if (e instanceof UpstreamError) {
    if (e.kind === 'timeout') return { status: 'timeout', reason: `ftw: ${e.message}`, stats };
    if (e.kind === 'format') return { status: 'error', reason: `ftw: ${e.message}`, format_mismatch: true, stats };
    return { status: 'error', reason: `ftw: ${e.message}`, stats };
  }
  if (e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError')) return { status: 'timeout', reason: 'ftw: aborted', stats };
  return { status: 'error', reason: `internal: ftw: ${e instanceof Error ? e.message : String(e)}`, stats };
}

const piecesBytes = (layers: Map<string, PolygonPiece[]>) => {
  let n = 64;
  for (const ps of layers.values()) for (const p of ps) for (const r of p.rings) n += 32 + r.length * 40;
  return n;
};

export const ftwConnector: ConnectorFactory = (deps) => {
  const url = deps.baseUrl(FTW_SOURCE);
  const directories = new DirectoryCache();
  const tiles = new BoundedCache<string, Map<string, PolygonPiece[]>>('ftw_tiles', { ...FTW_TILE_CACHE, bytesOf: piecesBytes });
  // Tiles being read: a read needing one waits for it instead of asking the archive again.
  const reading = new Map<string, Promise<Map<string, PolygonPiece[]>>>();

  async function readOnce(req: FieldReadRequest, stats: ReadStats): Promise<FieldRead> {
    const source = new UpstreamRangeSource(deps.client, url, { deadline: req.deadline, signal: req.signal, stats });
    const header = await directories.getHeader(source);
    if (header.tileType !== 1) throw new UpstreamError('format', `PMTiles: tile type ${header.tileType} is not vector (MVT)`);
    const archive = archiveInfo(header);
    const covering = tilesCovering(req.box, archive.zoom);
    if (!overlaps(req.box, archive.bounds)) {
      return { status: 'ok', archive, inside_bounds: false, tiles: { covering: covering.length, present: 0, from_cache: 0 }, layers: [], pieces: [], stats };
    }
    if (covering.length > req.maxTiles) return { status: 'too_many_tiles', zoom: archive.zoom, tiles: covering.length, max: req.maxTiles };
    const key = (t: { z: number; x: number; y: number }) => `${url}|${archive.version}|${t.z}/${t.x}/${t.y}`;
    const decoded = new Map<string, Map<string, PolygonPiece[]>>();
    let fromCache = 0;
    for (const t of covering) {
      const hit = tiles.get(key(t));
      if (hit) {
        decoded.set(key(t), hit);
        fromCache++;
      }
    }
    const missing = covering.filter((t) => !decoded.has(key(t)));
    const mine = missing.filter((t) => !reading.has(key(t)));
    if (mine.length > 0) {
      const batch = readTiles(directories, source, header, mine).then((reads) => {
        const out = new Map<string, Map<string, PolygonPiece[]>>();
        for (const r of reads) {
          const layers = r.bytes ? decodePolygons(r.bytes, r.z, r.x, r.y) : new Map<string, PolygonPiece[]>();
          tiles.set(key(r), layers);
          out.set(key(r), layers);
        }
        return out;
      });
      for (const t of mine) {
        const k = key(t);
        const p = batch.then((m) => m.get(k)!);
        reading.set(k, p);
        p.then(
          () => reading.delete(k),
          () => reading.delete(k),
        );
      }
    }
    // Taken before any await: a finished read leaves `reading` at once.
    const waits = missing.map((t) => reading.get(key(t))!);
    (await Promise.all(waits)).forEach((layers, i) => decoded.set(key(missing[i]), layers));
    const names = new Set<string>();
    const pieces: PolygonPiece[] = [];
    let present = 0;
    for (const t of covering) {
      const layers = decoded.get(key(t))!;
      if (layers.size > 0) present++;
      for (const [name, ps] of layers) {
        names.add(name);
        pieces.push(...ps);
      }
    }
    return { status: 'ok', archive, inside_bounds: true, tiles: { covering: covering.length, present, from_cache: fromCache }, layers: [...names].sort(), pieces, stats };
  }

  return {
    key: FTW_SOURCE,
    bands: [],
    history: false,
    url,
    // No band is served: field polygons are read through readFields, never as cell facts.
    async materialize() {
      return { status: 'absence', reason: 'unavailable_capability', provenance: { source: FTW_SOURCE }, fn: 'ftw.fields@1', detail: 'field boundaries are served by /v1/field_boundaries' };
    },
    async readFields(req) {
      const stats: ReadStats = { requests: 0, bytes: 0 };
      try {
        return await readOnce(req, stats);
      } catch (e) {
        if (!(e instanceof EtagMismatch)) return failure(e, stats);
        // The archive was replaced while it was read: forget its header and read it again, once.
        await directories.invalidate(new UpstreamRangeSource(deps.client, url, { deadline: req.deadline, stats }));
        try {
          return await readOnce(req, stats);
        } catch (e2) {
          return failure(e2, stats);
        }
      }
    },
  } satisfies FieldBoundaryConnector;
};
