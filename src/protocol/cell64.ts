/**
 * cell64 (docs/protocol-notes.md §1): the equal-angle lattice of about 9.55 m, its 64-bit id and
 * its four-lane text form. Integer arithmetic in BigInt so every responder names the same cell.
 */
import { SvcError } from './errors.js';

export const CELL_PREFIX = 0x115ab00000000000n;
const PREFIX_MASK = 0xfffff00000000000n;
export const LAT_MAX = 2 ** 21 - 1;
export const LNG_MAX = 2 ** 22 - 1;
/** Angular pitch of the lattice in degrees (latitude, longitude). */
export const PITCH_LAT_DEG = 180 / LAT_MAX;
export const PITCH_LNG_DEG = 360 / LNG_MAX;
/** WGS-84 equatorial radius: metric pitch figures are quoted at the equator. */
export const EARTH_RADIUS_M = 6_378_137;
/** Pitch in metres at the equator (≈ 9.5546 m). */
export const PITCH_M_EQUATOR = (PITCH_LAT_DEG * Math.PI * EARTH_RADIUS_M) / 180;

const CONSONANTS = 'bcdfghjklmnpqrstvwxyz';
const VOWELS = 'aeiouAEIOU';
/** The cell64 grammar of docs/protocol-notes.md §1, verbatim. */
export const CELL64_PATTERN = '^(?:(?:[bcdfghjklmnpqrstvwxyz][aeiouAEIOU]){2}|z[0-9a-f]{4})(?:[.](?:(?:[bcdfghjklmnpqrstvwxyz][aeiouAEIOU]){2}|z[0-9a-f]{4})){3}$';
const CELL64_RE = new RegExp(CELL64_PATTERN);

export interface LatLng {
  lat: number;
  lng: number;
}

export interface CellBbox {
  min_lat: number;
  min_lng: number;
  max_lat: number;
  max_lng: number;
}

function invalidCell(text: unknown, why: string): SvcError {
  const shown = typeof text === 'string' ? JSON.stringify(text.slice(0, 64)) : typeof text;
  return new SvcError('invalid_cell', `cell: ${shown} ${why}`, { field: 'cell', reason: why });
}

function laneText(v: number): string {
  if (v >= 44100) return 'z' + v.toString(16).padStart(4, '0');
  const c1 = Math.floor(v / 2100);
  const v1 = Math.floor((v % 2100) / 210);
  const c2 = Math.floor((v % 210) / 10);
  const v2 = v % 10;
  return CONSONANTS[c1] + VOWELS[v1] + CONSONANTS[c2] + VOWELS[v2];
}

function laneValue(t: string): number {
  if (t.length === 5) return parseInt(t.slice(1), 16); // 'z' + hex; a 4-letter lane may also start with the consonant z
  return CONSONANTS.indexOf(t[0]) * 2100 + VOWELS.indexOf(t[1]) * 210 + CONSONANTS.indexOf(t[2]) * 10 + VOWELS.indexOf(t[3]);
}

/** Text form of a 64-bit id: four 16-bit lanes, most significant first. */
export function cellText(id: bigint): string {
  const lanes: string[] = [];
  for (const shift of [48n, 32n, 16n, 0n]) lanes.push(laneText(Number((id >> shift) & 0xffffn)));
  return lanes.join('.');
}

/** Quantised coordinates of a lat/lng (docs/protocol-notes.md §1, "Encode"). Throws invalid_argument. */
export function quantise(lat: number, lng: number): { latq: number; lngq: number } {
  if (typeof lat !== 'number' || !Number.isFinite(lat)) throw new SvcError('invalid_argument', 'lat: expected a finite number', { field: 'lat' });
  if (typeof lng !== 'number' || !Number.isFinite(lng)) throw new SvcError('invalid_argument', 'lng: expected a finite number', { field: 'lng' });
  if (Math.abs(lat) > 90) throw new SvcError('invalid_argument', `lat: ${lat} is outside [-90, 90]`, { field: 'lat' });
  if (Math.abs(lng) > 180) throw new SvcError('invalid_argument', `lng: ${lng} is outside [-180, 180]`, { field: 'lng' });
  const wrapped = ((lng + 180) % 360) - 180;
  const latq = Math.floor(((lat + 90) / 180) * LAT_MAX + 0.5);
  let lngq = Math.floor(((wrapped + 180) / 360) * LNG_MAX + 0.5);
  if (lngq === LNG_MAX) lngq = 0; // +180 and -180 are one cell
  if (latq === 0 || latq === LAT_MAX) lngq = 0; // one cell per pole
  return { latq, lngq };
}

function idOf(latq: number, lngq: number): bigint {
  return CELL_PREFIX | (BigInt(latq) << 22n) | BigInt(lngq);
}

/** 64-bit id of the cell containing (lat, lng). */
export function cellIdOf(lat: number, lng: number): bigint {
  const { latq, lngq } = quantise(lat, lng);
  return idOf(latq, lngq);
}

/** cell64 text of the cell containing (lat, lng). */
export function cellOf(lat: number, lng: number): string {
  return cellText(cellIdOf(lat, lng));
}

