/**
 * Cubes and raster sets over the API (docs/rasters.md): band_cube (one band over a box through a
 * range of time slots, as one float32 cube artifact with a signed record), cube_resolve (a cube
 * token back to its record and artifact, rebuilding an evicted cube), raster_bundle (a signed,
 * content-addressed set of 2 to 64 rasters) and raster_bundle_resolve (the set's members with
 * their records and artifacts). All are operations of the table and MCP tools in /mcp/full; the
 * artifacts are served by GET /v1/artifacts/<cid> (rasters.ts).
 */
import { Type } from '@sinclair/typebox';
import { bandCube } from '../../primitives/rasters/band-cube.js';
import { CUBE_MEDIA_TYPE } from '../../primitives/rasters/cube-format.js';
import { MAX_CUBE_SLICES } from '../../primitives/rasters/cube-recipe.js';
import { resolveCube } from '../../primitives/rasters/cube-resolve.js';
import { RASTER_BUNDLE_LIMITS, rasterBundle, resolveRasterBundle } from '../../primitives/rasters/raster-bundle.js';
import { MAX_PIXELS_PER_SIDE, RASTER_BANDS } from '../../primitives/rasters/recipe.js';
import { defineOperation, type Operation } from '../operations.js';
import { OneOf } from '../schemas/inputs.js';
import { Closed, Nullable, ServedFact, Signed } from '../schemas/responses.js';
import { b32, BandRasterInput, Box, Geotransform, RasterToken } from './rasters.js';

const Day = (what: string) => Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: what });
const CubeToken = Type.String({ minLength: 10, maxLength: 400, description: 'svc:cube:<aoi_cid>:<band>:<lo>..<hi>:<derivation_cid>' });
const RastersetToken = Type.String({ minLength: 10, maxLength: 400, description: 'svc:rasterset:<set_cid>:<derivation_cid>' });
const Tslots = Closed(
  {
    lo: Type.Integer({ minimum: 0 }),
    hi: Type.Integer({ minimum: 0 }),
    tempo: Type.String({ description: "the band's tempo (s2 bands: medium, 30-day slots)" }),
  },
  'the time slots asked for, both ends included',
);
const SliceTimes = {
  tslot: Type.Integer({ minimum: 0 }),
  starts_at: Type.String({ description: "the slot's first second (UTC)" }),
  ends_at: Type.String({ description: "the next slot's first second (UTC)" }),
};
const Slice = Type.Union([
  Closed({
    ...SliceTimes,
    state: Type.Literal('present'),
    plane: Type.Integer({ minimum: 0, maximum: MAX_CUBE_SLICES - 1, description: "index of this slice's plane in the cube file" }),
    scene: Closed({ id: Type.String(), captured_at: Type.String(), cloud_cover: Nullable(Type.Number()), asset: Type.String(), href: Type.String() }),
  }),
  Closed({
    ...SliceTimes,
    state: Type.Literal('absent'),
    absence: Closed({
      reason: OneOf(['no_scene_in_slot', 'outside_coverage', 'off_grid', 'no_data'] as const),
      detail: Type.String(),
      scene: Type.Optional(Type.String({ description: 'the scene chosen for the slot but not used (off_grid, no_data)' })),
    }),
  }),
]);
const Slices = Type.Array(Slice, { minItems: 1, maxItems: MAX_CUBE_SLICES, description: 'every slot of the range, in time order' });
const ArtifactRef = Closed({ cid: b32, media_type: Type.String(), bytes: Type.Integer(), url: Type.String(), state: OneOf(['stored', 'rebuilt'] as const) });

