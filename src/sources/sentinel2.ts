/**
 * Sentinel-2 L2A through Earth Search v1 (source earth_search_s2): STAC search of
 * `sentinel-2-l2a` at the cell centre, newest first, widening the cloud threshold and the
 * lookback stepwise; the first scene whose SCL pixel is clear is the cell's scene for the
 * tslot, and every band and index of that cell and tslot is read from it (one search, one
 * pixel read per asset, shared by the per-band requests). Reflectance = DN × scale + offset,
 * with the processing-baseline 04.00 offset (BOA_ADD_OFFSET −1000) handled per
 * `earthsearch:boa_offset_applied` (see reflectanceOf). The same scene choice serves the
 * cell's true-colour thumbnail (rgbScene, sceneRgb).
 */
import type { LatLng } from '../protocol/cell64.js';
import { BoundedCache } from '../lib/cache.js';
import type { AbsenceReason, Materializer, MaterializeOutcome, MaterializeRequest, ConnectorFactory } from './contract.js';
import { CogReader, type CogReadOptions } from './cog/reader.js';
import { failureOutcome, round } from './cog/outcome.js';
import { formatError } from './cog/tiff.js';
import { assetUrl, itemEpsg, notBegun, slotWindow, stacSearch, type StacItem } from './stac-search.js';
import { currentTslot, tslotOf } from '../protocol/tslot.js';
import { reflectanceOf, type ReflectanceRule } from './s2-reflectance.js';
import { sentinel2Raster, type Sentinel2Raster } from './sentinel2-raster.js';
import { readRgbWindows, RGB_ASSETS, sceneInfo, type NoScene, type RgbSceneChoice, type SceneFailed, type SceneRgb, type SceneRgbOptions } from './sentinel2-rgb.js';

export { reflectanceOf, type ReflectanceRule } from './s2-reflectance.js';

/** Registry source key of this connector. */
export const S2_SOURCE = 'earth_search_s2';
const SOURCE = S2_SOURCE;
const COLLECTION = 'sentinel-2-l2a';
/** Scene Classification classes that hide the surface: no data, saturated, cloud shadow, cloud medium/high, cirrus. */
export const SCL_MASKED: ReadonlySet<number> = new Set([0, 1, 3, 8, 9, 10]);
/** Widening steps: cloud-cover threshold (%) and tslots of lookback before the requested one. */
export const SEARCH_STEPS: ReadonlyArray<{ cloud: number; back: number }> = [
  { cloud: 20, back: 0 },
  { cloud: 50, back: 0 },
  { cloud: 80, back: 1 },
  { cloud: 100, back: 2 },
];
const SEARCH_LIMIT = 10;
/** SCL probes per cell and tslot: each costs a header and a block read of another COG. */
const MAX_PROBES = 8;
const DAY_MS = 86_400_000;

/** Earth Search v1 asset key of each reflectance band. */
export const S2_ASSETS: Readonly<Record<string, string>> = {
  's2.B02': 'blue',
  's2.B03': 'green',
  's2.B04': 'red',
  's2.B05': 'rededge1',
  's2.B08': 'nir',
  's2.B11': 'swir16',
  's2.B12': 'swir22',
};

type Refl = Record<string, number>;
type IndexResult = number | { absence: string };
const nd = (a: number, b: number): IndexResult => (a + b === 0 ? { absence: 'index undefined: the two reflectances sum to 0' } : (a - b) / (a + b));
const ratio = (num: number, den: number, what: string): IndexResult => (den === 0 ? { absence: `index undefined: ${what} is 0` } : num / den);

