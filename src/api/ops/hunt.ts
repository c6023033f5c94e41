/** POST /v1/hunt (docs/hunt.md): the hunt primitive, in the core MCP set as svc_hunt. */
import { Type } from '@sinclair/typebox';
import { loadRegistry } from '../../registry/registry.js';
import { hunt } from '../../primitives/hunt/hunt.js';
import { HUNT_REPLY_CAP_BYTES, fitHuntReply } from '../../primitives/hunt/size.js';
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
  band: Type.Optional(Type.String({ description: 'absent from a hotspot of a trimmed non-verbose hunt reply (algorithm.gate_band)' })),
  rule: Type.Optional(Type.String({ description: 'absent from a hotspot of a trimmed non-verbose hunt reply (algorithm.gate_rule)' })),
  status: Type.Union([Type.Literal('pass'), Type.Literal('fail'), Type.Literal('unknown')]),
  value: Type.Optional(Type.Number()),
  fact_cid: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
});

/** A ranked hotspot (also in an /v1/ask answer that ran a hunt). */
/** What every hotspot says; a bare one (in more_hotspots) says only this. */
const hotspotFields = {
  rank: Type.Integer({ minimum: 1 }),
  cell64: Type.String(),
  lat: Type.Number(),
  lng: Type.Number(),
  value: Type.Number(),
  unit: Type.Optional(Type.String()),
  fact_cid: Type.String(),
};

export const Hotspot = Closed({
  ...hotspotFields,
  scene_png: Type.Optional(Type.String({ description: "the cell's true-colour thumbnail (absent from a trimmed non-verbose hunt reply)" })),
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
    )} accepted). Give region (free text, resolved by locate) or polygon_bbox. One receipt binds every fact_cid cited; the hotspots carry their signed facts. verbose:false (default) keeps the reply under ${HUNT_REPLY_CAP_BYTES / 1000} KB: summary counts the samples by status and fact_cids lists the other fact_cids the receipt binds; verbose:true adds samples[] (every sampled cell with its status, value, absence, timeout or gate result), every materialize note and the region's boundary polygon. An empty hotspots list carries empty_reason. Over MCP with a progressToken, progress is reported per sampled cell.`,
  tags: ['read'],
  input: Type.Object(
    {
      // Not an enum: aliases are case-insensitive, and an unknown event gets the typed refusal listing the events.
      event: Type.String({ minLength: 1, maxLength: 64, description: 'hunt event or alias (see /v1/hunt description)' }),
      region: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'place with extent (lake, county, region), resolved through locate' })),
      polygon_bbox: Type.Optional(Type.Object({ ...Box, source: Type.Optional(Type.String()) }, { additionalProperties: false })),
      verbose: Type.Optional(Type.Boolean({ description: `samples[], every materialize note and the region's boundary polygon (default false: reply under ${HUNT_REPLY_CAP_BYTES / 1000} KB)` })),
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
    more_hotspots: Type.Optional(
      Type.Array(Closed(hotspotFields), { description: 'verbose:false over the size cap: the lowest-ranked hotspots without their fact bodies (bound by the receipt; verbose:true carries them)' }),
    ),
    samples: Type.Optional(Type.Array(Sample, { description: 'verbose: every sampled cell with its status' })),
    fact_cids: Type.Optional(Type.Array(Type.String(), { description: "verbose:false: every fact_cid the receipt binds beyond the hotspots' (sample values, signed absences, gate readings)" })),
    summary: HuntSummary,
    materialize_notes: Type.Array(MaterializeNote),
    caveats: Type.Array(Type.String()),
    next_steps: Type.Array(NextStep),
    trimmed: Type.Optional(Type.Array(Type.String(), { description: 'verbose:false: what was left out (verbose:true gives it)' })),
  }),
  mcp: 'core',
  run: async (ctx, { verbose, ...req }, call) => {
    const full = await hunt(ctx, req, { deadline: call.deadline, onProgress: call.progress });
    return verbose ? full : fitHuntReply(full);
  },
});
