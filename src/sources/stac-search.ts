/**
 * STAC API item search (STAC API 1.0 Item Search, POST /search) shared by the Sentinel-1 and
 * Sentinel-2 connectors: request body, response validation (a FeatureCollection of Items with
 * properties.datetime and assets), the item's CRS (projection extension `proj:epsg` or
 * `proj:code`, item- or asset-level) and time windows in tslots.
 */
import { UpstreamError, type UpstreamClient } from './http.js';
import { formatError } from './cog/tiff.js';
import { TEMPO_UNIT_S, type Tempo } from '../protocol/tslot.js';

/** The `raster:bands` entry of an asset (raster extension). */
export interface StacRasterBand {
  scale?: number;
  offset?: number;
  nodata?: number | string;
  data_type?: string;
}

/** A STAC asset (href plus the raster and projection extension fields read here). */
export interface StacAsset {
  href: string;
  type?: string;
  'raster:bands'?: StacRasterBand[];
  'proj:epsg'?: number | null;
  'proj:code'?: string | null;
  [k: string]: unknown;
}

/** A STAC Item as returned by a search. */
export interface StacItem {
  id: string;
  collection?: string;
  bbox?: number[];
  properties: { datetime: string; [k: string]: unknown };
  assets: Record<string, StacAsset>;
}

/** Body of a point search: newest first, inside `[startMs, endMs]`. */
export interface StacSearch {
  collection: string;
  lat: number;
  lng: number;
  startMs: number;
  endMs: number;
  limit: number;
  /** Earth Search and Planetary Computer accept the query extension. */
  query?: Record<string, Record<string, unknown>>;
}

/** The JSON body of a STAC point search (Item Search with `intersects`, `sortby`). */
export function searchBody(s: StacSearch): Record<string, unknown> {
  const body: Record<string, unknown> = {
    collections: [s.collection],
    intersects: { type: 'Point', coordinates: [s.lng, s.lat] },
    datetime: `${new Date(s.startMs).toISOString()}/${new Date(s.endMs).toISOString()}`,
    sortby: [{ field: 'properties.datetime', direction: 'desc' }],
    limit: s.limit,
  };
  if (s.query) body.query = s.query;
  return body;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Validates one item; a malformed item makes the whole page a format mismatch. */
export function checkItem(x: unknown, i: number): StacItem {
  if (!isObject(x) || typeof x.id !== 'string' || !isObject(x.properties) || !isObject(x.assets)) {
    throw formatError(`STAC feature ${i} is not an Item (id, properties, assets)`);
  }
  const dt = x.properties.datetime;
  if (typeof dt !== 'string' || !Number.isFinite(Date.parse(dt))) throw formatError(`STAC item ${x.id} has no valid properties.datetime`);
  for (const [k, a] of Object.entries(x.assets)) {
    if (!isObject(a) || typeof a.href !== 'string') throw formatError(`STAC item ${x.id} asset ${k} has no href`);
  }
  return x as unknown as StacItem;
}

/** POST `${base}/search`; the features, newest first (sorted again here: not every API honours sortby). */
export async function stacSearch(client: UpstreamClient, base: string, s: StacSearch, o: { deadline?: number; signal?: AbortSignal }): Promise<StacItem[]> {
  const { data } = await client.json<unknown>(`${base}/search`, { method: 'POST', body: JSON.stringify(searchBody(s)), deadline: o.deadline, signal: o.signal });
  if (!isObject(data) || !Array.isArray(data.features)) throw formatError('STAC search answer is not a FeatureCollection');
  const items = data.features.map(checkItem);
  return items.sort((a, b) => Date.parse(b.properties.datetime) - Date.parse(a.properties.datetime));
}

/** EPSG code from `proj:epsg` or `proj:code` ("EPSG:32633"), asset level first. */
export function itemEpsg(item: StacItem, asset?: StacAsset): number | undefined {
  for (const src of [asset, item.properties] as Array<Record<string, unknown> | undefined>) {
    if (!src) continue;
    const e = src['proj:epsg'];
    if (typeof e === 'number' && Number.isInteger(e)) return e;
    const c = src['proj:code'];
    if (typeof c === 'string') {
      const m = /^EPSG:(\d+)$/i.exec(c.trim());
      if (m) return Number(m[1]);
    }
  }
  return undefined;
}

/** Resolves an asset href against the item's source and refuses non-HTTP schemes (s3://…). */
export function assetUrl(item: StacItem, key: string, base: string): string {
  const a = item.assets[key];
  if (!a) throw formatError(`STAC item ${item.id} has no ${key} asset`);
  let u: URL;
  try {
    u = new URL(a.href, `${base}/`);
  } catch {
    throw formatError(`STAC item ${item.id} asset ${key} href is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UpstreamError('egress', `asset ${key} of ${item.id} is at ${u.protocol}// which this responder does not fetch`);
  return u.href;
}

/** The [start, end] (ms) of tslot `tslot` widened `back` slots into the past, capped at now. */
export function slotWindow(tslot: number, tempo: Tempo, back: number, nowMs = Date.now()): [number, number] {
  const unit = TEMPO_UNIT_S[tempo] * 1000;
  const start = Math.max(0, (tslot - back) * unit);
  const end = Math.min((tslot + 1) * unit - 1, nowMs);
  return [start, end];
}

/** Why a tslot cannot have scenes yet (it begins in the future), or undefined. */
export function notBegun(tslot: number, tempo: Tempo, nowMs = Date.now()): string | undefined {
  const start = tslot * TEMPO_UNIT_S[tempo] * 1000;
  return start > nowMs ? `not yet observed: tslot ${tslot} begins ${new Date(start).toISOString()}` : undefined;
}
