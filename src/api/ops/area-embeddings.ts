/**
 * Embeddings over an area (docs/rasters.md, "tessera_field" and "region_archetype_map"), REST
 * only: GET /v1/tessera_field (GeoTessera over a box as an int8 + scales artifact with a signed
 * derivation record), POST /v1/region_archetype_map (k-means archetypes of a region's embeddings
 * as a grid artifact), and the resolve routes that give a token's record and rebuild an evicted
 * artifact. The artifacts are served by GET /v1/artifacts/<cid>.
 */
import { Type } from '@sinclair/typebox';
import { ARCHETYPE_K, MIN_PIXELS_PER_ARCHETYPE, regionArchetypeMap } from '../../primitives/rasters/archetype-map.js';
import { PLACE_RADIUS_M, REGION_MAX_CELLS } from '../../primitives/rasters/archetype-region.js';
import { resolveArchetypes } from '../../primitives/rasters/archetype-resolve.js';
import { GRID_MEDIA_TYPE } from '../../primitives/rasters/grid-format.js';
import { TESSERA_FIRST_YEAR, TESSERA_MAX_PIXELS_PER_SIDE, TESSERA_MAX_TILES, tesseraField } from '../../primitives/rasters/tessera-field.js';
import { FIELD_MEDIA_TYPE } from '../../primitives/rasters/tessera-format.js';
import { resolveField } from '../../primitives/rasters/tessera-resolve.js';
import { defineOperation, type Operation } from '../operations.js';
import { OneOf } from '../schemas/inputs.js';
import { Closed, ResolvedPlace, ServedFact, Signed } from '../schemas/responses.js';

const b32 = Type.String({ pattern: '^[a-z2-7]+$' });
const lat = (description: string) => Type.Number({ minimum: -90, maximum: 90, description });
const lng = (description: string) => Type.Number({ minimum: -180, maximum: 180, description });
const Box = Closed({ min_lat: lat('south'), min_lng: lng('west'), max_lat: lat('north'), max_lng: lng('east') }, 'a lat/lng box (WGS 84 degrees); kept to 7 decimals (the canonical box)');
const Geotransform = Type.Array(Type.Number(), {
  minItems: 6,
  maxItems: 6,
  description: "GDAL order: [x of the top-left corner, pixel width, 0, y of the top-left corner, 0, -pixel height], in the EPSG code's units (metres)",
});
const Year = Type.Integer({
  minimum: TESSERA_FIRST_YEAR,
  maximum: 2100,
  description: `the GeoTessera annual vintage (${TESSERA_FIRST_YEAR} to the current year; a tile not published for it is an absence)`,
});
const FieldToken = Type.String({ minLength: 10, maxLength: 200, description: 'svc:tessera:<aoi_cid>:<year>:<derivation_cid>' });
const ArchetypesToken = Type.String({ minLength: 10, maxLength: 200, description: 'svc:archetypes:<aoi_cid>:<k>:<derivation_cid>' });
const Side = Type.Integer({ minimum: 1, maximum: TESSERA_MAX_PIXELS_PER_SIDE });
const Artifact = Closed({ cid: b32, media_type: Type.String(), bytes: Type.Integer(), url: Type.String(), state: OneOf(['stored', 'rebuilt'] as const) });
const FieldRef = Closed({ token: FieldToken, derivation_cid: b32, artifact_cid: b32 }, 'the tessera_field the map was computed from (its record is bound by the receipt too)');

