/**
 * Open-Meteo's commercial access. The free hosts (`api.open-meteo.com`, `archive-api…`,
 * `air-quality-api…`, `flood-api…`, `marine-api…`) are for non-commercial use only; a customer
 * key (SVC_OPEN_METEO_API_KEY) moves every Open-Meteo connector to the reserved host of the same
 * API, named with the prefix `customer-`, and adds `apikey=<key>` to each request, as the
 * provider documents.
 *
 * The key is a secret of the deployment: it is added to the URL that is sent and never to the
 * URL recorded in a fact's provenance (`ref`), which is signed and published.
 */
import type { Config } from '../config.js';

const OPEN_METEO_HOST = /^(?!customer-)[a-z0-9-]+\.open-meteo\.com$/;

/**
 * The customer twin of a public Open-Meteo base URL (`https://flood-api.open-meteo.com` →
 * `https://customer-flood-api.open-meteo.com`); any other URL (an operator's own host, a test
 * fixture, a host already on the customer name) comes back unchanged.
 */
export function openMeteoCustomerUrl(baseUrl: string): string {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    return baseUrl;
  }
  if (u.protocol !== 'https:' || !OPEN_METEO_HOST.test(u.hostname)) return baseUrl;
  u.hostname = `customer-${u.hostname}`;
  return u.href.replace(/\/+$/, '');
}

/** The URL to send: `url` plus `apikey=<key>` when a customer key is configured, else `url` itself. */
export function withOpenMeteoKey(url: string, config: Pick<Config, 'openMeteoApiKey'>): string {
  const key = config.openMeteoApiKey;
  if (!key) return url;
  return `${url}${url.includes('?') ? '&' : '?'}apikey=${encodeURIComponent(key)}`;
}
