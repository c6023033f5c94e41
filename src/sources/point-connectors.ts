/**
 * The point connectors of the hydrology, sea, sun and climate bands (Open-Meteo flood and marine,
 * NASA POWER, JRC PVGIS, TerraClimate through THREDDS, MET Norway), in one list that
 * `sources/index.ts` composes into the full connector list. Each lives in its own file and
 * imports only the contract and the shared helpers.
 */
import type { ConnectorFactory } from './contract.js';
import { metno } from './metno.js';
import { nasaPower } from './nasa-power.js';
import { openMeteoFlood } from './open-meteo-flood.js';
import { openMeteoMarine } from './open-meteo-marine.js';
import { pvgis } from './pvgis.js';
import { terraclimate } from './terraclimate.js';

/** Factories of the point connectors (each serves bands no other connector serves). */
export const POINT_CONNECTORS: readonly ConnectorFactory[] = [openMeteoFlood, openMeteoMarine, nasaPower, pvgis, terraclimate, metno];
