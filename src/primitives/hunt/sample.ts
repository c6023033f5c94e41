/**
 * Deterministic stratified sampling of a hunt region: the bounding box is cut into a grid of
 * strata and each stratum contributes one jittered point that lies inside the polygon (not just
 * the box), so samples spread over the actual shape of a lake or county. The jitter is seeded
 * by the region and the UTC day: two calls on the same day read the same cells (and agree),
 * while a later day looks at fresh points instead of the same lattice forever.
 */
import { fnv1a, seededRandom } from '../../geo/geometry.js';
import { quantise } from '../../protocol/cell64.js';
import { evenPick } from '../reads/common.js';
import { cellAt, contains, indexRange, sampleArea, type Area } from '../reads/geometry.js';

export interface HuntSample {
  cells: string[];
  method: 'enumerated' | 'stratified';
  strata: number;
  seed: string;
}

/** Areas with at most this many lattice cells are enumerated and spread-picked instead. */
const ENUMERATE_LIMIT = 4_096;
/** Jitter draws per stratum before it is given up as outside the polygon. */
const TRIES_PER_STRATUM = 6;

/** The seed text of a region on a UTC day. */
export function sampleSeed(area: Area, day: string): string {
  const b = area.bbox;
  return `${day}|${area.source}|${[b.min_lat, b.min_lng, b.max_lat, b.max_lng].map((x) => x.toFixed(6)).join(',')}|${area.polygons.length}`;
}

/** Up to `n` distinct cells inside `a`, stratified over a grid of its box, deterministic for `seed`. */
export function stratifiedSample(a: Area, n: number, seed: string): HuntSample {
  const r = indexRange(a);
  if (r.count <= ENUMERATE_LIMIT) {
    // A small area has few cells: read them all (or an even spread), no randomness needed.
    return { cells: sampleArea(a, n).cells, method: 'enumerated', strata: 0, seed };
  }
  const b = a.bbox;
  const latSpan = b.max_lat - b.min_lat;
  const lngSpan = b.max_lng - b.min_lng;
  const aspect = Math.max(latSpan, 1e-9) / Math.max(lngSpan * Math.cos((((b.max_lat + b.min_lat) / 2) * Math.PI) / 180), 1e-9);
  const next = seededRandom(fnv1a(seed));
  let target = n;
  let picked: string[] = [];
  let strata = 0;
  for (let round = 0; round < 6; round++) {
    const rows = Math.max(1, Math.round(Math.sqrt(target * aspect)));
    const cols = Math.max(1, Math.round(target / rows));
    strata = rows * cols;
    const seen = new Set<string>();
    picked = [];
    for (let i = rows - 1; i >= 0; i--) {
      for (let j = 0; j < cols; j++) {
        for (let t = 0; t < TRIES_PER_STRATUM; t++) {
          const lat = b.min_lat + ((i + next()) / rows) * latSpan;
          const lng = b.min_lng + ((j + next()) / cols) * lngSpan;
          if (!contains(a, lat, lng)) continue;
          const q = quantise(lat, lng);
          const c = cellAt(q.latq, q.lngq);
          if (!seen.has(c)) {
            seen.add(c);
            picked.push(c);
          }
          break;
        }
      }
    }
    if (picked.length >= n) break;
    target *= 2; // a thin or holed polygon fills little of its box: finer strata find more of it
  }
  // Row-major order keeps neighbouring strata adjacent, so an even pick stays spread out.
  return { cells: evenPick(picked, n), method: 'stratified', strata, seed };
}
