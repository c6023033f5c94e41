/**
 * Open-Meteo marine API, current conditions → `marine.wave_height` (m), `marine.wave_period` (s),
 * `marine.wave_direction` (degrees, where the waves come from) and
 * `marine.sea_surface_temperature` (°C), fast tempo:
 * `GET /v1/marine?latitude&longitude&current=wave_height,wave_period,wave_direction,sea_surface_temperature&timezone=UTC`.
 * One call per cell serves the four bands.
 *
 * The value is the wave or ocean model's grid cell (best match: Météo-France and ECMWF wave
 * models, about 5 to 25 km), and the API prefers a sea cell near the point asked, so a cell on
 * the beach reads the sea just offshore. Inland the API answers null: a signed absence
 * `outside_coverage` (no sea here), never a zero. History is not wired: a past tslot is an error.
 */
import type { MaterializeOutcome, Materializer, MaterializeRequest, ConnectorDeps } from './contract.js';
import { currentReader } from './open-meteo-current.js';

export const MARINE_SOURCE = 'open_meteo_marine';

/** Band → Open-Meteo marine `current` variable. */
export const MARINE_CURRENT: Readonly<Record<string, string>> = {
  'marine.wave_height': 'wave_height',
  'marine.wave_period': 'wave_period',
  'marine.wave_direction': 'wave_direction',
  'marine.sea_surface_temperature': 'sea_surface_temperature',
};

/** Factory of the Open-Meteo marine connector. */
export function openMeteoMarine(deps: ConnectorDeps): Materializer {
  const reader = currentReader(deps, {
    source: MARINE_SOURCE,
    path: '/v1/marine',
    version: 'best_match',
    variables: MARINE_CURRENT,
    extraQuery: '',
    nullReason: 'outside_coverage',
  });
  return {
    key: MARINE_SOURCE,
    bands: reader.bands,
    history: false,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const today = Math.floor(Date.now() / 86_400_000);
      if (req.tslot !== today) {
        return { status: 'error', reason: `${MARINE_SOURCE}: only the present is wired (tslot ${today}); tslot ${req.tslot} cannot be fetched here` };
      }
      return reader.present(req);
    },
  };
}
