/** Fixed limits (docs/security.md, "Fixed bounds per request"; the configurable ones come from Config). */
import { MEMORY_SEARCH_CONCURRENCY_DEFAULT, NOTE_DAILY_QUOTA_DEFAULT } from '../config.js';
import { FIELD_LIMITS } from '../primitives/fields/field-boundaries.js';
import { FIND_SIMILAR_K } from '../primitives/embeddings/similar.js';
import { DIVERSITY_EXACT_MAX } from '../primitives/embeddings/analytics-math.js';
import { ANALYTICS_DEFAULT_CELLS, ANALYTICS_MAX_CELLS } from '../primitives/embeddings/analytics-region.js';
import { HUNT_MAX_AREA_KM2 } from '../primitives/hunt/region.js';
import { MAX_ANCHORS } from '../primitives/rasters/geometry.js';
import { ARCHETYPE_K, MAPS_AT_ONCE, MIN_PIXELS_PER_ARCHETYPE } from '../primitives/rasters/archetype-map.js';
import { KMEANS_MAX_ITERATIONS } from '../primitives/rasters/archetype-kmeans.js';
import { PLACE_RADIUS_M, REGION_MAX_CELLS } from '../primitives/rasters/archetype-region.js';
import { FIELDS_AT_ONCE, TESSERA_FIRST_YEAR, TESSERA_MAX_PIXELS_PER_SIDE, TESSERA_MAX_TILES } from '../primitives/rasters/tessera-field.js';
import { CUBES_AT_ONCE, MAX_CUBE_SLICES } from '../primitives/rasters/cube-recipe.js';
import { RASTER_BUNDLE_LIMITS } from '../primitives/rasters/raster-bundle.js';
import { TEMPO_UNIT_S } from '../protocol/tslot.js';
import { MAX_PIXELS_PER_SIDE, NATIVE_RESOLUTION_M, RASTER_BANDS, RASTERS_AT_ONCE } from '../primitives/rasters/recipe.js';
import { RASTER_SEARCH_DAYS } from '../sources/sentinel2-raster.js';
import { MAX_FUTURE_SKEW_S } from '../primitives/write/fact-rules.js';
import { MAX_EDGES_PER_WRITE, MAX_EDGES_RETURNED } from '../primitives/memory/edges.js';
import { MAX_PLOTS, MAX_TOTAL_CELLS, POINT_PLOT_MAX_HA } from '../primitives/eudr/dds.js';
import { BASE_BUDGET_S, MAX_BUDGET_S, MAX_RUNNING_JOBS, VISUAL_BUDGET_S } from '../primitives/eudr/jobs.js';
import { MAX_CELLS_PER_PLOT } from '../primitives/eudr/sample.js';
import { MMU_HA } from '../primitives/eudr/verdict.js';
import { MAX_NOTES_PER_WRITE } from '../primitives/memory/notes.js';
import { MAX_CONTEXT, MAX_QUERY_WORDS, MAX_RADIUS_M, MAX_RESULTS, TEXT_CANDIDATES, VECTOR_SCAN } from '../primitives/memory/note-search.js';

/**
 * HTTP connection hygiene (issue 13, items 6 and 11; docs/reliability.md). A request must arrive
 * whole within request_timeout_s, or the socket is answered 408 and closed: an idle timeout alone
 * would not do, a client that dribbles one byte a second is never idle. Node checks the deadlines
 * every timeout_check_interval_ms, so a slow socket lives at most request_timeout_s plus that.
 * Connections past max_connections_per_ip from one address are closed before a byte is read.
 */
export const HTTP_LIMITS = {
  /** Concurrent sockets per remote address (behind a proxy every client shares the proxy's). */
  max_connections_per_ip: 64,
  /** Request line and headers must have arrived this long after the request began. */
  headers_timeout_s: 10,
  /** The whole request, body included, must have arrived this long after it began. */
  request_timeout_s: 30,
  /** An idle kept-alive socket is closed after this long without a new request. */
  keep_alive_timeout_s: 10,
  /** How often Node checks the two deadlines above (its default, 30 s, would triple the bound). */
  timeout_check_interval_ms: 1000,
  /** Longest path parameter (a longer one answers 414 invalid_argument). */
  max_path_param_chars: 100,
  /** Largest request line plus headers (Node's default; a larger one answers 431 invalid_argument). */
  max_header_bytes: 16384,
} as const;