export const bandCubeOp = defineOperation({
  name: 'band_cube',
  method: 'POST',
  path: '/v1/band_cube',
  summary: 'One Sentinel-2 band over a box through a range of 30-day time slots, as one float32 cube artifact on one UTM grid, with a signed record and an svc:cube: token',
  description:
    `Use for a time series of the pixels of an area (change, phenology, compositing). Input {bbox {min_lat, min_lng, max_lat, max_lng}, band (${RASTER_BANDS.join(', ')}), from, to (YYYY-MM-DD, to no later than today)}: ` +
    `every 30-day time slot (tslot) from the one holding \`from\` to the one holding \`to\`, at most ${MAX_CUBE_SLICES} slots (more: 422 invalid_argument naming the cap band_cube.max_slices). ` +
    "Each slot gets the least cloudy Sentinel-2 L2A scene of that slot whose footprint covers the whole box; every slice is read on one grid, the first slice's window of its scene's UTM grid, at native resolution and never resampled. " +
    `At most ${MAX_PIXELS_PER_SIDE} pixels per side (band_cube.max_pixels_per_side). ` +
    'Answer {status: cube, token (svc:cube:…; POST /v1/cube/resolve), record (svc:fact: handle of the signed record), derivation_cid, artifact_cid, artifact_url (GET: the cube file application/x.svc-cube-f32.v1, layout in docs/rasters.md: header, one entry per plane, then the planes), width, height, planes, epsg, geotransform, slices (every slot in time order: state present with its plane index and scene, or state absent with reason no_scene_in_slot | outside_coverage | off_grid | no_data), receipt (field segment: aoi_cid, derivation_cid)}; ' +
    'absent slots have no plane (never zeros). {status: absence, slices} when no slot has a slice. The same request again answers the same token.',
  tags: ['read'],
  input: Type.Object(
    {
      bbox: Box,
      band: OneOf(RASTER_BANDS),
      from: Day("YYYY-MM-DD: the first day; its time slot is the cube's first"),
      to: Day("YYYY-MM-DD: the last day (today at the latest); its time slot is the cube's last"),
    },
    { additionalProperties: false },
  ),
  output: Type.Union([
    Signed({
      status: Type.Literal('cube'),
      token: CubeToken,
      aoi_cid: Type.String({ description: '26-character anchor of the canonical box' }),
      band: Type.String(),
      tslots: Tslots,
      derivation_cid: b32,
      record: Type.String({ description: 'the signed cube record as an svc:fact: handle (/v1/memory_token/resolve, /v1/fetch with derivation_cid)' }),
      artifact_cid: b32,
      artifact_url: Type.String({ description: 'GET it (relative to this responder)' }),
      media_type: Type.Literal(CUBE_MEDIA_TYPE),
      bytes: Type.Integer(),
      width: Type.Integer({ minimum: 1, maximum: MAX_PIXELS_PER_SIDE }),
      height: Type.Integer({ minimum: 1, maximum: MAX_PIXELS_PER_SIDE }),
      planes: Type.Integer({ minimum: 1, maximum: MAX_CUBE_SLICES, description: 'planes in the cube file: the slots with a slice' }),
      epsg: Type.Integer(),
      geotransform: Geotransform,
      pixel_size_m: Type.Number(),
      nodata: Type.Literal('NaN'),
      bbox: Box,
      slices: Slices,
    }),
    Signed({ status: Type.Literal('absence'), aoi_cid: Type.String(), band: Type.String(), tslots: Tslots, bbox: Box, slices: Slices }),
  ]),
  mcp: 'full',
  run: (ctx, input, call) => bandCube(ctx, input, call),
});

export const cubeResolveOp = defineOperation({
  name: 'cube_resolve',
  method: 'POST',
  path: '/v1/cube/resolve',
  summary: 'An svc:cube: token to its signed record and cube artifact; an evicted cube is rebuilt from the record, byte for byte',
  description:
    "Use when you hold an svc:cube: token and need its pixels or proof of how they were made. Answer {token, aoi_cid, band, tslots, derivation_cid, record (the signed record: every slice's scene, asset href and window, the absences, the artifact cid; with its own receipt), artifact {cid, media_type, bytes, url (GET it), state: stored | rebuilt}, receipt (field segment: aoi_cid, derivation_cid)}. " +
    'An evicted cube is read again from the pinned asset files and windows (no scene search) and stored (state rebuilt); if an upstream file no longer gives the signed bytes: source_format_mismatch, nothing stored. Unknown record: cid_not_found; a token whose area, band or range differs from the record: token_claim_mismatch.',
  tags: ['read'],
  input: Type.Object({ token: CubeToken }, { additionalProperties: false }),
  output: Signed({
    token: CubeToken,
    aoi_cid: Type.String(),
    band: Type.String(),
    tslots: Tslots,
    derivation_cid: b32,
    record: ServedFact,
    artifact: ArtifactRef,
  }),
  mcp: 'full',
  run: (ctx, input, call) => resolveCube(ctx, input, call),
});

const BundleItem = Closed({
  token: RasterToken,
  derivation_cid: b32,
  aoi_cid: Type.String(),
  band: Type.String(),
  tslot: Type.Integer({ minimum: 0 }),
  artifact_cid: b32,
  artifact_url: Type.String(),
  media_type: Type.String(),
  bytes: Type.Integer(),
  from_request: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, description: 'positions in `rasters` of the items that gave this member' }),
});

