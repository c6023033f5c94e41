/**
 * Place shortcuts and derived shortcuts (docs/shortcuts.md). Each place shortcut is two entries on
 * one path: the POST is the operation (and the MCP tool svc_<name>), the GET twin `<name>_get`
 * reads the query string and is REST-only, so the OpenAPI document lists both. The derived
 * shortcuts are POST only and live in /mcp/full.
 */
import { PLACE_SHORTCUTS, placeShortcut, type PlaceShortcutName } from '../../primitives/shortcuts/read.js';
import { terrain } from '../../primitives/shortcuts/terrain.js';
import { spi } from '../../primitives/shortcuts/drought.js';
import { burnSeverity, deforestationAlert, sarForestDisturbance } from '../../primitives/shortcuts/change.js';
import { CFOA, SF_P, SF_W, riceCh4Op } from '../../primitives/shortcuts/rice.js';
import { N_CELLS_MAX, N_CELLS_MIN } from '../../primitives/shortcuts/aggregate.js';
import { tslotSchema, type JsonSchema, type Operation } from '../operations.js';

const text = (description: string) => ({ type: 'string', minLength: 1, maxLength: 200, description }) as const;

/** Location fields (place and its aliases: docs/shortcuts.md, "Place shortcuts"). Give a place name or lat+lng (or cell64 where listed). */
const locationProps = {
  place: text('place name, resolved by locate (aliases: name, q, query)'),
  name: text('alias of place'),
  q: text('alias of place'),
  query: text('alias of place'),
  lat: { type: 'number', minimum: -90, maximum: 90, description: 'WGS-84 latitude (with lng)' },
  lng: { type: 'number', minimum: -180, maximum: 180, description: 'WGS-84 longitude (with lat)' },
  lon: { type: 'number', minimum: -180, maximum: 180, description: 'alias of lng' },
} as const;

const cell64Prop = { cell64: { type: 'string', minLength: 1, maxLength: 64, description: 'a cell64 instead of a place' } } as const;

// Deliberately untyped: n_cells outside 1..64 (or not an integer) is HTTP 400 (docs/errors.md,
// "Another status than the catalogue's"), which the primitive owns; a schema type would turn it
// into the generic 422.
const nCellsProp = {
  n_cells: {
    description: `integer ${N_CELLS_MIN}..${N_CELLS_MAX}: cells sampled over a place with extent (default 16; 1 for /v1/at). 1 forces a point read at the centroid. Any other value: HTTP 400 invalid_argument.`,
  },
} as const;

const RESPONSE = 'Response: SignedResponse (facts, receipt, bands_already_attested_at_cell, caveats, materialize_notes) plus shortcut, cell, mode (point | sampled), bands and place {query, cell64, via, label, lat, lng, is_high_confidence, reason, selected}. When the place has extent: polygon {bbox, source, cells_sampled, n_cells, cells_pending} and stats per band — numeric {kind, unit, n, n_absent, n_missing, mean, median, min, max, std}, categorical {kind, n, n_absent, n_missing, mode, mode_label, distribution {class_id: {count, fraction, label}}}; a band without values has null statistics and a reason, never 0. The receipt (primitive svc.<name>) signs every cell read and every fact_cid in facts. The place name is not signed: check place.is_high_confidence.';

function postInput(spec: (typeof PLACE_SHORTCUTS)[PlaceShortcutName]): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...locationProps,
      ...(spec.cell64 ? cell64Prop : {}),
      ...(spec.chooseBands
        ? {
          band: { type: 'string', minLength: 1, maxLength: 100, description: 'one band key (added to bands)' },
          bands: { type: ['string', 'array'], items: { type: 'string', minLength: 1, maxLength: 100 }, maxItems: 64, maxLength: 6400, description: 'band keys: comma-separated string or array (default: the /v1/at set)' },
        }
        : {}),
      tslot: { ...tslotSchema, description: 'tslot for the non-static bands (static bands have the single tslot 0)' },
      ...nCellsProp,
    },
  };
}

function getInput(spec: (typeof PLACE_SHORTCUTS)[PlaceShortcutName]): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...locationProps,
      ...(spec.cell64 ? cell64Prop : {}),
      ...(spec.chooseBands
        ? {
          band: { type: 'string', minLength: 1, maxLength: 100, description: 'one band key' },
          bands: { type: 'string', minLength: 1, maxLength: 6400, description: 'comma-separated band keys' },
        }
        : {}),
      tslot: { ...tslotSchema, description: 'tslot for the non-static bands' },
      ...nCellsProp,
    },
  };
}

function content(spec: (typeof PLACE_SHORTCUTS)[PlaceShortcutName]): string {
  const fan = spec.defaultCells === 1 ? 'reads 1 cell by default (n_cells 2..64 samples a place with extent)' : `samples ${spec.defaultCells} cells over a place with extent by default (n_cells 1..64)`;
  return `Composes locate → recall → aggregate over ${spec.bands.join(', ')}${spec.chooseBands ? ' (or the bands given)' : ''}; ${fan}. Give place (or name, q, query) or lat and lng${spec.cell64 ? ', or cell64' : ''}. ${RESPONSE}`;
}

