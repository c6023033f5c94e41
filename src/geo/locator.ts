/**
 * The locate cascade (docs/locate.md, "The cascade"): wide-feature table, countries and admin-1,
 * embedded GeoNames cities, landmarks (one ranked offline pass), then the persistent cache of
 * network answers, then Photon, then Nominatim (at most one request per second per process), and
 * only then the fuzzy offline fallback. Failures map to the catalogue's codes (docs/errors.md):
 * - the offline tiers miss and no network geocoder is enabled → place_not_found (404): nobody
 *   else was asked, so enabling a geocoder (or another responder) might still know the place;
 * - a network geocoder answered (now, or recently: the cached miss) and no tier knows the place
 *   → no_geocoder_match (404): asking again unchanged does not help;
 * - every network tier failed in transport → source_fetch_failed (502).
 */
import { SvcError } from '../protocol/errors.js';
import { ANSWER_TTL_MS, MISS_TTL_MS, type GeoCache } from './geocache.js';
import { nominatimSearch, photonSearch, type JsonFetcher, type NetPlace } from './geocoders.js';
import { gazetteer, type Gazetteer } from './gazetteer.js';
import { describePoint, matchFuzzy, matchOffline } from './match.js';
import { normalizeName } from './normalize.js';
import { fromNetwork, fromOffline, fromPoint, type Resolution } from './resolution.js';

export interface LocatorOptions {
  /** Transport for the network tiers (the service's UpstreamClient); none → offline only. */
  http?: JsonFetcher;
  /** Base URLs; undefined disables that tier. */
  photonBase?: string;
  nominatimBase?: string;
  /** The persistent cache tier (the store's, or an in-process one); its maker closes it. */
  cache: GeoCache;
  /** Minimum spacing of Nominatim requests (its usage policy: 1 per second). */
  nominatimIntervalMs?: number;
  /** Budget of the network tiers per locate call. */
  timeoutMs: number;
}

export interface Locator {
  readonly networkEnabled: boolean;
  readonly cache: GeoCache;
  /** Resolve a free-text place name through the cascade. */
  resolveName(text: string, opts?: { deadline?: number }): Promise<Resolution>;
  /** Resolve a coordinate pair (already validated). */
  resolvePoint(lat: number, lng: number): Resolution;
}

/**
 * Serializes calls: each starts at least `minMs` after the previous one finished. Spacing from
 * the previous call's end (not its start) keeps the gap at the upstream itself at least `minMs`,
 * whatever the connection set-up or network delay of each request.
 */
export class Spacer {
  private tail: Promise<void> = Promise.resolve();
  private last = -Infinity;
  constructor(readonly minMs: number) {}
  run<T>(fn: () => Promise<T>): Promise<T> {
    const turn = this.tail.then(async () => {
      // A timer can fire a little before the wall clock says it should: wait again until it is time.
      for (let wait = this.last + this.minMs - Date.now(); wait > 0; wait = this.last + this.minMs - Date.now()) {
        await new Promise((r) => setTimeout(r, wait));
      }
      try {
        return await fn();
      } finally {
        this.last = Date.now();
      }
    });
    this.tail = turn.then(
      () => {},
      () => {},
    );
    return turn;
  }
}

/** Process-wide spacing for the public Nominatim policy (1 request/s), shared by every locator. */
const NOMINATIM_SPACER = new Spacer(1000);

/** Cache key: each comma part normalized, so "Paris, FR" and "paris ,fr" share an entry. */
export function cacheKey(text: string): string {
  return text.split(',').map(normalizeName).filter(Boolean).join(',');
}

/** Nothing but the offline tables was consulted: no network geocoder is enabled on this responder. */
function notFoundOffline(text: string): SvcError {
  return new SvcError('place_not_found', `place: ${JSON.stringify(text.slice(0, 120))} is not in the offline tables, and no network geocoder is enabled here to ask`, {
    field: 'place',
    network: 'disabled',
    hint: 'Refine the name (add ", Region, Country"), pass lat and lng, or ask a responder with a network geocoder enabled.',
  });
}

function noMatch(text: string, why: string, details: Record<string, unknown> = {}): SvcError {
  return new SvcError('no_geocoder_match', `place: no geocoder tier knows ${JSON.stringify(text.slice(0, 120))} (${why})`, {
    field: 'place',
    hint: 'Retrying the unchanged query does not help: refine the name (add ", Region, Country") or pass lat and lng.',
    ...details,
  });
}

