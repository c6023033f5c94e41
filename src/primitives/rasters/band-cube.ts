/**
 * band_cube (POST /v1/band_cube, tool band_cube; docs/rasters.md, "band_cube"): one Sentinel-2
 * band over a lat/lng box through a range of time slots, as one float32 cube artifact. Each slot
 * gets the least cloudy scene of that slot whose footprint covers the box; every slice is read on
 * one grid, the first slice's window of its scene's UTM grid, and a scene not on that grid is not
 * resampled: its slot is an absence. The answer names the artifact, the signed record pinning
 * every slice's scene, asset and window, the svc:cube: token and a receipt whose field segment
 * binds (aoi_cid, derivation_cid). Slots without a slice are listed as absences, never zeros.
 */
import { bytesCid, contentId } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { isoSeconds, type Receipt } from '../../protocol/receipt.js';
import { cubeToken, validDate } from '../../protocol/token-grammar.js';
import { TEMPO_UNIT_S, tslotOf, type Tempo } from '../../protocol/tslot.js';
import { BoundedCache } from '../../lib/cache.js';
import { Pool } from '../../lib/pool.js';
import type { BoxScene, ReadOptions, Sentinel2Raster } from '../../sources/sentinel2-raster.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { roughPixels } from './band-raster.js';
import { CUBE_MEDIA_TYPE } from './cube-format.js';
import {
  alignedWindow,
  BAND_CUBE_RECIPE,
  cubeBytes,
  CUBES_AT_ONCE,
  cubeSourceVersions,
  MADE_CUBES_KEPT,
  MAX_CUBE_SLICES,
  readPlanes,
  slicePool,
  type BandCubeRecord,
  type CubeGrid,
  type CubeSliceRecord,
  type SliceAbsenceReason,
} from './cube-recipe.js';
import { isRecordOf, keepRecord } from './derivation.js';
import { aoiCid, canonicalBox, windowGeotransform, windowOfBox, type GriddedArtifact, type LatLngBox } from './geometry.js';
import { MAX_PIXELS_PER_SIDE, NATIVE_RESOLUTION_M, type RasterBand } from './recipe.js';
import { checkDeadline, S2_ASSETS, S2_SOURCE, sentinel2RasterOf, upstreamFailure } from './upstream.js';

export interface BandCubeRequest {
  bbox: LatLngBox;
  band: RasterBand;
  /** YYYY-MM-DD: the first day of the range; its time slot is the cube's first. */
  from: string;
  /** YYYY-MM-DD: the last day of the range (today at the latest); its time slot is the cube's last. */
  to: string;
}

interface SliceScene {
  id: string;
  captured_at: string;
  cloud_cover: number | null;
  asset: string;
  href: string;
}

/** One time slot of the answer: a plane of the cube, or why there is none. */
export type CubeSliceAnswer =
  | { tslot: number; starts_at: string; ends_at: string; state: 'present'; plane: number; scene: SliceScene }
  | { tslot: number; starts_at: string; ends_at: string; state: 'absent'; absence: { reason: SliceAbsenceReason; detail: string; scene?: string } };

export interface BandCubeCube extends GriddedArtifact {
  status: 'cube';
  token: string;
  aoi_cid: string;
  band: string;
  tslots: { lo: number; hi: number; tempo: string };
  /** Planes in the artifact (slots with a slice). */
  planes: number;
  nodata: 'NaN';
  bbox: LatLngBox;
  slices: CubeSliceAnswer[];
  receipt: Receipt;
}

export interface BandCubeAbsence {
  status: 'absence';
  aoi_cid: string;
  band: string;
  tslots: { lo: number; hi: number; tempo: string };
  bbox: LatLngBox;
  slices: CubeSliceAnswer[];
  receipt: Receipt;
}

export type BandCubeAnswer = BandCubeCube | BandCubeAbsence;

