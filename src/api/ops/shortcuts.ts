/**
 * Place shortcuts and derived shortcuts (docs/shortcuts.md). Each place shortcut is two entries on
 * one path: the POST is the operation (and the MCP tool svc_<name>), the GET twin `<name>_get`
 * reads the query string and is REST-only, so the OpenAPI document lists both. The derived
 * shortcuts are POST only and live in /mcp/full.
 */
import { Type, type TObject, type TProperties } from '@sinclair/typebox';
import { PLACE_SHORTCUTS, placeShortcut, type PlaceShortcutSpec } from '../../primitives/shortcuts/read.js';
import { terrain } from '../../primitives/shortcuts/terrain.js';
import { spi } from '../../primitives/shortcuts/drought.js';
import { burnSeverity, deforestationAlert, NDVI_DROP_DEFAULT, sarForestDisturbance, VV_DROP_DB } from '../../primitives/shortcuts/change.js';
import { CFOA, SF_P, SF_W, riceCh4Op } from '../../primitives/shortcuts/rice.js';
import { N_CELLS_MAX, N_CELLS_MIN } from '../../primitives/shortcuts/aggregate.js';
import { defineOperation, type Operation } from '../operations.js';
import { OneOf, Tslot } from '../schemas/inputs.js';
import { AnyValue, Closed, MaterializeNote, Nullable, ServedFact, Signed } from '../schemas/responses.js';

const text = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 200, description }));
const longitude = (description: string) => Type.Optional(Type.Number({ minimum: -180, maximum: 180, description }));

/** Location fields (place and its aliases: docs/shortcuts.md, "Place shortcuts"). Give a place name or lat+lng (or cell64 where listed). */
const locationProps = {
  place: text('place name, resolved by locate (aliases: name, q, query)'),
  name: text('alias of place'),
  q: text('alias of place'),
  query: text('alias of place'),
  lat: Type.Optional(Type.Number({ minimum: -90, maximum: 90, description: 'WGS-84 latitude (with lng)' })),
  lng: longitude('WGS-84 longitude (with lat)'),
  lon: longitude('alias of lng'),
};

const cell64Prop = { cell64: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a cell64 instead of a place' })) };

// Deliberately untyped: n_cells outside 1..64 (or not an integer) is HTTP 400 (docs/errors.md,
// "Another status than the catalogue's"), which the primitive owns; a schema type would turn it
// into the generic 422.
const nCellsProp = {
  n_cells: Type.Optional(
    Type.Unknown({
      description: `integer ${N_CELLS_MIN}..${N_CELLS_MAX}: cells sampled over a place with extent (default 16; 1 for /v1/at). 1 forces a point read at the centroid. Any other value: HTTP 400 invalid_argument.`,
    }),
  ),
};

const bandKey = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 100, description }));

/** Every field a place shortcut may take, per form; a shortcut's schema keeps those its spec allows (all optional). */
const placeProps = {
  post: {
    ...locationProps,
    ...cell64Prop,
    band: bandKey('one band key (added to bands)'),
    // One JSON Schema type list, as before: a comma-separated string or an array of keys.
    bands: Type.Optional(
      Type.Unsafe<string | string[]>({
        type: ['string', 'array'],
        items: { type: 'string', minLength: 1, maxLength: 100 },
        maxItems: 64,
        maxLength: 6400,
        description: 'band keys: comma-separated string or array (default: the /v1/at set)',
      }),
    ),
    tslot: Type.Optional({ ...Tslot, description: 'tslot for the non-static bands (static bands have the single tslot 0)' }),
    ...nCellsProp,
  },
  get: {
    ...locationProps,
    ...cell64Prop,
    band: bandKey('one band key'),
    bands: Type.Optional(Type.String({ minLength: 1, maxLength: 6400, description: 'comma-separated band keys' })),
    tslot: Type.Optional({ ...Tslot, description: 'tslot for the non-static bands' }),
    ...nCellsProp,
  },
};

/**
 * One schema per shortcut shape and form (POST body, GET query): the location fields, cell64
 * where the spec accepts it, band and bands where it chooses bands. Typed as the full field set:
 * the fields a shape leaves out are optional ones, so its answers fit the type.
 */
