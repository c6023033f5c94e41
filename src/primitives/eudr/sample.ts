/**
 * Which grid cells of a plot are read: a deterministic stratified sample, so the same plot and
 * seed always give the same cells and therefore the same facts and the same verdict.
 */
import { fnv1a, seededRandom } from '../../geo/geometry.js';
import { cellOf, LAT_MAX, LNG_MAX, PITCH_LAT_DEG, PITCH_LNG_DEG, quantise } from '../../protocol/cell64.js';
import { geodesicAreaM2, geometryBox } from './geometry.js';
import type { PlotGeometry } from './types.js';

/** About 110 cells of ~9.55 m make a hectare at low latitudes. */
const CELLS_PER_HA = 110;
export const MAX_CELLS_PER_PLOT = 51_200;
/** Strata per side at most: bounds the work for a long thin plot whose box is mostly empty. */
const MAX_STRATA_PER_SIDE = 2048;

export interface SampledCell {
  cell: string;
  /** Centre of the cell (where its values are read), not the sampled point. */
  lat: number;
  lng: number;
}

/** Cells to read for a plot of this area: one for a point, else about one per cell of area, within 1..51 200. */
export function defaultCellsPerPlot(areaHa: number | null): number {
  if (areaHa === null) return 1;
  const n = Math.round(CELLS_PER_HA * areaHa);
  return Math.min(MAX_CELLS_PER_PLOT, Math.max(1, Number.isFinite(n) ? n : MAX_CELLS_PER_PLOT));
}

/** The quantised cell of a point, keyed by one number so duplicates are dropped before any text is made. */
function quantised(lat: number, lng: number): { key: number; lat: number; lng: number } {
  const { latq, lngq } = quantise(lat, lng);
  // The centre as cellCenter computes it, without parsing the cell text back (a large plot has tens of thousands).
  return { key: latq * (LNG_MAX + 1) + lngq, lat: (latq / LAT_MAX) * 180 - 90, lng: (lngq / LNG_MAX) * 360 - 180 };
}

function cellAt(lat: number, lng: number): SampledCell {
  const q = quantised(lat, lng);
  return { cell: cellOf(lat, lng), lat: q.lat, lng: q.lng };
}

type Edge = { ring: number; x1: number; y1: number; x2: number; y2: number };

/** Whether (x, y) is inside the outer ring and outside every hole, over the edges that may cross latitude y. */
function insideRings(edges: Edge[], rings: number, x: number, y: number): boolean {
  const parity = new Array<boolean>(rings).fill(false);
  for (const e of edges) {
    // The same half-open crossing rule as pointInPolygon, so both agree on boundary points.
    if (e.y1 > y !== e.y2 > y && x < ((e.x2 - e.x1) * (y - e.y1)) / (e.y2 - e.y1) + e.x1) parity[e.ring] = !parity[e.ring];
  }
  if (!parity[0]) return false;
  for (let k = 1; k < rings; k++) if (parity[k]) return false;
  return true;
}

function edgesOf(rings: number[][][]): Edge[] {
  const out: Edge[] = [];
  rings.forEach((ring, k) => {
    for (let i = 0; i + 1 < ring.length; i++) out.push({ ring: k, x1: ring[i][0], y1: ring[i][1], x2: ring[i + 1][0], y2: ring[i + 1][1] });
  });
  return out;
}

/**
 * A point surely inside the polygon, for a plot too small to catch a stratum: the area centroid when
 * inside, else the middle of the widest inside stretch of the parallel through it, else the middle
 * of the first edge.
 */
