/**
 * The cell's true-colour thumbnail (GET /v1/cells/:cell64/scene.png, tool cell_scene_rgb): a
 * 256 × 256 PNG of Sentinel-2 L2A red, green and blue around the cell centre, from the scene
 * the cell's point values come from (the connector's own scene choice for the current medium
 * tslot), north-up in the scene's UTM grid. A picture is only ever made from data: no scene,
 * an upstream failure or a timeout is a typed error, never a blank image.
 */
import { cellCenter, type LatLng } from '../../protocol/cell64.js';
import { SvcError } from '../../protocol/errors.js';
import { currentTslot } from '../../protocol/tslot.js';
import type { Materializer } from '../../sources/contract.js';
import { S2_SOURCE, type Sentinel2Connector } from '../../sources/sentinel2.js';
import type { NoScene, SceneFailed, SceneInfo } from '../../sources/sentinel2-rgb.js';
import type { ServiceContext } from '../context/context.js';
import { BoundedCache } from '../../lib/cache.js';
import { encodePngRgb, trueColour } from '../../lib/png.js';
import { Pool } from '../../lib/pool.js';
import { resolveCell } from '../reads/recall.js';

/** A rendered thumbnail. */
export interface SceneThumbnail {
  cell: string;
  width: number;
  height: number;
  png: Buffer;
  scene: SceneInfo;
  /** Top-left pixel of the picture in the scene's 10 m grid. */
  window: { col0: number; row0: number };
  /** The COGs the picture was read from, in R, G, B order. */
  assets: { red: string; green: string; blue: string };
}

/** Thumbnails kept per responder: a repeat for the same cell and scene is not read or encoded again. */
const CACHE_ENTRIES = 64;
const caches = new WeakMap<ServiceContext, BoundedCache<string, SceneThumbnail>>();
function cacheOf(ctx: ServiceContext): BoundedCache<string, SceneThumbnail> {
  let c = caches.get(ctx);
  if (!c) {
    c = new BoundedCache<string, SceneThumbnail>('scene_thumbnails', { max: CACHE_ENTRIES });
    caches.set(ctx, c);
  }
  return c;
}

/**
 * Renders in progress per responder (a second request for the same picture waits for the first)
 * and a bound on how many run at once: each holds three windows of reflectance and the blocks
 * they came from (a few MB), and asks the upstream for up to a dozen blocks.
 */
const RENDERS_AT_ONCE = 4;
const renders = new WeakMap<ServiceContext, { pool: Pool; inflight: Map<string, Promise<SceneThumbnail>> }>();
function rendersOf(ctx: ServiceContext) {
  let r = renders.get(ctx);
  if (!r) renders.set(ctx, (r = { pool: new Pool(RENDERS_AT_ONCE), inflight: new Map() }));
  return r;
}

/** The wired Sentinel-2 connector when it can draw thumbnails. */
function sentinel2Of(ctx: ServiceContext): Sentinel2Connector | undefined {
  const m = ctx.materializers.list().find((x: Materializer) => x.key === S2_SOURCE);
  return m && typeof (m as Partial<Sentinel2Connector>).sceneRgb === 'function' && typeof (m as Partial<Sentinel2Connector>).rgbScene === 'function' ? (m as Sentinel2Connector) : undefined;
}

/** The typed error for a cell without a thumbnail. */
function noScene(cell: string, r: NoScene): SvcError {
  const what = r.reason === 'outside_coverage' ? 'no Sentinel-2 scene covers' : 'no clear Sentinel-2 scene over';
  return new SvcError('cid_not_found', `${what} cell ${cell}: ${r.detail}`, { cell, reason: r.reason, detail: r.detail, ...(r.ref ? { scene: r.ref } : {}) });
}

/** The typed error for an upstream failure: a timeout, wrong bytes or a transport failure. */
function failure(cell: string, r: SceneFailed): SvcError {
  const o = r.outcome;
  const details = { cell, detail: o.reason };
  if (o.status === 'timeout') return new SvcError('compute_timeout', `cell_scene_rgb: ${o.reason}`, details);
  if (o.format_mismatch) return new SvcError('source_format_mismatch', o.reason, details);
  if (o.reason.startsWith('internal:')) return new SvcError('internal', 'internal error while reading the scene', details);
  return new SvcError('source_fetch_failed', o.reason, details);
}

function checkDeadline(deadline: number): void {
  if (Date.now() >= deadline) throw new SvcError('compute_timeout', 'cell_scene_rgb: the request deadline passed before the thumbnail was ready', {});
}

/** The 256 × 256 true-colour thumbnail of a cell (input `{cell64}`). */
export async function cellSceneRgb(ctx: ServiceContext, input: { cell64: string }, o: { deadline: number }): Promise<SceneThumbnail> {
  const { cell } = await resolveCell(ctx, input.cell64, 'cell64');
  const s2 = sentinel2Of(ctx);
  if (!s2)
    throw new SvcError('cid_not_found', `no Sentinel-2 connector (${S2_SOURCE}) is wired on this responder, so it has no scene thumbnails (see /v1/materializers)`, { cell, reason: 'no_connector' });
  checkDeadline(o.deadline);
  const center = cellCenter(cell);
  const band = ctx.registry.bands.get('s2.B04');
  // Every upstream request is bounded by the deadline itself (the client's timeout), so no extra abort signal.
  const opts = { deadline: o.deadline, tslot: currentTslot(band?.tempo ?? 'medium', ctx.now().getTime()) };

  // The scene choice is cached by the connector: asking it first lets a cached picture skip every read.
  const choice = await s2.rgbScene(cell, center, opts);
  if (choice.kind === 'none') throw noScene(cell, choice);
  if (choice.kind === 'failed') throw failure(cell, choice);
  const cache = cacheOf(ctx);
  const key = `${cell}|${choice.scene.id}`;
  const hit = cache.get(key);
  if (hit) return hit;

  const { pool, inflight } = rendersOf(ctx);
  let render = inflight.get(key);
  if (!render) {
    render = pool.run(() => renderThumbnail(ctx, s2, cell, center, opts)).finally(() => inflight.delete(key));
    inflight.set(key, render);
  }
  return render;
}

async function renderThumbnail(ctx: ServiceContext, s2: Sentinel2Connector, cell: string, center: LatLng, opts: { deadline: number; tslot: number }): Promise<SceneThumbnail> {
  const r = await s2.sceneRgb(cell, center, opts);
  if (r.kind === 'none') throw noScene(cell, r);
  if (r.kind === 'failed') throw failure(cell, r);
  checkDeadline(opts.deadline);
  const { rgb } = r;
  const thumb: SceneThumbnail = {
    cell,
    width: rgb.width,
    height: rgb.height,
    png: encodePngRgb(rgb.width, rgb.height, trueColour(rgb.red, rgb.green, rgb.blue, rgb.mask)),
    scene: r.scene,
    window: { col0: rgb.col0, row0: rgb.row0 },
    assets: { red: rgb.hrefs.red, green: rgb.hrefs.green, blue: rgb.hrefs.blue },
  };
  cacheOf(ctx).set(`${cell}|${r.scene.id}`, thumb);
  return thumb;
}