const shapes = new Map<string, TObject>();
function placeInput<F extends keyof typeof placeProps>(spec: PlaceShortcutSpec, form: F): TObject<(typeof placeProps)[F]> {
  const key = `${form}:${spec.cell64 ? 'cell64' : ''}:${spec.chooseBands ? 'bands' : ''}`;
  let schema = shapes.get(key);
  if (!schema) {
    const { cell64, band, bands, ...rest } = placeProps[form] as TProperties;
    schema = Type.Object({ ...rest, ...(spec.cell64 ? { cell64 } : {}), ...(spec.chooseBands ? { band, bands } : {}) }, { additionalProperties: false });
    shapes.set(key, schema);
  }
  return schema as TObject<(typeof placeProps)[F]>;
}

// ---- answers ------------------------------------------------------------------------------------

/** The place an answer reads (not signed: check is_high_confidence). */
const PlaceBlock = Closed(
  {
    query: Type.Optional(Type.String({ description: "the caller's place text" })),
    cell64: Type.String(),
    via: Type.String({ description: 'how locate resolved it (direct_latlng for coordinates and cells)' }),
    label: Type.String(),
    lat: Type.Number(),
    lng: Type.Number(),
    is_high_confidence: Type.Boolean(),
    reason: Type.String(),
    selected: Closed({ label: Type.String(), kind: Type.String(), is_high_confidence: Type.Boolean(), reason: Type.String(), score: Type.Number() }),
  },
  'the place read, as resolved (not signed: check is_high_confidence)',
);

/** What every shortcut answer carries: the facts read, and one receipt signing every cell and fact_cid used. */
const envelope = {
  shortcut: Type.String(),
  facts: Type.Array(ServedFact),
  bands_already_attested_at_cell: Type.Array(Type.String()),
  caveats: Type.Array(Type.String()),
  materialize_notes: Type.Array(MaterializeNote),
};

const counts = {
  band: Type.String(),
  unit: Nullable(Type.String()),
  n: Type.Integer({ minimum: 0, description: 'cells with a usable value' }),
  n_absent: Type.Integer({ minimum: 0, description: 'cells with a signed absence (never averaged in)' }),
  n_missing: Type.Integer({ minimum: 0, description: 'cells read without a usable fact' }),
  reason: Type.Optional(Type.String({ description: 'why the statistics are null' })),
};
const num = Nullable(Type.Number());
/** Statistics of one band over the cells read: null with a reason when no cell had a value, never 0. */
const BandStats = Type.Union([
  Closed({ ...counts, kind: Type.Literal('numeric'), mean: num, median: num, min: num, max: num, std: num }),
  Closed({
    ...counts,
    kind: Type.Literal('categorical'),
    mode: Nullable(Type.Union([Type.Number(), Type.String()])),
    mode_label: Nullable(Type.String()),
    distribution: Type.Record(Type.String(), Closed({ count: Type.Integer({ minimum: 0 }), fraction: Type.Number(), label: Nullable(Type.String()) })),
  }),
  Closed({ ...counts, kind: Type.Literal('vector') }),
]);

const PlaceShortcutAnswer = Signed({
  ...envelope,
  cell: Type.String({ description: "the place's cell64 (its centre cell for a place with extent)" }),
  mode: OneOf(['point', 'sampled'] as const),
  bands: Type.Array(Type.String()),
  place: PlaceBlock,
  polygon: Type.Optional(
    Closed(
      {
        bbox: Closed({ min_lat: Type.Number(), min_lng: Type.Number(), max_lat: Type.Number(), max_lng: Type.Number() }),
        source: Type.String(),
        cells_sampled: Type.Array(Type.String()),
        n_cells: Type.Integer({ minimum: 0 }),
        cells_pending: Type.Array(Type.String(), { description: 'sampled cells not read before the deadline' }),
      },
      'a place with extent: the cells sampled',
    ),
  ),
  stats: Type.Optional(Type.Record(Type.String(), BandStats, { description: 'a place with extent: per band, over the cells read' })),
});

/** The envelope of a derived shortcut plus its own fields. */
function derivedAnswer<T extends TProperties>(props: T) {
  return Signed({
    ...envelope,
    cell: Nullable(Type.String({ description: 'the cell computed at (null: rice_ch4 without a location)' })),
    place: Nullable(PlaceBlock),
    series_inputs: Type.Optional(
      Type.Array(Closed({ band: Type.String(), tslot: Type.Integer(), value: AnyValue, fact_cid: Type.String() }), { description: 'stored series points used (their fact_cids are in the receipt)' }),
    ),
    ...props,
  });
}