/** Cubes per responder: one request asked twice at once is made once; at most CUBES_AT_ONCE run. */
const cubes = new WeakMap<ServiceContext, { pool: Pool; inflight: Map<string, Promise<BandCubeAnswer>> }>();
function cubesOf(ctx: ServiceContext) {
  let c = cubes.get(ctx);
  if (!c) cubes.set(ctx, (c = { pool: new Pool(CUBES_AT_ONCE), inflight: new Map() }));
  return c;
}

/** The refusal of a box past the pixel cap, naming it. */
function tooLarge(band: RasterBand, width: number, height: number): SvcError {
  const res = NATIVE_RESOLUTION_M[band];
  return new SvcError(
    'invalid_argument',
    `bbox: the box is ${width} × ${height} pixels of ${band} at its native ${res} m; the cap band_cube.max_pixels_per_side is ${MAX_PIXELS_PER_SIDE} (see /v1/limits): split the box`,
    {
      field: 'bbox',
      cap: 'band_cube.max_pixels_per_side',
      max_pixels_per_side: MAX_PIXELS_PER_SIDE,
      width,
      height,
      pixel_size_m: res,
    },
  );
}

/** The tslot range of `from`..`to` in `tempo`; refuses bad dates, a reversed range, a day after today and a range past the slice cap. */
export function slotRange(from: string, to: string, tempo: Tempo, nowMs: number): { lo: number; hi: number } {
  for (const [k, v] of [
    ['from', from],
    ['to', to],
  ] as const)
    if (!validDate(v)) throw invalidArgument(k, `${JSON.stringify(v)} is not a calendar date YYYY-MM-DD`);
  if (to < from) throw invalidArgument('to', `${to} is before from (${from})`);
  if (Date.parse(`${to}T00:00:00Z`) > nowMs) throw invalidArgument('to', `${to} is after today (${isoSeconds(nowMs).slice(0, 10)}): no scene exists yet`);
  const lo = tslotOf(Date.parse(`${from}T12:00:00Z`) / 1000, tempo);
  const hi = tslotOf(Date.parse(`${to}T12:00:00Z`) / 1000, tempo);
  const n = hi - lo + 1;
  if (n > MAX_CUBE_SLICES) {
    const days = TEMPO_UNIT_S[tempo] / 86_400;
    throw new SvcError(
      'invalid_argument',
      `to: ${from} to ${to} spans ${n} time slots of ${days} days (tslots ${lo}..${hi}); the cap band_cube.max_slices is ${MAX_CUBE_SLICES} (see /v1/limits): split the range`,
      {
        field: 'to',
        cap: 'band_cube.max_slices',
        max_slices: MAX_CUBE_SLICES,
        slices: n,
        tslots: { lo, hi },
        slot_days: days,
      },
    );
  }
  return { lo, hi };
}

export async function bandCube(ctx: ServiceContext, input: BandCubeRequest, o: { deadline: number }): Promise<BandCubeAnswer> {
  const box = canonicalBox(input.bbox);
  const band = input.band;
  if (!(band in NATIVE_RESOLUTION_M)) throw invalidArgument('band', `${band} is not one of ${Object.keys(NATIVE_RESOLUTION_M).join(', ')}`);
  const tempo = (ctx.registry.bands.get(band)?.tempo ?? 'medium') as Tempo;
  const { lo, hi } = slotRange(input.from, input.to, tempo, ctx.now().getTime());
  const rough = roughPixels(box, band);
  if (rough.width > MAX_PIXELS_PER_SIDE + 2 || rough.height > MAX_PIXELS_PER_SIDE + 2) throw tooLarge(band, rough.width, rough.height);
  const s2 = sentinel2RasterOf(ctx);
  const key = `${aoiCid(box)}|${band}|${lo}|${hi}`;
  const { pool, inflight } = cubesOf(ctx);
  let p = inflight.get(key);
  if (!p) {
    p = pool.run(() => render(ctx, s2, box, band, { lo, hi, tempo }, o.deadline)).finally(() => inflight.delete(key));
    inflight.set(key, p);
  }
  return p;
}

