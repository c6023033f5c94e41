/** Fixed limits of spec part 8 (the configurable ones come from Config). */
export const LIMITS = {
  recall_many_cells: 256,
  query_region_max_cells: { min: 1, max: 1024, default: 256 },
  shortcut_n_cells: { min: 1, max: 64, default_polygon: 16, default_at: 1 },
  backfill_max_facts: { min: 1, max: 1024, default: 16 },
  backfill_area_cells: 64,
  find_similar_k: { min: 1, max: 1000, default: 10 },
  locate_polygon_sample_cells: 64,
  hunt: { sampled_cells: 32, sampled_cells_slow: 8, top: 8 },
  band_raster: { bands: ['s2.B02', 's2.B03', 's2.B04', 's2.B08', 's2.B11', 's2.B12'], max_pixels_per_side: 512 },
  raster_bundle: { min: 2, max: 64 },
  stream_tick_s: { min: 5, max: 300, default: 15 },
  readable_token_min_decimals: 5,
  mcp_tools: { core: 18 },
  log_segment_bytes: 1024 ** 3,
} as const;
