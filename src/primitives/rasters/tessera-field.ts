/**
 * tessera_field (GET /v1/tessera_field; docs/rasters.md, "tessera_field"): GeoTessera's 128-value
 * embeddings of one year over a lat/lng box, at the tiles' native resolution in their own CRS,
 * as one artifact in the source's representation (int8 values and float32 scales,
 * `application/x.svc-embed-q8.v1`). A responder-signed derivation record (`tessera_field@1`)
 * pins the tiles (ids, file hrefs, shapes, grids, windows), the year, the grid and the artifact's
 * cid; the receipt's field segment binds (aoi_cid, derivation_cid). No published tile over the
 * box, or no embedded pixel in it, is a typed absence and nothing is signed.
 */
import { bytesCid } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { Receipt } from '../../protocol/receipt.js';
import { BoundedCache } from '../../lib/cache.js';
import { Pool } from '../../lib/pool.js';
import type { Materializer } from '../../sources/contract.js';
import { tesseraTile, type GeoTesseraConnector } from '../../sources/geotessera.js';
import { TESSERA_DIM, type TesseraArea, type TesseraTile } from '../../sources/geotessera-area.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { aoiCid, canonicalBox, windowGeotransform, windowOfBox, type GriddedArtifact, type LatLngBox } from './geometry.js';
import { assembleField, type FieldGrid } from './tessera-assemble.js';
import { decodeField, encodeField, FIELD_MEDIA_TYPE, type EmbeddingField } from './tessera-format.js';
import { areaToken, isRecordOf, keepRecord, TESSERA_FIELD_RECIPE, TESSERA_SOURCE, type FieldRecord } from './tessera-record.js';
import { checkDeadline, upstreamFailure } from './upstream.js';

/** The cap: pixels per side of one field at the tiles' native resolution (2.56 km at 10 m). */
export const TESSERA_MAX_PIXELS_PER_SIDE = 256;
/** 0.1° tiles a box may touch (a capped box touches at most 2 × 2 below 75° of latitude). */
export const TESSERA_MAX_TILES = 9;
/** The first annual vintage GeoTessera publishes. */
export const TESSERA_FIRST_YEAR = 2017;
/** Fields one process assembles at once (each holds up to ~42 MiB of tile rows and output). */
export const FIELDS_AT_ONCE = 2;

export interface TesseraFieldRequest {
  bbox: LatLngBox;
  year: number;
}

export interface FieldAnswer extends GriddedArtifact {
  status: 'field';
  token: string;
  aoi_cid: string;
  year: number;
  channels: number;
  scales_per_pixel: number;
  valid_pixels: number;
  bbox: LatLngBox;
  tiles: Array<{ tile: string; pixels: number; lattice: 'shared' | 'nearest' }>;
  missing_tiles: string[];
  receipt: Receipt;
}

export interface FieldAbsence {
  status: 'absence';
  aoi_cid: string;
  year: number;
  bbox: LatLngBox;
  absence: { reason: 'outside_coverage' | 'no_data'; detail: string; tiles: string[] };
  receipt: Receipt;
}

/** A field made or found: its record and, when at hand, its decoded samples. */
export type FieldOutcome =
  | { kind: 'absence'; aoi_cid: string; box: LatLngBox; year: number; absence: FieldAbsence['absence'] }
  | { kind: 'field'; fact: StoredFact; record: FieldRecord; token: string; field?: EmbeddingField };

interface PerContext {
  pool: Pool;
  inflight: Map<string, Promise<FieldOutcome>>;
  rebuilds: Map<string, Promise<Uint8Array>>;
  /** Request (aoi_cid, year) → the record made for it: a repeat reads nothing upstream. */
  made: BoundedCache<string, string>;
}
const perContext = new WeakMap<ServiceContext, PerContext>();
function stateOf(ctx: ServiceContext): PerContext {
  let s = perContext.get(ctx);
  if (!s) perContext.set(ctx, (s = { pool: new Pool(FIELDS_AT_ONCE), inflight: new Map(), rebuilds: new Map(), made: new BoundedCache('tessera_field_records', { max: 1024, ttlMs: 10 * 60_000 }) }));
  return s;
}