const status = OneOf(['ok', 'inconclusive'] as const);
const method = Type.String({ description: 'how the number was computed, with its citation' });
const reason = Type.Optional(Type.String({ description: 'why the answer is inconclusive' }));
/** One signed reading a change compares. */
const Reading = Nullable(Closed({ tslot: Type.Integer(), value: Type.Number(), fact_cid: Type.String() }));

const RESPONSE =
  'Response: SignedResponse (facts, receipt, bands_already_attested_at_cell, caveats, materialize_notes) plus shortcut, cell, mode (point | sampled), bands and place {query, cell64, via, label, lat, lng, is_high_confidence, reason, selected}. When the place has extent: polygon {bbox, source, cells_sampled, n_cells, cells_pending} and stats per band — numeric {kind, unit, n, n_absent, n_missing, mean, median, min, max, std}, categorical {kind, n, n_absent, n_missing, mode, mode_label, distribution {class_id: {count, fraction, label}}}; a band without values has null statistics and a reason, never 0. The receipt (primitive svc.<name>) signs every cell read and every fact_cid in facts. The place name is not signed: check place.is_high_confidence.';

function content(spec: PlaceShortcutSpec): string {
  const fan =
    spec.defaultCells === 1 ? 'reads 1 cell by default (n_cells 2..64 samples a place with extent)' : `samples ${spec.defaultCells} cells over a place with extent by default (n_cells 1..64)`;
  const fallback = Object.entries(spec.fallback ?? {})
    .map(([b, f]) => ` Where ${b} is a signed absence at a cell, ${f.band} is read there too and joins bands (and stats, over those cells).`)
    .join('');
  return `Composes locate → recall → aggregate over ${spec.bands.join(', ')}${spec.chooseBands ? ' (or the bands given)' : ''}; ${fan}.${fallback} Give place (or name, q, query) or lat and lng${spec.cell64 ? ', or cell64' : ''}. ${RESPONSE}`;
}

function placeOps(): Operation[] {
  const ops: Operation[] = [];
  for (const spec of Object.values(PLACE_SHORTCUTS)) {
    const path = `/v1/${spec.name}`;
    ops.push(
      defineOperation({
        name: spec.name,
        method: 'POST',
        path,
        summary: spec.summary,
        description: content(spec),
        tags: ['shortcuts'],
        input: placeInput(spec, 'post'),
        output: PlaceShortcutAnswer,
        mcp: spec.mcp,
        run: (ctx, input, call) => placeShortcut(ctx, spec.name, input, { deadline: call.deadline }),
      }),
    );
    ops.push(
      defineOperation({
        name: `${spec.name}_get`,
        method: 'GET',
        path,
        summary: `${spec.summary} (GET form of POST ${path})`,
        description: `Query parameters: lat, lon (or lng), place${spec.chooseBands ? ', band, bands (CSV), tslot' : ', tslot'}${spec.cell64 ? ', cell64' : ''}, n_cells. Same answer as POST ${path}. ${content(spec)}`,
        tags: ['shortcuts'],
        input: placeInput(spec, 'get'),
        output: PlaceShortcutAnswer,
        mcp: false,
        run: (ctx, input, call) => placeShortcut(ctx, spec.name, input, { deadline: call.deadline, fromQuery: true }),
      }),
    );
  }
  return ops;
}

const ENVELOPE =
  'Envelope: shortcut, cell, place (unsigned; check is_high_confidence), facts (each with its own receipt), series_inputs (stored series points used), receipt (primitive svc.<name>, signing every cell and fact_cid used), bands_already_attested_at_cell, caveats, materialize_notes.';
const locationInput = { ...locationProps, ...cell64Prop };
const twoSlots = (band: string) => ({
  tslot_a: Type.Optional({ ...Tslot, description: `earlier ${band} tslot (with tslot_b; default: the two newest stored)` }),
  tslot_b: Type.Optional({ ...Tslot, description: `later ${band} tslot (with tslot_a)` }),
});