/** Index bands computed from one scene: the assets they read and their formula (bands.json). */
export const S2_INDICES: Readonly<Record<string, { assets: readonly string[]; compute(r: Refl, scl: number): IndexResult }>> = {
  'indices.ndvi': { assets: ['nir', 'red'], compute: (r) => nd(r.nir, r.red) },
  'indices.ndwi': { assets: ['green', 'nir'], compute: (r) => nd(r.green, r.nir) },
  'indices.mndwi': { assets: ['green', 'swir16'], compute: (r) => nd(r.green, r.swir16) },
  'indices.ndsi': { assets: ['green', 'swir16'], compute: (r) => nd(r.green, r.swir16) },
  'indices.nbr': { assets: ['nir', 'swir22'], compute: (r) => nd(r.nir, r.swir22) },
  'indices.ndmi': { assets: ['nir', 'swir16'], compute: (r) => nd(r.nir, r.swir16) },
  'indices.ndbi': { assets: ['swir16', 'nir'], compute: (r) => nd(r.swir16, r.nir) },
  'indices.ndci': { assets: ['rededge1', 'red'], compute: (r) => nd(r.rededge1, r.red) },
  'indices.evi': { assets: ['nir', 'red', 'blue'], compute: (r) => ratio(2.5 * (r.nir - r.red), r.nir + 6 * r.red - 7.5 * r.blue + 1, 'B08 + 6 B04 - 7.5 B02 + 1') },
  'indices.savi': { assets: ['nir', 'red'], compute: (r) => ratio(1.5 * (r.nir - r.red), r.nir + r.red + 0.5, 'B08 + B04 + 0.5') },
  'indices.bsi': { assets: ['swir16', 'red', 'nir', 'blue'], compute: (r) => ratio(r.swir16 + r.red - (r.nir + r.blue), r.swir16 + r.red + r.nir + r.blue, 'B11 + B04 + B08 + B02') },
  'indices.salinity_si': { assets: ['blue', 'red'], compute: (r) => (r.blue * r.red < 0 ? { absence: 'index undefined: B02 × B04 is negative' } : Math.sqrt(r.blue * r.red)) },
  'indices.swir_b12_b11_ratio': { assets: ['swir22', 'swir16'], compute: (r) => ratio(r.swir22, r.swir16, 'B11') },
  'indices.turbidity_red': {
    assets: ['red'],
    compute(r, scl) {
      // Dogliotti et al. 2015 holds over water only, below the red saturation constant.
      if (scl !== 6) return { absence: `turbidity needs a water pixel (SCL 6), got SCL ${scl}` };
      if (r.red <= 0 || r.red >= 0.1641) return { absence: `red reflectance ${r.red} is outside (0, 0.1641)` };
      return (228.1 * r.red) / (1 - r.red / 0.1641);
    },
  },
};
const DNBR = 'indices.dnbr';

/** The assets a band reads. */
function assetsOf(band: string): readonly string[] {
  if (S2_ASSETS[band]) return [S2_ASSETS[band]];
  if (band === DNBR) return ['nir', 'swir22'];
  return S2_INDICES[band]?.assets ?? [];
}

/** The scene chosen for a cell and tslot (its SCL pixel is clear). */
interface Scene {
  item: StacItem;
  capturedMs: number;
  scl: number;
  epsg?: number;
}
type SceneResult = { scene: Scene } | { absence: AbsenceReason; detail: string; ref?: string };

/** Sentinel-2 connector: point reads, plus the true-colour windows of the same scenes. */
export interface Sentinel2Connector extends Materializer {
  reader: CogReader;
  /** STAC searches sent. */
  readonly searches: number;
  /** The scene point reads of this cell and medium tslot use (its SCL pixel at `center` is clear). */
  rgbScene(cell: string, center: LatLng, o: SceneRgbOptions): Promise<RgbSceneChoice>;
  /** Reflectance windows of red, green and blue of that scene, centred on the cell's pixel. */
  sceneRgb(cell: string, center: LatLng, o: SceneRgbOptions): Promise<SceneRgb>;
  /** One band over an area (band_raster): scene choice for a box and window reads, on the same reader. */
  raster: Sentinel2Raster;
}

/** The band whose tempo and scene choice a thumbnail shares (a true-colour band). */
const THUMBNAIL_BAND = 's2.B04';

