/**
 * Sentinel-1 RTC through Microsoft Planetary Computer (source planetary_computer_s1): STAC
 * search of `sentinel-1-rtc` at the cell centre, newest first; asset reads need a SAS token
 * from the token endpoint (`/api/sas/v1/token/sentinel-1-rtc`, answer `{"token": "…",
 * "msft:expiry": "…"}`), appended to the asset href as its query. Gamma0 is linear power:
 * value = 10·log10(x) dB; x ≤ 0 is an absence, and a nodata pixel (edge of swath) moves on to
 * the next scene. VV and VH of one cell and tslot come from one search and one scene.
 */
import { BoundedCache } from '../lib/cache.js';
import type { Materializer, MaterializeOutcome, MaterializeRequest, ConnectorDeps, ConnectorFactory } from './contract.js';
import { CogReader } from './cog/reader.js';
import { failureOutcome, float32Text, round } from './cog/outcome.js';
import { formatError } from './cog/tiff.js';
import { UpstreamError } from './http.js';
import { assetUrl, itemEpsg, notBegun, slotWindow, stacSearch, type StacItem } from './stac-search.js';
import { tslotOf } from '../protocol/tslot.js';

export const SOURCE = 'planetary_computer_s1';
export const COLLECTION = 'sentinel-1-rtc';
const POLARISATION: Readonly<Record<string, string>> = { 's1.vv_db': 'vv', 's1.vh_db': 'vh' };
/** Lookback steps in tslots before the requested one. */
const LOOKBACK = [0, 1];
const MAX_PROBES = 4;

/** The SAS token URL for a Planetary Computer STAC base (`…/api/stac/v1` → `…/api/sas/v1/token/…`). */
export function sasTokenUrl(base: string, collection = COLLECTION): string {
  const m = /^(.*)\/api\/stac\/v1$/.exec(base);
  return `${m ? m[1] : base}/api/sas/v1/token/${collection}`;
}

/** href with the SAS token as (part of) its query. */
export function signHref(href: string, token: string): string {
  return `${href}${href.includes('?') ? '&' : '?'}${token.replace(/^\?/, '')}`;
}

export interface Pick {
  item: StacItem;
  values: Record<string, PolRead>;
}
export type PickResult = { pick: Pick } | { absence: 'outside_coverage' | 'unavailable_capability'; detail: string; ref?: string };

/** Sentinel-1 connector internals exposed to tests. */
export interface Sentinel1Connector extends Materializer {
  reader: CogReader;
  readonly searches: number;
  readonly tokenFetches: number;
}

/** One VV/VH point read of a scene (nodata / asset absent collapse to their kind). */
export type PolRead = { kind: 'value'; value: number; col: number; row: number; epsg: number } | { kind: 'nodata' | 'outside' };

/**
 * The Sentinel-1 machinery shared by the connectors of `planetary_computer_s1` (backscatter and
 * change): STAC base, COG reader, SAS token, point reads of one polarisation and the cached
 * choice of the cell's scene for a tslot.
 */
export interface Sentinel1Core {
  base: string;
  reader: CogReader;
  sas(req: MaterializeRequest): Promise<string>;
  readPol(req: MaterializeRequest, item: StacItem, pol: string): Promise<PolRead>;
  pickFor(req: MaterializeRequest): Promise<PickResult>;
  /** A STAC search of `sentinel-1-rtc` at the cell centre (counted in `searches`). */
  search(req: MaterializeRequest, startMs: number, endMs: number, limit: number, query?: Record<string, Record<string, unknown>>): Promise<StacItem[]>;
  readonly searches: number;
  readonly tokenFetches: number;
}

