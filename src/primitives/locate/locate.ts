/**
 * locate (docs/locate.md): a place name or a lat/lng pair → LocateResp. The cascade lives in
 * geo/; this primitive validates the request, wires the network tiers to the service's one
 * HTTP client and the store's persistent cache (`store.geocache`), and adds the
 * store-dependent data_at_this_cell.
 *
 * The place string is NOT signed (docs/protocol-notes.md §5); a wrong geocode yields a valid
 * signature for the wrong cell, so callers must check `selected.is_high_confidence`.
 */
import type { Config } from '../../config.js';
import type { GeoCache } from '../../geo/geocache.js';
import { gazetteer } from '../../geo/gazetteer.js';
import { createLocator, type Locator } from '../../geo/locator.js';
import { locateCore } from '../../geo/respond.js';
import type { LocateRequest, LocateResp } from '../../geo/types.js';
import { cellOf } from '../../protocol/cell64.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { UpstreamClient } from '../../sources/http.js';
import { USER_AGENT } from '../../sources/index.js';
import { cellToken } from '../../protocol/cell-token.js';
import type { ServiceContext } from '../context/context.js';

/** Public endpoints used when SVC_UPSTREAM_PHOTON_URL / SVC_UPSTREAM_NOMINATIM_URL are unset. */
export const DEFAULT_GEOCODERS = { PHOTON: 'https://photon.komoot.io', NOMINATIM: 'https://nominatim.openstreetmap.org' } as const;

const NAME_FIELDS = ['place', 'q', 'query', 'name'] as const;

/**
 * Base URL of a geocoder, or undefined when disabled. `off` disables a tier; configuration only
 * accepts URLs, so the URL form `off:` (what `SVC_UPSTREAM_PHOTON_URL=off:` parses to) counts too.
 */
