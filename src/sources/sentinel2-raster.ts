/**
 * Sentinel-2 L2A over an area (band_raster, docs/rasters.md): the scene whose footprint covers a
 * whole lat/lng box, chosen through STAC as the least cloudy near a date, and window reads of one
 * reflectance asset in the scene's own grid (its UTM zone, native resolution, no resampling)
 * fetching only the COG blocks that cover the window. The grid arithmetic (which window a box
 * needs, the grid file) is the caller's; this file knows STAC items and COGs.
 */
import type { CogReader, CogReadOptions } from './cog/reader.js';
import { formatError } from './cog/tiff.js';
import type { WindowRead, PixelWindow } from './cog/window.js';
import { UpstreamError, type UpstreamClient } from './http.js';
import { isoSecond } from './cog/outcome.js';
import { reflectanceOf, type ReflectanceRule } from './s2-reflectance.js';
import { assetUrl, itemEpsg, stacSearch, type StacItem } from './stac-search.js';

const COLLECTION = 'sentinel-2-l2a';
const DAY_MS = 86_400_000;
/** Half-widths (days) of the windows around the date searched in turn: the nearer window first. */
export const RASTER_SEARCH_DAYS: readonly number[] = [15, 45];
/** Items asked for per search (a point sees 6 to 12 items a month: two orbits, overlapping tiles). */
const SEARCH_LIMIT = 100;

/** A lat/lng box (degrees, WGS 84), min < max on both axes. */
export interface LatLngBox {
  min_lat: number;
  min_lng: number;
  max_lat: number;
  max_lng: number;
}

/** The scene chosen for a box. */
export interface BoxScene {
  item: StacItem;
  id: string;
  /** Capture time, ISO 8601 UTC to the second. */
  datetime: string;
  capturedMs: number;
  /** eo:cloud_cover of the whole item (%), null when the item does not say. */
  cloud_cover: number | null;
  processing_baseline: string | null;
}

export type BoxSceneChoice =
  | { kind: 'scene'; scene: BoxScene; candidates: number }
  | { kind: 'none'; reason: 'outside_coverage' | 'no_scene_near_date'; detail: string; searched: { from: string; to: string } };

/** An asset's grid: where its pixels are, and how its DNs become reflectance. */
export interface AssetGrid {
  href: string;
  epsg: number;
  transform: readonly [number, number, number, number, number, number];
  width: number;
  height: number;
  /** Values that mean "no data" besides the file's own (the asset's raster:bands nodata). */
  nodata: number[];
  rule: ReflectanceRule;
}

export interface ReadOptions {
  deadline: number;
  signal?: AbortSignal;
}

/** Zone (1..60) of the UTM grid a longitude falls in. */
export function utmZoneOf(lng: number): number {
  return Math.min(60, Math.floor((lng + 180) / 6) + 1);
}