const Amendment = Type.Object(
  {
    type: OneOf(Object.keys(CFOA) as Array<keyof typeof CFOA>, { description: 'IPCC 2019 Table 5.14 amendment (straw_short = incorporated < 30 days before cultivation)' }),
    rate_t_ha: Type.Number({ minimum: 0, maximum: 100, description: 'application rate, t/ha (dry weight for straw, fresh weight for others)' }),
  },
  { additionalProperties: false },
);

export const terrainOp = defineOperation({
  name: 'terrain',
  method: 'POST',
  path: '/v1/terrain',
  summary: 'Slope, aspect, ruggedness (TRI) and topographic position (TPI) from the 3×3 elevation neighbourhood of a cell',
  description: `Reads copdem30m.elevation_mean at the 9 stencil cells (NW, N, NE, W, C, E, SW, S, SE) with spacing from the protocol pitch; Horn (1981) slope and aspect, Riley et al. (1999) TRI, Weiss (2001) TPI. A missing cell gives null metrics with a reason, never an invented slope. Response adds status (ok | incomplete), slope_deg, aspect_deg, tri_m, tpi_m, reason, spacing_m, neighbourhood[], method. ${ENVELOPE}`,
  tags: ['shortcuts'],
  input: Type.Object(locationInput, { additionalProperties: false }),
  output: derivedAnswer({
    status: OneOf(['ok', 'incomplete'] as const),
    slope_deg: num,
    aspect_deg: Nullable(Type.Number({ description: 'downslope direction, degrees clockwise from north; null on flat ground' })),
    tri_m: num,
    tpi_m: num,
    reason: Type.Optional(Type.String({ description: 'why the metrics are null' })),
    spacing_m: Closed({ ns_m: Type.Number(), ew_m: Type.Number() }),
    neighbourhood: Type.Array(Closed({ position: Type.String(), cell: Type.String(), elevation_m: num, kind: Nullable(Type.String()), fact_cid: Nullable(Type.String()) })),
    method: Type.Record(Type.String(), Type.String()),
  }),
  mcp: 'full',
  run: (ctx, input, call) => terrain(ctx, input, { deadline: call.deadline }),
});

const Anomaly = Type.Union([
  Closed({
    status: Type.Literal('ok'),
    z: Type.Number(),
    signal: OneOf(['drier_than_baseline', 'wetter_than_baseline', 'no_clear_difference'] as const),
    recent_mean_mm: Type.Number(),
    baseline_mean_mm: Type.Number(),
    baseline_sd_mm: Type.Number(),
    n_recent: Type.Integer(),
    n_baseline: Type.Integer(),
    recent_tslots: Type.Array(Type.Integer(), { minItems: 2, maxItems: 2, description: '[first, last] tslot of the recent window' }),
  }),
  Closed({ status: Type.Literal('inconclusive'), reason: Type.String(), observed: Type.Integer() }),
]);

export const spiOp = defineOperation({
  name: 'spi',
  method: 'POST',
  path: '/v1/spi',
  summary: 'Meteorological drought: the signed 3-month SPI, else a stated z-score of the stored CHIRPS daily history',
  description: `Uses precip.spi_3m when available (McKee et al. 1993 classes; drought when SPI ≤ −1). Otherwise the standardized anomaly of the last 30 stored CHIRPS days against the earlier stored days (needs ≥ 30 values), not an SPI; with less history, status inconclusive and observed_values. Response adds status, source, spi, spi_class, drought, anomaly, observed_values, method, reason. ${ENVELOPE}`,
  tags: ['shortcuts'],
  input: Type.Object(locationInput, { additionalProperties: false }),
  output: derivedAnswer({
    status,
    source: Nullable(Type.String({ description: 'precip.spi_3m, chirps_daily_anomaly, or null' })),
    spi: num,
    spi_class: Nullable(Type.String()),
    drought: Nullable(Type.Boolean({ description: 'SPI ≤ −1; null without an SPI' })),
    anomaly: Type.Optional(Anomaly),
    observed_values: Type.Optional(Type.Integer({ minimum: 0 })),
    method,
    reason,
  }),
  mcp: 'full',
  run: (ctx, input, call) => spi(ctx, input, { deadline: call.deadline }),
});

