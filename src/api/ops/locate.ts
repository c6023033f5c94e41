/** Place resolution (docs/locate.md): POST /v1/locate, MCP tool `<prefix>_locate`. */
import { Type } from '@sinclair/typebox';
import { locate } from '../../primitives/locate/locate.js';
import { defineOperation } from '../operations.js';
import { LocateResp } from '../schemas/responses.js';

const nameField = (what: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: `${what} (free text; e.g. "Paris", "Springfield, IL", "東京", "Lake Baikal")` }));

// Which fields go together (exactly one name, or lat with lng) and the coordinate ranges are
// checked by the primitive (parseLocateRequest), naming the fields.
export const locateInput = Type.Object(
  {
    place: nameField('place name'),
    q: nameField('alias of place'),
    query: nameField('alias of place'),
    name: nameField('alias of place'),
    lat: Type.Optional(Type.Number({ description: 'WGS-84 latitude in degrees, -90..90 (with lng)' })),
    lng: Type.Optional(Type.Number({ description: 'WGS-84 longitude in degrees, -180..180 (with lat)' })),
  },
  { additionalProperties: false, description: 'Exactly one of place, q, query, name, or both lat and lng.' },
);

export const locateOp = defineOperation({
  name: 'locate',
  method: 'POST',
  path: '/v1/locate',
  summary: 'Resolve a place name or lat/lng to a cell64 (LocateResp)',
  description:
    'Cascade: wide-feature table, countries, admin-1 regions, GeoNames admin-2 divisions (counties, districts), embedded GeoNames cities (with alternate names; diacritics optional both ways), landmarks, cache, Photon, Nominatim; `via` names the tier that answered. ' +
    '`extent_source` says what polygon_bbox and polygon_sample_cells rest on (a city: a population-scaled box, not a boundary; point: no extent). ' +
    'The place string is not signed: a wrong geocode yields a valid signature for the wrong cell, so check selected.is_high_confidence (and selected.reason) before trusting place-anchored answers. ' +
    '`token` is the cell as an svc:cell:<cell64> token (an address only), accepted wherever a cell is. ' +
    'Offline tiers miss and no network geocoder is enabled → place_not_found (404); the network geocoders answered and none knows the place → no_geocoder_match (404); geocoders unreachable → source_fetch_failed (502).',
  tags: ['place'],
  input: locateInput,
  output: LocateResp,
  mcp: 'core',
  run: (ctx, input, call) => locate(ctx, input, { deadline: call.deadline }),
});