const FieldAnswer = Signed({
  status: Type.Literal('field'),
  token: FieldToken,
  aoi_cid: Type.String({ description: '26-character anchor of the canonical box' }),
  year: Type.Integer(),
  derivation_cid: b32,
  record: Type.String({ description: 'the signed tessera_field@1 record as an svc:fact: handle (/v1/memory_token/resolve)' }),
  artifact_cid: b32,
  artifact_url: Type.String({ description: 'GET it (relative to this responder)' }),
  media_type: Type.Literal(FIELD_MEDIA_TYPE),
  bytes: Type.Integer(),
  width: Side,
  height: Side,
  epsg: Type.Integer(),
  geotransform: Geotransform,
  pixel_size_m: Type.Number(),
  channels: Type.Literal(128),
  scales_per_pixel: Type.Union([Type.Literal(1), Type.Literal(128)]),
  valid_pixels: Type.Integer({ minimum: 1, description: 'pixels carrying an embedding' }),
  bbox: Box,
  tiles: Type.Array(Closed({ tile: Type.String(), pixels: Type.Integer(), lattice: OneOf(['shared', 'nearest'] as const) }), {
    description: "tiles supplying pixels; lattice nearest: the tile pixel holding each field pixel's centre (another CRS or pixel lattice)",
  }),
  missing_tiles: Type.Array(Type.String(), { description: 'tiles named by some pixel centre but not published for the year (those pixels have no embedding)' }),
});

const FieldAbsence = Signed({
  status: Type.Literal('absence'),
  aoi_cid: Type.String(),
  year: Type.Integer(),
  bbox: Box,
  absence: Closed({ reason: OneOf(['outside_coverage', 'no_data'] as const), detail: Type.String(), tiles: Type.Array(Type.String()) }),
});

export const tesseraFieldOp = defineOperation({
  name: 'tessera_field',
  method: 'GET',
  path: '/v1/tessera_field',
  summary: "GeoTessera 128-value embeddings of one year over a box, as an int8 + scales artifact in the tiles' own grid, with a signed derivation record",
  description:
    `Query parameters: min_lat, min_lng, max_lat, max_lng, year. The field is read from the GeoTessera tiles covering the box at their native resolution (10 m) in the grid of the tile holding the box centre; each pixel is the embedding of the tile named by its centre. At most ${TESSERA_MAX_PIXELS_PER_SIDE} pixels per side (tessera_field.max_pixels_per_side) and ${TESSERA_MAX_TILES} tiles (tessera_field.max_tiles): larger boxes are 422 invalid_argument naming the cap. ` +
    `Answer {status: field, token (svc:tessera:…; POST /v1/tessera_field/resolve), record, derivation_cid, artifact_cid, artifact_url (GET: ${FIELD_MEDIA_TYPE}, layout in docs/rasters.md), width, height, epsg, geotransform, scales_per_pixel, valid_pixels, tiles, receipt (field segment: aoi_cid, derivation_cid)}, ` +
    'or {status: absence, absence {reason: outside_coverage | no_data}} when no tile of the year is published there or no pixel is embedded: nothing is signed. The same box and year answer the same record.',
  tags: ['read'],
  input: Type.Object(
    {
      min_lat: lat('box south'),
      min_lng: lng('box west'),
      max_lat: lat('box north'),
      max_lng: lng('box east'),
      year: Year,
    },
    { additionalProperties: false },
  ),
  output: Type.Union([FieldAnswer, FieldAbsence]),
  mcp: false,
  run: (ctx, input, call) => tesseraField(ctx, { bbox: { min_lat: input.min_lat, min_lng: input.min_lng, max_lat: input.max_lat, max_lng: input.max_lng }, year: input.year }, call),
});

export const tesseraFieldResolveOp = defineOperation({
  name: 'tessera_field_resolve',
  method: 'POST',
  path: '/v1/tessera_field/resolve',
  summary: 'An svc:tessera: token to its signed record and artifact; an evicted artifact is rebuilt from the record, byte for byte',
  description:
    'Answer {token, aoi_cid, year, derivation_cid, record (the signed tessera_field@1 record with its receipt), artifact {cid, media_type, bytes, url, state: stored | rebuilt}, receipt}. A rebuild reads the pinned tile files and windows only; if they no longer give the signed bytes: 502 source_format_mismatch, nothing stored. Unknown record: cid_not_found; a token whose area or year differ from the record: token_claim_mismatch.',
  tags: ['read'],
  input: Type.Object({ token: FieldToken }, { additionalProperties: false }),
  output: Signed({ token: FieldToken, aoi_cid: Type.String(), year: Type.Integer(), derivation_cid: b32, record: ServedFact, artifact: Artifact }),
  mcp: false,
  run: (ctx, input, call) => resolveField(ctx, input, call),
});