export function geocoderBase(config: Config, key: 'PHOTON' | 'NOMINATIM'): string | undefined {
  const v = (config.upstreams[key] ?? DEFAULT_GEOCODERS[key]).trim();
  if (/^off:?\/*$/i.test(v)) return undefined;
  return v.replace(/\/+$/, '');
}

/** Test and operator knobs that configuration does not carry. */
export interface LocatorTuning {
  nominatimIntervalMs?: number;
  cache?: GeoCache;
}

const locators = new WeakMap<object, Locator>();
const tunings = new WeakMap<object, LocatorTuning>();

/** Set knobs for the context's locator before its first use (tests: a short Nominatim spacing). */
export function tuneLocator(ctx: ServiceContext, tuning: LocatorTuning): void {
  if (locators.has(ctx)) throw new Error('tuneLocator: the locator of this context is already in use');
  tunings.set(ctx, tuning);
}

/** The context's locator, built on first use. */
export function locatorFor(ctx: ServiceContext): Locator {
  let l = locators.get(ctx);
  if (l) return l;
  const tuning = tunings.get(ctx) ?? {};
  const photonBase = geocoderBase(ctx.config, 'PHOTON');
  const nominatimBase = geocoderBase(ctx.config, 'NOMINATIM');
  const bases = [photonBase, nominatimBase].filter((b): b is string => b !== undefined);
  const timeoutMs = ctx.config.materializerTimeoutSecs * 1000;
  // The egress allow-list is exactly the two geocoders. No automatic retries: the next tier is the
  // fallback, and a quick retry would break Nominatim's one-request-per-second policy.
  const http = bases.length ? new UpstreamClient({ userAgent: USER_AGENT, timeoutMs, allowedBaseUrls: bases, retries: 0 }) : undefined;
  // The store's cache, shared by every responder of the deployment; the store closes it.
  const cache = tuning.cache ?? ctx.store.geocache;
  l = createLocator({ http, photonBase, nominatimBase, cache, timeoutMs, nominatimIntervalMs: tuning.nominatimIntervalMs });
  locators.set(ctx, l);
  return l;
}

type Parsed = { kind: 'name'; text: string } | { kind: 'point'; lat: number; lng: number };

/** Exactly one of place, q, query, name, or both lat and lng (docs/locate.md, "Request"); anything else names the fields. */
export function parseLocateRequest(req: unknown): Parsed {
  if (typeof req !== 'object' || req === null || Array.isArray(req)) throw invalidArgument('body', 'expected an object with place (or q, query, name) or lat and lng');
  const r = req as Record<string, unknown>;
  const names = NAME_FIELDS.filter((f) => r[f] !== undefined);
  const hasLat = r.lat !== undefined;
  const hasLng = r.lng !== undefined;
  const given = [...names, ...(hasLat ? ['lat'] : []), ...(hasLng ? ['lng'] : [])];
  const ways = names.length + (hasLat || hasLng ? 1 : 0);
  if (ways !== 1) {
    const field = given.length ? given.join(', ') : 'place, q, query, name, lat, lng';
    throw new SvcError('invalid_argument', `${field}: give exactly one of place, q, query, name, or both lat and lng${given.length ? ` (got ${given.join(', ')})` : ''}`, {
      field: given[0] ?? 'place',
      fields: given,
    });
  }
  if (names.length === 1) {
    const f = names[0];
    const v = r[f];
    if (typeof v !== 'string') throw invalidArgument(f, 'expected a string');
    const text = v.trim();
    if (text.length === 0) throw invalidArgument(f, 'must not be empty');
    if (text.length > 300) throw invalidArgument(f, 'longer than 300 characters');
    return { kind: 'name', text };
  }
  if (!hasLat) throw invalidArgument('lat', 'required together with lng');
  if (!hasLng) throw invalidArgument('lng', 'required together with lat');
  const lat = r.lat;
  const lng = r.lng;
  if (typeof lat !== 'number' || !Number.isFinite(lat)) throw invalidArgument('lat', 'expected a finite number');
  if (typeof lng !== 'number' || !Number.isFinite(lng)) throw invalidArgument('lng', 'expected a finite number');
  if (lat < -90 || lat > 90) throw invalidArgument('lat', `${lat} is outside [-90, 90]`);
  if (lng < -180 || lng > 180) throw invalidArgument('lng', `${lng} is outside [-180, 180]`);
  return { kind: 'point', lat, lng };
}

/**
 * Topic-grouped inventory at a cell: topics whose bands have facts here ('attested'); when the
 * cell has none, the topics' bands a wired connector could fetch ('fetchable').
 */
export async function dataAtCell(ctx: ServiceContext, cell: string): Promise<LocateResp['data_at_this_cell']> {
  const attested = new Set(await ctx.store.bandsAt(cell, null));
  const mode: 'attested' | 'fetchable' = attested.size > 0 ? 'attested' : 'fetchable';
  const available = (b: string) => (mode === 'attested' ? attested.has(b) : ctx.materializers.forBand(b) !== undefined);
  const out: LocateResp['data_at_this_cell'] = {};
  for (const t of ctx.registry.topicList) {
    const bands = t.bands.filter(available);
    if (bands.length === 0) continue;
    const algorithms = t.algorithms.filter((k) => {
      const a = ctx.registry.algorithms.get(k);
      return a !== undefined && a.bands.every(available);
    });
    out[t.key] = { bands, algorithms, availability: mode };
  }
  return out;
}

/** Resolve a place name or coordinates to a LocateResp, with the cell's token (docs/memory.md, "Tokens and bundles": locate mints `svc:cell:`). */
export async function locate(ctx: ServiceContext, req: LocateRequest, opts: { deadline?: number } = {}): Promise<LocateResp> {
  const parsed = parseLocateRequest(req);
  const locator = locatorFor(ctx);
  const res = parsed.kind === 'point' ? locator.resolvePoint(parsed.lat, parsed.lng) : await locator.resolveName(parsed.text, opts);
  const core = locateCore(gazetteer(), res);
  // The token sits beside cell64 so a reader sees both spellings of the one address together.
  const { cell64, ...rest } = core;
  return { cell64, token: cellToken(ctx.config.prefix, cell64), ...rest, data_at_this_cell: await dataAtCell(ctx, cell64) };
}

/** The ctx.locate hook recall uses for `cell: "<place name>"` (no inventory: recall reads the cell itself). */
export function placeResolver(ctx: ServiceContext): NonNullable<ServiceContext['locate']> {
  return async (place: string) => {
    const parsed = parseLocateRequest({ place }) as { kind: 'name'; text: string };
    const res = await locatorFor(ctx).resolveName(parsed.text);
    return { cell64: cellOf(res.lat, res.lng), label: res.label, is_high_confidence: res.selected.is_high_confidence };
  };
}