export const burnSeverityOp = defineOperation({
  name: 'burn_severity',
  method: 'POST',
  path: '/v1/burn_severity',
  summary: 'Burn severity from dNBR (USGS classes), from the signed indices.dnbr or two indices.nbr facts',
  description: `dNBR = NBR_pre − NBR_post; classes < 0.10 unburned, 0.10–0.27 low, 0.27–0.44 moderate-low, 0.44–0.66 moderate-high, > 0.66 high (Key and Benson 2006). With tslot_pre and tslot_post the two NBR facts at those slots are read (fetched on a miss); without them indices.dnbr is read, else the two newest stored NBR facts. Response adds status, source, dnbr, severity, pre, post, classes, method, reason. ${ENVELOPE}`,
  tags: ['shortcuts'],
  input: Type.Object(
    {
      ...locationInput,
      tslot_pre: Type.Optional({ ...Tslot, description: 'pre-fire indices.nbr tslot (with tslot_post)' }),
      tslot_post: Type.Optional({ ...Tslot, description: 'post-fire indices.nbr tslot (with tslot_pre)' }),
    },
    { additionalProperties: false },
  ),
  output: derivedAnswer({
    status,
    source: Nullable(OneOf(['indices.dnbr', 'indices.nbr'] as const)),
    dnbr: num,
    severity: Nullable(Type.String()),
    pre: Reading,
    post: Reading,
    classes: Type.Array(Closed({ class: Type.String(), range: Type.String() })),
    method,
    reason,
  }),
  mcp: 'full',
  run: (ctx, input, call) => burnSeverity(ctx, input, { deadline: call.deadline }),
});

export const deforestationAlertOp = defineOperation({
  name: 'deforestation_alert',
  method: 'POST',
  path: '/v1/deforestation_alert',
  summary: 'Deforestation alert: NDVI drop between two tslots ≥ threshold, plus the yearly embedding change',
  description: `alert = NDVI(a) − NDVI(b) ≥ threshold (default 0.15). When the two slots fall in different years and both have geotessera vectors, embedding.change = 1 − cosine is reported alongside. Response adds status, alert, threshold, a, b, ndvi_drop, embedding, method, reason. ${ENVELOPE}`,
  tags: ['shortcuts'],
  input: Type.Object(
    { ...locationInput, ...twoSlots('indices.ndvi'), threshold: Type.Number({ exclusiveMinimum: 0, maximum: 2, default: NDVI_DROP_DEFAULT, description: 'NDVI drop that raises the alert' }) },
    { additionalProperties: false },
  ),
  output: derivedAnswer({
    status,
    alert: Nullable(Type.Boolean()),
    threshold: Type.Number(),
    a: Reading,
    b: Reading,
    ndvi_drop: num,
    embedding: Closed(
      {
        status: OneOf(['ok', 'unavailable'] as const),
        slot_a: Nullable(Type.Integer()),
        slot_b: Nullable(Type.Integer()),
        cosine: num,
        change: Nullable(Type.Number({ description: '1 − cosine' })),
        reason: Type.Optional(Type.String()),
      },
      'the yearly embedding change between the two slots (reported, not part of the alert rule)',
    ),
    method,
    reason,
  }),
  mcp: 'full',
  run: (ctx, input, call) => deforestationAlert(ctx, input, { deadline: call.deadline }),
});

export const sarForestDisturbanceOp = defineOperation({
  name: 'sar_forest_disturbance',
  method: 'POST',
  path: '/v1/sar_forest_disturbance',
  summary: 'Radar forest disturbance: Sentinel-1 VV backscatter drop of 3 dB or more between two tslots',
  description: `disturbance = VV(a) − VV(b) ≥ threshold_db (default 3) on signed s1.vv_db facts; tslots given (fetched on a miss) or the two newest stored. Response adds status, disturbance, threshold_db, a, b, vv_drop_db, method, reason. ${ENVELOPE}`,
  tags: ['shortcuts'],
  input: Type.Object(
    { ...locationInput, ...twoSlots('s1.vv_db'), threshold_db: Type.Number({ exclusiveMinimum: 0, maximum: 30, default: VV_DROP_DB, description: 'VV drop in dB that flags a disturbance' }) },
    { additionalProperties: false },
  ),
  output: derivedAnswer({
    status,
    disturbance: Nullable(Type.Boolean()),
    threshold_db: Type.Number(),
    a: Reading,
    b: Reading,
    vv_drop_db: num,
    method,
    reason,
  }),
  mcp: 'full',
  run: (ctx, input, call) => sarForestDisturbance(ctx, input, { deadline: call.deadline }),
});

