/**
 * GeoTessera annual embeddings (source geotessera). Layout read (dataset v1):
 *   `${base}/v1/global_0.1_degree_representation/{year}/grid_{lon}_{lat}/grid_{lon}_{lat}.npy`
 *     int8, shape (H, W, 128), C order;
 *   `…/grid_{lon}_{lat}_scales.npy` float32, shape (H, W) or (H, W, 128);
 *   `${base}/v1/global_0.1_degree_tiff_all/grid_{lon}_{lat}.tiff` the tile's landmask GeoTIFF,
 *     whose grid (a UTM CRS at 10 m) is the grid of the arrays.
 * Tiles are 0.1° cells named by their centre with two decimals. Only the .npy headers, the 128
 * bytes of the pixel and its scale are range-read. vector = int8 × scale (float32, as numpy
 * computes it). `geotessera.bin128` = sign bits of a fixed orthogonal rotation (see signBits).
 */
import { blake3 } from '@noble/hashes/blake3.js';
import { BoundedCache } from '../lib/cache.js';
import type { Materializer, MaterializeOutcome, MaterializeRequest, ConnectorFactory } from './contract.js';
import { CogReader } from './cog/reader.js';
import { NpyReader } from './cog/npy.js';
import { failureOutcome } from './cog/outcome.js';
import { TesseraArea } from './geotessera-area.js';
import { formatError } from './cog/tiff.js';
import { TEMPO_UNIT_S } from '../protocol/tslot.js';

const SOURCE = 'geotessera';
const DIM = 128;
const VECTOR = 'geotessera';
const BITS = 'geotessera.bin128';

/** Tile name `grid_{lon}_{lat}` of the 0.1° tile holding (lat, lng), by its centre. */
export function tesseraTile(lat: number, lng: number): string {
  const centre = (x: number) => ((Math.floor(x * 10) + 0.5) / 10).toFixed(2);
  return `grid_${centre(lng)}_${centre(lat)}`;
}

/** The vintage year of a slow (365-day) tslot: the calendar year of the slot's midpoint. */
export function tesseraYear(tslot: number): number {
  return new Date((tslot + 0.5) * TEMPO_UNIT_S.slow * 1000).getUTCFullYear();
}

/**
 * The fixed rotation's sign diagonal: bit i of BLAKE3("svc/geotessera.bin128/sign_bits_rotation@1")
 * set means −1. The rotation is R = H·D/√128 with H the 128×128 Sylvester–Hadamard matrix:
 * orthogonal, a fixed public constant, and computable with additions only.
 */
export const ROTATION_SIGNS: readonly number[] = (() => {
  const h = blake3(new TextEncoder().encode('svc/geotessera.bin128/sign_bits_rotation@1'));
  return Array.from({ length: DIM }, (_, i) => ((h[i >> 3] >> (i & 7)) & 1 ? -1 : 1));
})();

/**
 * 128 sign bits (1 when > 0, else 0) of R·v. The scale of v is dropped (it does not change a
 * sign), so with one scale per pixel the transform runs on the int8 values and is exact.
 */
export function signBits(v: readonly number[]): number[] {
  if (v.length !== DIM) throw new RangeError(`v: expected ${DIM} values, got ${v.length}`);
  const y = v.map((x, i) => x * ROTATION_SIGNS[i]);
  // Fast Walsh–Hadamard transform in Sylvester order (fixed butterfly order).
  for (let len = 1; len < DIM; len <<= 1) {
    for (let i = 0; i < DIM; i += len << 1) {
      for (let j = i; j < i + len; j++) {
        const a = y[j];
        const b = y[j + len];
        y[j] = a + b;
        y[j + len] = a - b;
      }
    }
  }
  return y.map((x) => (x > 0 ? 1 : 0));
}

type PixelResult =
  | { vector: number[]; quantized: number[]; exactInts: boolean; ref: string; year: number; pixel: [number, number]; epsg: number }
  | { absence: 'outside_coverage'; detail: string; ref: string; year: number };

/** GeoTessera connector internals exposed to tests. */
export interface GeoTesseraConnector extends Materializer {
  npy: NpyReader;
  cog: CogReader;
  /** Window reads over an area (tessera_field), on the same readers. */
  area: TesseraArea;
}