/** Connector for s2.B02…B12 and the single-scene indices (plus dNBR from a second, year-earlier scene). */
export const sentinel2Connector: ConnectorFactory = (deps) => {
  const base = deps.baseUrl(SOURCE);
  const reader = new CogReader(deps.client);
  // One scene choice per cell and tslot, shared by the per-band requests (kept ten minutes).
  const scenes = new BoundedCache<string, Promise<SceneResult>>('sentinel2_scenes', { max: 2048, ttlMs: 10 * 60_000 });
  let searches = 0;

  const readOpts = (req: MaterializeRequest, item: StacItem, asset: string): CogReadOptions => ({
    deadline: req.deadline,
    signal: req.signal,
    epsgHint: itemEpsg(item, item.assets[asset]),
  });

  /**
   * Probes candidates (in the given order) until one has a clear SCL pixel. The headers of
   * `prefetch` assets of the first candidate are read alongside its SCL pixel: it is usually
   * the scene, and that saves a round trip.
   */
  async function probe(req: MaterializeRequest, items: StacItem[], seen: Set<string>, budget: { left: number }, prefetch: readonly string[] = []): Promise<Scene | undefined> {
    for (const item of items) {
      if (seen.has(item.id) || budget.left <= 0) continue;
      if (seen.size === 0) {
        for (const a of prefetch) {
          try {
            reader.header(assetUrl(item, a, base), readOpts(req, item, a)).catch(() => undefined);
          } catch {
            // A bad href is reported when the asset is really read.
          }
        }
      }
      seen.add(item.id);
      budget.left--;
      const url = assetUrl(item, 'scl', base);
      const r = await reader.readPoint(url, req.center.lat, req.center.lng, readOpts(req, item, 'scl'));
      if (r.kind !== 'value' || SCL_MASKED.has(r.value)) continue;
      return { item, capturedMs: Date.parse(item.properties.datetime), scl: r.value, epsg: r.epsg };
    }
    return undefined;
  }

  async function chooseScene(req: MaterializeRequest, prefetch: readonly string[]): Promise<SceneResult> {
    const seen = new Set<string>();
    const budget = { left: MAX_PROBES };
    let first = Infinity;
    for (const step of SEARCH_STEPS) {
      const [start, end] = slotWindow(req.tslot, req.band.tempo, step.back);
      if (end < start) break;
      first = Math.min(first, start);
      searches++;
      const items = await stacSearch(
        deps.client,
        base,
        {
          collection: COLLECTION,
          lat: req.center.lat,
          lng: req.center.lng,
          startMs: start,
          endMs: end,
          limit: SEARCH_LIMIT,
          query: step.cloud < 100 ? { 'eo:cloud_cover': { lt: step.cloud } } : undefined,
        },
        req,
      );
      const scene = await probe(req, items, seen, budget, prefetch);
      if (scene) return { scene };
      if (budget.left <= 0) break;
    }
    const span = `${new Date(first).toISOString().slice(0, 10)} to the end of tslot ${req.tslot}`;
    if (seen.size === 0) return { absence: 'outside_coverage', detail: `no Sentinel-2 L2A scene covers the cell from ${span}` };
    return { absence: 'unavailable_capability', detail: `cloud/shadow/no data per SCL in all ${seen.size} scenes probed from ${span}`, ref: [...seen][0] };
  }

  function sceneFor(req: MaterializeRequest, prefetch = assetsOf(req.band.key)): Promise<SceneResult> {
    const key = `${req.cell}|${req.tslot}`;
    const hit = scenes.get(key);
    if (hit) return hit;
    const p = chooseScene(req, prefetch);
    scenes.set(key, p);
    // A failure is not an answer: the next request searches again.
    p.catch(() => scenes.delete(key));
    return p;
  }

  /** The clear scene nearest to one year before `post` (the dNBR pre-fire scene). */
  async function preScene(req: MaterializeRequest, post: Scene): Promise<Scene | undefined> {
    const target = post.capturedMs - 365 * DAY_MS;
    searches++;
    const items = await stacSearch(
      deps.client,
      base,
      {
        collection: COLLECTION,
        lat: req.center.lat,
        lng: req.center.lng,
        startMs: target - 30 * DAY_MS,
        endMs: target + 30 * DAY_MS,
        limit: 2 * SEARCH_LIMIT,
        query: { 'eo:cloud_cover': { lt: 80 } },
      },
      req,
    );
    items.sort((a, b) => Math.abs(Date.parse(a.properties.datetime) - target) - Math.abs(Date.parse(b.properties.datetime) - target));
    return probe(req, items, new Set(), { left: MAX_PROBES });
  }

  /** Reflectances of `assets` in `scene`, or the reason one of them has no value. */
  async function reflectances(
    req: MaterializeRequest,
    scene: Scene,
    assets: readonly string[],
  ): Promise<{ refl: Refl; dn: Record<string, number>; rule: ReflectanceRule; pixel?: [number, number] } | { absence: string }> {
    const reads = await Promise.all(
      assets.map(async (a) => {
        const nodata = scene.item.assets[a]?.['raster:bands']?.[0]?.nodata;
        const o = { ...readOpts(req, scene.item, a), nodata: typeof nodata === 'number' ? [nodata] : [] };
        return { a, r: await reader.readPoint(assetUrl(scene.item, a, base), req.center.lat, req.center.lng, o) };
      }),
    );
    const refl: Refl = {};
    const dn: Record<string, number> = {};
    let rule: ReflectanceRule | undefined;
    let pixel: [number, number] | undefined;
    for (const { a, r } of reads) {
      if (r.kind === 'missing') throw formatError(`asset ${a} of ${scene.item.id} is missing`);
      if (r.kind === 'outside') return { absence: `the cell centre lies outside asset ${a} of ${scene.item.id}` };
      if (r.kind === 'nodata') return { absence: `asset ${a} is nodata (${r.raw}) at the pixel` };
      rule = reflectanceOf(scene.item, a);
      refl[a] = round(r.value * rule.scale + rule.offset, 6);
      dn[a] = r.value;
      pixel ??= [r.col, r.row];
    }
    return { refl, dn, rule: rule!, pixel };
  }

  const provenance = (s: Scene) => ({
    source: SOURCE,
    ref: s.item.id,
    captured_at: new Date(s.capturedMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    version: String(s.item.properties['s2:processing_baseline'] ?? s.item.properties['sentinel:processing_baseline'] ?? 'unknown'),
  });

  async function run(req: MaterializeRequest): Promise<MaterializeOutcome> {
    const fn = req.band.function;
    // A slot that has not begun has no scenes yet: unknown, so skipped rather than signed.
    const future = notBegun(req.tslot, req.band.tempo);
    if (future) return { status: 'error', reason: future };
    const chosen = await sceneFor(req);
    if ('absence' in chosen) return { status: 'absence', reason: chosen.absence, detail: chosen.detail, provenance: { source: SOURCE, ref: chosen.ref }, fn };
    const scene = chosen.scene;
    const tslot = tslotOf(Math.floor(scene.capturedMs / 1000), req.band.tempo);
    const unavailable = (detail: string, s = scene): MaterializeOutcome => ({ status: 'absence', reason: 'unavailable_capability', detail, provenance: provenance(s), fn, tslot });

    const asset = S2_ASSETS[req.band.key];
    if (asset) {
      const r = await reflectances(req, scene, [asset]);
      if ('absence' in r) return unavailable(r.absence);
      return {
        status: 'value',
        value: r.refl[asset],
        provenance: provenance(scene),
        fn,
        tslot,
        args: { scene: scene.item.id, asset, dn: r.dn[asset], scale: r.rule.scale, offset: r.rule.offset, offset_rule: r.rule.rule, scl: scene.scl, pixel: r.pixel, epsg: scene.epsg },
      };
    }
    if (req.band.key === DNBR) {
      const post = await reflectances(req, scene, ['nir', 'swir22']);
      if ('absence' in post) return unavailable(post.absence);
      const pre = await preScene(req, scene);
      if (!pre) return unavailable('no clear pre scene within 30 days of one year before the post scene');
      const before = await reflectances(req, pre, ['nir', 'swir22']);
      if ('absence' in before) return unavailable(`pre scene ${pre.item.id}: ${before.absence}`);
      const nbrPost = nd(post.refl.nir, post.refl.swir22);
      const nbrPre = nd(before.refl.nir, before.refl.swir22);
      if (typeof nbrPost !== 'number' || typeof nbrPre !== 'number') return unavailable('NBR undefined in the pre or post scene');
      return {
        status: 'value',
        value: round(nbrPre - nbrPost, 6),
        provenance: provenance(scene),
        fn,
        tslot,
        args: { scene: scene.item.id, pre_scene: pre.item.id, nbr_post: round(nbrPost, 6), nbr_pre: round(nbrPre, 6), reflectance_post: post.refl, reflectance_pre: before.refl },
      };
    }
    const index = S2_INDICES[req.band.key];
    if (!index) return { status: 'error', reason: `internal: ${req.band.key} is not a Sentinel-2 band of this connector` };
    const r = await reflectances(req, scene, index.assets);
    if ('absence' in r) return unavailable(r.absence);
    const v = index.compute(r.refl, scene.scl);
    if (typeof v !== 'number') return unavailable(v.absence);
    if (!Number.isFinite(v)) return unavailable('index is not finite');
    return {
      status: 'value',
      value: round(v, 6),
      provenance: provenance(scene),
      fn,
      tslot,
      args: { scene: scene.item.id, reflectance: r.refl, dn: r.dn, offset_rule: r.rule.rule, scl: scene.scl, pixel: r.pixel, epsg: scene.epsg },
    };
  }

  /** A point-read request for the thumbnail band, so the scene cache is shared with point reads. */
  function thumbnailRequest(cell: string, center: LatLng, o: SceneRgbOptions): MaterializeRequest {
    const band = deps.registry.bands.get(THUMBNAIL_BAND);
    if (!band) throw new Error(`internal: ${THUMBNAIL_BAND} is not in the registry`);
    return { cell, band, center, tslot: o.tslot ?? currentTslot(band.tempo), deadline: o.deadline, signal: o.signal ?? new AbortController().signal };
  }

  // failureOutcome answers only timeouts and errors: never an absence, never a value.
  const failed = (e: unknown): SceneFailed => ({ kind: 'failed', outcome: failureOutcome(e, 'Sentinel-2 true colour') as SceneFailed['outcome'] });

  /** The chosen scene of a thumbnail request, or why there is none. */
  async function thumbnailScene(req: MaterializeRequest): Promise<{ scene: Scene } | NoScene> {
    const future = notBegun(req.tslot, req.band.tempo);
    if (future) return { kind: 'none', reason: 'no_clear_scene', detail: future };
    const chosen = await sceneFor(req, RGB_ASSETS);
    if ('scene' in chosen) return chosen;
    return { kind: 'none', reason: chosen.absence === 'outside_coverage' ? 'outside_coverage' : 'no_clear_scene', detail: chosen.detail, ref: chosen.ref };
  }

  async function rgbScene(cell: string, center: LatLng, o: SceneRgbOptions): Promise<RgbSceneChoice> {
    try {
      const chosen = await thumbnailScene(thumbnailRequest(cell, center, o));
      if (!('scene' in chosen)) return chosen;
      return { kind: 'scene', scene: sceneInfo(chosen.scene.item, chosen.scene.capturedMs, chosen.scene.epsg) };
    } catch (e) {
      return failed(e);
    }
  }

  async function sceneRgb(cell: string, center: LatLng, o: SceneRgbOptions): Promise<SceneRgb> {
    try {
      const chosen = await thumbnailScene(thumbnailRequest(cell, center, o));
      if (!('scene' in chosen)) return chosen;
      const { item, capturedMs, epsg } = chosen.scene;
      const rgb = await readRgbWindows(reader, item, base, center, o);
      if ('kind' in rgb) return rgb;
      return { kind: 'rgb', scene: sceneInfo(item, capturedMs, epsg ?? rgb.epsg), rgb };
    } catch (e) {
      return failed(e);
    }
  }

  const connector: Sentinel2Connector = {
    key: SOURCE,
    bands: [...Object.keys(S2_ASSETS), ...Object.keys(S2_INDICES), DNBR],
    history: true,
    reader,
    get searches() {
      return searches;
    },
    rgbScene,
    sceneRgb,
    raster: sentinel2Raster(deps.client, base, reader),
    async materialize(req) {
      try {
        return await run(req);
      } catch (e) {
        return failureOutcome(e, `Sentinel-2 ${req.band.key}`);
      }
    },
  };
  return connector;
};
