/**
 * Field boundaries (docs/field-boundaries.md): the POST operation (and MCP tool in /mcp/full)
 * and its GET twin on the same path, which reads the box as four query parameters.
 */
import { Type } from '@sinclair/typebox';
import { FIELD_LIMITS, fieldBoundaries } from '../../primitives/fields/field-boundaries.js';
import { invalidArgument } from '../../protocol/errors.js';
import { defineOperation, type Operation } from '../operations.js';
import { OneOf } from '../schemas/inputs.js';
import { Closed, Nullable, ResolvedPlace, Signed } from '../schemas/responses.js';

const b32 = Type.String({ pattern: '^[a-z2-7]+$' });
const lat = (description: string) => Type.Number({ minimum: -90, maximum: 90, description });
const lng = (description: string) => Type.Number({ minimum: -180, maximum: 180, description });
const Box = Closed({ min_lat: lat('south'), min_lng: lng('west'), max_lat: lat('north'), max_lng: lng('east') });
const Position = Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: '[lng, lat]' });
const Rings = Type.Array(Type.Array(Position, { minItems: 4 }), { minItems: 1, description: 'exterior ring (counter-clockwise) then holes, each closed' });

/** One field: its signed body and field_cid. */
export const Field = Closed({
  field_cid: b32,
  id: Type.String({ description: 'stable id: ftw:<year>:<upstream id> (or :g<anchor> of its geometry when the archive has no id)' }),
  layer: Type.String({ description: 'the archive layer read (one per year)' }),
  geometry: Type.Union([Closed({ type: Type.Literal('Polygon'), coordinates: Rings }), Closed({ type: Type.Literal('MultiPolygon'), coordinates: Type.Array(Rings, { minItems: 2 }) })], {
    description: 'GeoJSON (RFC 7946), clipped to the box; a MultiPolygon when the clip splits the field',
  }),
  area_ha: Type.Number({ minimum: 0, description: 'geodesic area (WGS 84) of the clipped geometry, hectares' }),
  confidence: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'upstream confidence 0..1 (FTW 0–100 / 100); FTW suggests ≥ 0.69 as reliable' })),
  country: Nullable(Type.String({ description: 'ISO 3166-1 alpha-2' })),
  clipped: Type.Boolean({ description: 'true when the box cut the field' }),
});

/** The answer (and recall_polygon's ftw_fields block): the fields, their box and one receipt. */
export const FieldsAnswer = Signed({
  area: Closed({
    source: OneOf(['polygon_bbox', 'place', 'recall_polygon'] as const),
    bbox: Box,
    aoi_cid: Type.String({ description: 'anchor of the box; the receipt signs it (field.aoi_cid)' }),
    area_km2: Type.Number(),
    place: Type.Optional(ResolvedPlace('the place as resolved (not signed: check is_high_confidence)', 'a point place: half the side of the square read')),
  }),
  fields: Type.Array(Field),
  truncated: Type.Boolean(),
  note: Type.Optional(
    Closed(
      {
        code: OneOf(['no_fields_in_area', 'outside_coverage', 'year_not_in_archive', 'below_min_confidence', 'truncated'] as const),
        message: Type.String(),
      },
      'why the list is empty or cut',
    ),
  ),
  derivation: Type.Object(
    { derivation_cid: Type.String(), source: Type.String(), archive_version: Type.String(), layer: Nullable(Type.String()), zoom: Type.Integer() },
    { additionalProperties: true, description: 'how the polygons were read; the receipt signs its content id (field.derivation_cid)' },
  ),
  read: Closed(
    {
      zoom: Type.Integer(),
      tiles_covering: Type.Integer(),
      tiles_present: Type.Integer(),
      tiles_from_cache: Type.Integer(),
      range_requests: Type.Integer(),
      bytes_read: Type.Integer(),
      inside_archive_bounds: Type.Boolean(),
    },
    'what the read cost (not signed)',
  ),
  license: Type.String(),
  attribution: Type.String(),
});

/** recall_polygon's block when the fields could not be added. */
export const FieldsUnavailable = Closed({ status: Type.Literal('unavailable'), code: Type.String(), reason: Type.String() });