const Region = Closed(
  {
    kind: OneOf(['bbox', 'polygon', 'cells'] as const),
    bbox: Box,
    place: Type.Optional(ResolvedPlace('the place as resolved (not signed: the region it resolved to is)')),
  },
  'the region as signed (its kind) and the canonical box its field was read over',
);

const Centroid = Type.Array(Type.Number(), { minItems: 128, maxItems: 128, description: "L2-normalised mean of the archetype's normalised embeddings, float32 values" });
const Archetype = Closed({
  id: Type.Integer({ minimum: 0, maximum: ARCHETYPE_K.max - 1, description: 'the value in the map; 0 is the largest archetype' }),
  pixels: Type.Integer({ minimum: 0 }),
  fraction: Type.Number({ minimum: 0, maximum: 1, description: 'pixels / valid_pixels, 6 decimals' }),
  centroid_cid: b32,
  centroid: Centroid,
});
const Method = Closed({
  distance: Type.Literal('euclidean_on_l2_normalised'),
  init: Type.Literal('greedy_kmeans++'),
  prng: Type.Literal('xoshiro128**'),
  max_iterations: Type.Integer(),
  min_pixels_per_archetype: Type.Integer(),
  seed: Type.String({ description: 'hex of the 16-byte PRNG state: BLAKE3("svc/region_archetype_map@1/seed" 0 aoi_cid 0 k)' }),
});
const common = { aoi_cid: Type.String(), region: Region, year: Type.Integer(), k: Type.Integer() };

const MapAnswer = Signed({
  status: Type.Literal('map'),
  token: ArchetypesToken,
  ...common,
  derivation_cid: b32,
  record: Type.String({ description: 'the signed region_archetype_map@1 record as an svc:fact: handle' }),
  artifact_cid: b32,
  artifact_url: Type.String(),
  media_type: Type.Literal(GRID_MEDIA_TYPE),
  bytes: Type.Integer(),
  width: Side,
  height: Side,
  epsg: Type.Integer(),
  geotransform: Geotransform,
  pixel_size_m: Type.Number(),
  nodata: Type.Literal('NaN'),
  archetypes: Type.Array(Archetype, { minItems: ARCHETYPE_K.min, maxItems: ARCHETYPE_K.max }),
  region_pixels: Type.Integer({ description: 'pixels whose centres lie in the region' }),
  valid_pixels: Type.Integer({ description: 'of those, pixels with an embedding: the ones clustered' }),
  inertia: Type.Number({ description: 'sum of squared Euclidean distances of the normalised vectors to their archetype mean, 6 decimals' }),
  iterations: Type.Integer(),
  converged: Type.Boolean(),
  method: Method,
  field: FieldRef,
});
const Inconclusive = Signed({
  status: Type.Literal('inconclusive'),
  ...common,
  derivation_cid: b32,
  record: Type.String(),
  reason: OneOf(['too_few_pixels', 'too_few_distinct'] as const),
  observed_pixels: Type.Integer({ description: 'pixels of the region with an embedding' }),
  required_pixels: Type.Integer({ description: `${MIN_PIXELS_PER_ARCHETYPE} per archetype` }),
  region_pixels: Type.Integer(),
  field: FieldRef,
});
const MapAbsence = Signed({
  status: Type.Literal('absence'),
  ...common,
  absence: Closed({ reason: OneOf(['outside_coverage', 'no_data'] as const), detail: Type.String(), tiles: Type.Array(Type.String()) }),
});

