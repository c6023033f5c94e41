/**
 * band_raster (POST /v1/band_raster, tool band_raster; docs/rasters.md): one Sentinel-2 band over
 * a lat/lng box, as a float32 grid artifact in the chosen scene's own grid. The scene is the
 * least cloudy one near the date that covers the whole box; only the COG blocks covering the
 * box's window are read; reflectance is DN × scale + offset per the asset. The answer names the
 * artifact (content-addressed, served by GET /v1/artifacts/<cid>), the signed derivation record
 * that pins how it was made, and a receipt whose field segment binds (aoi_cid, derivation_cid).
 * No scene, or a window without data, is a typed absence: never a grid of zeros.
 */
import { bytesCid } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { isoSeconds, type Receipt } from '../../protocol/receipt.js';
import { rasterToken, validDate } from '../../protocol/token-grammar.js';
import { tslotOf } from '../../protocol/tslot.js';
import { Pool } from '../../lib/pool.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { BAND_RASTER_RECIPE, keepDerivation, type BandRasterRecord } from './derivation.js';
import { aoiCid, canonicalBox, cellAnchors, windowGeotransform, windowOfBox, type GriddedArtifact, type CellAnchors, type LatLngBox } from './geometry.js';
import { GRID_MEDIA_TYPE } from './grid-format.js';
import { makeGrid, MAX_PIXELS_PER_SIDE, NATIVE_RESOLUTION_M, RASTERS_AT_ONCE, type RasterBand } from './recipe.js';
import { checkDeadline, S2_ASSETS, S2_SOURCE, sentinel2RasterOf, upstreamFailure } from './upstream.js';

export interface BandRasterRequest {
  bbox: LatLngBox;
  band: RasterBand;
  /** YYYY-MM-DD: the scene is chosen near this day (default: today). */
  observed_on?: string;
}

interface SceneAnswer {
  id: string;
  captured_at: string;
  cloud_cover: number | null;
  asset: string;
  href: string;
}

export interface BandRasterRaster extends GriddedArtifact {
  status: 'raster';
  token: string;
  aoi_cid: string;
  band: string;
  tslot: number;
  nodata: 'NaN';
  bbox: LatLngBox;
  scene: SceneAnswer;
  cells: CellAnchors;
  receipt: Receipt;
}

export interface BandRasterAbsence {
  status: 'absence';
  aoi_cid: string;
  band: string;
  bbox: LatLngBox;
  absence: { reason: 'outside_coverage' | 'no_scene_near_date' | 'no_data'; detail: string; searched?: { from: string; to: string }; scene?: string };
  receipt: Receipt;
}

export type BandRasterAnswer = BandRasterRaster | BandRasterAbsence;

const DAY_MS = 86_400_000;

/** Renders per responder: one box and band asked twice at once is made once; at most RASTERS_AT_ONCE run. */
const renders = new WeakMap<ServiceContext, { pool: Pool; inflight: Map<string, Promise<BandRasterAnswer>> }>();
function rendersOf(ctx: ServiceContext) {
  let r = renders.get(ctx);
  if (!r) renders.set(ctx, (r = { pool: new Pool(RASTERS_AT_ONCE), inflight: new Map() }));
  return r;
}

/** The refusal of a box past the cap, naming it. */
function tooLarge(band: RasterBand, width: number, height: number): unknown {
  const res = NATIVE_RESOLUTION_M[band];
  return new SvcError(
    'invalid_argument',
    `bbox: the box is ${width} × ${height} pixels of ${band} at its native ${res} m; the cap band_raster.max_pixels_per_side is ${MAX_PIXELS_PER_SIDE} (about ${(MAX_PIXELS_PER_SIDE * res) / 1000} km; see /v1/limits): split the box`,
    {
      field: 'bbox',
      cap: 'band_raster.max_pixels_per_side',
      max_pixels_per_side: MAX_PIXELS_PER_SIDE,
      width,
      height,
      pixel_size_m: res,
    },
  );
}

/** A quick estimate of the box in native pixels, before any upstream request (the exact window is checked once the grid is known). */
export function roughPixels(box: LatLngBox, band: RasterBand): { width: number; height: number } {
  const res = NATIVE_RESOLUTION_M[band];
  const midLat = ((box.min_lat + box.max_lat) / 2) * (Math.PI / 180);
  return { width: Math.ceil(((box.max_lng - box.min_lng) * 111_320 * Math.cos(midLat)) / res), height: Math.ceil(((box.max_lat - box.min_lat) * 110_574) / res) };
}

/** The day the scene is chosen near, as the middle of that UTC day (ms); refuses a day after today. */
function targetOf(ctx: ServiceContext, observedOn: string | undefined): number {
  const nowMs = ctx.now().getTime();
  if (observedOn === undefined) return nowMs;
  if (!validDate(observedOn)) throw invalidArgument('observed_on', `${JSON.stringify(observedOn)} is not a calendar date YYYY-MM-DD`);
  const ms = Date.parse(`${observedOn}T12:00:00Z`);
  if (ms - DAY_MS / 2 > nowMs) throw invalidArgument('observed_on', `${observedOn} is after today (${isoSeconds(nowMs).slice(0, 10)}): no scene exists yet`);
  return Math.min(ms, nowMs);
}