export const rasterBundleOp = defineOperation({
  name: 'raster_bundle',
  method: 'POST',
  path: '/v1/raster_bundle',
  summary: `A signed, content-addressed set of ${RASTER_BUNDLE_LIMITS.min} to ${RASTER_BUNDLE_LIMITS.max} rasters under one svc:rasterset: token`,
  description:
    `Use to hand several rasters on as one reference (bands of one area, one band over neighbouring boxes, dates to compare). Input {rasters: [${RASTER_BUNDLE_LIMITS.min}..${RASTER_BUNDLE_LIMITS.max} items, each {token: svc:raster:…} or a band_raster request {bbox, band, observed_on?}]}; ` +
    "requests are made as POST /v1/band_raster makes them. The set is the members' derivation_cids, sorted and without repeats (fewer than 2 distinct, or more than 64 items: 422 invalid_argument naming the cap raster_bundle), so the same set always answers the same token. " +
    "Answer {status: rasterset, token (svc:rasterset:<set_cid>:<derivation_cid>; POST /v1/raster_bundle/resolve), set_cid, aoi_cid and bbox (the smallest box holding every member), derivation_cid and record (the signed set record), count, members [{token, derivation_cid, band, tslot, artifact_cid, artifact_url, from_request}], receipt (fact_cids: the set record, then every member's record)}; " +
    '{status: absence, absences [{index, reason, detail}]} when a requested raster has no scene: nothing is signed.',
  tags: ['read'],
  input: Type.Object(
    {
      rasters: Type.Array(Type.Union([Type.Object({ token: RasterToken }, { additionalProperties: false }), BandRasterInput]), {
        description: `${RASTER_BUNDLE_LIMITS.min} to ${RASTER_BUNDLE_LIMITS.max} items: {token} of an existing raster, or a band_raster request`,
      }),
    },
    { additionalProperties: false },
  ),
  output: Type.Union([
    Signed({
      status: Type.Literal('rasterset'),
      token: RastersetToken,
      set_cid: Type.String({ description: '26-character anchor of the sorted member derivation_cids' }),
      aoi_cid: Type.String(),
      bbox: Box,
      derivation_cid: b32,
      record: Type.String({ description: 'the signed set record as an svc:fact: handle' }),
      count: Type.Integer({ minimum: RASTER_BUNDLE_LIMITS.min, maximum: RASTER_BUNDLE_LIMITS.max }),
      members: Type.Array(BundleItem, { minItems: RASTER_BUNDLE_LIMITS.min, maxItems: RASTER_BUNDLE_LIMITS.max }),
    }),
    Signed({
      status: Type.Literal('absence'),
      absences: Type.Array(Closed({ index: Type.Integer({ minimum: 0 }), aoi_cid: Type.String(), band: Type.String(), reason: Type.String(), detail: Type.String() }), { minItems: 1 }),
    }),
  ]),
  mcp: 'full',
  run: (ctx, input, call) => rasterBundle(ctx, input, call),
});

export const rasterBundleResolveOp = defineOperation({
  name: 'raster_bundle_resolve',
  method: 'POST',
  path: '/v1/raster_bundle/resolve',
  summary: "An svc:rasterset: token to its signed set record and every member's record and artifact; evicted members are rebuilt",
  description:
    "Use when you hold an svc:rasterset: token. Answer {token, set_cid, aoi_cid, bbox, derivation_cid, record (the signed set record), members [{token, derivation_cid, aoi_cid, band, tslot, record (the member's signed raster record), artifact {cid, media_type, bytes, url (GET it), state: stored | rebuilt}}], receipt (fact_cids: the set record, then every member's)}. " +
    "A member whose artifact was evicted is rebuilt byte for byte from its record, as POST /v1/raster/resolve does. Unknown record: cid_not_found; a set_cid that is not the anchor of the record's members: token_claim_mismatch.",
  tags: ['read'],
  input: Type.Object({ token: RastersetToken }, { additionalProperties: false }),
  output: Signed({
    token: RastersetToken,
    set_cid: Type.String(),
    aoi_cid: Type.String(),
    bbox: Box,
    derivation_cid: b32,
    record: ServedFact,
    members: Type.Array(
      Closed({
        token: RasterToken,
        derivation_cid: b32,
        aoi_cid: Type.String(),
        band: Type.String(),
        tslot: Type.Integer({ minimum: 0 }),
        record: ServedFact,
        artifact: ArtifactRef,
      }),
      { minItems: RASTER_BUNDLE_LIMITS.min, maxItems: RASTER_BUNDLE_LIMITS.max },
    ),
  }),
  mcp: 'full',
  run: (ctx, input, call) => resolveRasterBundle(ctx, input, call),
});

export const CUBE_OPS: Operation[] = [bandCubeOp, cubeResolveOp, rasterBundleOp, rasterBundleResolveOp];