export const regionArchetypeMapOp = defineOperation({
  name: 'region_archetype_map',
  method: 'POST',
  path: '/v1/region_archetype_map',
  summary: "k archetypes of a region's GeoTessera embeddings (k-means++), as a grid of archetype ids with centroids, counts and a signed record",
  description:
    `Give exactly one of place (with radius_m for a point place), polygon (GeoJSON), bbox or cells, and year; k ${ARCHETYPE_K.min}..${ARCHETYPE_K.max} (default ${ARCHETYPE_K.default}). The embeddings are the tessera_field of the region's box, kept to pixels whose centres lie in the region, L2-normalised and clustered by Euclidean k-means (greedy k-means++ seeded from the region's aoi_cid and k; the same request gives the same bytes). ` +
    `Answer {status: map, token (svc:archetypes:…; POST /v1/region_archetype_map/resolve), artifact_url (${GRID_MEDIA_TYPE}: archetype ids, NaN outside the region), archetypes [{id, pixels, fraction, centroid_cid, centroid}], inertia, iterations, region_pixels, valid_pixels, field, record, receipt}; ` +
    `{status: inconclusive, observed_pixels, required_pixels} when the region has fewer than ${MIN_PIXELS_PER_ARCHETYPE} embedded pixels per archetype (signed); {status: absence} when no tile is published there.`,
  tags: ['read'],
  input: Type.Object(
    {
      place: Type.Optional(
        Type.String({ minLength: 1, maxLength: 300, description: 'a place name (or "lat, lng"), resolved by locate: its outline, its box, or a square of radius_m around a point' }),
      ),
      radius_m: Type.Optional(
        Type.Number({ minimum: 10, maximum: PLACE_RADIUS_M.max, description: `with place: half the side of the square around it (default ${PLACE_RADIUS_M.default} m for a point)` }),
      ),
      polygon: Type.Optional(
        Type.Object({ type: OneOf(['Polygon', 'MultiPolygon'] as const), coordinates: Type.Array(Type.Unknown()) }, { description: 'GeoJSON Polygon or MultiPolygon ([lng, lat] positions)' }),
      ),
      bbox: Type.Optional(Box),
      cells: Type.Optional(Type.Array(Type.String(), { minItems: 1, maxItems: REGION_MAX_CELLS, description: 'cell64 values (or svc:cell: tokens): the union of their footprints' })),
      year: Year,
      k: Type.Integer({ minimum: ARCHETYPE_K.min, maximum: ARCHETYPE_K.max, default: ARCHETYPE_K.default }),
    },
    { additionalProperties: false },
  ),
  output: Type.Union([MapAnswer, Inconclusive, MapAbsence]),
  mcp: false,
  run: (ctx, input, call) => regionArchetypeMap(ctx, input, call),
});

export const archetypeResolveOp = defineOperation({
  name: 'region_archetype_map_resolve',
  method: 'POST',
  path: '/v1/region_archetype_map/resolve',
  summary: 'An svc:archetypes: token to its signed record, its field and the map artifact; an evicted map is rebuilt byte for byte',
  description:
    'Answer {token, aoi_cid, k, year, derivation_cid, record, artifact {cid, media_type, bytes, url, state}, field {token, derivation_cid, artifact_cid}, receipt}. The rebuild reads the pinned field (rebuilding it first if it was evicted too) and clusters it again with the signed region, k and seed; the bytes and every centroid must match the record, else 502 source_format_mismatch.',
  tags: ['read'],
  input: Type.Object({ token: ArchetypesToken }, { additionalProperties: false }),
  output: Signed({ token: ArchetypesToken, aoi_cid: Type.String(), k: Type.Integer(), year: Type.Integer(), derivation_cid: b32, record: ServedFact, artifact: Artifact, field: FieldRef }),
  mcp: false,
  run: (ctx, input, call) => resolveArchetypes(ctx, input, call),
});

export const AREA_EMBEDDING_OPS: Operation[] = [tesseraFieldOp, tesseraFieldResolveOp, regionArchetypeMapOp, archetypeResolveOp];
