/**
 * The coverage map's basemap: land and country borders of Natural Earth 1:50m (the
 * `world-atlas` topology the country tier already loads; public domain), as two SVG path strings
 * in the map's plate-carrée frame (x = lng + 180, y = 90 − lat, one unit per degree).
 *
 * Simplified so the picture stays small: Douglas–Peucker at BASEMAP_TOLERANCE_DEG, islands and
 * border pieces smaller than MIN_EXTENT_DEG in both directions left out, coordinates kept to
 * hundredths of a degree and written as relative moves. Rings that cross ±180° are made continuous
 * and drawn once more shifted by 360° (the frame clips them); Antarctica's coast, which winds
 * round the pole, is closed along the map's bottom edge and its degenerate pole ring dropped.
 * Built once per process on first use.
 */
import { createRequire } from 'node:module';
import { feature, mesh } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';

const require = createRequire(import.meta.url);

/** Largest distance (degrees) a simplified line may stray from the published one: 0.4 px at 1440 px wide. */
export const BASEMAP_TOLERANCE_DEG = 0.1;
/** A ring or border piece whose box is smaller than this on both sides is not drawn (about one pixel at 1440 px). */
export const MIN_EXTENT_DEG = 0.3;

export interface Basemap {
  /** Land polygons (fill-rule evenodd), frame coordinates. */
  land: string;
  /** Borders between countries (lines only; coasts are the land's outline). */
  borders: string;
  /** Vertices drawn, land and borders together. */
  points: number;
}

type Pt = [number, number];

/** Squared distance from `p` to the segment a–b. */
function segDist2(p: Pt, a: Pt, b: Pt): number {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const len2 = dx * dx + dy * dy;
  let t = len2 === 0 ? 0 : ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2;
  t = Math.max(0, Math.min(1, t));
  const ex = a[0] + t * dx - p[0];
  const ey = a[1] + t * dy - p[1];
  return ex * ex + ey * ey;
}

/** Douglas–Peucker with an explicit stack (long coasts would nest deeply); keeps both ends. */
export function simplify(line: Pt[], tolerance: number): Pt[] {
  if (line.length <= 2) return line;
  const keep = new Uint8Array(line.length);
  keep[0] = 1;
  keep[line.length - 1] = 1;
  const tol2 = tolerance * tolerance;
  const stack: Array<[number, number]> = [[0, line.length - 1]];
  while (stack.length > 0) {
    const [i, j] = stack.pop()!;
    let worst = -1;
    let at = -1;
    for (let k = i + 1; k < j; k++) {
      const d = segDist2(line[k]!, line[i]!, line[j]!);
      if (d > worst) {
        worst = d;
        at = k;
      }
    }
    if (at >= 0 && worst > tol2) {
      keep[at] = 1;
      stack.push([i, at], [at, j]);
    }
  }
  return line.filter((_, k) => keep[k] === 1);
}

/** The line with every jump of more than 180° in longitude taken as a crossing of ±180°; with the number of crossings. */
function unwrap(line: number[][]): { pts: Pt[]; crossings: number } {
  const pts: Pt[] = [];
  let crossings = 0;
  let prev = line[0]![0]!;
  let shift = 0;
  for (const [x, y] of line) {
    if (x! - prev > 180) {
      shift -= 360;
      crossings++;
    } else if (x! - prev < -180) {
      shift += 360;
      crossings++;
    }
    prev = x!;
    pts.push([x! + shift, y!]);
  }
  return { pts, crossings };
}