/** The area reader of the wired GeoTessera connector; a typed error when none is wired. */
export function tesseraOf(ctx: ServiceContext): TesseraArea {
  const m = ctx.materializers.list().find((x: Materializer) => x.key === TESSERA_SOURCE) as Partial<GeoTesseraConnector> | undefined;
  if (!m?.area)
    throw new SvcError('cid_not_found', `no GeoTessera connector (${TESSERA_SOURCE}) is wired on this responder, so it makes no embedding fields (see /v1/materializers)`, { reason: 'no_connector' });
  return m.area;
}

/** Refuses a year before the first vintage or after the current one. */
export function checkYear(ctx: ServiceContext, year: number, field = 'year'): void {
  const last = ctx.now().getUTCFullYear();
  if (!Number.isInteger(year) || year < TESSERA_FIRST_YEAR || year > last)
    throw invalidArgument(field, `${year} is not a GeoTessera vintage: annual vintages run from ${TESSERA_FIRST_YEAR} to the current year (${last})`);
}

/** The 0.1° tiles whose cells meet the box, centre tile first, then by name. */
export function tilesOfBox(box: LatLngBox): string[] {
  const names = new Set<string>();
  const lat0 = Math.floor(box.min_lat * 10);
  const lat1 = Math.floor(box.max_lat * 10);
  const lng0 = Math.floor(box.min_lng * 10);
  const lng1 = Math.floor(box.max_lng * 10);
  if ((lat1 - lat0 + 1) * (lng1 - lng0 + 1) > TESSERA_MAX_TILES) {
    throw new SvcError(
      'invalid_argument',
      `bbox: the box touches ${(lat1 - lat0 + 1) * (lng1 - lng0 + 1)} GeoTessera tiles of 0.1°; a field of at most ${TESSERA_MAX_PIXELS_PER_SIDE} pixels per side touches at most ${TESSERA_MAX_TILES} (tessera_field.max_tiles, /v1/limits): split the box`,
      {
        field: 'bbox',
        cap: 'tessera_field.max_tiles',
        max_tiles: TESSERA_MAX_TILES,
        tiles: (lat1 - lat0 + 1) * (lng1 - lng0 + 1),
      },
    );
  }
  for (let a = lat0; a <= lat1; a++) for (let b = lng0; b <= lng1; b++) names.add(tesseraTile((a + 0.5) / 10, (b + 0.5) / 10));
  const centre = tesseraTile((box.min_lat + box.max_lat) / 2, (box.min_lng + box.max_lng) / 2);
  return [centre, ...[...names].filter((n) => n !== centre).sort()];
}

/** The refusal of a window past the cap, naming it. */
function tooLarge(width: number, height: number, res: number): SvcError {
  return new SvcError(
    'invalid_argument',
    `bbox: the box is ${width} × ${height} pixels of GeoTessera at its native ${res} m; the cap tessera_field.max_pixels_per_side is ${TESSERA_MAX_PIXELS_PER_SIDE} (see /v1/limits): split the box`,
    {
      field: 'bbox',
      cap: 'tessera_field.max_pixels_per_side',
      max_pixels_per_side: TESSERA_MAX_PIXELS_PER_SIDE,
      width,
      height,
      pixel_size_m: res,
    },
  );
}

/** A memoised tile lookup for one year (headers read once, in parallel). */
function tileLookup(area: TesseraArea, year: number, deadline: number): (name: string) => Promise<TesseraTile | null> {
  const seen = new Map<string, Promise<TesseraTile | null>>();
  return (name) => {
    let p = seen.get(name);
    if (!p) seen.set(name, (p = area.tile(name, year, area.hrefs(name, year), { deadline })));
    return p;
  };
}

