/**
 * The JSON-speaking connectors (Open-Meteo elevation, forecast, archive and air quality;
 * SoilGrids; ORNL DAAC MODIS), in one list that `sources/index.ts` composes into the full
 * connector list. Their shared helpers live in json-helpers.ts, which imports no connector.
 */
import type { ConnectorFactory } from './contract.js';
import { openMeteoElevation } from './open-meteo-elevation.js';
import { openMeteoForecast } from './open-meteo-forecast.js';
import { openMeteoArchive } from './open-meteo-archive.js';
import { openMeteoAir } from './open-meteo-air.js';
import { soilgrids } from './soilgrids.js';
import { ornlModis } from './ornl-modis.js';

/** Factories of the JSON connectors, in priority order (forecast before archive: it owns the present). */
export const JSON_CONNECTORS: readonly ConnectorFactory[] = [openMeteoElevation, openMeteoForecast, openMeteoArchive, openMeteoAir, soilgrids, ornlModis];