function extent(pts: Pt[]): { minX: number; maxX: number; minY: number; maxY: number } {
  let minX = Infinity,
    maxX = -Infinity,
    minY = Infinity,
    maxY = -Infinity;
  for (const [x, y] of pts) {
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  return { minX, maxX, minY, maxY };
}

/** The piece and, when it leaves [-180, 180], its copy shifted back by 360°. */
function withSeamCopies(pts: Pt[]): Pt[][] {
  const e = extent(pts);
  const out = [pts];
  if (e.minX < -180) out.push(pts.map(([x, y]) => [x + 360, y] as Pt));
  if (e.maxX > 180) out.push(pts.map(([x, y]) => [x - 360, y] as Pt));
  return out;
}

/**
 * Path data of one piece in frame coordinates: an absolute move, then relative steps in
 * hundredths of a degree (steps that round to nothing are dropped); '' when nothing is left.
 */
function pathOf(pts: Pt[], close: boolean): string {
  let steps = '';
  let px = 0;
  let py = 0;
  let start = '';
  pts.forEach(([lng, lat], k) => {
    const X = Math.round((lng + 180) * 100);
    const Y = Math.round((90 - lat) * 100);
    if (k === 0) start = `M${X / 100} ${Y / 100}l`;
    else if (X !== px || Y !== py) {
      const dx = String((X - px) / 100);
      const dy = String((Y - py) / 100);
      steps += `${steps === '' || dx.startsWith('-') ? '' : ' '}${dx}${dy.startsWith('-') ? '' : ' '}${dy}`;
    }
    px = X;
    py = Y;
  });
  if (steps === '') return '';
  return `${start}${steps}${close ? 'z' : ''}`;
}

/** Land rings as drawable pieces: seams made continuous, the pole-winding coast closed along its pole. */
function landPieces(rings: number[][][]): Pt[][] {
  const out: Pt[][] = [];
  for (const ring of rings) {
    if (ring.length < 4 || ring.every((p) => Math.abs(p[1]!) > 89.9)) continue; // the pole drawn as a ring of its own
    const { pts, crossings } = unwrap(ring);
    if (crossings % 2 === 1) {
      // Winds round the pole: close it along the pole, just outside the frame's edge.
      const pole = pts.reduce((s, p) => s + p[1], 0) < 0 ? -90.5 : 90.5;
      pts.push([pts[pts.length - 1]![0], pole], [pts[0]![0], pole]);
    }
    const e = extent(pts);
    if (e.maxX - e.minX < MIN_EXTENT_DEG && e.maxY - e.minY < MIN_EXTENT_DEG) continue;
    const simple = simplify(pts, BASEMAP_TOLERANCE_DEG);
    if (simple.length < 4) continue;
    out.push(...withSeamCopies(simple));
  }
  return out;
}

let cached: Basemap | undefined;

/** The basemap paths, built on first call and kept for the life of the process. */
export function basemap(): Basemap {
  if (cached) return cached;
  const topo = require('world-atlas/countries-50m.json') as Topology<{ countries: GeometryCollection; land: GeometryCollection }>;
  const land = feature(topo, topo.objects.land) as unknown as { features?: Array<{ geometry: GeoJsonLike }>; geometry?: GeoJsonLike };
  const geoms = land.features ? land.features.map((f) => f.geometry) : land.geometry ? [land.geometry] : [];
  let points = 0;
  const landPaths: string[] = [];
  for (const g of geoms) {
    if (!g) continue;
    const polys = g.type === 'Polygon' ? [g.coordinates as number[][][]] : g.type === 'MultiPolygon' ? (g.coordinates as number[][][][]) : [];
    for (const rings of polys) {
      for (const piece of landPieces(rings)) {
        const d = pathOf(piece, true);
        if (d === '') continue;
        landPaths.push(d);
        points += piece.length;
      }
    }
  }
  const inner = mesh(topo, topo.objects.countries, (a, b) => a !== b);
  const borderPaths: string[] = [];
  for (const line of inner.coordinates) {
    if (line.length < 2) continue;
    const { pts } = unwrap(line);
    const e = extent(pts);
    if (e.maxX - e.minX < MIN_EXTENT_DEG && e.maxY - e.minY < MIN_EXTENT_DEG) continue;
    const simple = simplify(pts, BASEMAP_TOLERANCE_DEG);
    for (const piece of withSeamCopies(simple)) {
      const d = pathOf(piece, false);
      if (d === '') continue;
      borderPaths.push(d);
      points += piece.length;
    }
  }
  cached = { land: landPaths.join(''), borders: borderPaths.join(''), points };
  return cached;
}

interface GeoJsonLike {
  type: string;
  coordinates: unknown;
}