/** The field's grid: the first published tile's lattice (centre tile first), over the box's window. */
async function gridOf(box: LatLngBox, names: string[], lookup: (n: string) => Promise<TesseraTile | null>): Promise<{ grid: FieldGrid; tile: string } | null> {
  const tiles = await Promise.all(names.map(lookup));
  const t = tiles.find((x) => x !== null);
  if (!t) return null;
  const g = t.geotransform;
  const window = windowOfBox(box, t.epsg, [g[1], 0, g[0], 0, g[5], g[3]]);
  if (window.width > TESSERA_MAX_PIXELS_PER_SIDE || window.height > TESSERA_MAX_PIXELS_PER_SIDE) throw tooLarge(window.width, window.height, g[1]);
  return { grid: { epsg: t.epsg, geotransform: windowGeotransform([g[1], 0, g[0], 0, g[5], g[3]], window), width: window.width, height: window.height }, tile: t.tile };
}

async function make(ctx: ServiceContext, box: LatLngBox, year: number, deadline: number): Promise<FieldOutcome> {
  const area = tesseraOf(ctx);
  const aoi = aoiCid(box);
  const names = tilesOfBox(box);
  const lookup = tileLookup(area, year, deadline);
  let made: { record: FieldRecord; bytes: Uint8Array; field: EmbeddingField };
  try {
    const g = await gridOf(box, names, lookup);
    if (!g)
      return {
        kind: 'absence',
        aoi_cid: aoi,
        box,
        year,
        absence: { reason: 'outside_coverage', detail: `no GeoTessera tile of ${year} is published over the box (tiles ${names.join(', ')})`, tiles: names },
      };
    const a = await assembleField(area, g.grid, lookup, { deadline });
    if (a.valid === 0) {
      return {
        kind: 'absence',
        aoi_cid: aoi,
        box,
        year,
        absence: {
          reason: 'no_data',
          detail: `no pixel of the ${g.grid.width} × ${g.grid.height} window carries an embedding for ${year}`,
          tiles: [...a.tiles.map((t) => t.tile), ...a.missing].sort(),
        },
      };
    }
    const bytes = encodeField(a.field);
    const record: FieldRecord = {
      recipe: TESSERA_FIELD_RECIPE,
      aoi: box,
      aoi_cid: aoi,
      year,
      grid: { ...g.grid, tile: g.tile },
      tiles: a.tiles,
      missing_tiles: a.missing,
      channels: TESSERA_DIM,
      scales_per_pixel: a.field.scalesPerPixel,
      valid_pixels: a.valid,
      artifact: { cid: bytesCid(bytes), media_type: FIELD_MEDIA_TYPE, bytes: bytes.length },
      source_versions: { [TESSERA_SOURCE]: `v1/${year}` },
    };
    made = { record, bytes, field: a.field };
  } catch (e) {
    throw upstreamFailure(e, 'tessera_field', { year });
  }
  checkDeadline(deadline, 'tessera_field');
  const fact = await keepRecord(ctx, made.record as unknown as FieldRecord & Record<string, unknown>, 'tessera_field', { year, tiles: made.record.tiles.map((t) => t.tile) });
  const token = areaToken(ctx.config.prefix, 'tessera', { aoi_cid: aoi, n: year, derivation_cid: fact.fact_cid });
  await ctx.store.artifacts.put(FIELD_MEDIA_TYPE, made.bytes, token);
  stateOf(ctx).made.set(`${aoi}|${year}`, fact.fact_cid);
  return { kind: 'field', fact, record: made.record, token, field: made.field };
}

/**
 * The field of `box` and `year`: the record made for the same request before (its artifact
 * rebuilt if evicted), else a new read. Concurrent identical requests are made once.
 */
