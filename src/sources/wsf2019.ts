/**
 * DLR World Settlement Footprint 2019 (source dlr_wsf2019) → `builtup.wsf2019_fraction_1km`
 * (static): the share of settlement pixels in a 1 km × 1 km window centred on the cell centre,
 * read from the single global 10 m COG (EPSG:4326, 255 = settlement, 0 = none).
 *
 * A 10 m cell says nothing about a neighbourhood, so the band is computed over a window, not a
 * pixel: the window is the odd number of full-resolution pixels nearest to 1 km on each side
 * (from the file's pixel size and the latitude, so it widens in degrees towards the poles), and
 * only the blocks covering it are fetched. The fraction is taken over the valid pixels; pixels
 * outside the image or equal to the file's nodata are left out and counted in the fact's args.
 * No valid pixel at all is an `outside_coverage` absence. A sample other than 0 or 255 is
 * `source_format_mismatch`: the map is binary, so anything else means a file this connector
 * does not understand.
 */
import type { ConnectorFactory, Materializer, MaterializeOutcome, MaterializeRequest, Provenance } from './contract.js';
import { failureOutcome, round } from './cog/outcome.js';
import { CogReader } from './cog/reader.js';
import { formatError } from './cog/tiff.js';
import { PIXEL_VALID, windowAround } from './cog/window.js';
import { metresPerDegree } from './footprint.js';

const SOURCE = 'dlr_wsf2019';
const VERSION = 'WSF2019 v1';
/** Side of the window, metres. */
export const WSF_WINDOW_M = 1000;
const SETTLEMENT = 255;

/** Odd pixel count nearest to `metres` for pixels `pixelM` wide (at least 1). */
function oddPixels(metres: number, pixelM: number): number {
  return 2 * Math.max(0, Math.round(metres / pixelM / 2 - 0.5)) + 1;
}

/** Window size in pixels (width, height) of a `metres` square at `lat` for a file's transform. */
export function windowPixels(transform: readonly number[], epsg: number, lat: number, metres = WSF_WINDOW_M): { width: number; height: number } {
  const [a, , , , e] = transform;
  const m = epsg === 4326 ? metresPerDegree(lat) : { lat: 1, lng: 1 };
  return { width: oddPixels(metres, Math.abs(a!) * m.lng), height: oddPixels(metres, Math.abs(e!) * m.lat) };
}

/** Connector for `builtup.wsf2019_fraction_1km`; the source URL is the COG itself. */
export const wsf2019Connector: ConnectorFactory = (deps) => {
  const url = deps.baseUrl(SOURCE);
  const reader = new CogReader(deps.client);
  const ref = url.slice(url.lastIndexOf('/') + 1);
  const connector: Materializer & { reader: CogReader } = {
    key: SOURCE,
    bands: ['builtup.wsf2019_fraction_1km'],
    history: true,
    reader,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const fn = req.band.function;
      const provenance: Provenance = { source: SOURCE, ref, version: VERSION, captured_at: '2019-12-31T23:59:59Z' };
      const { lat, lng } = req.center;
      const o = { deadline: req.deadline, signal: req.signal };
      try {
        const at = await reader.locate(url, lat, lng, { ...o, missingOk: true });
        if (at.kind === 'missing') return { status: 'error', reason: `source_fetch_failed: ${SOURCE}: the WSF2019 COG is not at its configured URL (HTTP 404)` };
        if (!at.pixel) return { status: 'absence', reason: 'outside_coverage', provenance, fn, detail: `the cell centre lies outside ${ref}` };
        const size = windowPixels(at.header.geo().transform, at.epsg, lat);
        const w = await reader.window(at.header, windowAround(at.pixel.col, at.pixel.row, size.width, size.height), at.epsg, o, url);
        let built = 0;
        for (let i = 0; i < w.values.length; i++) {
          if (w.mask[i] !== PIXEL_VALID) continue;
          const v = w.values[i]!;
          if (v === SETTLEMENT) built++;
          else if (v !== 0) throw formatError(`pixel value ${v} in the window at ${at.pixel.col},${at.pixel.row}: WSF2019 holds only 0 and 255`);
        }
        const total = size.width * size.height;
        if (w.valid === 0) return { status: 'absence', reason: 'outside_coverage', provenance, fn, detail: `none of the ${total} pixels of the 1 km window holds data` };
        return {
          status: 'value',
          value: round(built / w.valid, 4),
          unit: req.band.unit,
          provenance,
          fn,
          args: { window_m: WSF_WINDOW_M, window_px: [size.width, size.height], center_pixel: [at.pixel.col, at.pixel.row], settlement_px: built, valid_px: w.valid, epsg: at.epsg },
        };
      } catch (e) {
        return failureOutcome(e, ref);
      }
    },
  };
  return connector;
};
