/**
 * VIIRS annual night-time lights (source viirs_lights) → `lights.viirs_annual_radiance`
 * (static, nW·cm⁻²·sr⁻¹): the average radiance of an annual VIIRS Day/Night Band composite at
 * the pixel holding the cell centre (15 arc-seconds, about 460 m at the equator).
 *
 * No keyless, range-readable copy of the composite is published, so the operator converts one
 * year's composite to a COG and names it in SVC_UPSTREAM_VIIRS_LIGHTS_URL (docs/sources.md says
 * how); until then the band is not wired (operator-cog.ts). The file name, recorded as each
 * fact's source ref, names the composite's year. Values are float32, written as the shortest
 * decimal that reads back as the same float32; the file's nodata is an `outside_coverage`
 * absence; 0 is a real value (the masked composites set unlit background to 0).
 */
import type { ConnectorFactory } from './contract.js';
import { float32Text } from './cog/outcome.js';
import { operatorCogConnector } from './operator-cog.js';

/** Connector for `lights.viirs_annual_radiance`. */
export const viirsLightsConnector: ConnectorFactory = (deps) =>
  operatorCogConnector(deps, {
    key: 'viirs_lights',
    bands: ['lights.viirs_annual_radiance'],
    history: true,
    version: 'operator COG of a VIIRS DNB annual composite',
    nodataReason: 'outside_coverage',
    value: (raw) => float32Text(raw),
  });
