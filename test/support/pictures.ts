/**
 * Fixtures of the picture tests: a corpus of a few hundred cells written through POST
 * /v1/attest (dense bins in Paris, Nairobi, São Paulo and Sydney, single cells spread over the
 * world, one in the open Pacific), and a grid artifact of known values with a block of no data.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as P from '../../src/protocol/index.js';
import { encodeGrid } from '../../src/primitives/rasters/grid-format.js';
import type { TestApp } from './app.js';
import type { TestAttester } from './attester.js';
import { artifacts } from './browser.js';

/** Cells (distinct, about 2–5 km apart) inside the one-degree bin whose south-west corner is (lat0, lng0). */
function clusterIn(lat0: number, lng0: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => P.cellOf(lat0 + 0.05 + (i % 15) * 0.06, lng0 + 0.05 + Math.floor(i / 15) * 0.06));
}

/** The cells of the coverage fixture: 150 + 40 + 12 + 5 in four bins, 120 single cells, one at sea. */
export function coverageCells(): string[] {
  const cells = [
    ...clusterIn(48, 2, 150), // Paris: 100–299
    ...clusterIn(-2, 36, 40), // Nairobi: 30–99
    ...clusterIn(-24, -47, 12), // São Paulo: 10–29
    ...clusterIn(-34, 151, 5), // Sydney: 3–9
  ];
  // One cell in each of 120 bins on a lattice between 60°S and 70°N (land and sea alike).
  for (let k = 0; k < 120; k++) cells.push(P.cellOf(-57.5 + (k % 12) * 11, -172.5 + Math.floor(k / 12) * 35 + (k % 3) * 3));
  cells.push(P.cellOf(-30.5, -140.5)); // the open South Pacific: counted where it is stored
  assert.equal(new Set(cells).size, cells.length, 'fixture cells are distinct');
  return cells;
}

/** Attest one public fact at each cell, in one signed batch; returns the cells. */
export async function seedCoverage(t: TestApp, op: TestAttester): Promise<string[]> {
  const cells = coverageCells();
  const facts = cells.map((cell) => ({ kind: 'primary', cell, band: 'indices.ndvi', tslot: 680, value: 0.5, unit: 'unitless' }));
  const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch(facts, t.service.manifests) });
  assert.equal(r.statusCode, 200, r.body);
  return cells;
}

export const GRID_W = 64;
export const GRID_H = 40;
/** Rows and columns [0, 8) are no data. */
export const NODATA_BLOCK = 8;

/**
 * The value at (col, row) of the fixture grid: a west-to-east ramp from 0 to 0.63 (0.01 per
 * column) plus 0.001 per row; no data in the north-west block; one hot outlier (1000) at the
 * south-east corner and one cold (−1000) beside it, which the p2–p98 stretch must not follow.
 */
export function gridValue(col: number, row: number): number {
  if (col < NODATA_BLOCK && row < NODATA_BLOCK) return Number.NaN;
  if (col === GRID_W - 1 && row === GRID_H - 1) return 1000;
  if (col === GRID_W - 2 && row === GRID_H - 1) return -1000;
  return Math.fround(col * 0.01 + row * 0.001);
}

/** The fixture grid file (application/x.svc-grid-f32.v1), UTM 33N, 10 m pixels. */
export function gridFixture(): Uint8Array {
  const values = new Float32Array(GRID_W * GRID_H);
  for (let r = 0; r < GRID_H; r++) for (let c = 0; c < GRID_W; c++) values[r * GRID_W + c] = gridValue(c, r);
  return encodeGrid({ width: GRID_W, height: GRID_H, epsg: 32633, geotransform: [500000, 10, 0, 4600000, 0, -10], values });
}

/** A well-formed raster token (the shape band_raster stores as the rebuild hint) for band s2.B04. */
export function rasterTokenFor(prefix: string): string {
  return `${prefix}:raster:${'a'.repeat(26)}:s2.B04:692:${'b'.repeat(52)}`;
}

/** Where a test keeps a picture: under test-artifacts/ (ignored by git); the path is printed. */
export function artefactPath(name: string): string {
  mkdirSync(artifacts, { recursive: true });
  const path = `${artifacts}${name}`;
  console.log(`picture kept at ${path}`);
  return path;
}