/** Parse and validate a cell64 string (grammar, canonical lanes, geographic prefix). Throws invalid_cell. */
export function parseCell(text: unknown): bigint {
  if (typeof text !== 'string') throw invalidCell(text, 'is not a string');
  if (text.length < 19 || text.length > 23 || !CELL64_RE.test(text)) throw invalidCell(text, 'does not match the cell64 grammar');
  let id = 0n;
  for (const lane of text.split('.')) {
    const v = laneValue(lane);
    if (lane.length === 5 && v < 44100) throw invalidCell(text, 'has a non-canonical synthetic lane (z-lanes encode values ≥ 44100)');
    id = (id << 16n) | BigInt(v);
  }
  if ((id & PREFIX_MASK) !== CELL_PREFIX) throw invalidCell(text, 'is not a geographic cell (prefix check failed)');
  const latq = Number((id >> 22n) & BigInt(LAT_MAX));
  const lngq = Number(id & BigInt(LNG_MAX));
  if (lngq === LNG_MAX) throw invalidCell(text, 'has a longitude index outside the lattice');
  if ((latq === 0 || latq === LAT_MAX) && lngq !== 0) throw invalidCell(text, 'names a pole with a non-zero longitude');
  return id;
}

/** True when `text` is a valid geographic cell64. */
export function isCell(text: unknown): text is string {
  // The grammar first: most non-cells (svc:entity: subjects of every memory record) fail it, and
  // an error built only to be caught costs microseconds (a stack trace) on the write path.
  if (typeof text !== 'string' || text.length < 19 || text.length > 23 || !CELL64_RE.test(text)) return false;
  try {
    parseCell(text);
    return true;
  } catch {
    return false;
  }
}

function indices(text: string): { latq: number; lngq: number } {
  const id = parseCell(text);
  return { latq: Number((id >> 22n) & BigInt(LAT_MAX)), lngq: Number(id & BigInt(LNG_MAX)) };
}

/** Centre of a cell: the point every responder fetches upstream values at. */
export function cellCenter(text: string): LatLng {
  const { latq, lngq } = indices(text);
  return { lat: (latq / LAT_MAX) * 180 - 90, lng: (lngq / LNG_MAX) * 360 - 180 };
}

/** Bounding box: centre ± half a pitch (latitude clamped at the poles). */
export function cellBbox(text: string): CellBbox {
  const c = cellCenter(text);
  const hLat = 90 / LAT_MAX;
  const hLng = 180 / LNG_MAX;
  return {
    min_lat: Math.max(-90, c.lat - hLat),
    min_lng: c.lng - hLng,
    max_lat: Math.min(90, c.lat + hLat),
    max_lng: c.lng + hLng,
  };
}

function step(latq: number, lngq: number, dLat: number, dLng: number): string {
  const la = Math.min(LAT_MAX, Math.max(0, latq + dLat));
  let ln = (((lngq + dLng) % LNG_MAX) + LNG_MAX) % LNG_MAX;
  if (la === 0 || la === LAT_MAX) ln = 0;
  return cellText(idOf(la, ln));
}

const NEIGHBOUR_STEPS: ReadonlyArray<readonly [number, number]> = [
  [1, 0],
  [-1, 0],
  [0, 1],
  [0, -1],
  [1, 1],
  [1, -1],
  [-1, 1],
  [-1, -1],
]; // N, S, E, W, NE, NW, SE, SW

/** The 8 cells around `text` in the order N, S, E, W, NE, NW, SE, SW, de-duplicated near the poles. */
export function neighbours(text: string): string[] {
  const { latq, lngq } = indices(text);
  const out: string[] = [];
  for (const [dLat, dLng] of NEIGHBOUR_STEPS) {
    const c = step(latq, lngq, dLat, dLng);
    if (c !== text && !out.includes(c)) out.push(c);
  }
  return out;
}

/** 3×3 stencil in row order NW, N, NE, W, C, E, SW, S, SE (heat solver, terrain). */
export function stencil(text: string): string[] {
  const { latq, lngq } = indices(text);
  const out: string[] = [];
  for (const dLat of [1, 0, -1]) for (const dLng of [-1, 0, 1]) out.push(step(latq, lngq, dLat, dLng));
  return out;
}

/** Cell pitch in metres at a latitude: north-south constant, east-west shrinks with cos(lat). */
export function pitchMetres(lat: number): { ns_m: number; ew_m: number } {
  const ew = (PITCH_LNG_DEG * Math.PI * EARTH_RADIUS_M * Math.cos((lat * Math.PI) / 180)) / 180;
  return { ns_m: PITCH_M_EQUATOR, ew_m: Math.max(0, ew) };
}

/** Grid description served at GET /v1/grid_info. */
export function gridInfo() {
  return {
    cell_kind: 'cell64',
    lattice: 'equal-angle latitude/longitude, single resolution',
    resolution: 0,
    resolutions: [0],
    pitch_m: Number(PITCH_M_EQUATOR.toFixed(4)),
    pitch_deg: { lat: PITCH_LAT_DEG, lng: PITCH_LNG_DEG },
    lat_max_index: LAT_MAX,
    lng_max_index: LNG_MAX,
    id_prefix_hex: '0x' + CELL_PREFIX.toString(16),
    text_pattern: CELL64_PATTERN,
    geographic_text_prefix: 'defi.zb',
    neighbour_order: ['N', 'S', 'E', 'W', 'NE', 'NW', 'SE', 'SW'],
    stencil_order: ['NW', 'N', 'NE', 'W', 'C', 'E', 'SW', 'S', 'SE'],
    notes: [
      'Pitch is about 9.55 m at the equator; east-west pitch shrinks with cos(latitude).',
      'Upstream values are fetched at the cell centre, never at the caller coordinates.',
      '+180 and -180 longitude are one cell; each pole is one cell.',
    ],
  };
}