export const riceCh4Operation = defineOperation({
  name: 'rice_ch4',
  method: 'POST',
  path: '/v1/rice_ch4',
  summary: 'Rice-paddy methane, IPCC 2019 Refinement Tier 2 Eq. 5.1 (a calculator over caller inputs, not an observation)',
  description: `CH4 = EF × t × A × 10⁻⁶ Gg with EF = EF_c × SF_w × SF_p × SF_o (Eq. 5.2) and SF_o = (1 + Σ ROA × CFOA)^0.59 (Eq. 5.3); defaults from IPCC 2019 Vol. 4 Ch. 5 Tables 5.11 (EF_c 1.19 kg CH4/ha/d global), 5.12 (SF_w), 5.13 (SF_p), 5.14 (CFOA), each listed in defaults_used. With a location, the land cover at the cell is read and signed (is it cropland?). Response adds kind: calculation, inputs, defaults_used, result {ef_c, sf_w, sf_p, sf_o, ef_kg_ch4_ha_d, kg_ch4_per_ha, kg_ch4, t_ch4, gg_ch4}, landcover, formula, citation. ${ENVELOPE}`,
  tags: ['shortcuts'],
  input: Type.Object(
    {
      ...locationInput,
      area_ha: Type.Number({ exclusiveMinimum: 0, maximum: 1e9, description: 'harvested area, ha' }),
      cultivation_days: Type.Number({ exclusiveMinimum: 0, maximum: 366, description: 'cultivation period, days' }),
      // No schema defaults: the primitive states each default it applies in defaults_used.
      water_regime: Type.Optional(OneOf(Object.keys(SF_W) as Array<keyof typeof SF_W>, { description: 'Table 5.12 water regime during cultivation (default continuously_flooded)' })),
      pre_season_water_regime: Type.Optional(OneOf(Object.keys(SF_P) as Array<keyof typeof SF_P>, { description: 'Table 5.13 pre-season water regime (default non_flooded_lt_180d)' })),
      organic_amendment: Type.Optional(Type.Union([Amendment, Type.Array(Amendment, { maxItems: 5 })], { description: 'one amendment or a list (default none)' })),
      ef_c: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 50, description: 'baseline emission factor override, kg CH4/ha/d (default 1.19, Table 5.11 global)' })),
    },
    { additionalProperties: false },
  ),
  output: derivedAnswer({
    kind: Type.Literal('calculation'),
    inputs: Closed(
      {
        area_ha: Type.Number(),
        cultivation_days: Type.Number(),
        water_regime: Type.String(),
        pre_season_water_regime: Type.String(),
        organic_amendment: Type.Array(Closed({ type: Type.String(), rate_t_ha: Type.Number(), cfoa: Type.Number() })),
        ef_c: Type.Number(),
      },
      'the inputs used, defaults filled in',
    ),
    defaults_used: Type.Array(Closed({ parameter: Type.String(), value: AnyValue, factor: Type.Optional(Type.Number()), source: Type.String() })),
    result: Closed({
      ef_c: Type.Number(),
      sf_w: Type.Number(),
      sf_p: Type.Number(),
      sf_o: Type.Number(),
      ef_kg_ch4_ha_d: Type.Number(),
      kg_ch4_per_ha: Type.Number(),
      kg_ch4: Type.Number(),
      t_ch4: Type.Number(),
      gg_ch4: Type.Number(),
    }),
    landcover: Nullable(
      Closed(
        { class: AnyValue, label: Nullable(Type.String()), is_cropland: Nullable(Type.Boolean()), fact_cid: Nullable(Type.String()) },
        'with a location: the land cover at the cell (is it cropland?)',
      ),
    ),
    formula: Type.Record(Type.String(), Type.String()),
    citation: Type.String(),
  }),
  mcp: 'full',
  run: (ctx, input, call) => riceCh4Op(ctx, input, { deadline: call.deadline }),
});

/** The derived shortcuts: POST only, MCP full. */
export const DERIVED_SHORTCUT_OPS: Operation[] = [terrainOp, spiOp, burnSeverityOp, deforestationAlertOp, sarForestDisturbanceOp, riceCh4Operation];

/** Every shortcut operation: the place shortcuts (POST + GET twin) and the derived ones. */
export const SHORTCUT_OPS: Operation[] = [...placeOps(), ...DERIVED_SHORTCUT_OPS];