function placeOps(): Operation[] {
  const ops: Operation[] = [];
  for (const spec of Object.values(PLACE_SHORTCUTS)) {
    const path = `/v1/${spec.name}`;
    ops.push({
      name: spec.name,
      method: 'POST',
      path,
      summary: spec.summary,
      description: content(spec),
      tags: ['shortcuts'],
      input: postInput(spec),
      mcp: spec.mcp,
      run: (ctx, input, call) => placeShortcut(ctx, spec.name, input, { deadline: call.deadline }),
    });
    ops.push({
      name: `${spec.name}_get`,
      method: 'GET',
      path,
      summary: `${spec.summary} (GET form of POST ${path})`,
      description: `Query parameters: lat, lon (or lng), place${spec.chooseBands ? ', band, bands (CSV), tslot' : ', tslot'}${spec.cell64 ? ', cell64' : ''}, n_cells. Same answer as POST ${path}. ${content(spec)}`,
      tags: ['shortcuts'],
      input: getInput(spec),
      mcp: false,
      run: (ctx, input, call) => placeShortcut(ctx, spec.name, input, { deadline: call.deadline, fromQuery: true }),
    });
  }
  return ops;
}

const ENVELOPE = 'Envelope: shortcut, cell, place (unsigned; check is_high_confidence), facts (each with its own receipt), series_inputs (stored series points used), receipt (primitive svc.<name>, signing every cell and fact_cid used), bands_already_attested_at_cell, caveats, materialize_notes.';
const locationInput = { ...locationProps, ...cell64Prop } as const;
const twoSlots = (band: string) => ({
  tslot_a: { ...tslotSchema, description: `earlier ${band} tslot (with tslot_b; default: the two newest stored)` },
  tslot_b: { ...tslotSchema, description: `later ${band} tslot (with tslot_a)` },
});

const amendmentSchema = {
  type: 'object',
  required: ['type', 'rate_t_ha'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: Object.keys(CFOA), description: 'IPCC 2019 Table 5.14 amendment (straw_short = incorporated < 30 days before cultivation)' },
    rate_t_ha: { type: 'number', minimum: 0, maximum: 100, description: 'application rate, t/ha (dry weight for straw, fresh weight for others)' },
  },
} as const;

