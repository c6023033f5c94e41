/**
 * Answer pieces many operations share, as TypeBox schemas. They describe what a client
 * receives (OpenAPI's 200 responses, the MCP output schema) and, with SVC_CHECK_RESPONSES=1, are
 * checked against every answer before it is sent, so they cannot drift from the code.
 *
 * Objects a client should read field by field are closed (`additionalProperties: false`); signed
 * bodies and receipts stay open, since their fields are fixed by the signing rules
 * (docs/protocol-notes.md) and differ by record type and by primitive.
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { EXTENT_SOURCES } from '../../geo/types.js';

const b32 = Type.String({ pattern: '^[a-z2-7]+$' });

/** The signed receipt every read returns (docs/receipts.md): the fields common to all primitives. */
export const Receipt = Type.Object(
  {
    request_id: Type.String(),
    served_at: Type.String(),
    primitive: Type.String(),
    fact_cids: Type.Array(b32),
    responder: b32,
    responder_pubkey_b32: b32,
    responder_key_epoch: Type.Integer({ minimum: 0 }),
    signature: b32,
    preimage_version: Type.Integer(),
  },
  { additionalProperties: true, description: 'Ed25519 receipt over the answer (verify offline: POST /v1/verify_receipt or svc verify)' },
);

/** A served fact: its signed body with fact_cid, its receipt, and serving metadata (fact_meta). */
export const ServedFact = Type.Object({ fact_cid: b32 }, { additionalProperties: true, description: 'a signed fact as served: body fields, fact_cid, receipt, fact_meta' });

/** Anything: a value whose shape depends on the band or record type. */
export const AnyValue = Type.Unknown();

/** A closed object of the given fields (optional ones wrapped in Type.Optional). */
export function Closed<T extends TProperties>(props: T, description?: string) {
  return Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
}

/** Who signed each served fact and where it sits in the log, keyed by fact_cid (docs/reads.md). */
export const FactMetaMap = Type.Record(Type.String(), Type.Object({ attester: b32, attester_role: Type.String(), log_index: Type.Integer() }, { additionalProperties: true }), {
  description: 'serving metadata of every fact in the answer, by fact_cid: attester and its role, log_index, accepted_at, source/function of minted facts; not signed, checkable against the log',
});

/** An answer with a receipt: the given fields plus `receipt` (and `fact_meta` when it serves facts), closed. */
export function Signed<T extends TProperties>(props: T, description?: string) {
  return Closed({ ...props, receipt: Receipt, fact_meta: Type.Optional(FactMetaMap) }, description);
}

/** A value that may be absent as null. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** A signed tree head of the log (docs/log.md). */
export const TreeHead = Type.Object(
  { tree_size: Type.Integer({ minimum: 0 }), root: b32, signed_at: Type.String(), responder: b32, responder_key_epoch: Type.Integer({ minimum: 0 }), signature: b32 },
  { additionalProperties: false, description: 'signed tree head (docs/log.md)' },
);

/** What every accepted signed write answers (docs/writes.md): where its facts sit in the log, with proofs. */
export const AttestAnswer = {
  accepted: Type.Literal(true),
  fact_cids: Type.Array(b32, { description: 'one per submitted fact, in order' }),
  duplicates: Type.Array(b32, { description: 'fact_cids already in the log (accepted again, not appended twice)' }),
  batch_root: b32,
  log_index: Type.Integer({ minimum: 0 }),
  accepted_at: Type.String(),
  tree_head: TreeHead,
  log_inclusion: Type.Object({ leaf_index: Type.Integer(), tree_size: Type.Integer(), path: Type.Array(b32) }, { additionalProperties: false }),
  merkle_proofs: Type.Record(Type.String(), Type.Unknown(), { description: 'per fact_cid: its inclusion proof in the batch tree' }),
};

// ---- reads: recall and the answers built from it ------------------------------------------------

/** What materializing one (cell, band, tslot) reported (docs/reads.md, "Materialization on a miss"). */
export const MaterializeNote = Closed({
  band: Type.String(),
  cell: Type.String(),
  status: Type.Union([Type.Literal('materialized'), Type.Literal('skipped')]),
  ok: Type.Boolean(),
  fact_cid: Nullable(b32),
  latency_ms: Type.Number({ minimum: 0 }),
  reason: Type.String(),
  reason_class: Nullable(Type.String({ description: 'timeout, upstream_error, unknown_band or no_materializer' })),
  retryable: Type.Boolean(),
  absence: Type.Boolean({ description: 'the upstream confirmed no data: a signed absence was minted' }),
});

/** The place name a cell was asked by, as locate resolved it (not signed: check is_high_confidence). */
export const PlaceResolved = Closed(
  { query: Type.String(), cell64: Type.String(), label: Type.Optional(Type.String()), is_high_confidence: Type.Optional(Type.Boolean()) },
  'the place name given as cell, and the cell it resolved to (not signed)',
);

/** A typed edge touching a served fact (recall's include: edges); times in Unix seconds. */
export const FactEdge = Closed({
  edge_cid: Type.String(),
  kind: Type.String({ description: 'supersedes, derived_from, contradicts, … (docs/memory.md)' }),
  from: Type.String(),
  to: Type.String(),
  valid_from: Type.Optional(Type.Integer()),
  valid_to: Type.Optional(Nullable(Type.Integer())),
  closed_at: Type.Optional(Nullable(Type.Integer())),
  stated_by: Type.Optional(Type.String()),
});

