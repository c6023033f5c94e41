/**
 * next_steps of /v1/ask (docs/ask.md, "next_steps"): literal follow-up calls, each replayable as
 * given — method, path, url (relative to the responder's base address; GET parameters included) and
 * body. A step that needs an attester signature says so in `auth`; a step whose endpoint this
 * responder does not serve yet is marked `available: false` (the hunt primitive), never left out
 * silently.
 */
import { cellCenter } from '../../protocol/cell64.js';

export interface NextStep {
  action: string;
  method: 'GET' | 'POST';
  path: string;
  url: string;
  body: Record<string, unknown> | null;
  why: string;
  /** Only on writes: the body must be signed by an attester key first (docs/writes.md, "Signatures"). */
  auth?: 'attester_signature';
  /** false when this responder does not serve the endpoint yet. */
  available?: false;
}

function post(action: string, path: string, body: Record<string, unknown>, why: string, extra: Partial<NextStep> = {}): NextStep {
  return { action, method: 'POST', path, url: path, body, why, ...extra };
}

function get(action: string, path: string, why: string): NextStep {
  return { action, method: 'GET', path, url: path, body: null, why };
}

/** Read the bands that are missing or failed at the cell again (materializes on a miss). */
export function recallStep(cell: string, bands: string[], why: string): NextStep {
  return post('recall', '/v1/recall', { cell, bands }, why);
}

/** Fill a band's past at the cell from its historical source (a write: attester-signed). */
export function backfillStep(cell: string, band: string, start: number, end: number): NextStep {
  return post(
    'backfill',
    '/v1/backfill',
    { cell, band, start_unix: start, end_unix: end },
    `fill the history of ${band} for the asked window from its historical source; a write: add attester and signature (ed25519 over blake3 of the canonical CBOR of this body), see docs/writes.md`,
    { auth: 'attester_signature' },
  );
}

/** The stored series of a band over a window. */
export function trajectoryStep(cell: string, band: string, start: number, end: number): NextStep {
  return post('trajectory', '/v1/trajectory', { cell, band, window: [start, end] }, `the stored series of ${band} over the asked window (stored facts only)`);
}

/** The same bands over the sampled cells of a place with extent. */
export function areaStep(cells: string[], bands: string[], label: string): NextStep {
  return post('recall_area', '/v1/recall_polygon', { cells, bands }, `the answer reads one cell; these ${cells.length} cells sample ${label} for area statistics`);
}

/** An algorithm that needs neighbours or history, through its shortcut. */
export function shortcutStep(path: string, cell: string, algorithm: string): NextStep {
  return post('compute_algorithm', path, { cell64: cell }, `computes ${algorithm}, which needs more than this cell's own facts`);
}

/** The hunt call (docs/hunt.md). */
export function huntStep(event: string, where: { region?: string; polygon_bbox?: { min_lat: number; min_lng: number; max_lat: number; max_lng: number } }): NextStep {
  return post('hunt', '/v1/hunt', { event, ...where }, `ranks up to 32 sampled cells by ${event}'s primary band and returns the top 8 signed hotspots`);
}

/** Nearest stored cells by embedding. */
export function similarStep(cell: string, k = 10): NextStep {
  return post('find_similar', '/v1/find_similar', { key: cell, k }, 'the nearest stored cells by the GeoTessera embedding (cosine)');
}

/** Vector change between two yearly slots. */
export function stateDiffStep(cell: string, a: number, b: number): NextStep {
  return post('state_diff', '/v1/state_diff', { cell, tslot_a: a, tslot_b: b }, 'the embedding change of the cell between the two years (delta, L2, cosine, residual)');
}

/** Fetch an embedding of a past year at the cell (recall of that slot materializes it). */
export function recallSlotStep(cell: string, band: string, tslot: number, why: string): NextStep {
  return post('recall_slot', '/v1/recall', { cell, bands: [band], tslot }, why);
}

/** The coverage surfaces (docs/reads.md, "Discovery and catalogues"). */
export function coverageSteps(): NextStep[] {
  return [
    get('coverage_matrix', '/v1/coverage_matrix', 'per band: wired connector, history, and the corpus counts'),
    get('corpus_state_stats', '/v1/corpus_state_stats', 'a signed snapshot of cells, bands and facts stored'),
    get('coverage_map', '/v1/coverage_map.svg', 'where the stored facts are, in 1-degree bins'),
    get('data_availability', '/v1/data_availability', 'per band: the span of history that can be served and the tempo'),
  ];
}

/** The cell's true-colour thumbnail. */
export function sceneStep(cell: string): NextStep {
  return get('scene_image', `/v1/cells/${encodeURIComponent(cell)}/scene.png`, 'the 256 x 256 true-colour Sentinel-2 thumbnail of the cell');
}

/** Ask again about another candidate of an ambiguous place. */
export function disambiguateStep(q: string, label: string): NextStep {
  return post('ask_other_place', '/v1/ask', { q, place: label }, `the place name was ambiguous; this asks about ${label} instead`);
}

/** Resolve a place name the offline tables did not know. */
export function locateStep(text: string): NextStep {
  return post('locate', '/v1/locate', { place: text }, 'resolve the place through the full cascade (network geocoders where enabled); then ask again with lat and lng');
}

/** The topic catalogue. */
export function topicsStep(): NextStep {
  return get('topics', '/v1/topics', 'the 26 topics this service answers, with their bands and algorithms');
}

/** One algorithm's catalogue entry. */
export function algorithmStep(key: string): NextStep {
  return get('algorithm', `/v1/algorithms/${encodeURIComponent(key)}`, `the inputs, formula and citation of ${key}`);
}

/** What is at a place (vegetation, elevation, land cover, weather), by the cell's centre. */
export function atStep(cell: string): NextStep {
  const c = cellCenter(cell);
  return post('what_is_here', '/v1/at', { lat: c.lat, lng: c.lng }, 'vegetation, elevation, land cover and recent weather at the cell');
}