/** The derived shortcuts: POST only, MCP full. */
export const DERIVED_SHORTCUT_OPS: Operation[] = [
  {
    name: 'terrain',
    method: 'POST',
    path: '/v1/terrain',
    summary: 'Slope, aspect, ruggedness (TRI) and topographic position (TPI) from the 3×3 elevation neighbourhood of a cell',
    description: `Reads copdem30m.elevation_mean at the 9 stencil cells (NW, N, NE, W, C, E, SW, S, SE) with spacing from the protocol pitch; Horn (1981) slope and aspect, Riley et al. (1999) TRI, Weiss (2001) TPI. A missing cell gives null metrics with a reason, never an invented slope. Response adds status (ok | incomplete), slope_deg, aspect_deg, tri_m, tpi_m, reason, spacing_m, neighbourhood[], method. ${ENVELOPE}`,
    tags: ['shortcuts'],
    input: { type: 'object', additionalProperties: false, properties: locationInput },
    mcp: 'full',
    run: (ctx, input, call) => terrain(ctx, input, { deadline: call.deadline }),
  },
  {
    name: 'spi',
    method: 'POST',
    path: '/v1/spi',
    summary: 'Meteorological drought: the signed 3-month SPI, else a stated z-score of the stored CHIRPS daily history',
    description: `Uses precip.spi_3m when available (McKee et al. 1993 classes; drought when SPI ≤ −1). Otherwise the standardized anomaly of the last 30 stored CHIRPS days against the earlier stored days (needs ≥ 30 values), not an SPI; with less history, status inconclusive and observed_values. Response adds status, source, spi, spi_class, drought, anomaly, observed_values, method, reason. ${ENVELOPE}`,
    tags: ['shortcuts'],
    input: { type: 'object', additionalProperties: false, properties: locationInput },
    mcp: 'full',
    run: (ctx, input, call) => spi(ctx, input, { deadline: call.deadline }),
  },
  {
    name: 'burn_severity',
    method: 'POST',
    path: '/v1/burn_severity',
    summary: 'Burn severity from dNBR (USGS classes), from the signed indices.dnbr or two indices.nbr facts',
    description: `dNBR = NBR_pre − NBR_post; classes < 0.10 unburned, 0.10–0.27 low, 0.27–0.44 moderate-low, 0.44–0.66 moderate-high, > 0.66 high (Key and Benson 2006). With tslot_pre and tslot_post the two NBR facts at those slots are read (fetched on a miss); without them indices.dnbr is read, else the two newest stored NBR facts. Response adds status, source, dnbr, severity, pre, post, classes, method, reason. ${ENVELOPE}`,
    tags: ['shortcuts'],
    input: {
      type: 'object',
      additionalProperties: false,
      properties: {
        ...locationInput,
        tslot_pre: { ...tslotSchema, description: 'pre-fire indices.nbr tslot (with tslot_post)' },
        tslot_post: { ...tslotSchema, description: 'post-fire indices.nbr tslot (with tslot_pre)' },
      },
    },
    mcp: 'full',
    run: (ctx, input, call) => burnSeverity(ctx, input, { deadline: call.deadline }),
  },
  {
    name: 'deforestation_alert',
    method: 'POST',
    path: '/v1/deforestation_alert',
    summary: 'Deforestation alert: NDVI drop between two tslots ≥ threshold, plus the yearly embedding change',
    description: `alert = NDVI(a) − NDVI(b) ≥ threshold (default 0.15). When the two slots fall in different years and both have geotessera vectors, embedding.change = 1 − cosine is reported alongside. Response adds status, alert, threshold, a, b, ndvi_drop, embedding, method, reason. ${ENVELOPE}`,
    tags: ['shortcuts'],
    input: {
      type: 'object',
      additionalProperties: false,
      properties: { ...locationInput, ...twoSlots('indices.ndvi'), threshold: { type: 'number', exclusiveMinimum: 0, maximum: 2, description: 'NDVI drop that raises the alert (default 0.15)' } },
    },
    mcp: 'full',
    run: (ctx, input, call) => deforestationAlert(ctx, input, { deadline: call.deadline }),
  },
  {
    name: 'sar_forest_disturbance',
    method: 'POST',
    path: '/v1/sar_forest_disturbance',
    summary: 'Radar forest disturbance: Sentinel-1 VV backscatter drop of 3 dB or more between two tslots',
    description: `disturbance = VV(a) − VV(b) ≥ threshold_db (default 3) on signed s1.vv_db facts; tslots given (fetched on a miss) or the two newest stored. Response adds status, disturbance, threshold_db, a, b, vv_drop_db, method, reason. ${ENVELOPE}`,
    tags: ['shortcuts'],
    input: {
      type: 'object',
      additionalProperties: false,
      properties: { ...locationInput, ...twoSlots('s1.vv_db'), threshold_db: { type: 'number', exclusiveMinimum: 0, maximum: 30, description: 'VV drop in dB that flags a disturbance (default 3)' } },
    },
    mcp: 'full',
    run: (ctx, input, call) => sarForestDisturbance(ctx, input, { deadline: call.deadline }),
  },
  {
    name: 'rice_ch4',
    method: 'POST',
    path: '/v1/rice_ch4',
    summary: 'Rice-paddy methane, IPCC 2019 Refinement Tier 2 Eq. 5.1 (a calculator over caller inputs, not an observation)',
    description: `CH4 = EF × t × A × 10⁻⁶ Gg with EF = EF_c × SF_w × SF_p × SF_o (Eq. 5.2) and SF_o = (1 + Σ ROA × CFOA)^0.59 (Eq. 5.3); defaults from IPCC 2019 Vol. 4 Ch. 5 Tables 5.11 (EF_c 1.19 kg CH4/ha/d global), 5.12 (SF_w), 5.13 (SF_p), 5.14 (CFOA), each listed in defaults_used. With a location, the land cover at the cell is read and signed (is it cropland?). Response adds kind: calculation, inputs, defaults_used, result {ef_c, sf_w, sf_p, sf_o, ef_kg_ch4_ha_d, kg_ch4_per_ha, kg_ch4, t_ch4, gg_ch4}, landcover, formula, citation. ${ENVELOPE}`,
    tags: ['shortcuts'],
    input: {
      type: 'object',
      required: ['area_ha', 'cultivation_days'],
      additionalProperties: false,
      properties: {
        ...locationInput,
        area_ha: { type: 'number', exclusiveMinimum: 0, maximum: 1e9, description: 'harvested area, ha' },
        cultivation_days: { type: 'number', exclusiveMinimum: 0, maximum: 366, description: 'cultivation period, days' },
        water_regime: { type: 'string', enum: Object.keys(SF_W), description: 'Table 5.12 water regime during cultivation (default continuously_flooded)' },
        pre_season_water_regime: { type: 'string', enum: Object.keys(SF_P), description: 'Table 5.13 pre-season water regime (default non_flooded_lt_180d)' },
        organic_amendment: { oneOf: [amendmentSchema, { type: 'array', items: amendmentSchema, maxItems: 5 }], description: 'one amendment or a list (default none)' },
        ef_c: { type: 'number', exclusiveMinimum: 0, maximum: 50, description: 'baseline emission factor override, kg CH4/ha/d (default 1.19, Table 5.11 global)' },
      },
    },
    mcp: 'full',
    run: (ctx, input, call) => riceCh4Op(ctx, input, { deadline: call.deadline }),
  },
];

/** Every shortcut operation: the place shortcuts (POST + GET twin) and the derived ones. */
export const SHORTCUT_OPS: Operation[] = [...placeOps(), ...DERIVED_SHORTCUT_OPS];
