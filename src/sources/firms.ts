/**
 * NASA FIRMS active fires (source nasa_firms): the public global 24-hour CSV files of the VIIRS
 * 375 m active-fire product from Suomi NPP and NOAA-20, read without a key at
 * `<base>/data/active_fire/{suomi-npp-viirs-c2|noaa-20-viirs-c2}/csv/{SUOMI_VIIRS_C2|J1_VIIRS_C2}_Global_24h.csv`
 * → `fire.active_count_10km`, `fire.max_frp_10km`, `fire.nearest_km` (fast tempo, present only).
 *
 * Each file is pulled once and shared by every cell: it is kept parsed (typed arrays and a 1°
 * grid index, firms-index.ts) and asked again at most every REFRESH_MS, conditionally
 * (If-None-Match / If-Modified-Since, so an unchanged file costs a 304). A body is bounded in
 * bytes and rows. A refresh that fails is a typed failure for the reads waiting on it (nothing is
 * signed) and is not retried for FAILURE_HOLD_MS, so a dead feed is not asked once per cell.
 *
 * The files cover the whole globe, so no detection near a cell is an observation: the count band
 * signs a real 0. The FRP and nearest-distance bands have nothing to measure then, and sign an
 * `unavailable_capability` absence that says so. A file that is not the documented CSV is
 * `source_format_mismatch`; an unreachable one `source_fetch_failed`.
 */
import { tslotOf } from '../protocol/tslot.js';
import type { ConnectorDeps, MaterializeOutcome, Materializer, MaterializeRequest, Provenance } from './contract.js';
import { concatDetections, type Detections, FireGrid, parseFirmsCsv } from './firms-index.js';
import { UpstreamError } from './http.js';
import { FormatMismatch, roundTo } from './json-helpers.js';
import { typedFailure } from './typed-failure.js';

const SOURCE = 'nasa_firms';
const VERSION = 'VIIRS 375 m C2 NRT';

/** The feeds read, in this order (a detection's `feed` indexes this list). */
export const FIRMS_FEEDS: ReadonlyArray<{ path: string; satellite: string }> = [
  { path: 'data/active_fire/suomi-npp-viirs-c2/csv/SUOMI_VIIRS_C2_Global_24h.csv', satellite: 'Suomi NPP' },
  { path: 'data/active_fire/noaa-20-viirs-c2/csv/J1_VIIRS_C2_Global_24h.csv', satellite: 'NOAA-20' },
];

/** The neighbourhood of the count and FRP bands (their keys say it), km. */
export const FIRE_RADIUS_KM = 10;
/** How far the nearest-detection band looks, km. */
export const NEAREST_SEARCH_KM = 100;
/** A feed is asked again at most this often (FIRMS refreshes the files within the hour). */
export const REFRESH_MS = 30 * 60_000;
/** After a failed refresh, reads fail at once for this long instead of asking again. */
export const FAILURE_HOLD_MS = 60_000;
/** Largest file accepted (a global 24 h VIIRS file is a few MB to a few tens of MB). */
export const MAX_FEED_BYTES = 96 * 1024 * 1024;
/** Largest number of detections kept per file. */
export const MAX_FEED_ROWS = 1_500_000;

/** Band → what it reports about the detections near the cell. */
const BANDS = {
  'fire.active_count_10km': 'count',
  'fire.max_frp_10km': 'max_frp',
  'fire.nearest_km': 'nearest',
} as const;

interface FeedState {
  detections: Detections;
  etag?: string;
  lastModified?: string;
  /** When the upstream last confirmed this content (200 or 304), ms. */
  checkedAt: number;
}

/** The parsed feeds and their index, as one snapshot. */
interface Snapshot {
  grid: FireGrid;
  checkedAt: number;
}

/** Options for tests: the clock and the refresh interval. */
export interface FirmsOptions {
  now?: () => number;
  refreshMs?: number;
}

/** The connector and its cache (exposed for tests). */
export interface FirmsConnector extends Materializer {
  /** Feed downloads that returned a body (not 304). */
  readonly stats: { downloads: number; notModified: number };
}

