/**
 * The connectors of global layers read point-wise or over a small window (active fires, biomass,
 * topobathymetry, settlement footprint, population, night lights, climate classes), in one list
 * that `sources/index.ts` composes into the full connector list.
 */
import type { ConnectorFactory } from './contract.js';
import { esaCciBiomassConnector } from './esa-cci-biomass.js';
import { firmsConnector } from './firms.js';
import { gebcoConnector } from './gebco.js';
import { koppenGeigerConnector } from './koppen-geiger.js';
import { viirsLightsConnector } from './viirs-lights.js';
import { worldpopConnector } from './worldpop.js';
import { wsf2019Connector } from './wsf2019.js';

/** Factories of the global-layer connectors (each keyed by its registry source). */
export const GLOBAL_LAYER_CONNECTORS: readonly ConnectorFactory[] = [
  (deps) => firmsConnector(deps),
  esaCciBiomassConnector,
  gebcoConnector,
  wsf2019Connector,
  worldpopConnector,
  viirsLightsConnector,
  koppenGeigerConnector,
];