export async function bandRaster(ctx: ServiceContext, input: BandRasterRequest, o: { deadline: number }): Promise<BandRasterAnswer> {
  const box = canonicalBox(input.bbox);
  const band = input.band;
  if (!(band in NATIVE_RESOLUTION_M)) throw invalidArgument('band', `${band} is not one of ${Object.keys(NATIVE_RESOLUTION_M).join(', ')}`);
  const rough = roughPixels(box, band);
  // The rough size may be a pixel or two off the window: only a box clearly past the cap is refused before reading.
  if (rough.width > MAX_PIXELS_PER_SIDE + 2 || rough.height > MAX_PIXELS_PER_SIDE + 2) throw tooLarge(band, rough.width, rough.height);
  const targetMs = targetOf(ctx, input.observed_on);
  const s2 = sentinel2RasterOf(ctx);
  const key = `${aoiCid(box)}|${band}|${input.observed_on ?? ''}`;
  const { pool, inflight } = rendersOf(ctx);
  let p = inflight.get(key);
  if (!p) {
    p = pool.run(() => render(ctx, s2, box, band, targetMs, o.deadline)).finally(() => inflight.delete(key));
    inflight.set(key, p);
  }
  return p;
}

async function render(ctx: ServiceContext, s2: ReturnType<typeof sentinel2RasterOf>, box: LatLngBox, band: RasterBand, targetMs: number, deadline: number): Promise<BandRasterAnswer> {
  const aoi = aoiCid(box);
  const asset = S2_ASSETS[band];
  const ro = { deadline };
  const absence = (a: BandRasterAbsence['absence']): BandRasterAbsence => ({ status: 'absence', aoi_cid: aoi, band, bbox: box, absence: a, receipt: issueReceipt(ctx, 'band_raster', [], []) });
  let made: { record: BandRasterRecord; bytes: Uint8Array } | BandRasterAbsence;
  try {
    const choice = await s2.chooseScene(box, asset, targetMs, ctx.now().getTime(), ro);
    if (choice.kind === 'none') return absence({ reason: choice.reason, detail: choice.detail, searched: choice.searched });
    const scene = choice.scene;
    const grid = await s2.assetGrid(scene, asset, ro);
    const window = windowOfBox(box, grid.epsg, grid.transform);
    if (window.width > MAX_PIXELS_PER_SIDE || window.height > MAX_PIXELS_PER_SIDE) throw tooLarge(band, window.width, window.height);
    const geotransform = windowGeotransform(grid.transform, window);
    const { scale, offset, rule } = grid.rule;
    const { bytes, valid } = await makeGrid(s2, { href: grid.href, epsg: grid.epsg, window, geotransform, scale, offset, nodata: grid.nodata }, ro);
    if (valid === 0) return absence({ reason: 'no_data', detail: `every pixel of the ${window.width} × ${window.height} window of ${scene.id} ${asset} is no data`, scene: scene.id });
    const bandEntry = ctx.registry.bands.get(band);
    const record: BandRasterRecord = {
      recipe: BAND_RASTER_RECIPE,
      band,
      aoi: box,
      aoi_cid: aoi,
      tslot: tslotOf(Math.floor(scene.capturedMs / 1000), bandEntry?.tempo ?? 'medium'),
      scene: {
        source: S2_SOURCE,
        collection: 'sentinel-2-l2a',
        id: scene.id,
        captured_at: scene.datetime,
        cloud_cover: scene.cloud_cover,
        processing_baseline: scene.processing_baseline,
        asset,
        href: grid.href,
      },
      reflectance: { scale, offset, rule, nodata: [...grid.nodata] },
      grid: { epsg: grid.epsg, geotransform, width: window.width, height: window.height, col0: window.col0, row0: window.row0 },
      artifact: { cid: bytesCid(bytes), media_type: GRID_MEDIA_TYPE, bytes: bytes.length },
      source_versions: { [S2_SOURCE]: scene.processing_baseline ?? 'unknown' },
    };
    made = { record, bytes };
  } catch (e) {
    throw upstreamFailure(e, 'band_raster', { band });
  }
  checkDeadline(deadline, 'band_raster');
  const { record, bytes } = made;
  const fact = await keepDerivation(ctx, record);
  const token = rasterToken(ctx.config.prefix, { aoi_cid: aoi, band, tslot: record.tslot, derivation_cid: fact.fact_cid });
  await ctx.store.artifacts.put(GRID_MEDIA_TYPE, bytes, token);
  const g = record.grid;
  return {
    status: 'raster',
    token,
    aoi_cid: aoi,
    band,
    tslot: record.tslot,
    derivation_cid: fact.fact_cid,
    record: `${ctx.config.prefix}:fact:${fact.cell}:${fact.fact_cid}`,
    artifact_cid: record.artifact.cid,
    artifact_url: `/v1/artifacts/${record.artifact.cid}`,
    media_type: GRID_MEDIA_TYPE,
    bytes: bytes.length,
    width: g.width,
    height: g.height,
    epsg: g.epsg,
    geotransform: g.geotransform,
    pixel_size_m: g.geotransform[1],
    nodata: 'NaN',
    bbox: box,
    scene: { id: record.scene.id, captured_at: record.scene.captured_at, cloud_cover: record.scene.cloud_cover, asset, href: record.scene.href },
    cells: cellAnchors(box, g.epsg, g.geotransform, g.width, g.height),
    receipt: issueReceipt(ctx, 'band_raster', [fact.cell], [fact.fact_cid], {
      field: { aoi_cid: aoi, derivation_cid: fact.fact_cid },
      merkle_proof: fact.proof,
      source_versions: record.source_versions,
    }),
  };
}
