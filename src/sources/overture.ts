/**
 * Overture Maps (source overture; release discovery through source overture_stac): buildings,
 * places and roads over a 1 km × 1 km window centred on the cell centre, read from the official
 * per-theme PMTiles archives `<tiles base>/<release>/<theme>.pmtiles` by range requests.
 *
 * A count inside a 10 m cell says nothing, so every band here describes the square kilometre
 * around the cell (the window: ±500 m in latitude and longitude, metres per degree on the WGS 84
 * ellipsoid, so it widens in degrees towards the poles):
 *
 * - `overture.building_count_1km`: buildings whose centroid lies in the window. A building cut by
 *   tile edges is joined by its id from every tile holding part of it (tiles next to the window are
 *   read when a building near the window goes on into them, at most COMPLETION_ROUNDS times);
 * - `overture.building_footprint_fraction_1km`: the geodesic area of the footprints inside the
 *   window over the window's geodesic area;
 * - `overture.place_count_1km`: points of interest in the window;
 * - `overture.road_length_km_1km`: road segments (subtype road) clipped to the window, geodesic km.
 *
 * Read zoom: each archive's maximum zoom, from its header. Overture's tiler keeps every building
 * and road segment with full geometry only there (z14 in its build; lower zooms drop and simplify
 * features a map does not need at that scale), so a lower zoom would silently count less.
 *
 * Absences: the archives cover the globe, so a window without features (or without tiles) is a
 * real 0. Only where Web Mercator tiles do not reach (beyond 85.05° N or S) or outside the bounds
 * an archive declares is a value an `outside_coverage` absence. An unreachable archive or
 * catalogue is `source_fetch_failed`, bytes that are not what they claim `source_format_mismatch`;
 * neither is signed. The release read is each fact's source version; past slots are not served
 * (Overture keeps only its recent releases).
 */
import { EtagMismatch, type Header } from 'pmtiles';
import { BoundedCache } from '../lib/cache.js';
import { tslotOf } from '../protocol/tslot.js';
import { round } from './cog/outcome.js';
import type { ConnectorDeps, ConnectorFactory, Materializer, MaterializeOutcome, MaterializeRequest, Provenance } from './contract.js';
import { UpstreamError } from './http.js';
import { ReleaseDiscovery } from './overture-release.js';
import {
  buildingsNear,
  countBuildings,
  countPlaces,
  decodedBytes,
  decodeTile,
  footprintInWindow,
  roadLengthInWindow,
  tilesToComplete,
  type DecodedTile,
  type OvertureTheme,
} from './overture-tiles.js';
import { DirectoryCache, UpstreamRangeSource, type ReadStats } from './pmtiles/archive.js';
import { boxAreaM2, MERCATOR_MAX_LAT, windowAround } from './pmtiles/geometry.js';
import { DecodedTiles, tileKey, tilesOfRect } from './pmtiles/tiles.js';
import { typedFailure } from './typed-failure.js';

export const OVERTURE_SOURCE = 'overture';
export const OVERTURE_STAC_SOURCE = 'overture_stac';
/** Side of the window, metres. */
export const OVERTURE_WINDOW_M = 1000;
/** Tiles one window may read (covering and completion together); a deeper archive is refused. */
export const MAX_WINDOW_TILES = 64;
/** Rounds of reading neighbouring tiles to complete the buildings near the window. */
export const COMPLETION_ROUNDS = 3;
/** Decoded tiles kept per process, weighed by their coordinates. */
export const OVERTURE_TILE_CACHE = { max: 4096, maxBytes: 192 * 1024 * 1024, ttlMs: 60 * 60_000 } as const;
/** Window measures kept per process (the two building bands of one cell share one read). */
const WINDOW_CACHE = { max: 8192, ttlMs: 10 * 60_000 } as const;

export const OVERTURE_BANDS: Readonly<Record<string, OvertureTheme>> = {
  'overture.building_count_1km': 'buildings',
  'overture.building_footprint_fraction_1km': 'buildings',
  'overture.place_count_1km': 'places',
  'overture.road_length_km_1km': 'transportation',
};

/** One window measured over one theme's archive. */
export type WindowMeasure =
  | { kind: 'outside'; release: string; detail: string }
  | {
      kind: 'measured';
      release: string;
      zoom: number;
      /** Tiles covering the window, and those read besides to complete buildings. */
      tiles: number;
      extra_tiles: number;
      buildings?: number;
      /** Buildings near the window still reaching unread tiles when the rounds ran out. */
      incomplete?: number;
      footprint_m2?: number;
      window_m2: number;
      places?: number;
      road_m?: number;
    };

/** The root catalogue's URL from the catalogue source's base (a URL ending in .json is the catalogue itself). */
export function catalogueUrl(base: string): string {
  return /\.json$/i.test(base) ? base : `${base}/catalog.json`;
}