export async function fieldForBox(ctx: ServiceContext, box: LatLngBox, year: number, deadline: number): Promise<FieldOutcome> {
  checkYear(ctx, year);
  tilesOfBox(box);
  const aoi = aoiCid(box);
  const st = stateOf(ctx);
  const key = `${aoi}|${year}`;
  const known = st.made.get(key);
  if (known) {
    const f = await ctx.store.getFact(known);
    if (isRecordOf<FieldRecord>(f, TESSERA_FIELD_RECIPE)) {
      const record = f.body.value;
      return { kind: 'field', fact: f, record, token: areaToken(ctx.config.prefix, 'tessera', { aoi_cid: aoi, n: year, derivation_cid: f.fact_cid }) };
    }
  }
  let p = st.inflight.get(key);
  if (!p) {
    p = st.pool.run(() => make(ctx, box, year, deadline)).finally(() => st.inflight.delete(key));
    st.inflight.set(key, p);
  }
  return p;
}

/** Checks that a tile read for a rebuild is still the one the record pins. */
function samePinned(t: TesseraTile | null, pin: FieldRecord['tiles'][number]): boolean {
  return (
    t !== null && t.height === pin.shape[0] && t.width === pin.shape[1] && t.scalesPerPixel === pin.scales_per_pixel && t.epsg === pin.epsg && t.geotransform.every((x, i) => x === pin.geotransform[i])
  );
}

/** Makes the artifact of `v` again from the pinned tiles; refuses bytes that differ from the signed cid. Nothing is stored here. */
async function rebuildBytes(ctx: ServiceContext, v: FieldRecord, deadline: number): Promise<Uint8Array> {
  const area = tesseraOf(ctx);
  const changed = (detail: string, extra: Record<string, unknown> = {}) =>
    new SvcError('source_format_mismatch', `tessera_field rebuild: ${detail}; the artifact cannot be rebuilt and nothing was stored`, {
      reason: 'upstream_changed',
      artifact_cid: v.artifact.cid,
      ...extra,
    });
  let bytes: Uint8Array;
  try {
    const pins = new Map(v.tiles.map((t) => [t.tile, t]));
    const reads = new Map<string, Promise<TesseraTile | null>>();
    const tileOf = (name: string) => {
      let p = reads.get(name);
      if (!p) {
        const pin = pins.get(name);
        if (!pin) {
          if (!v.missing_tiles.includes(name)) return Promise.reject(changed(`tile ${name} supplies a pixel but the record does not name it`));
          p = Promise.resolve(null);
        } else {
          p = area.tile(name, v.year, { embeddings: pin.embeddings, scales: pin.scales, landmask: pin.landmask }, { deadline }).then((t) => {
            if (!samePinned(t, pin)) throw changed(`tile ${name} is no longer the array the record pins (shape, scales or grid)`);
            return t;
          });
        }
        reads.set(name, p);
      }
      return p;
    };
    const { tile: _t, ...grid } = v.grid;
    const a = await assembleField(area, grid, tileOf, { deadline });
    bytes = encodeField(a.field);
  } catch (e) {
    throw upstreamFailure(e, 'tessera_field rebuild', { artifact_cid: v.artifact.cid });
  }
  const cid = bytesCid(bytes);
  if (cid !== v.artifact.cid) throw changed(`the rebuilt field hashes to ${cid}, not to the signed artifact_cid ${v.artifact.cid}: the upstream files changed`, { rebuilt_cid: cid });
  return bytes;
}

/**
 * The bytes of the field `f` names: as stored, or rebuilt from the record and stored again
 * (`rebuilt: true`). Concurrent rebuilds of one artifact are made once per process.
 */
