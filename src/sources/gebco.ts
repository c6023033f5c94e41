/**
 * GEBCO 2024 global grid (source gebco) → `gebco.elevation_m` (static): one Cloud-Optimized
 * BigTIFF of the 15 arc-second topobathymetry (Int16 metres, negative below sea level), read one
 * block at a time. Its tile offset arrays are far larger than the first range read, so the reader
 * range-reads only the two array entries of the pixel's tile. The grid covers the globe: every
 * cell has a value; the file's declared nodata (if any) is an `outside_coverage` absence, and a
 * missing file is a broken upstream (nothing signed), not an absence.
 */
import type { ConnectorFactory } from './contract.js';
import { pointSampleConnector } from './cog/point-connector.js';

/** Connector for `gebco.elevation_m`; the source URL is the file itself. */
export const gebcoConnector: ConnectorFactory = (deps) =>
  pointSampleConnector(deps, {
    key: 'gebco',
    bands: ['gebco.elevation_m'],
    history: true,
    version: 'GEBCO_2024',
    locate(_req, base) {
      return { url: base, ref: base.slice(base.lastIndexOf('/') + 1), captured_at: '2024-12-31T23:59:59Z' };
    },
    missing: { skip: 'the GEBCO 2024 grid is not at its configured URL' },
    nodataReason: 'outside_coverage',
  });
