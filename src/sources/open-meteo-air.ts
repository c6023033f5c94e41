/**
 * Open-Meteo air-quality API (CAMS Europe ≈0.1°, CAMS global ≈0.4°), current conditions →
 * `air.pm2_5`, `air.nitrogen_dioxide`, `air.ozone` (µg/m³, fast tempo):
 * `GET /v1/air-quality?latitude&longitude&current=pm2_5,nitrogen_dioxide,ozone&timezone=UTC`.
 * One call per cell serves the three bands.
 *
 * A null variable is a signed absence with the reason the registry declares for these bands
 * (`unavailable_capability`: the model has no value for it here). History is not wired: a past
 * tslot is an error outcome, never a value from another time.
 */
import type { MaterializeOutcome, Materializer, MaterializeRequest, ConnectorDeps } from './contract.js';
import { currentReader } from './open-meteo-current.js';

const SOURCE = 'open_meteo_air';

/** Band → Open-Meteo air-quality `current` variable. */
export const AIR_CURRENT: Readonly<Record<string, string>> = {
  'air.pm2_5': 'pm2_5',
  'air.nitrogen_dioxide': 'nitrogen_dioxide',
  'air.ozone': 'ozone',
};

/** Factory of the Open-Meteo air-quality connector. */
export function openMeteoAir(deps: ConnectorDeps): Materializer {
  const reader = currentReader(deps, {
    source: SOURCE,
    path: '/v1/air-quality',
    version: 'cams-europe/global',
    variables: AIR_CURRENT,
    extraQuery: '',
    nullReason: 'unavailable_capability',
  });
  return {
    key: SOURCE,
    bands: reader.bands,
    history: false,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const today = Math.floor(Date.now() / 86_400_000);
      if (req.tslot !== today) {
        return { status: 'error', reason: `${SOURCE}: only the present is wired (tslot ${today}); tslot ${req.tslot} cannot be fetched here` };
      }
      return reader.present(req);
    },
  };
}