function insidePoint(rings: number[][][], edges: Edge[]): { lat: number; lng: number } {
  const outer = rings[0];
  const [x0, y0] = outer[0];
  let a = 0,
    cx = 0,
    cy = 0;
  for (let i = 0; i + 1 < outer.length; i++) {
    const xi = outer[i][0] - x0,
      yi = outer[i][1] - y0,
      xj = outer[i + 1][0] - x0,
      yj = outer[i + 1][1] - y0;
    const f = xi * yj - xj * yi;
    a += f;
    cx += (xi + xj) * f;
    cy += (yi + yj) * f;
  }
  if (a !== 0) {
    const lng = x0 + cx / (3 * a);
    const lat = y0 + cy / (3 * a);
    if (insideRings(edges, rings.length, lng, lat)) return { lat, lng };
    const xs = edges.filter((e) => e.y1 > lat !== e.y2 > lat).map((e) => ((e.x2 - e.x1) * (lat - e.y1)) / (e.y2 - e.y1) + e.x1);
    xs.sort((p, q) => p - q);
    let best: { lat: number; lng: number } | null = null;
    let width = 0;
    for (let i = 0; i + 1 < xs.length; i++) {
      const mid = (xs[i] + xs[i + 1]) / 2;
      if (xs[i + 1] - xs[i] > width && insideRings(edges, rings.length, mid, lat)) {
        width = xs[i + 1] - xs[i];
        best = { lat, lng: mid };
      }
    }
    if (best) return best;
  }
  return { lat: (outer[0][1] + outer[1][1]) / 2, lng: (outer[0][0] + outer[1][0]) / 2 };
}

/**
 * Up to `n` distinct cells of a plot. A point gives its own cell. A polygon's box is cut into k × k
 * strata, k chosen from the polygon's share of its box so that about n strata fall inside; each
 * stratum gets one point jittered by a generator seeded from `seed`; points inside the polygon
 * (and outside its holes) become cells, duplicates dropped, rows from south to north, west to east
 * within a row. Beyond n, every (len / n)-th is kept so the sample stays spread over the plot.
 */
export function samplePlotCells(geom: PlotGeometry, n: number, seed: string): SampledCell[] {
  const want = Math.max(0, Math.floor(n));
  if (want === 0) return [];
  if (geom.type === 'Point') {
    const [lng, lat] = geom.coordinates as number[];
    return [cellAt(lat, lng)];
  }
  const rings = geom.coordinates as number[][][];
  const box = geometryBox(geom);
  const width = box.max_lng - box.min_lng;
  const height = box.max_lat - box.min_lat;
  const boxRing = [
    [box.min_lng, box.min_lat],
    [box.max_lng, box.min_lat],
    [box.max_lng, box.max_lat],
    [box.min_lng, box.max_lat],
    [box.min_lng, box.min_lat],
  ];
  const boxArea = geodesicAreaM2([boxRing]);
  const share = boxArea > 0 ? Math.min(1, geodesicAreaM2(rings) / boxArea) : 0;
  const edges = edgesOf(rings);
  // Sampled points with their cell centres; the cell text is made only for those returned.
  const out: Array<{ plat: number; plng: number; lat: number; lng: number }> = [];
  if (share > 0) {
    // Strata much finer than a cell would only sample the same cells again.
    const kCells = Math.max(1, Math.ceil(Math.max(height / PITCH_LAT_DEG, width / PITCH_LNG_DEG)));
    const k = Math.max(1, Math.min(Math.ceil(Math.sqrt(want / share)), kCells, MAX_STRATA_PER_SIDE));
    const rnd = seededRandom(fnv1a(seed));
    const seen = new Set<number>();
    const yAt = (t: number) => box.min_lat + (t / k) * height;
    for (let i = 0; i < k; i++) {
      const y0 = yAt(i);
      const y1 = yAt(i + 1);
      // Only edges reaching this row's band can cross a parallel through it.
      const band = edges.filter((e) => Math.max(e.y1, e.y2) >= y0 && Math.min(e.y1, e.y2) <= y1);
      for (let j = 0; j < k; j++) {
        const lat = yAt(i + rnd());
        const lng = box.min_lng + ((j + rnd()) / k) * width;
        if (!insideRings(band, rings.length, lng, lat)) continue;
        const q = quantised(lat, lng);
        if (seen.has(q.key)) continue;
        seen.add(q.key);
        out.push({ plat: lat, plng: lng, lat: q.lat, lng: q.lng });
      }
    }
  }
  if (out.length === 0) {
    const p = insidePoint(rings, edges);
    return [cellAt(p.lat, p.lng)];
  }
  const step = out.length / want;
  const kept = out.length <= want ? out : Array.from({ length: want }, (_, i) => out[Math.floor(i * step)]);
  return kept.map((p) => ({ cell: cellOf(p.plat, p.plng), lat: p.lat, lng: p.lng }));
}
