/**
 * The shapes of an EUDR due-diligence statement (docs/eudr.md): what a caller sends per plot, what
 * each plot's assessment holds, and the statement that binds them under one receipt. Plain types,
 * shared by the pure parts (annex, geometry, sampling, verdict, report) and the primitive.
 */
import type { Receipt, Scope } from '../../protocol/receipt.js';

/** Which forest map decides "forest at the cut-off": JRC GFC2020 (default), Hansen alone, or both must agree. */
export type ForestBaseline = 'jrc_gfc2020_v3' | 'hansen_only' | 'both';

export type PlotVerdict = 'deforestation_free' | 'deforestation_detected' | 'no_forest_at_baseline' | 'insufficient_data';

export type VisualVerdict = 'no_visual_deforestation' | 'visual_deforestation_suspected' | 'indeterminate_no_baseline';

/** The seven commodities of Annex I. */
export type Commodity = 'cattle' | 'cocoa' | 'coffee' | 'oil_palm' | 'rubber' | 'soya' | 'wood';

/** One plot as the caller sends it. */
export interface PlotInput {
  plot_id: string;
  /** GeoJSON Polygon or Point, or `{bbox: [min_lng, min_lat, max_lng, max_lat]}`. */
  geometry_geojson: unknown;
  /** ISO 3166-1 alpha-3. */
  country_of_production: string;
  /** Combined Nomenclature code, 6 digits or more. */
  commodity_hs: string;
  quantity_kg: number;
  commodity_name?: string;
  supplier?: string;
  request_visual_evidence?: boolean;
}

export interface OperatorInfo {
  name?: string;
  address?: string;
  eori?: string;
}

/** A plot geometry after validation: a closed, counter-clockwise polygon or a point. */
export interface PlotGeometry {
  type: 'Polygon' | 'Point';
  /** Polygon: rings of [lng, lat] (outer first); Point: [lng, lat]. */
  coordinates: number[][][] | number[];
  /** What the caller sent. */
  source: 'polygon' | 'point' | 'bbox';
}

/** A sampled cell whose forest was lost after the cut-off. */
export interface LossCell {
  cell: string;
  lat: number;
  lng: number;
  /** Calendar year of the loss (Hansen loss year). */
  loss_year: number;
  fact_cid: string;
}

/** One year of the NDVI timeline of a plot's visual evidence. */
export interface NdviYear {
  year: number;
  /** Mean NDVI over the evidence cells that have a value that year; null when none has. */
  ndvi: number | null;
  cells_with_value: number;
}

export interface VisualEvidence {
  verdict: VisualVerdict;
  /** The cells the evidence was read at (forest or loss cells first), at most a few per plot. */
  cells: string[];
  ndvi_timeline: NdviYear[];
  /** NDVI of 2020 minus the newest year's; null without both. */
  ndvi_drop: number | null;
  ndvi_drop_threshold: number;
  /** Mean Sentinel-1 VV change (dB, negative is a drop) over the cells with a value; null when none. */
  vv_change_db: number | null;
  vv_drop_threshold_db: number;
  /** A Sentinel-2 scene picture per cell (GET). */
  scene_urls: Record<string, string>;
  reason: string;
}

/** One plot's assessment, with the numbers that decided its verdict. */
export interface PlotAssessment {
  plot_id: string;
  country_of_production: string;
  commodity_hs: string;
  commodity: Commodity;
  is_cattle: boolean;
  quantity_kg: number;
  commodity_name?: string;
  supplier?: string;
  geometry: PlotGeometry;
  /** Geodesic area of the polygon in hectares; a point plot has none (null). */
  area_ha: number | null;
  cells_requested: number;
  cells_sampled: number;
  /** Sampled cells where the baseline map has a value. */
  cells_with_baseline: number;
  /** Forest share of the cells with a baseline value (0..1); null without any. */
  forest_fraction: number | null;
  /** forest_fraction × area_ha (never cell count × cell area); null for points or without data. */
  forest_area_ha: number | null;
  /** The minimum mapping unit applied to forest_area_ha (0.5 ha). */
  mmu_ha: number;
  loss_cells: LossCell[];
  /** Share of the forest cells with loss after the cut-off (0..1); null without forest cells. */
  loss_fraction: number | null;
  /** loss_fraction × forest_area_ha. */
  loss_area_ha: number | null;
  verdict: PlotVerdict;
  /** The verdict in a sentence with its deciding numbers. */
  reason: string;
  /** Every fact the assessment read (baseline, loss, evidence). */
  fact_cids: string[];
  visual_evidence?: VisualEvidence;
}

/** The statement: Annex II sections, the plots, the evidence and one receipt. */
export interface DdsStatement {
  schema: string;
  /** Content id of the statement without its receipt (GET /v1/eudr_dds/<statement_id>). */
  statement_id: string;
  /** ISO seconds. */
  generated_at: string;
  cut_off_date: string;
  forest_baseline: ForestBaseline;
  annex_ii: {
    operator: OperatorInfo | null;
    products: Array<{ plot_id: string; commodity_hs: string; commodity: Commodity; commodity_name: string | null; quantity_kg: number; supplier: string | null }>;
    countries_of_production: string[];
    geolocation: Array<{ plot_id: string; geometry: PlotGeometry; area_ha: number | null }>;
    risk_assessment: Array<{ plot_id: string; verdict: PlotVerdict; visual_verdict: VisualVerdict | null }>;
    /** True when every plot is deforestation_free (the statement's own conclusion). */
    all_plots_deforestation_free: boolean;
  };
  plots: PlotAssessment[];
  summary: { plots: number; by_verdict: Record<PlotVerdict, number>; cells_sampled: number; facts: number };
  legality_module: string;
  legality_disclaimer: string;
  /** svc:bundle: tokens citing the evidence facts (one bundle holds at most 256). */
  evidence: { bundle_tokens: string[]; fact_count: number };
  /** Present when the time budget ended the work early: the plots not assessed are listed. */
  partial?: { reason: string; plots_done: number; plots_total: number; plots_missing: string[] };
  receipt: Receipt;
  scope?: Scope;
}
