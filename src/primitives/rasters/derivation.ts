/**
 * The derivation record of a raster (docs/rasters.md, "The derivation record"): a record of the
 * attest-only band `raster.derivation`, signed by the responder through the write path like any
 * fact and filed under the `svc:entity:` subject anchored on its value. It pins everything needed
 * to make the artifact again, byte for byte: the scene and the asset file, the reflectance rule,
 * the window in the scene's grid, the grid's georeferencing, and the artifact's cid. Its fact_cid
 * is the `derivation_cid` of the raster token and of the receipt's field segment.
 *
 * The value holds only what the artifact depends on (not when or by what request it was made),
 * so asking for the same box and band again finds the same record and answers the same token.
 */
import { anchorId, contentId } from '../../protocol/cid.js';
import type { StoredFact } from '../../store/contract.js';
import { mintedBody, mintFacts } from '../write/attest.js';
import type { ServiceContext } from '../context/context.js';
import type { Affine, LatLngBox } from './geometry.js';

/** The attest-only record band of raster derivations (registry bands.json). */
export const DERIVATION_BAND = 'raster.derivation';
/** The recipe band_raster follows: DN × scale + offset of one asset over a window, as float32 rows. */
export const BAND_RASTER_RECIPE = 'band_raster@1';

/** The value of a band_raster derivation record (every field is signed). */
export interface BandRasterRecord {
  recipe: typeof BAND_RASTER_RECIPE;
  band: string;
  /** The canonical box and its anchor. */
  aoi: LatLngBox;
  aoi_cid: string;
  /** The band's tslot of the capture time (the token's tslot). */
  tslot: number;
  scene: {
    source: string;
    collection: string;
    id: string;
    /** Capture time, ISO 8601 UTC to the second. */
    captured_at: string;
    cloud_cover: number | null;
    processing_baseline: string | null;
    asset: string;
    href: string;
  };
  /** reflectance = DN × scale + offset, then rounded to float32; DNs equal to a nodata value (and NaN) are no data. */
  reflectance: { scale: number; offset: number; rule: string; nodata: number[] };
  /** The window of the asset's grid (its pixel (col0, row0) is the artifact's (0, 0)) and the artifact's georeferencing. */
  grid: { epsg: number; geotransform: Affine; width: number; height: number; col0: number; row0: number };
  artifact: { cid: string; media_type: string; bytes: number };
  /** Upstream product versions (the receipt's source_versions). */
  source_versions: Record<string, string>;
}

/** How a record is signed: the primitive minting it, its recipe, its sources and the derivation args. */
export interface RecordMeta {
  primitive: string;
  fn: string;
  sources: string[];
  args: Record<string, unknown>;
}

/**
 * The signed record for `value` in the band `raster.derivation`: an existing one with the same
 * value (asked before), else a fresh one through the write path. band_raster, band_cube and
 * raster_bundle records share the band; the value's `recipe` tells them apart.
 */
export async function keepRecord(ctx: ServiceContext, value: object, meta: RecordMeta): Promise<StoredFact> {
  const subject = `svc:entity:${anchorId(value)}`;
  const cid = contentId(value);
  const prior = await ctx.store.latest({ cell: subject, bands: [DERIVATION_BAND], tslot: 0, scope: null });
  // Only a responder key (level L3) writes the band, so any such record was signed by a responder of this deployment.
  const same = prior.find((f) => contentId(f.body.value) === cid);
  if (same) return same;
  const body = mintedBody(ctx, {
    kind: 'primary',
    cell: subject,
    band: DERIVATION_BAND,
    tslot: 0,
    value,
    unit: 'record',
    provenance: `${ctx.config.prefix}.${meta.primitive}`,
    derivation: { fn: meta.fn, sources: meta.sources, args: meta.args },
  });
  const res = await mintFacts(ctx, [body], meta.primitive);
  const stored = await ctx.store.getFact(res.fact_cids[0]);
  if (!stored) throw new Error(`internal: derivation record ${res.fact_cids[0]} was accepted but cannot be read back`);
  return stored;
}

/** The signed record of a band_raster value. */
export function keepDerivation(ctx: ServiceContext, value: BandRasterRecord): Promise<StoredFact> {
  return keepRecord(ctx, value, { primitive: 'band_raster', fn: BAND_RASTER_RECIPE, sources: [value.scene.source], args: { scene: value.scene.id, asset: value.scene.asset } });
}

/** Whether a stored fact is a record of the band `raster.derivation` made by `recipe`. */
export function isRecordOf<T = unknown>(f: StoredFact | null, recipe: string): f is StoredFact & { body: { value: T } } {
  if (!f || f.band !== DERIVATION_BAND) return false;
  const v = f.body.value as { recipe?: unknown } | null;
  return typeof v === 'object' && v !== null && v.recipe === recipe;
}

/**
 * Whether a stored fact is a band_raster derivation record. The band's min_level is L3, which only
 * a responder's own key has, so every such fact was signed by a responder of the deployment (on
 * PostgreSQL possibly another one, with its own key).
 */
export function isBandRasterRecord(f: StoredFact | null): f is StoredFact & { body: { value: BandRasterRecord } } {
  return isRecordOf(f, BAND_RASTER_RECIPE);
}
