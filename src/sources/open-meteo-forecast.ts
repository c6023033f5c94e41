/**
 * Open-Meteo forecast API, current conditions → `weather.temperature_2m`, `weather.precipitation`,
 * `weather.wind_speed_10m`, `weather.relative_humidity_2m`, `weather.cloud_cover` (fast tempo):
 * `GET /v1/forecast?latitude&longitude&current=<vars>&wind_speed_unit=ms&timezone=UTC`. One call
 * per cell fetches all five variables; value from `current.<var>` converted from
 * `current_units.<var>` to the band unit; tslot and captured_at from `current.time` (UTC).
 *
 * `current` describes the present only. A past tslot is delegated to the ERA5 archive connector
 * (daily aggregate); a tslot ahead of today is refused (an error outcome, never a value).
 */
import type { MaterializeOutcome, MaterializeRequest, ConnectorDeps } from './contract.js';
import type { RangeMaterializer } from './json-helpers.js';
import { openMeteoArchive } from './open-meteo-archive.js';
import { currentReader } from './open-meteo-current.js';

const SOURCE = 'open_meteo';

/** Band → Open-Meteo `current` variable. */
export const FORECAST_CURRENT: Readonly<Record<string, string>> = {
  'weather.temperature_2m': 'temperature_2m',
  'weather.precipitation': 'precipitation',
  'weather.wind_speed_10m': 'wind_speed_10m',
  'weather.relative_humidity_2m': 'relative_humidity_2m',
  'weather.cloud_cover': 'cloud_cover',
};

/** The forecast connector: the present from `current`, past days through the archive. */
export interface ForecastConnector extends RangeMaterializer {
  /** Upstream calls started for the present (coalesced calls count once). */
  readonly presentCalls: number;
}

/** Factory of the Open-Meteo forecast connector. */
export function openMeteoForecast(deps: ConnectorDeps): ForecastConnector {
  const reader = currentReader(deps, {
    source: SOURCE,
    path: '/v1/forecast',
    version: 'best_match',
    variables: FORECAST_CURRENT,
    extraQuery: '&wind_speed_unit=ms',
    nullReason: 'unavailable_capability',
  });
  const archive = openMeteoArchive(deps);
  return {
    key: SOURCE,
    bands: reader.bands,
    // Past tslots are answered (through the archive), so this connector has history.
    history: true,
    get presentCalls() {
      return reader.started;
    },
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const today = Math.floor(Date.now() / 86_400_000);
      if (req.tslot < today) return archive.materialize(req);
      if (req.tslot > today) return { status: 'error', reason: `${SOURCE}: tslot ${req.tslot} is after today (${today}); current conditions describe the present only` };
      return reader.present(req);
    },
    fetchRange: (cell, band, start, end, opts) => archive.fetchRange(cell, band, start, end, opts),
  };
}