/** The release catalogue failed (and no release was known): the failure is the catalogue source's. */
class CatalogueFailure extends Error {
  constructor(override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'CatalogueFailure';
  }
}

const is404 = (e: unknown) => e instanceof UpstreamError && e.kind === 'http' && e.status === 404;

export interface OvertureConnector extends Materializer {
  readonly tilesBase: string;
  readonly discovery: ReleaseDiscovery;
  /** The window around (lat, lng) measured over `theme` (tests and the connector). */
  measure(theme: OvertureTheme, lat: number, lng: number, budget: { deadline: number; signal?: AbortSignal }): Promise<WindowMeasure>;
}

export function overtureConnector(deps: ConnectorDeps, opts: { now?: () => number } = {}): OvertureConnector {
  const now = opts.now ?? Date.now;
  const tilesBase = deps.baseUrl(OVERTURE_SOURCE);
  const discovery = new ReleaseDiscovery(deps.client, catalogueUrl(deps.baseUrl(OVERTURE_STAC_SOURCE)), now);
  const directories = new DirectoryCache();
  const decoded = new DecodedTiles<DecodedTile>('overture_tiles', OVERTURE_TILE_CACHE, decodedBytes);
  // A release whose archive of a theme answered 404 (its tiles not published yet): read the one before.
  const absentArchives = new BoundedCache<string, true>('overture_absent_archives', { max: 64, ttlMs: 60 * 60_000 });
  const windows = new BoundedCache<string, WindowMeasure>('overture_windows', WINDOW_CACHE);
  const measuring = new Map<string, Promise<WindowMeasure>>();

  /** The archive of `theme` in the newest release that has one (at most one older release is tried). */
  async function open(theme: OvertureTheme, budget: { deadline: number; signal?: AbortSignal }, stats: ReadStats): Promise<{ release: string; source: UpstreamRangeSource; header: Header }> {
    const releases = await discovery.current().catch((e: unknown) => {
      throw new CatalogueFailure(e);
    });
    const tries = releases.all.slice(0, 2);
    for (const [i, release] of tries.entries()) {
      const url = `${tilesBase}/${release}/${theme}.pmtiles`;
      if (i + 1 < tries.length && absentArchives.get(url)) continue;
      const source = new UpstreamRangeSource(deps.client, url, { ...budget, stats });
      try {
        return { release, source, header: await directories.getHeader(source) };
      } catch (e) {
        if (!is404(e) || i + 1 >= tries.length) throw e;
        absentArchives.set(url, true);
      }
    }
    throw new UpstreamError('http', `no ${theme} archive in the releases the catalogue lists`, 404);
  }

  async function measureOnce(theme: OvertureTheme, lat: number, lng: number, budget: { deadline: number; signal?: AbortSignal }, stats: ReadStats): Promise<WindowMeasure> {
    const { release, source, header } = await open(theme, budget, stats);
    if (header.tileType !== 1) throw new UpstreamError('format', `PMTiles: ${theme} archive tile type ${header.tileType} is not vector (MVT)`);
    const zoom = header.maxZoom;
    const { box, rect } = windowAround(lat, lng, OVERTURE_WINDOW_M, zoom);
    const window_m2 = boxAreaM2(box);
    if (Math.abs(lat) > MERCATOR_MAX_LAT) return { kind: 'outside', release, detail: `latitude ${lat.toFixed(4)} lies beyond the Web Mercator tiles (85.05° N/S)` };
    if (box.max_lat < header.minLat || box.min_lat > header.maxLat || box.max_lng < header.minLon || box.min_lng > header.maxLon) {
      return { kind: 'outside', release, detail: `the window lies outside the bounds the ${theme} archive declares` };
    }
    const covering = tilesOfRect(rect, zoom);
    if (covering.length > MAX_WINDOW_TILES)
      throw new UpstreamError('format', `PMTiles: the ${theme} archive's maximum zoom ${zoom} needs ${covering.length} tiles for a 1 km window (at most ${MAX_WINDOW_TILES} are read)`);
    const decode = (bytes: Uint8Array | null, t: { z: number; x: number; y: number }) => decodeTile(theme, bytes, t);
    const all = (await decoded.get(directories, source, header, covering, decode)).tiles;
    const base = { kind: 'measured' as const, release, zoom, tiles: covering.length, window_m2 };
    if (theme === 'places') return { ...base, extra_tiles: 0, places: countPlaces(all, rect) };
    if (theme === 'transportation') return { ...base, extra_tiles: 0, road_m: roadLengthInWindow(all, rect) };
    const read = new Set(covering.map(tileKey));
    let near = buildingsNear(all, rect);
    let extra = 0;
    for (let round = 0; round < COMPLETION_ROUNDS; round++) {
      const need = tilesToComplete(near, read);
      if (need.length === 0 || read.size + need.length > MAX_WINDOW_TILES) break;
      all.push(...(await decoded.get(directories, source, header, need, decode)).tiles);
      for (const t of need) read.add(tileKey(t));
      extra += need.length;
      near = buildingsNear(all, rect);
    }
    const incomplete = [...near.values()].filter((ps) => tilesToComplete(new Map([['', ps]]), read).length > 0).length;
    return { ...base, extra_tiles: extra, buildings: countBuildings(near, rect), incomplete, footprint_m2: footprintInWindow(all, rect) };
  }

  async function measure(theme: OvertureTheme, lat: number, lng: number, budget: { deadline: number; signal?: AbortSignal }): Promise<WindowMeasure> {
    const stats: ReadStats = { requests: 0, bytes: 0 };
    try {
      return await measureOnce(theme, lat, lng, budget, stats);
    } catch (e) {
      if (!(e instanceof EtagMismatch)) throw e;
      // The archive was replaced while it was read: forget its header and read it again, once.
      for (const r of (await discovery.current()).all.slice(0, 2)) {
        await directories.invalidate(new UpstreamRangeSource(deps.client, `${tilesBase}/${r}/${theme}.pmtiles`, { ...budget, stats }));
      }
      return measureOnce(theme, lat, lng, budget, stats);
    }
  }

  /** One measure per (theme, cell) at a time, kept for a few minutes. */
  function measureCell(theme: OvertureTheme, req: MaterializeRequest): Promise<WindowMeasure> {
    const key = `${theme}|${req.cell}`;
    const hit = windows.get(key);
    if (hit) return Promise.resolve(hit);
    let p = measuring.get(key);
    if (!p) {
      p = measure(theme, req.center.lat, req.center.lng, { deadline: req.deadline, signal: req.signal })
        .then((m) => {
          windows.set(key, m);
          return m;
        })
        .finally(() => measuring.delete(key));
      measuring.set(key, p);
    }
    return p;
  }

  return {
    key: OVERTURE_SOURCE,
    bands: Object.keys(OVERTURE_BANDS),
    history: false,
    tilesBase,
    discovery,
    measure,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const theme = OVERTURE_BANDS[req.band.key];
      if (!theme) return { status: 'error', reason: `internal: ${OVERTURE_SOURCE}: band ${req.band.key} is not an Overture band` };
      const present = tslotOf(now() / 1000, req.band.tempo);
      if (req.tslot !== present) {
        return { status: 'error', reason: `${OVERTURE_SOURCE}: Overture keeps only its recent releases, so only the present slot is read (slot ${req.tslot} asked, present ${present})` };
      }
      let m: WindowMeasure;
      try {
        m = await measureCell(theme, req);
      } catch (e) {
        return e instanceof CatalogueFailure ? typedFailure(OVERTURE_STAC_SOURCE, e.cause) : typedFailure(OVERTURE_SOURCE, e);
      }
      return outcome(req, theme, m);
    },
  };
}