interface Slot {
  tslot: number;
  startMs: number;
  endMs: number;
}

type SlotOutcome = { kind: 'absent'; reason: SliceAbsenceReason; detail: string; scene?: string } | { kind: 'scene'; scene: BoxScene };

async function render(ctx: ServiceContext, s2: Sentinel2Raster, box: LatLngBox, band: RasterBand, tslots: { lo: number; hi: number; tempo: Tempo }, deadline: number): Promise<BandCubeAnswer> {
  const aoi = aoiCid(box);
  const asset = S2_ASSETS[band];
  const ro: ReadOptions = { deadline };
  const unitMs = TEMPO_UNIT_S[tslots.tempo] * 1000;
  const nowMs = ctx.now().getTime();
  const slots: Slot[] = [];
  for (let t = tslots.lo; t <= tslots.hi; t++) slots.push({ tslot: t, startMs: t * unitMs, endMs: (t + 1) * unitMs });
  const range = { lo: tslots.lo, hi: tslots.hi, tempo: tslots.tempo };
  let made: { grid: CubeGrid; slices: CubeSliceRecord[]; planes: Array<{ values: Float64Array }>; absent: Map<number, Absent> };
  let inputs: string;
  try {
    // 1. The scene of each slot: one search per slot (all at once: at most 12 small requests), the slot's middle as the date of the order.
    const outcomes: SlotOutcome[] = await Promise.all(
      slots.map(async (s): Promise<SlotOutcome> => {
        const c = await s2.chooseSceneIn(box, asset, s.startMs, Math.min(nowMs, s.endMs - 1), s.startMs + unitMs / 2, ro);
        if (c.kind === 'none') return { kind: 'absent', reason: c.reason === 'no_scene_near_date' ? 'no_scene_in_slot' : 'outside_coverage', detail: c.detail };
        return { kind: 'scene', scene: c.scene };
      }),
    );
    // 2. Each chosen scene's grid (a COG header each, at once); the first slot with a scene sets the cube's grid.
    const grids = await Promise.all(outcomes.map((x) => (x.kind === 'scene' ? s2.assetGrid(x.scene, asset, ro) : null)));
    const first = grids.findIndex((g) => g !== null);
    const absent = new Map<number, Absent>();
    outcomes.forEach((x, i) => x.kind === 'absent' && absent.set(slots[i].tslot, x));
    if (first < 0) return absenceAnswer(ctx, aoi, band, box, range, slots, absent);
    const ref = grids[first]!;
    const window = windowOfBox(box, ref.epsg, ref.transform);
    if (window.width > MAX_PIXELS_PER_SIDE || window.height > MAX_PIXELS_PER_SIDE) throw tooLarge(band, window.width, window.height);
    const grid: CubeGrid = { epsg: ref.epsg, geotransform: windowGeotransform(ref.transform, window), width: window.width, height: window.height };
    // 3. The slices on that grid; a scene on another grid leaves its slot absent.
    const slices: CubeSliceRecord[] = [];
    outcomes.forEach((x, i) => {
      const g = grids[i];
      if (x.kind !== 'scene' || !g) return;
      const at = alignedWindow(grid, g.epsg, g.transform);
      if (!at) {
        absent.set(slots[i].tslot, {
          kind: 'absent',
          reason: 'off_grid',
          scene: x.scene.id,
          detail: `${x.scene.id} is on EPSG:${g.epsg} with ${g.transform[0]} m pixels from (${g.transform[2]}, ${g.transform[5]}); the cube's grid is EPSG:${grid.epsg}, ${grid.geotransform[1]} m from (${grid.geotransform[0]}, ${grid.geotransform[3]}) (tslot ${slots[first].tslot}'s scene), and a slice is never resampled`,
        });
        return;
      }
      const { scale, offset, rule } = g.rule;
      slices.push({
        tslot: slots[i].tslot,
        scene: {
          source: S2_SOURCE,
          collection: 'sentinel-2-l2a',
          id: x.scene.id,
          captured_at: x.scene.datetime,
          cloud_cover: x.scene.cloud_cover,
          processing_baseline: x.scene.processing_baseline,
          asset,
          href: g.href,
        },
        reflectance: { scale, offset, rule, nodata: [...g.nodata] },
        window: at,
      });
    });
    // 4. Made before in this process from the same choices: the record is answered without reading a pixel again.
    inputs = contentId({ recipe: BAND_CUBE_RECIPE, band, aoi: box, tslots: range, grid, slices, absences: absencesOf(absent) });
    const known = await madeBefore(ctx, inputs);
    if (known) {
      for (const a of known.record.absences) if (a.reason === 'no_data') absent.set(a.tslot, noData(a.scene ?? '', grid, asset));
      return cubeAnswer(ctx, known.fact, known.record, slots, absent);
    }
    // 5. The planes; a window without one valid sample is the absence no_data.
    const read = await readPlanes(s2, grid, slices, slicePool(ctx), ro);
    const kept = slices.filter((s, k) => {
      if (read[k].valid > 0) return true;
      absent.set(s.tslot, noData(s.scene.id, grid, asset));
      return false;
    });
    if (kept.length === 0) return absenceAnswer(ctx, aoi, band, box, range, slots, absent);
    made = { grid, slices: kept, planes: read.filter((r) => r.valid > 0), absent };
  } catch (e) {
    throw upstreamFailure(e, 'band_cube', { band });
  }
  checkDeadline(deadline, 'band_cube');
  const { grid, slices, planes, absent } = made;
  const bytes = cubeBytes(grid, slices, planes);
  const record: BandCubeRecord = {
    recipe: BAND_CUBE_RECIPE,
    band,
    aoi: box,
    aoi_cid: aoi,
    tslots: range,
    grid,
    slices,
    absences: absencesOf(absent),
    artifact: { cid: bytesCid(bytes), media_type: CUBE_MEDIA_TYPE, bytes: bytes.length },
    source_versions: cubeSourceVersions(slices),
  };
  const fact = await keepRecord(ctx, record, {
    primitive: 'band_cube',
    fn: BAND_CUBE_RECIPE,
    sources: [S2_SOURCE],
    args: { scenes: slices.map((s) => s.scene.id), asset, tslots: `${range.lo}..${range.hi}` },
  });
  await ctx.store.artifacts.put(CUBE_MEDIA_TYPE, bytes, cubeToken(ctx.config.prefix, { aoi_cid: aoi, band, lo: range.lo, hi: range.hi, derivation_cid: fact.fact_cid }));
  madeOf(ctx).set(inputs, fact.fact_cid);
  return cubeAnswer(ctx, fact, record, slots, absent);
}