function describeFailure(e: unknown): string {
  const err = e as { kind?: string; status?: number; message?: string };
  return err.kind ? `${err.kind}${err.status ? ' ' + err.status : ''}: ${err.message ?? ''}` : String((e as Error)?.message ?? e);
}

/** Build a locator over the shared gazetteer. */
export function createLocator(opts: LocatorOptions): Locator {
  const spacer = opts.nominatimIntervalMs === undefined || opts.nominatimIntervalMs === 1000 ? NOMINATIM_SPACER : new Spacer(opts.nominatimIntervalMs);
  const tiers: Array<{ name: 'photon' | 'nominatim'; search: (q: string, deadline: number) => Promise<NetPlace[]> }> = [];
  if (opts.http && opts.photonBase) {
    const [http, base] = [opts.http, opts.photonBase];
    tiers.push({ name: 'photon', search: (q, d) => photonSearch(http, base, q, d) });
  }
  if (opts.http && opts.nominatimBase) {
    const [http, base] = [opts.http, opts.nominatimBase];
    tiers.push({ name: 'nominatim', search: (q, d) => spacer.run(() => nominatimSearch(http, base, q, d)) });
  }

  async function cacheGet(key: string) {
    try {
      return await opts.cache.get(key);
    } catch {
      return undefined; // a broken cache degrades to the network, never fails the locate
    }
  }
  async function cachePut(key: string, source: 'photon' | 'nominatim' | 'none', payload: unknown, ttl: number) {
    try {
      await opts.cache.put(key, { source, payload, stored_at: Date.now() }, ttl);
    } catch {
      /* best effort */
    }
  }

  function fuzzyOr(g: Gazetteer, text: string, err: SvcError, note?: string): Resolution {
    const f = matchFuzzy(g, text);
    if (!f) throw err;
    const r = fromOffline(g, f);
    if (note) r.selected.reason += `; ${note}`;
    return r;
  }

  return {
    networkEnabled: tiers.length > 0,
    cache: opts.cache,
    resolvePoint(lat, lng) {
      const g = gazetteer();
      const d = describePoint(g, lat, lng);
      return fromPoint(g, lat, lng, d.label, d.near);
    },
    async resolveName(text, o = {}) {
      const g = gazetteer();
      const offline = matchOffline(g, text);
      if (offline) return fromOffline(g, offline);

      const key = cacheKey(text);
      const cached = await cacheGet(key);
      if (cached?.source === 'none') return fuzzyOr(g, text, noMatch(text, 'cached: no tier knew it recently', { cached: true }));
      if (cached) {
        const r = cached.payload as Resolution;
        return { ...r, via: 'cache', selected: { ...r.selected, reason: `cached ${cached.source} answer of ${new Date(cached.stored_at).toISOString().slice(0, 10)}: ${r.selected.reason}` } };
      }
      if (tiers.length === 0) return fuzzyOr(g, text, notFoundOffline(text));

      const failures: Record<string, string> = {};
      let answered = 0;
      for (const tier of tiers) {
        // Each tier gets its own timeout (a hung Photon must not starve Nominatim), within the request's deadline.
        const deadline = Math.min(o.deadline ?? Infinity, Date.now() + opts.timeoutMs);
        try {
          const places = await tier.search(text.trim(), deadline);
          answered++;
          if (places.length === 0) continue;
          const r = fromNetwork(g, places, text);
          await cachePut(key, tier.name, r, ANSWER_TTL_MS);
          return r;
        } catch (e) {
          failures[tier.name] = describeFailure(e);
        }
      }
      if (answered === 0) {
        const down = new SvcError('source_fetch_failed', `place: every network geocoder failed for ${JSON.stringify(text.slice(0, 120))}`, {
          field: 'place',
          failures,
          retryable: true,
          hint: 'The geocoders are unreachable; retry later or pass lat and lng.',
        });
        return fuzzyOr(g, text, down, 'network geocoders unreachable');
      }
      // A miss is kept only when every tier answered: a tier that failed might know the
      // place, so the next request asks it again instead of being told "nobody knows" for a day.
      const partial = Object.keys(failures).length > 0;
      if (!partial) await cachePut(key, 'none', null, MISS_TTL_MS);
      return fuzzyOr(
        g,
        text,
        noMatch(
          text,
          'the offline tables and the network geocoders returned nothing',
          partial
            ? {
                partial_failures: failures,
                retryable: true,
                hint: 'A geocoder tier failed (see partial_failures) and may know the place: retry later, refine the name or pass lat and lng.',
              }
            : {},
        ),
      );
    },
  };
}
