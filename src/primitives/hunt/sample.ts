/**
 * Deterministic stratified sampling of a hunt region: the bounding box is cut into a grid of
 * strata and each stratum contributes one jittered point that lies inside the polygon (not just
 * the box), so samples spread over the actual shape of a lake or county. The jitter is seeded
 * by the region and the UTC day: two calls on the same day read the same cells (and agree),
 * while a later day looks at fresh points instead of the same lattice forever.
 */
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

/** FNV-1a of the seed text: a 32-bit state for the generator (no security role). */
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** mulberry32: small, fast and identical on every platform, which is all determinism needs. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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
  const next = rng(hash32(seed));
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