type Absent = SlotOutcome & { kind: 'absent' };

function noData(scene: string, grid: CubeGrid, asset: string): Absent {
  return { kind: 'absent', reason: 'no_data', scene, detail: `every pixel of the ${grid.width} × ${grid.height} window of ${scene} ${asset} is no data` };
}

/** The record's list of absent slots, by tslot. */
function absencesOf(absent: Map<number, Absent>): BandCubeRecord['absences'] {
  return [...absent.entries()].sort((a, b) => a[0] - b[0]).map(([tslot, x]) => (x.scene ? { tslot, reason: x.reason, scene: x.scene } : { tslot, reason: x.reason }));
}

/**
 * Cubes this process made, by the content id of what was chosen before any pixel was read (slot
 * scenes, files, windows, the grid, the absences so far) → the record's fact_cid. The bytes are
 * a function of those choices, so a repeat that chooses the same answers the record; only if its
 * artifact is still held (else the cube is made again, which stores it again).
 */
const madeCubes = new WeakMap<ServiceContext, BoundedCache<string, string>>();
function madeOf(ctx: ServiceContext): BoundedCache<string, string> {
  let m = madeCubes.get(ctx);
  if (!m) madeCubes.set(ctx, (m = new BoundedCache('band_cube_made', { max: MADE_CUBES_KEPT })));
  return m;
}
async function madeBefore(ctx: ServiceContext, inputs: string): Promise<{ fact: StoredFact; record: BandCubeRecord } | null> {
  const cid = madeOf(ctx).get(inputs);
  if (!cid) return null;
  const fact = await ctx.store.getFact(cid);
  if (!isRecordOf(fact, BAND_CUBE_RECIPE)) return null;
  const record = fact!.body.value as BandCubeRecord;
  if ((await ctx.store.artifacts.info(record.artifact.cid))?.state !== 'stored') return null;
  return { fact: fact!, record };
}