export async function fieldBytes(ctx: ServiceContext, f: StoredFact & { body: { value: FieldRecord } }, token: string, deadline: number): Promise<{ bytes: Uint8Array; rebuilt: boolean }> {
  const v = f.body.value;
  const got = await ctx.store.artifacts.read(v.artifact.cid);
  if (got) return { bytes: got.bytes, rebuilt: false };
  const st = stateOf(ctx);
  let p = st.rebuilds.get(v.artifact.cid);
  if (!p) {
    p = (async () => {
      const bytes = await rebuildBytes(ctx, v, deadline);
      checkDeadline(deadline, 'tessera_field rebuild');
      await ctx.store.artifacts.put(FIELD_MEDIA_TYPE, bytes, token);
      return bytes;
    })().finally(() => st.rebuilds.delete(v.artifact.cid));
    st.rebuilds.set(v.artifact.cid, p);
  }
  return { bytes: await p, rebuilt: true };
}

/** Whether the artifact of a record is held; if not, it is rebuilt and stored. */
export async function ensureField(ctx: ServiceContext, f: StoredFact & { body: { value: FieldRecord } }, token: string, deadline: number): Promise<'stored' | 'rebuilt'> {
  if ((await ctx.store.artifacts.info(f.body.value.artifact.cid))?.state === 'stored') return 'stored';
  return (await fieldBytes(ctx, f, token, deadline)).rebuilt ? 'rebuilt' : 'stored';
}

/** The decoded field of an outcome (read from the store, or rebuilt, when not at hand). */
export async function fieldSamples(ctx: ServiceContext, o: Extract<FieldOutcome, { kind: 'field' }>, deadline: number): Promise<EmbeddingField> {
  if (o.field) return o.field;
  return decodeField((await fieldBytes(ctx, o.fact as StoredFact & { body: { value: FieldRecord } }, o.token, deadline)).bytes);
}

/** The answer for a field outcome. */
export function fieldAnswer(ctx: ServiceContext, o: FieldOutcome): FieldAnswer | FieldAbsence {
  if (o.kind === 'absence') return { status: 'absence', aoi_cid: o.aoi_cid, year: o.year, bbox: o.box, absence: o.absence, receipt: issueReceipt(ctx, 'tessera_field', [], []) };
  const { fact, record: v, token } = o;
  const g = v.grid;
  return {
    status: 'field',
    token,
    aoi_cid: v.aoi_cid,
    year: v.year,
    derivation_cid: fact.fact_cid,
    record: `${ctx.config.prefix}:fact:${fact.cell}:${fact.fact_cid}`,
    artifact_cid: v.artifact.cid,
    artifact_url: `/v1/artifacts/${v.artifact.cid}`,
    media_type: v.artifact.media_type,
    bytes: v.artifact.bytes,
    width: g.width,
    height: g.height,
    epsg: g.epsg,
    geotransform: g.geotransform,
    pixel_size_m: g.geotransform[1],
    channels: v.channels,
    scales_per_pixel: v.scales_per_pixel,
    valid_pixels: v.valid_pixels,
    bbox: v.aoi,
    tiles: v.tiles.map((t) => ({ tile: t.tile, pixels: t.pixels, lattice: t.lattice })),
    missing_tiles: v.missing_tiles,
    receipt: issueReceipt(ctx, 'tessera_field', [fact.cell], [fact.fact_cid], {
      field: { aoi_cid: v.aoi_cid, derivation_cid: fact.fact_cid },
      merkle_proof: fact.proof,
      source_versions: v.source_versions,
    }),
  };
}

/** GET /v1/tessera_field. */
export async function tesseraField(ctx: ServiceContext, input: TesseraFieldRequest, o: { deadline: number }): Promise<FieldAnswer | FieldAbsence> {
  const box = canonicalBox(input.bbox);
  const out = await fieldForBox(ctx, box, input.year, o.deadline);
  // A record found for a repeat still needs its bytes: an evicted artifact is made again now.
  if (out.kind === 'field' && !out.field) await ensureField(ctx, out.fact as StoredFact & { body: { value: FieldRecord } }, out.token, o.deadline);
  return fieldAnswer(ctx, out);
}
