/**
 * CHIRPS v2.0 daily precipitation (source chirps): one global 0.05° COG per day at
 * `global_daily/cogs/p05/{YYYY}/chirps-v2.0.{YYYY}.{MM}.{DD}.cog` (EPSG:4326, float32 mm,
 * −9999 nodata over sea). The tslot (a fast-tempo day) names the day. Cells beyond 50° of
 * latitude are outside the product without a request; a day not yet published (404) is
 * skipped, never signed.
 */
import type { ConnectorFactory } from './contract.js';
import { pointSampleConnector } from './cog/point-connector.js';
import { float32Text, isoSecond } from './cog/outcome.js';

/** The UTC day a fast (daily) tslot covers, as [YYYY, MM, DD]. */
export function chirpsDay(tslot: number): [string, string, string] {
  const d = new Date(tslot * 86_400_000);
  return [String(d.getUTCFullYear()), String(d.getUTCMonth() + 1).padStart(2, '0'), String(d.getUTCDate()).padStart(2, '0')];
}

/** Connector for `precip.chirps_daily_mm`. */
export const chirpsConnector: ConnectorFactory = (deps) =>
  pointSampleConnector(deps, {
    key: 'chirps',
    bands: ['precip.chirps_daily_mm'],
    history: true,
    version: 'v2.0',
    locate(req, base) {
      if (Math.abs(req.center.lat) > 50) return { absence: 'outside_coverage', detail: 'CHIRPS covers 50°S to 50°N' };
      const [y, m, d] = chirpsDay(req.tslot);
      const name = `chirps-v2.0.${y}.${m}.${d}.cog`;
      return { url: `${base}/global_daily/cogs/p05/${y}/${name}`, ref: name, captured_at: isoSecond(req.tslot * 86_400_000), tslot: req.tslot };
    },
    nodata: () => [-9999],
    missing: { skip: 'CHIRPS day not yet published' },
    nodataReason: 'outside_coverage',
    // float32 millimetres, written as the shortest decimal that is the same float32.
    value: (raw) => float32Text(raw),
  });