/** The answer for a signed cube record. */
function cubeAnswer(ctx: ServiceContext, fact: StoredFact, record: BandCubeRecord, slots: Slot[], absent: Map<number, Absent>): BandCubeCube {
  const { grid, slices, tslots: range, aoi_cid: aoi, band } = record;
  const token = cubeToken(ctx.config.prefix, { aoi_cid: aoi, band, lo: range.lo, hi: range.hi, derivation_cid: fact.fact_cid });
  const plane = new Map(slices.map((s, k) => [s.tslot, k]));
  return {
    status: 'cube',
    token,
    aoi_cid: aoi,
    band,
    tslots: range,
    derivation_cid: fact.fact_cid,
    record: `${ctx.config.prefix}:fact:${fact.cell}:${fact.fact_cid}`,
    artifact_cid: record.artifact.cid,
    artifact_url: `/v1/artifacts/${record.artifact.cid}`,
    media_type: CUBE_MEDIA_TYPE,
    bytes: record.artifact.bytes,
    width: grid.width,
    height: grid.height,
    planes: slices.length,
    epsg: grid.epsg,
    geotransform: grid.geotransform,
    pixel_size_m: grid.geotransform[1],
    nodata: 'NaN',
    bbox: record.aoi,
    slices: slots.map((s) => {
      const k = plane.get(s.tslot);
      const when = { tslot: s.tslot, starts_at: isoSeconds(s.startMs), ends_at: isoSeconds(s.endMs) };
      if (k === undefined) return { ...when, state: 'absent' as const, absence: absenceOf(absent.get(s.tslot)!) };
      const sc = slices[k].scene;
      return { ...when, state: 'present' as const, plane: k, scene: { id: sc.id, captured_at: sc.captured_at, cloud_cover: sc.cloud_cover, asset: sc.asset, href: sc.href } };
    }),
    receipt: issueReceipt(ctx, 'band_cube', [fact.cell], [fact.fact_cid], {
      field: { aoi_cid: aoi, derivation_cid: fact.fact_cid },
      merkle_proof: fact.proof,
      source_versions: record.source_versions,
    }),
  };
}

function absenceOf(x: Absent): { reason: SliceAbsenceReason; detail: string; scene?: string } {
  return x.scene ? { reason: x.reason, detail: x.detail, scene: x.scene } : { reason: x.reason, detail: x.detail };
}

/** No slot has a slice: nothing is stored or signed, and every slot says why. */
function absenceAnswer(ctx: ServiceContext, aoi: string, band: string, box: LatLngBox, tslots: BandCubeAbsence['tslots'], slots: Slot[], absent: Map<number, Absent>): BandCubeAbsence {
  return {
    status: 'absence',
    aoi_cid: aoi,
    band,
    tslots,
    bbox: box,
    slices: slots.map((s) => ({ tslot: s.tslot, starts_at: isoSeconds(s.startMs), ends_at: isoSeconds(s.endMs), state: 'absent' as const, absence: absenceOf(absent.get(s.tslot)!) })),
    receipt: issueReceipt(ctx, 'band_cube', [], []),
  };
}