const common = {
  place: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'a place name, resolved by locate: its box, or a square of radius_m around a point' })),
  radius_m: Type.Optional(
    Type.Number({
      minimum: 10,
      maximum: FIELD_LIMITS.point_radius_m.max,
      description: `with place: half the side of the square read around it (default ${FIELD_LIMITS.point_radius_m.default} m for a point)`,
    }),
  ),
  year: Type.Optional(Type.Integer({ minimum: 2000, maximum: 2100, description: 'the archive layer of this year (default: the newest read)' })),
  min_confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'only fields with at least this confidence' })),
  max_fields: Type.Integer({ minimum: 1, maximum: FIELD_LIMITS.max_fields.max, default: FIELD_LIMITS.max_fields.default }),
};

const DESCRIPTION = `Agricultural field polygons of Fields of The World (FTW, CC-BY-4.0) inside a box: give place (its box; a point place gets a square of radius_m) or polygon_bbox {min_lat, min_lng, max_lat, max_lng}, at most ${FIELD_LIMITS.max_area_km2} km² (max_area_km2 in /v1/limits). Returns fields[] {field_cid, id, layer, geometry (GeoJSON Polygon clipped to the box, MultiPolygon when the clip splits it), area_ha (geodesic), confidence (0..1), country, clipped}, area {bbox, aoi_cid, area_km2, place?}, derivation, read (tiles and range requests), license, attribution and a receipt listing every field_cid and binding the box and derivation (docs/field-boundaries.md). No polygon there: fields [] and note {code, message}; nothing is invented. Predictions, not cadastral parcels.`;

export const fieldBoundariesOp = defineOperation({
  name: 'field_boundaries',
  method: 'POST',
  path: '/v1/field_boundaries',
  summary: 'Agricultural field polygons (Fields of The World) inside a box or place, clipped, with geodesic areas, signed',
  description: DESCRIPTION,
  tags: ['read'],
  input: Type.Object({ ...common, polygon_bbox: Type.Optional(Box) }, { additionalProperties: false }),
  output: FieldsAnswer,
  mcp: 'full',
  run: (ctx, input, call) => fieldBoundaries(ctx, input, { deadline: call.deadline }),
});

export const fieldBoundariesGetOp = defineOperation({
  name: 'field_boundaries_get',
  method: 'GET',
  path: '/v1/field_boundaries',
  summary: 'Field polygons inside a box or place (GET form of POST /v1/field_boundaries)',
  description: `Query parameters: place (with radius_m) or min_lat, min_lng, max_lat, max_lng (all four), year, min_confidence, max_fields. Same answer as POST /v1/field_boundaries. ${DESCRIPTION}`,
  tags: ['read'],
  input: Type.Object(
    {
      ...common,
      min_lat: Type.Optional(lat('box south (with the other three)')),
      min_lng: Type.Optional(lng('box west')),
      max_lat: Type.Optional(lat('box north')),
      max_lng: Type.Optional(lng('box east')),
    },
    { additionalProperties: false },
  ),
  output: FieldsAnswer,
  mcp: false,
  run: (ctx, input, call) => {
    const { min_lat, min_lng, max_lat, max_lng, ...rest } = input;
    const given = [min_lat, min_lng, max_lat, max_lng].filter((v) => v !== undefined).length;
    if (given > 0 && given < 4) {
      const missing = (['min_lat', 'min_lng', 'max_lat', 'max_lng'] as const).find((k) => input[k] === undefined)!;
      return Promise.reject(invalidArgument(missing, 'give the box as all four of min_lat, min_lng, max_lat, max_lng'));
    }
    const polygon_bbox = given === 4 ? { min_lat: min_lat!, min_lng: min_lng!, max_lat: max_lat!, max_lng: max_lng! } : undefined;
    return fieldBoundaries(ctx, { ...rest, polygon_bbox }, { deadline: call.deadline });
  },
});

export const FIELD_OPS: Operation[] = [fieldBoundariesOp, fieldBoundariesGetOp];