/** Connector for `geotessera` and `geotessera.bin128`. */
export const geoTesseraConnector: ConnectorFactory = (deps) => {
  const base = deps.baseUrl(SOURCE);
  const npy = new NpyReader(deps.client);
  const cog = new CogReader(deps.client, { headerBytes: 8192 });
  const pixels = new BoundedCache<string, Promise<PixelResult>>('geotessera_pixels', { max: 1024, ttlMs: 10 * 60_000 });

  async function readPixel(req: MaterializeRequest): Promise<PixelResult> {
    const year = tesseraYear(req.tslot);
    const tile = tesseraTile(req.center.lat, req.center.lng);
    const dir = `${base}/v1/global_0.1_degree_representation/${year}/${tile}`;
    const embUrl = `${dir}/${tile}.npy`;
    const scalesUrl = `${dir}/${tile}_scales.npy`;
    const ref = `${year}/${tile}`;
    const o = { deadline: req.deadline, signal: req.signal };
    // The three headers are independent: one round trip for all of them.
    const [emb, landmask, scalesHeader] = await Promise.all([npy.header(embUrl, o), cog.header(`${base}/v1/global_0.1_degree_tiff_all/${tile}.tiff`, o), npy.header(scalesUrl, o)]);
    if (!emb) return { absence: 'outside_coverage', detail: `tile ${ref} is not published`, ref, year };
    if (!landmask) throw formatError(`tile ${tile} has embeddings but no landmask GeoTIFF to georeference them`);
    const [h, w, d] = emb.shape;
    if (emb.shape.length !== 3 || d !== DIM || emb.kind !== 'i' || emb.itemSize !== 1) throw formatError(`${ref}.npy is ${emb.descr} (${emb.shape.join(', ')}), not int8 (H, W, ${DIM})`);
    if (h !== landmask.tiff.height || w !== landmask.tiff.width) throw formatError(`${ref}.npy is ${h}×${w} but its landmask grid is ${landmask.tiff.height}×${landmask.tiff.width}`);
    const geo = landmask.geo();
    const px = geo.pixelOf(req.center.lat, req.center.lng);
    if (!px) return { absence: 'outside_coverage', detail: `the cell centre lies outside the grid of tile ${ref}`, ref, year };
    if (!scalesHeader) throw formatError(`tile ${ref} has no scales array`);
    const sh = scalesHeader.shape;
    const perPixel = sh.length === 2;
    if (scalesHeader.kind !== 'f' || sh[0] !== h || sh[1] !== w || !(perPixel || (sh.length === 3 && sh[2] === DIM))) {
      throw formatError(`${ref}_scales.npy is ${scalesHeader.descr} (${sh.join(', ')}), not float (H, W) or (H, W, ${DIM})`);
    }
    const flat = px.row * w + px.col;
    const [q, s] = await Promise.all([npy.elements(embUrl, emb, flat * DIM, DIM, o), npy.elements(scalesUrl, scalesHeader, perPixel ? flat : flat * DIM, perPixel ? 1 : DIM, o)]);
    // A zero (or non-finite) scale marks a pixel the model did not embed (masked, not land).
    if (s.some((x) => !Number.isFinite(x)) || s.every((x) => x === 0)) {
      return { absence: 'outside_coverage', detail: `pixel ${px.col},${px.row} of ${ref} carries no embedding (scale ${s[0]})`, ref, year };
    }
    const vector = q.map((x, i) => Math.fround(x * Math.fround(perPixel ? s[0] : s[i])));
    // One positive scale per pixel does not change any sign: rotate the int8 values exactly.
    return { vector, quantized: q, exactInts: perPixel && s[0] > 0, ref, year, pixel: [px.col, px.row], epsg: geo.epsg };
  }

  function pixelFor(req: MaterializeRequest): Promise<PixelResult> {
    const key = `${req.cell}|${req.tslot}`;
    const hit = pixels.get(key);
    if (hit) return hit;
    const p = readPixel(req);
    pixels.set(key, p);
    p.catch(() => pixels.delete(key));
    return p;
  }

  async function run(req: MaterializeRequest): Promise<MaterializeOutcome> {
    const fn = req.band.function;
    const r = await pixelFor(req);
    const provenance = { source: SOURCE, ref: r.ref, version: `v1/${r.year}` };
    if ('absence' in r) return { status: 'absence', reason: r.absence, detail: r.detail, provenance, fn };
    if (req.band.key === VECTOR) return { status: 'value', value: r.vector, provenance, fn, args: { pixel: r.pixel, epsg: r.epsg, year: r.year } };
    const bits = signBits(r.exactInts ? r.quantized : r.vector);
    return { status: 'value', value: bits, provenance, fn, args: { rotation: 'hadamard128_blake3_signs@1', year: r.year, pixel: r.pixel } };
  }

  const connector: GeoTesseraConnector = {
    key: SOURCE,
    bands: [VECTOR, BITS],
    history: true,
    npy,
    cog,
    area: new TesseraArea(deps.client, base, npy, cog),
    async materialize(req) {
      try {
        return await run(req);
      } catch (e) {
        return failureOutcome(e, `GeoTessera ${req.band.key}`);
      }
    },
  };
  return connector;
};
