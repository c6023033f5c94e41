/**
 * The raster connectors (COG, STAC + COG and .npy tile sources), in one list that
 * `sources/index.ts` composes into the full connector list.
 */
import type { ConnectorFactory } from './contract.js';
import { chirpsConnector } from './chirps.js';
import { geoTesseraConnector } from './geotessera.js';
import { hansenGfcConnector } from './hansen-gfc.js';
import { jrcGfc2020Connector } from './jrc-gfc2020.js';
import { jrcGswConnector } from './jrc-gsw.js';
import { sentinel1Connector } from './sentinel1.js';
import { sentinel1ChangeConnector } from './sentinel1-change.js';
import { sentinel2Connector } from './sentinel2.js';
import { worldCoverConnector } from './worldcover.js';

/** Factories of every raster connector (each keyed by its registry source). */
export const RASTER_CONNECTORS: readonly ConnectorFactory[] = [
  sentinel2Connector,
  sentinel1Connector,
  sentinel1ChangeConnector,
  worldCoverConnector,
  jrcGswConnector,
  hansenGfcConnector,
  jrcGfc2020Connector,
  chirpsConnector,
  geoTesseraConnector,
];