/** Whether (lng, lat) lies inside a GeoJSON ring (even-odd rule; a point on an edge may go either way). */
function inRing(ring: unknown, lng: number, lat: number): boolean {
  if (!Array.isArray(ring)) return false;
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i] as number[];
    const [xj, yj] = ring[j] as number[];
    if (yi > lat !== yj > lat && lng < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/**
 * Whether the item's footprint holds the whole box: its GeoJSON Polygon or MultiPolygon when it
 * has one (the data footprint, which on Earth Search excludes the no-data part of a tile), else
 * its bbox. The four corners and the centre must all be inside.
 */
export function coversBox(item: StacItem, box: LatLngBox): boolean {
  const pts: Array<[number, number]> = [
    [box.min_lng, box.min_lat],
    [box.max_lng, box.min_lat],
    [box.min_lng, box.max_lat],
    [box.max_lng, box.max_lat],
    [(box.min_lng + box.max_lng) / 2, (box.min_lat + box.max_lat) / 2],
  ];
  const g = (item as { geometry?: { type?: string; coordinates?: unknown } }).geometry;
  if (g && (g.type === 'Polygon' || g.type === 'MultiPolygon') && Array.isArray(g.coordinates)) {
    const polygons = (g.type === 'Polygon' ? [g.coordinates] : g.coordinates) as unknown[][];
    const inPolygon = (p: unknown[], lng: number, lat: number) => inRing(p[0], lng, lat) && !p.slice(1).some((hole) => inRing(hole, lng, lat));
    return pts.every(([lng, lat]) => polygons.some((p) => Array.isArray(p) && inPolygon(p, lng, lat)));
  }
  const b = item.bbox;
  if (!b || b.length < 4) return false;
  const [w, s, e, n] = b.length >= 6 ? [b[0], b[1], b[3], b[4]] : b;
  return pts.every(([lng, lat]) => lng >= w && lng <= e && lat >= s && lat <= n);
}

/** Why no scene was chosen from the searches of `[from, to]` (`seenAny`: some item lay over the box centre). */
function noScene(from: number, to: number, seenAny: boolean): BoxSceneChoice {
  const searched = { from: isoSecond(from), to: isoSecond(to) };
  const span = `${searched.from.slice(0, 10)} to ${searched.to.slice(0, 10)}`;
  if (!seenAny) return { kind: 'none', reason: 'no_scene_near_date', detail: `no Sentinel-2 L2A scene over the box centre from ${span}`, searched };
  return {
    kind: 'none',
    reason: 'outside_coverage',
    detail: `no Sentinel-2 L2A scene from ${span} covers the whole box (the box may straddle two tiles' footprints, or lie at a swath edge)`,
    searched,
  };
}

function sceneOf(item: StacItem): BoxScene {
  const cc = item.properties['eo:cloud_cover'];
  const baseline = item.properties['s2:processing_baseline'] ?? item.properties['sentinel:processing_baseline'];
  const capturedMs = Date.parse(item.properties.datetime);
  return {
    item,
    id: item.id,
    datetime: isoSecond(capturedMs),
    capturedMs,
    cloud_cover: typeof cc === 'number' && Number.isFinite(cc) ? cc : null,
    processing_baseline: typeof baseline === 'string' || typeof baseline === 'number' ? String(baseline) : null,
  };
}

/**
 * The order of candidates (first is chosen): least eo:cloud_cover (unknown counts as 100), then
 * nearest to the date, then the tile in the UTM zone of the box centre (a box near a zone edge is
 * covered by the tiles of both zones), then the smaller id. A total order: the same candidates
 * always give the same scene.
 */
export function sceneOrder(targetMs: number, centreZone: number, assetKey: string) {
  const zone = (s: BoxScene) => {
    const e = itemEpsg(s.item, s.item.assets[assetKey]);
    return e !== undefined && e % 100 === centreZone ? 0 : 1;
  };
  return (a: BoxScene, b: BoxScene): number =>
    (a.cloud_cover ?? 100) - (b.cloud_cover ?? 100) || Math.abs(a.capturedMs - targetMs) - Math.abs(b.capturedMs - targetMs) || zone(a) - zone(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Band-over-an-area reads of the Sentinel-2 connector (one per connector, sharing its COG reader). */
export interface Sentinel2Raster {
  /** The scene for `box` near `targetMs` (never after `nowMs`) that has `assetKey`, or why there is none. */
  chooseScene(box: LatLngBox, assetKey: string, targetMs: number, nowMs: number, o: ReadOptions): Promise<BoxSceneChoice>;
  /**
   * The scene for `box` captured within `[fromMs, toMs]` (one search, no widening; band_cube's
   * time slots), in the same order with `targetMs` as the date; `no_scene_near_date` when nothing
   * lies over the box centre in the window.
   */
  chooseSceneIn(box: LatLngBox, assetKey: string, fromMs: number, toMs: number, targetMs: number, o: ReadOptions): Promise<BoxSceneChoice>;
  /** The grid of `assetKey` of the chosen scene (its COG header: one range request, then cached). */
  assetGrid(scene: BoxScene, assetKey: string, o: ReadOptions): Promise<AssetGrid>;
  /** The grid of the COG at `href` (a rebuild knows the href from the record, not the item). */
  gridAt(href: string, epsgHint: number | undefined, o: ReadOptions): Promise<Omit<AssetGrid, 'nodata' | 'rule'>>;
  /** The raw samples of `window` of the COG at `href`: only the blocks covering it are fetched. */
  readWindow(href: string, window: PixelWindow, epsg: number, nodata: readonly number[], o: ReadOptions): Promise<WindowRead>;
  /** STAC searches sent (tests, benchmarks). */
  readonly searches: number;
}

/** The band-over-an-area reader over the connector's client, base URL and COG reader. */
export function sentinel2Raster(client: UpstreamClient, base: string, reader: CogReader): Sentinel2Raster {
  let searches = 0;
  const cogOpts = (o: ReadOptions, epsgHint?: number, nodata: readonly number[] = []): CogReadOptions => ({ deadline: o.deadline, signal: o.signal, epsgHint, nodata });

  async function header(href: string, epsgHint: number | undefined, o: ReadOptions) {
    const h = await reader.header(href, cogOpts(o, epsgHint));
    if (!h) throw new UpstreamError('http', `HTTP 404 from ${new URL(href).host}: ${new URL(href).pathname} is gone`, 404);
    return h;
  }

  /** One search of `[from, to]`: how many items it saw, and those covering the box in choice order. */
  async function searchWindow(box: LatLngBox, assetKey: string, from: number, to: number, targetMs: number, o: ReadOptions): Promise<{ seen: number; covering: BoxScene[] }> {
    const lat = (box.min_lat + box.max_lat) / 2;
    const lng = (box.min_lng + box.max_lng) / 2;
    searches++;
    const items = await stacSearch(client, base, { collection: COLLECTION, lat, lng, startMs: from, endMs: to, limit: SEARCH_LIMIT }, o);
    const covering = items
      .filter((it) => it.assets[assetKey] !== undefined && coversBox(it, box))
      .map(sceneOf)
      .filter((s) => Number.isFinite(s.capturedMs));
    return { seen: items.length, covering: covering.sort(sceneOrder(targetMs, utmZoneOf(lng), assetKey)) };
  }

  async function gridAt(href: string, epsgHint: number | undefined, o: ReadOptions) {
    const h = await header(href, epsgHint, o);
    const geo = h.geo(epsgHint);
    return { href, epsg: geo.epsg, transform: geo.transform, width: h.tiff.width, height: h.tiff.height };
  }

  return {
    get searches() {
      return searches;
    },
    async chooseScene(box, assetKey, targetMs, nowMs, o) {
      let seenAny = false;
      let from = targetMs;
      let to = targetMs;
      for (const days of RASTER_SEARCH_DAYS) {
        from = Math.max(0, targetMs - days * DAY_MS);
        to = Math.min(nowMs, targetMs + days * DAY_MS);
        if (to < from) break;
        const found = await searchWindow(box, assetKey, from, to, targetMs, o);
        seenAny ||= found.seen > 0;
        if (found.covering.length > 0) return { kind: 'scene', scene: found.covering[0], candidates: found.covering.length };
      }
      return noScene(from, to, seenAny);
    },
    async chooseSceneIn(box, assetKey, fromMs, toMs, targetMs, o) {
      const found = await searchWindow(box, assetKey, fromMs, toMs, targetMs, o);
      if (found.covering.length > 0) return { kind: 'scene', scene: found.covering[0], candidates: found.covering.length };
      return noScene(fromMs, toMs, found.seen > 0);
    },
    async assetGrid(scene, assetKey, o) {
      const href = assetUrl(scene.item, assetKey, base);
      const asset = scene.item.assets[assetKey];
      const nd = asset?.['raster:bands']?.[0]?.nodata;
      const g = await gridAt(href, itemEpsg(scene.item, asset), o);
      if (g.transform[1] !== 0 || g.transform[3] !== 0 || !(g.transform[0] > 0) || !(g.transform[4] < 0)) {
        throw formatError(`asset ${assetKey} of ${scene.id} is not a north-up grid (transform ${g.transform.join(', ')})`);
      }
      return { ...g, nodata: typeof nd === 'number' ? [nd] : [], rule: reflectanceOf(scene.item, assetKey) };
    },
    gridAt,
    async readWindow(href, window, epsg, nodata, o) {
      const h = await header(href, epsg, o);
      return reader.window(h, window, epsg, cogOpts(o, epsg, nodata), href);
    },
  };
}
