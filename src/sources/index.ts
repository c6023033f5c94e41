/**
 * Wires the upstream connectors: one shared HTTP client whose egress allow-list is exactly the
 * configured base URLs, and one connector per provider (each in its own file).
 */
import type { Config } from '../config.js';
import type { Registry } from '../registry/registry.js';
import type { ConnectorDeps, ConnectorFactory, Materializer } from './contract.js';
import { ftwConnector } from './ftw.js';
import { GLOBAL_LAYER_CONNECTORS } from './global-layers.js';
import { UpstreamClient } from './http.js';
import { JSON_CONNECTORS } from './json-connectors.js';
import { openMeteoCustomerUrl } from './open-meteo-key.js';
import { overtureConnectorFactory } from './overture.js';
import { POINT_CONNECTORS } from './point-connectors.js';
import { RASTER_CONNECTORS } from './raster-connectors.js';
import { spiEra5 } from './spi.js';

export const USER_AGENT = 'svc-responder/0.1 (verifiable geospatial memory; +https://github.com/svc)';

/**
 * Base URL of a registry source: SVC_UPSTREAM_<KEY>_URL when set, else its public endpoint (for an
 * Open-Meteo source with SVC_OPEN_METEO_API_KEY set, the customer host of that endpoint).
 */
export function sourceBaseUrl(config: Config, registry: Registry, sourceKey: string): string {
  const src = registry.sources.get(sourceKey);
  if (!src) throw new Error(`source ${sourceKey} is not in the registry`);
  const envKey = src.env.replace(/^SVC_UPSTREAM_/, '').replace(/_URL$/, '');
  const override = config.upstreams[envKey];
  if (override !== undefined) return override.replace(/\/+$/, '');
  const url = src.default_url.replace(/\/+$/, '');
  return config.openMeteoApiKey && src.protocol === 'open-meteo-json' ? openMeteoCustomerUrl(url) : url;
}

/**
 * Hosts that serve a source's assets when they differ from its API host (STAC items point at
 * object stores). Overridable with SVC_UPSTREAM_<SOURCE>_ASSETS_URL; `*.` allows a host suffix.
 */
export const ASSET_HOSTS: Readonly<Record<string, readonly string[]>> = {
  earth_search_s2: ['https://sentinel-cogs.s3.us-west-2.amazonaws.com'],
  planetary_computer_s1: ['https://*.blob.core.windows.net'],
};

/** Every base URL the egress allow-list admits for this configuration. */
export function allowedUpstreams(config: Config, registry: Registry): string[] {
  const out: string[] = [];
  for (const s of registry.sourceList) {
    out.push(sourceBaseUrl(config, registry, s.key));
    const envKey = s.env.replace(/^SVC_UPSTREAM_/, '').replace(/_URL$/, '');
    const override = config.upstreams[`${envKey}_ASSETS`];
    out.push(...(override ? [override] : (ASSET_HOSTS[s.key] ?? [])));
  }
  return out;
}

/**
 * Every connector factory, in priority order. This module is the one place that lists them all
 * and no connector imports it: connectors depend only on contract.ts (and json-helpers.ts).
 */
export const CONNECTORS: readonly ConnectorFactory[] = [...JSON_CONNECTORS, ...RASTER_CONNECTORS, spiEra5, ftwConnector, ...POINT_CONNECTORS, ...GLOBAL_LAYER_CONNECTORS, overtureConnectorFactory];

/** The shared client and every connector for this configuration. */
export function buildMaterializers(config: Config, registry: Registry): { client: UpstreamClient; materializers: Materializer[] } {
  const bases = allowedUpstreams(config, registry);
  const client = new UpstreamClient({ userAgent: USER_AGENT, timeoutMs: config.materializerTimeoutSecs * 1000, allowedBaseUrls: bases });
  const deps: ConnectorDeps = { config, registry, client, baseUrl: (k) => sourceBaseUrl(config, registry, k) };
  return { client, materializers: CONNECTORS.map((f) => f(deps)) };
}