/** Factory of the FIRMS connector. */
export function firmsConnector(deps: ConnectorDeps, opts: FirmsOptions = {}): FirmsConnector {
  const base = deps.baseUrl(SOURCE);
  const now = opts.now ?? Date.now;
  const refreshMs = opts.refreshMs ?? REFRESH_MS;
  const feeds: Array<FeedState | undefined> = FIRMS_FEEDS.map(() => undefined);
  let snapshot: Snapshot | undefined;
  let refreshing: Promise<Snapshot> | undefined;
  let failed: { until: number; error: unknown } | undefined;
  const stats = { downloads: 0, notModified: 0 };

  /** Asks one feed (conditionally when it is held) and returns its state. */
  const pullFeed = async (i: number, deadline: number): Promise<FeedState> => {
    const held = feeds[i];
    const headers: Record<string, string> = { accept: 'text/csv, text/plain;q=0.9, */*;q=0.1' };
    if (held?.etag) headers['if-none-match'] = held.etag;
    if (held?.lastModified) headers['if-modified-since'] = held.lastModified;
    const url = `${base}/${FIRMS_FEEDS[i]!.path}`;
    const res = await deps.client.request(url, { headers, deadline, acceptStatus: [304], maxBytes: MAX_FEED_BYTES });
    if (res.status === 304) {
      if (!held) throw new FormatMismatch(`${FIRMS_FEEDS[i]!.path}: 304 Not Modified to an unconditional request`);
      stats.notModified++;
      return { ...held, checkedAt: now() };
    }
    stats.downloads++;
    const detections = parseFirmsCsv(new TextDecoder().decode(res.body), i, MAX_FEED_ROWS);
    return { detections, etag: res.headers.get('etag') ?? undefined, lastModified: res.headers.get('last-modified') ?? undefined, checkedAt: now() };
  };

  /**
   * One refresh shared by every caller, with its own budget (two attempts of the client's
   * timeout) rather than the first caller's: a caller that gives up gets its timeout outcome from
   * the materializer, and the download still completes for the callers after it.
   */
  const refresh = async (): Promise<Snapshot> => {
    const deadline = Date.now() + 2 * deps.client.opts.timeoutMs;
    const states = await Promise.all(FIRMS_FEEDS.map((_, i) => pullFeed(i, deadline)));
    const changed = states.some((s, i) => s.detections !== feeds[i]?.detections);
    states.forEach((s, i) => (feeds[i] = s));
    const checkedAt = Math.min(...states.map((s) => s.checkedAt));
    const grid = changed || !snapshot ? new FireGrid(concatDetections(states.map((s) => s.detections))) : snapshot.grid;
    snapshot = { grid, checkedAt };
    return snapshot;
  };

  /** The current snapshot: the held one while fresh, else one refresh shared by every caller. */
  const current = (): Promise<Snapshot> => {
    const t = now();
    if (snapshot && t - snapshot.checkedAt < refreshMs) return Promise.resolve(snapshot);
    if (failed && t < failed.until) return Promise.reject(failed.error);
    refreshing ??= refresh()
      .then(
        (s) => {
          failed = undefined;
          return s;
        },
        (e: unknown) => {
          // A timeout is not held: the next caller may have more patience than this download had.
          const timedOut = e instanceof UpstreamError && e.kind === 'timeout';
          failed = timedOut ? undefined : { until: now() + FAILURE_HOLD_MS, error: e };
          throw e;
        },
      )
      .finally(() => (refreshing = undefined));
    return refreshing;
  };

  const outcome = (req: MaterializeRequest, s: Snapshot, tslot: number): MaterializeOutcome => {
    const what = BANDS[req.band.key as keyof typeof BANDS];
    const d = s.grid.d;
    const fn = req.band.function;
    const provenance: Provenance = {
      source: SOURCE,
      ref: FIRMS_FEEDS.map((f) => f.path.slice(f.path.lastIndexOf('/') + 1)).join('+'),
      version: VERSION,
      ...(Number.isNaN(d.newest) ? {} : { captured_at: iso(d.newest) }),
    };
    const window = { window: '24h', detections_in_feeds: d.n, feeds_checked_at: iso(s.checkedAt) };
    const { lat, lng } = req.center;
    if (what === 'nearest') {
      const near = s.grid.within(lat, lng, NEAREST_SEARCH_KM)[0];
      if (!near) {
        return {
          status: 'absence',
          reason: 'unavailable_capability',
          provenance,
          fn,
          tslot,
          detail: `no FIRMS detection within ${NEAREST_SEARCH_KM} km of the cell in the last 24 h (fire.active_count_10km is 0)`,
        };
      }
      const i = near.index;
      return {
        status: 'value',
        value: roundTo(near.km, 3),
        unit: req.band.unit,
        provenance,
        fn,
        tslot,
        args: { ...window, search_radius_km: NEAREST_SEARCH_KM, detection: detectionArgs(d, i) },
      };
    }
    const hits = s.grid.within(lat, lng, FIRE_RADIUS_KM);
    if (what === 'count') {
      return { status: 'value', value: hits.length, unit: req.band.unit, provenance, fn, tslot, args: { ...window, radius_km: FIRE_RADIUS_KM } };
    }
    if (hits.length === 0) {
      return {
        status: 'absence',
        reason: 'unavailable_capability',
        provenance,
        fn,
        tslot,
        detail: `no FIRMS detection within ${FIRE_RADIUS_KM} km of the cell in the last 24 h: no fire radiative power to report (the count is 0)`,
      };
    }
    let best = hits[0]!.index;
    for (const h of hits) if (d.frp[h.index]! > d.frp[best]! || (d.frp[h.index] === d.frp[best] && d.acquired[h.index]! > d.acquired[best]!)) best = h.index;
    return {
      status: 'value',
      value: roundTo(d.frp[best]!, 2),
      unit: req.band.unit,
      provenance,
      fn,
      tslot,
      args: { ...window, radius_km: FIRE_RADIUS_KM, detections: hits.length, detection: detectionArgs(d, best) },
    };
  };

  return {
    key: SOURCE,
    bands: Object.keys(BANDS),
    history: false,
    stats,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const present = tslotOf(now() / 1000, req.band.tempo);
      if (req.tslot !== present) {
        return { status: 'error', reason: `${SOURCE}: the FIRMS 24 h files describe the present only (tslot ${req.tslot} asked, present ${present}); past days are not fetched` };
      }
      try {
        return outcome(req, await current(), present);
      } catch (e) {
        return typedFailure(SOURCE, e);
      }
    },
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** What a fact says about the detection behind it (enough to find the row in the file again). */
function detectionArgs(d: Detections, i: number): Record<string, unknown> {
  return { lat: d.lat[i], lng: d.lng[i], frp_mw: d.frp[i], acquired_at: iso(d.acquired[i]!), satellite: FIRMS_FEEDS[d.feed[i]!]!.satellite };
}
