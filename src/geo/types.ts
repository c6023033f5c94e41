/** Shapes of place resolution (docs/locate.md). Shared by locate, recall and the shortcuts. */

export type LocateVia = 'direct_latlng' | 'wide_bbox_table' | 'country' | 'admin1' | 'admin2' | 'admin3' | 'embedded' | 'pois' | 'cache' | 'photon' | 'nominatim';

export type BboxSource =
  | 'wide_bbox_table'
  | 'country_table'
  | 'admin1_table'
  | 'admin2_table'
  | 'admin3_table'
  | 'population_scaled'
  | 'nominatim_boundingbox'
  | 'overture_division_area'
  | 'centre_cell_bbox';

/**
 * What a place's extent (polygon_bbox, polygon_sample_cells) rests on (docs/locate.md, "Extents"):
 * `boundary` a surveyed boundary (countries: Natural Earth); `curated_box` a box curated for this
 * project (admin-1, wide features); `member_places` the box around the GeoNames populated places
 * of an admin-2 division; `population_scaled` a square around a city's point sized by its
 * population; `geocoder_boundary` / `geocoder_bbox` the network geocoder's polygon or bounding box;
 * `point` no extent (landmarks, coordinates, a place the geocoder gave as a point).
 */
export const EXTENT_SOURCES = ['boundary', 'curated_box', 'member_places', 'population_scaled', 'geocoder_boundary', 'geocoder_bbox', 'point'] as const;
export type ExtentSource = (typeof EXTENT_SOURCES)[number];

export type OvertureSubtype = 'country' | 'region' | 'county' | 'localadmin' | 'locality' | 'borough' | 'macrohood' | 'neighborhood' | 'microhood' | 'dependency';

export interface PolygonBbox {
  min_lat: number;
  min_lng: number;
  max_lat: number;
  max_lng: number;
  source: BboxSource;
}

export type GeoJsonPolygon = { type: 'Polygon'; coordinates: number[][][] } | { type: 'MultiPolygon'; coordinates: number[][][][] };

export interface LocateCandidate {
  label: string;
  lat: number;
  lng: number;
  via: LocateVia;
  /** Feature class: city, country, admin1, desert, river, landmark, … */
  kind: string;
  country?: string;
  score: number;
}

export interface LocateRequest {
  place?: string;
  q?: string;
  query?: string;
  name?: string;
  lat?: number;
  lng?: number;
}

/** LocateResp (docs/locate.md, "Response (LocateResp)"). */
export interface LocateResp {
  cell64: string;
  /**
   * `<prefix>:cell:<cell64>` (docs/memory.md, "Tokens and bundles"): the cell as a token another
   * agent can pass as any `cell`. An address only. Set by the locate primitive; LocateResp-shaped
   * blocks that other primitives build for a point (shortcuts) may leave it out.
   */
  token?: string;
  via: LocateVia;
  label: string;
  lat: number;
  lng: number;
  localized_names: Record<string, string>;
  neighborhood_cells: string[];
  polygon_bbox?: PolygonBbox;
  /** What the extent rests on; locate always sets it (blocks other primitives build for a point may leave it out). */
  extent_source?: ExtentSource;
  polygon_geojson?: GeoJsonPolygon;
  /** Up to 64 cells inside the polygon, spread evenly (the centre cell alone for a point). */
  polygon_sample_cells: string[];
  overture_division?: { division_id: string; subtype: OvertureSubtype; country: string; schema_url: string };
  data_at_this_cell: Record<
    string,
    { bands: string[]; algorithms: string[] /** 'attested': facts exist at the cell; 'fetchable': a connector could materialize them. */; availability?: 'attested' | 'fetchable' }
  >;
  selected: {
    label: string;
    kind: string;
    is_high_confidence: boolean;
    reason: string;
    score: number;
  };
  alternatives: LocateCandidate[];
}