export const LIMITS = {
  recall_many_cells: 256,
  query_region_max_cells: { min: 1, max: 1024, default: 256 },
  shortcut_n_cells: { min: 1, max: 64, default_polygon: 16, default_at: 1 },
  backfill_max_facts: { min: 1, max: 1024, default: 16 },
  backfill_area_cells: 64,
  find_similar_k: FIND_SIMILAR_K,
  /** embedding_centroid, region_similarity (per side), embedding_diversity (docs/embeddings.md, "Analytics over regions"). */
  embedding_analytics: {
    max_cells: { min: 1, max: ANALYTICS_MAX_CELLS, default: ANALYTICS_DEFAULT_CELLS },
    cells_list_max: ANALYTICS_MAX_CELLS,
    diversity_exact_max_vectors: DIVERSITY_EXACT_MAX,
  },
  locate_polygon_sample_cells: 64,
  hunt: { sampled_cells: 32, sampled_cells_slow: 8, top: 8, max_bbox_area_km2: HUNT_MAX_AREA_KM2 },
  field_boundaries: FIELD_LIMITS,
  band_raster: {
    bands: RASTER_BANDS,
    max_pixels_per_side: MAX_PIXELS_PER_SIDE,
    pixel_size_m: NATIVE_RESOLUTION_M,
    scene_search_days: RASTER_SEARCH_DAYS,
    cell_anchors: MAX_ANCHORS,
    rasters_at_once: RASTERS_AT_ONCE,
  },
  band_cube: {
    max_slices: MAX_CUBE_SLICES,
    slot_days: TEMPO_UNIT_S.medium / 86_400,
    max_pixels_per_side: MAX_PIXELS_PER_SIDE,
    bands: RASTER_BANDS,
    cubes_at_once: CUBES_AT_ONCE,
    slices_read_at_once: RASTERS_AT_ONCE,
  },
  raster_bundle: RASTER_BUNDLE_LIMITS,
  tessera_field: { max_pixels_per_side: TESSERA_MAX_PIXELS_PER_SIDE, max_tiles: TESSERA_MAX_TILES, first_year: TESSERA_FIRST_YEAR, fields_at_once: FIELDS_AT_ONCE },
  region_archetype_map: {
    k: ARCHETYPE_K,
    min_pixels_per_archetype: MIN_PIXELS_PER_ARCHETYPE,
    max_iterations: KMEANS_MAX_ITERATIONS,
    max_cells: REGION_MAX_CELLS,
    place_radius_m: PLACE_RADIUS_M,
    max_pixels_per_side: TESSERA_MAX_PIXELS_PER_SIDE,
    maps_at_once: MAPS_AT_ONCE,
  },
  eudr_dds: {
    max_plots: MAX_PLOTS,
    max_cells_per_plot: { min: 1, max: MAX_CELLS_PER_PLOT, default_per_ha: 110 },
    max_cells_per_statement: MAX_TOTAL_CELLS,
    point_plot_max_ha: POINT_PLOT_MAX_HA,
    minimum_mapping_unit_ha: MMU_HA,
    budget_s: { base: BASE_BUDGET_S, per_visual_plot: VISUAL_BUDGET_S, max: MAX_BUDGET_S, synchronous: 'the gateway timeout (timeout_s)' },
    jobs_at_once: MAX_RUNNING_JOBS,
  },
  stream_tick_s: { min: 5, max: 300, default: 15 },
  readable_token_min_decimals: 5,
  mcp_tools: { core: 18 },
  memory: {
    notes_per_write: MAX_NOTES_PER_WRITE,
    note_text_chars: 8000,
    note_tags: 32,
    note_vector_dims: { min: 2, max: 1024 },
    search_results: MAX_RESULTS,
    search_text_candidates: TEXT_CANDIDATES,
    search_vector_scan: VECTOR_SCAN,
    search_radius_m: MAX_RADIUS_M,
    search_context: MAX_CONTEXT,
    /** Distinct words a search query keeps (the rest are ignored). */
    search_query_words: MAX_QUERY_WORDS,
    /**
     * Defaults of SVC_NOTE_DAILY_QUOTA (facts per key per UTC day when writing notes; null: none)
     * and SVC_MEMORY_SEARCH_CONCURRENCY (searches one process runs at once); /v1/limits serves
     * the values in force.
     */
    note_daily_quota: NOTE_DAILY_QUOTA_DEFAULT as number | null,
    search_concurrency: MEMORY_SEARCH_CONCURRENCY_DEFAULT,
    edges_per_write: MAX_EDGES_PER_WRITE,
    edges_per_recall: MAX_EDGES_RETURNED,
  },
  log_segment_bytes: 1024 ** 3,
  /** How far a written fact's signed_at, captured_at or slot start may lie ahead of the responder's clock. */
  fact_future_skew_s: MAX_FUTURE_SKEW_S,
  http: HTTP_LIMITS,
} as const;