export function sentinel1Core(deps: ConnectorDeps): Sentinel1Core {
  const base = deps.baseUrl(SOURCE);
  const reader = new CogReader(deps.client);
  const picks = new BoundedCache<string, Promise<PickResult>>('sentinel1_picks', { max: 2048, ttlMs: 10 * 60_000 });
  let token: { value: string; until: number } | undefined;
  let tokenFlight: Promise<string> | undefined;
  let searches = 0;
  let tokenFetches = 0;

  /** The SAS token, refreshed five minutes before its expiry (one fetch in flight at a time). */
  function sas(req: MaterializeRequest): Promise<string> {
    if (token && token.until > Date.now()) return Promise.resolve(token.value);
    tokenFlight ??= (async () => {
      tokenFetches++;
      const { data } = await deps.client.json<{ token?: unknown; 'msft:expiry'?: unknown }>(sasTokenUrl(base), { deadline: req.deadline, signal: req.signal });
      if (typeof data?.token !== 'string' || data.token.length === 0) throw formatError('SAS token answer has no token');
      const expiry = typeof data['msft:expiry'] === 'string' ? Date.parse(data['msft:expiry']) : NaN;
      token = { value: data.token, until: (Number.isFinite(expiry) ? expiry : Date.now() + 45 * 60_000) - 5 * 60_000 };
      return data.token;
    })().finally(() => {
      tokenFlight = undefined;
    });
    return tokenFlight;
  }

  async function readPol(req: MaterializeRequest, item: StacItem, pol: string): Promise<PolRead> {
    if (!item.assets[pol]) return { kind: 'outside' };
    const tok = await sas(req);
    const href = assetUrl(item, pol, base);
    const nodata = item.assets[pol]['raster:bands']?.[0]?.nodata;
    const r = await reader
      .readPoint(signHref(href, tok), req.center.lat, req.center.lng, {
        deadline: req.deadline,
        signal: req.signal,
        epsgHint: itemEpsg(item, item.assets[pol]),
        // The token changes; the blob does not: cache by the bare href.
        cacheKey: href,
        nodata: typeof nodata === 'number' ? [nodata] : [],
      })
      .catch((e: unknown) => {
        // A refused signature means the token went stale early: the next request fetches another.
        if (e instanceof UpstreamError && e.status === 403 && token?.value === tok) token = undefined;
        throw e;
      });
    if (r.kind === 'missing') throw formatError(`asset ${pol} of ${item.id} is missing`);
    return r.kind === 'value' ? r : { kind: r.kind };
  }

  async function readBoth(req: MaterializeRequest, item: StacItem): Promise<Pick> {
    const values: Pick['values'] = {};
    await Promise.all(
      Object.values(POLARISATION).map(async (pol) => {
        values[pol] = await readPol(req, item, pol);
      }),
    );
    return { item, values };
  }

  function search(req: MaterializeRequest, startMs: number, endMs: number, limit: number, query?: Record<string, Record<string, unknown>>): Promise<StacItem[]> {
    searches++;
    return stacSearch(deps.client, base, { collection: COLLECTION, lat: req.center.lat, lng: req.center.lng, startMs, endMs, limit, query }, req);
  }

  async function choose(req: MaterializeRequest): Promise<PickResult> {
    // The token is fetched alongside the search (it is needed as soon as a scene is found);
    // a failure here is reported by the read that needs it.
    sas(req).catch(() => undefined);
    const seen = new Set<string>();
    let probes = 0;
    for (const back of LOOKBACK) {
      const [start, end] = slotWindow(req.tslot, req.band.tempo, back);
      if (end < start) break;
      const items = await search(req, start, end, 10);
      for (const item of items) {
        if (seen.has(item.id) || probes >= MAX_PROBES) continue;
        seen.add(item.id);
        probes++;
        const pick = await readBoth(req, item);
        // A scene with any valid polarisation at the pixel is the cell's scene.
        if (Object.values(pick.values).some((v) => v.kind === 'value')) return { pick };
      }
    }
    if (seen.size === 0) return { absence: 'outside_coverage', detail: `no Sentinel-1 RTC scene covers the cell in tslots ${req.tslot - LOOKBACK.at(-1)!}..${req.tslot}` };
    return { absence: 'unavailable_capability', detail: `pixel is nodata in all ${seen.size} RTC scenes probed`, ref: [...seen][0] };
  }

  function pickFor(req: MaterializeRequest): Promise<PickResult> {
    const key = `${req.cell}|${req.tslot}`;
    const hit = picks.get(key);
    if (hit) return hit;
    const p = choose(req);
    picks.set(key, p);
    p.catch(() => picks.delete(key));
    return p;
  }

  return {
    base,
    reader,
    sas,
    readPol,
    pickFor,
    search,
    get searches() {
      return searches;
    },
    get tokenFetches() {
      return tokenFetches;
    },
  };
}

/** Connector for `s1.vv_db` and `s1.vh_db`. */
export const sentinel1Connector: ConnectorFactory = (deps) => {
  const core = sentinel1Core(deps);
  const { pickFor } = core;

  async function run(req: MaterializeRequest): Promise<MaterializeOutcome> {
    const fn = req.band.function;
    const pol = POLARISATION[req.band.key];
    if (!pol) return { status: 'error', reason: `internal: ${req.band.key} is not a Sentinel-1 band of this connector` };
    const future = notBegun(req.tslot, req.band.tempo);
    if (future) return { status: 'error', reason: future };
    const chosen = await pickFor(req);
    if ('absence' in chosen) return { status: 'absence', reason: chosen.absence, detail: chosen.detail, provenance: { source: SOURCE, ref: chosen.ref }, fn };
    const { item, values } = chosen.pick;
    const capturedMs = Date.parse(item.properties.datetime);
    const provenance = { source: SOURCE, ref: item.id, captured_at: new Date(capturedMs).toISOString().replace(/\.\d{3}Z$/, 'Z'), version: COLLECTION };
    const tslot = tslotOf(Math.floor(capturedMs / 1000), req.band.tempo);
    const v = values[pol];
    if (v.kind !== 'value')
      return {
        status: 'absence',
        reason: 'unavailable_capability',
        detail: `${pol.toUpperCase()} is ${v.kind === 'outside' ? 'not in' : 'nodata in'} scene ${item.id} at the pixel`,
        provenance,
        fn,
        tslot,
      };
    if (!(v.value > 0)) return { status: 'absence', reason: 'unavailable_capability', detail: `linear ${pol.toUpperCase()} backscatter ${v.value} ≤ 0 has no dB value`, provenance, fn, tslot };
    return {
      status: 'value',
      value: round(10 * Math.log10(v.value), 4),
      provenance,
      fn,
      tslot,
      args: { scene: item.id, polarisation: pol, linear: float32Text(v.value), pixel: [v.col, v.row], epsg: v.epsg, orbit_state: item.properties['sat:orbit_state'] ?? null },
    };
  }

  return sentinel1Materializer(core, Object.keys(POLARISATION), run);
};

/**
 * A Sentinel-1 materializer over a shared core: `run` computes the outcome of one request, and
 * anything it throws becomes the typed failure outcome (never a rejected promise).
 */
export function sentinel1Materializer(core: Sentinel1Core, bands: string[], run: (req: MaterializeRequest) => Promise<MaterializeOutcome>): Sentinel1Connector {
  return {
    key: SOURCE,
    bands,
    history: true,
    reader: core.reader,
    get searches() {
      return core.searches;
    },
    get tokenFetches() {
      return core.tokenFetches;
    },
    async materialize(req) {
      try {
        return await run(req);
      } catch (e) {
        return failureOutcome(e, `Sentinel-1 ${req.band.key}`);
      }
    },
  };
}