/** The fields of recall's SignedResponse (docs/reads.md, "Recall"). */
const signedResponseFields = {
  cell: Type.String({ description: 'the cell64 read' }),
  facts: Type.Array(ServedFact),
  bands_already_attested_at_cell: Type.Array(Type.String()),
  caveats: Type.Array(Type.String()),
  materialize_notes: Type.Array(MaterializeNote),
  edges: Type.Optional(Type.Array(FactEdge)),
  freshness: Type.Optional(Type.Array(Closed({ fact_cid: b32, band: Type.String(), age_s: Type.Number(), cadence_s: Type.Number(), staleness: Type.Number(), stale: Type.Boolean() }))),
  place: Type.Optional(PlaceResolved),
};

/** recall's answer: the facts at one cell with a receipt binding exactly them (also one cell of recall_many). */
export const SignedResponse = Signed(signedResponseFields, 'SignedResponse: the facts at one cell and a receipt binding exactly them');

// ---- next steps: literal follow-up calls (ask, hunt) ---------------------------------------------

/** A literal follow-up call, replayable as given (docs/ask.md, "next_steps"). */
export const NextStep = Closed({
  action: Type.String(),
  method: Type.Union([Type.Literal('GET'), Type.Literal('POST')]),
  path: Type.String(),
  url: Type.String({ description: 'relative to the responder, GET parameters included' }),
  body: Nullable(Type.Record(Type.String(), Type.Unknown())),
  why: Type.String(),
  auth: Type.Optional(Type.Literal('attester_signature', { description: 'a write: sign the body with an attester key first (docs/writes.md)' })),
  available: Type.Optional(Type.Literal(false, { description: 'this responder does not serve the endpoint yet' })),
});

// ---- places ---------------------------------------------------------------------------------------

const LatLngBox = { min_lat: Type.Number(), min_lng: Type.Number(), max_lat: Type.Number(), max_lng: Type.Number() };

/** What a place's extent rests on (docs/locate.md, "Extents"). */
export const ExtentSource = Type.Union(
  EXTENT_SOURCES.map((v) => Type.Literal(v)),
  {
    description:
      "what polygon_bbox and polygon_sample_cells rest on: boundary (a surveyed boundary), curated_box, member_places (the box of an admin-2 division's populated places), population_scaled (a city: a square sized by its population), geocoder_boundary, geocoder_bbox, point (no extent)",
  },
);

/** LocateResp (docs/locate.md, "Response (LocateResp)"): a place resolved to a cell; not signed. */
export const LocateResp = Closed(
  {
    cell64: Type.String(),
    token: Type.Optional(Type.String({ description: 'the cell as an svc:cell: token (an address only); locate always sets it' })),
    via: Type.String({ description: 'the cascade tier that answered' }),
    label: Type.String(),
    lat: Type.Number(),
    lng: Type.Number(),
    localized_names: Type.Record(Type.String(), Type.String()),
    neighborhood_cells: Type.Array(Type.String()),
    polygon_bbox: Type.Optional(Closed({ ...LatLngBox, source: Type.String() })),
    extent_source: Type.Optional(ExtentSource),
    polygon_geojson: Type.Optional(Closed({ type: Type.Union([Type.Literal('Polygon'), Type.Literal('MultiPolygon')]), coordinates: Type.Array(AnyValue) })),
    polygon_sample_cells: Type.Array(Type.String(), { description: 'up to 64 cells inside the polygon, spread evenly' }),
    overture_division: Type.Optional(Closed({ division_id: Type.String(), subtype: Type.String(), country: Type.String(), schema_url: Type.String() })),
    data_at_this_cell: Type.Record(
      Type.String(),
      Closed({ bands: Type.Array(Type.String()), algorithms: Type.Array(Type.String()), availability: Type.Optional(Type.Union([Type.Literal('attested'), Type.Literal('fetchable')])) }),
      { description: 'per topic: bands with facts here (attested) or, on an empty cell, bands a connector could fetch' },
    ),
    selected: Closed({ label: Type.String(), kind: Type.String(), is_high_confidence: Type.Boolean(), reason: Type.String(), score: Type.Number() }),
    alternatives: Type.Array(
      Closed({ label: Type.String(), lat: Type.Number(), lng: Type.Number(), via: Type.String(), kind: Type.String(), country: Type.Optional(Type.String()), score: Type.Number() }),
    ),
  },
  'LocateResp: the cell of a place (not signed: check selected.is_high_confidence)',
);

/**
 * A place name as an area read resolved it (not signed: what the area resolved to is).
 * `radius` describes how the area was drawn around a point place.
 */
export function ResolvedPlace(description: string, radius = 'the radius read around a point place') {
  return Closed(
    {
      query: Type.String(),
      label: Type.String(),
      lat: Type.Number(),
      lng: Type.Number(),
      via: Type.String(),
      is_high_confidence: Type.Boolean(),
      radius_m: Type.Optional(Type.Number({ description: radius })),
    },
    description,
  );
}
