/** The answer of GET /v1/bands (OpenAPI's 200; documentation only): the band registry and the cube layout. */
import { Type } from '@sinclair/typebox';
import { Closed, Nullable } from './responses.js';

/** One slot of the cube layout. */
const CubeLayoutSlot = Closed({
  slot: Type.Integer({ minimum: 0, maximum: 13 }),
  offset: Type.Integer({ minimum: 0, description: "index of the slot's first value in the cube vector" }),
  dim: Type.Integer({ minimum: 1, description: 'values of the slot (the encoder dimension)' }),
  band: Type.String({ description: "the band whose vector fills the slot (the cube's encoder)" }),
  tslot_offset: Type.Integer({ minimum: -13, maximum: 0, description: 'the slot holds the vector at tslot anchor + tslot_offset' }),
});

/** The layout of POST /v1/state {view: "cube"} (docs/embeddings.md, "The cube view"). */
export const CubeLayout = Closed(
  {
    view: Type.Literal('cube'),
    dim: Type.Integer({ description: 'values in a cube (14 × the encoder dimension: 1792 for geotessera)' }),
    encoder: Type.String(),
    slots: Type.Array(CubeLayoutSlot, { minItems: 14, maxItems: 14, description: 'oldest first' }),
    coverage: Closed(
      {
        from_tslot: Type.Integer({ minimum: 0, description: 'first tslot the encoder declares (history_from_unix)' }),
        from_year: Type.Integer(),
        to_tslot: Nullable(Type.Integer({ minimum: 0, description: 'last tslot the encoder declares; null: open-ended (up to the current slot)' })),
      },
      'the slots the cube reads: others are outside_coverage and never fetched',
    ),
    encoding: Type.String({ description: 'how the values, the anchor and missing slots are encoded' }),
  },
  'the cube view of state, state_multi and state_diff',
);

/** A band entry of the registry; it has more fields than are named here. */
const BandInfo = Type.Object(
  {
    key: Type.String(),
    tempo: Type.String(),
    value_kind: Type.String(),
    dim: Type.Optional(Type.Integer()),
    unit: Type.String(),
    privacy_class: Type.String(),
    source: Type.String(),
    history_from_unix: Nullable(Type.Integer()),
    history_to_unix: Nullable(Type.Integer()),
  },
  { additionalProperties: true },
);

export const BandsAnswer = Closed({
  manifest_cid: Type.String(),
  tempo_unit_seconds: Type.Record(Type.String(), Type.Integer()),
  bands: Type.Array(BandInfo),
  cube_layout: Nullable(CubeLayout),
});