function outcome(req: MaterializeRequest, theme: OvertureTheme, m: WindowMeasure): MaterializeOutcome {
  const fn = req.band.function;
  const provenance: Provenance = { source: OVERTURE_SOURCE, ref: `${m.release}/${theme}.pmtiles`, version: m.release, captured_at: `${m.release.slice(0, 10)}T00:00:00Z` };
  if (m.kind === 'outside') return { status: 'absence', reason: 'outside_coverage', provenance, fn, detail: m.detail };
  const args: Record<string, unknown> = { window_m: OVERTURE_WINDOW_M, zoom: m.zoom, release: m.release, tiles: m.tiles };
  const value = (v: number, extra: Record<string, unknown> = {}): MaterializeOutcome => ({ status: 'value', value: v, unit: req.band.unit, provenance, fn, args: { ...args, ...extra } });
  switch (req.band.key) {
    case 'overture.building_count_1km':
      return value(m.buildings!, { extra_tiles: m.extra_tiles, ...(m.incomplete ? { incomplete_buildings: m.incomplete } : {}) });
    case 'overture.building_footprint_fraction_1km': {
      const f = m.footprint_m2! / m.window_m2;
      return value(round(Math.min(1, f), 4), { footprint_m2: round(m.footprint_m2!, 1), window_m2: round(m.window_m2, 1), ...(f > 1 ? { overlapping_footprints: true } : {}) });
    }
    case 'overture.place_count_1km':
      return value(m.places!);
    default:
      return value(round(m.road_m! / 1000, 3));
  }
}

/** The connector factory (sources/index.ts lists it). */
export const overtureConnectorFactory: ConnectorFactory = (deps) => overtureConnector(deps);
