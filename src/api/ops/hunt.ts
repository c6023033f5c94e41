/** POST /v1/hunt (docs/hunt.md): the hunt primitive, in the core MCP set as svc_hunt. */
import { Type } from '@sinclair/typebox';
import { loadRegistry } from '../../registry/registry.js';
import { hunt } from '../../primitives/hunt/hunt.js';
import { defineOperation } from '../operations.js';
import { Closed, ExtentSource, LocateResp, MaterializeNote, NextStep, Nullable, ServedFact, Signed } from '../schemas/responses.js';

const events = loadRegistry().huntEventList;

const Box = {
  min_lat: Type.Number(),
  min_lng: Type.Number(),
  max_lat: Type.Number(),
  max_lng: Type.Number(),
};

/** The algorithm a hunt ran (also in an /v1/ask answer that ran one). */
export const HuntAlgorithm = Closed({
  key: Type.String(),
  formula: Type.String(),
  primary_band: Type.String({ description: 'the band hotspots are ranked by' }),
  gate_band: Nullable(Type.String({ description: 'the band that admits or drops a cell' })),
  gate_rule: Nullable(Type.String()),
  threshold: Type.String({ description: 'the event threshold a hotspot must meet' }),
  rank: Type.String(),
});

/** The hunted region as resolved (also in an /v1/ask answer that ran a hunt). */
export const HuntRegion = Closed({
  source: Type.String({ description: 'polygon_bbox, or locate:<tier> when resolved from region' }),
  query: Type.Optional(Type.String()),
  label: Type.Optional(Type.String()),
  is_high_confidence: Type.Optional(Type.Boolean({ description: 'the place name is not signed: check it' })),
  polygon_bbox: Closed(Box),
  polygon_geojson: LocateResp.properties.polygon_geojson,
  extent_source: Type.Optional(ExtentSource),
  area_km2: Type.Integer({ minimum: 0 }),
});

/** A gate reading: pass or fail with its value, or unknown with the reason. */
const Gate = Closed({
  band: Type.String(),
  rule: Type.String(),
  status: Type.Union([Type.Literal('pass'), Type.Literal('fail'), Type.Literal('unknown')]),
  value: Type.Optional(Type.Number()),
  fact_cid: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
});

/** A ranked hotspot (also in an /v1/ask answer that ran a hunt). */
export const Hotspot = Closed({
  rank: Type.Integer({ minimum: 1 }),
  cell64: Type.String(),
  lat: Type.Number(),
  lng: Type.Number(),
  value: Type.Number(),
  unit: Type.Optional(Type.String()),
  fact_cid: Type.String(),
  scene_png: Type.String({ description: "the cell's true-colour thumbnail" }),
  gate: Nullable(Gate),
  fact: { ...ServedFact, description: 'the signed body the value comes from (the hunt receipt binds it; no per-fact receipt)' },
});

const SampleStatus = ['candidate', 'below_threshold', 'gate_failed', 'gate_unknown', 'absence', 'timeout', 'upstream_error', 'no_materializer', 'no_data', 'error'] as const;

const Sample = Closed({
  cell64: Type.String(),
  lat: Type.Number(),
  lng: Type.Number(),
  status: Type.Union(SampleStatus.map((s) => Type.Literal(s))),
  primary: Closed({
    band: Type.String(),
    value: Type.Optional(Type.Number()),
    unit: Type.Optional(Type.String()),
    fact_cid: Type.Optional(Type.String()),
    absence_reason: Type.Optional(Type.String()),
  }),
  gate: Type.Optional(Gate),
  reason: Type.Optional(Type.String()),
});

/** Sample counts by status. */
export const HuntSummary = Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'samples per status' });

export const huntOp = defineOperation({
  name: 'hunt',
  method: 'POST',
  path: '/v1/hunt',
  summary: "Where in a region is an event happening: sample up to 32 cells, rank by the algorithm's primary band, top 8 signed hotspots",
  description: `event: ${events.map((e) => e.event).join(', ')} (case-insensitive; aliases such as ${events
    .slice(0, 4)
    .map((e) => e.aliases[0])
    .join(
      ', ',
    )} accepted). Give region (free text, resolved by locate) or polygon_bbox. Every sampled cell is reported in samples[] with its status (value, absence, timeout, gate result); one receipt binds every fact_cid cited. An empty hotspots list carries empty_reason.`,
  tags: ['read'],
  input: Type.Object(
    {
      // Not an enum: aliases are case-insensitive, and an unknown event gets the typed refusal listing the events.
      event: Type.String({ minLength: 1, maxLength: 64, description: 'hunt event or alias (see /v1/hunt description)' }),
      region: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'place with extent (lake, county, region), resolved through locate' })),
      polygon_bbox: Type.Optional(Type.Object({ ...Box, source: Type.Optional(Type.String()) }, { additionalProperties: false })),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    event: Type.String({ description: 'the canonical event name' }),
    algorithm: HuntAlgorithm,
    region: HuntRegion,
    sampling: Closed({ method: Type.Union([Type.Literal('enumerated'), Type.Literal('stratified')]), samples_max: Type.Integer(), strata: Type.Integer(), seed: Type.String() }),
    cells_sampled: Type.Integer({ minimum: 0 }),
    hotspots: Type.Array(Hotspot),
    empty_reason: Type.Optional(Type.String({ description: 'why hotspots is empty' })),
    samples: Type.Array(Sample),
    summary: HuntSummary,
    materialize_notes: Type.Array(MaterializeNote),
    caveats: Type.Array(Type.String()),
    next_steps: Type.Array(NextStep),
  }),
  mcp: 'core',
  run: (ctx, input, call) => hunt(ctx, input, { deadline: call.deadline }),
});
