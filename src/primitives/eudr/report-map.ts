/**
 * The map of a statement's report: every plot drawn in an inline SVG, equirectangular over the
 * union box of the plots, filled by verdict, with the loss cells as dots. Plain string building,
 * so a statement of a thousand plots still renders in a few milliseconds.
 */
import type { PlotAssessment, PlotGeometry, PlotVerdict } from './types.js';

export const VERDICTS: readonly PlotVerdict[] = ['deforestation_free', 'deforestation_detected', 'no_forest_at_baseline', 'insufficient_data'];

/** Mid tones, so the verdict stays readable in dark text when the same colour fills a table cell. */
export const VERDICT_FILL: Record<PlotVerdict, string> = {
  deforestation_free: '#7cc47f',
  deforestation_detected: '#e57373',
  no_forest_at_baseline: '#bdbdbd',
  insufficient_data: '#ffc94d',
};
/** A verdict the report does not know (a newer service) is drawn white rather than guessed. */
const UNKNOWN_FILL = '#ffffff';
export const OUTLINE = '#1f2933';
/** Darker than the deforestation_detected fill so the dots stand out on the plots they fall in. */
export const LOSS_FILL = '#b3131b';

/** Beyond this many plots the map drops its labels and the table stops listing rows. */
export const DETAIL_LIMIT = 60;

/** The drawing area in millimetres: the SVG's user units are millimetres too. */
export const MAP_W = 170;
export const MAP_H = 110;
/** A single point has no extent: the box is widened to at least this many degrees. */
const MIN_SPAN_DEG = 0.01;
const PAD = 0.05;
/** Long plot ids would cover the map: the label is cut, the table shows the whole id. */
const LABEL_CHARS = 24;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML and SVG, in element content and in quoted attributes alike. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export function verdictFill(verdict: unknown): string {
  return typeof verdict === 'string' && Object.hasOwn(VERDICT_FILL, verdict) ? VERDICT_FILL[verdict as PlotVerdict] : UNKNOWN_FILL;
}

type Position = [number, number];

function position(p: unknown): Position | null {
  if (!Array.isArray(p) || p.length < 2) return null;
  const [lng, lat] = p;
  return typeof lng === 'number' && typeof lat === 'number' && Number.isFinite(lng) && Number.isFinite(lat) ? [lng, lat] : null;
}

/** The rings of a polygon, or null; positions that are not two finite numbers are dropped. */
function ringsOf(g: PlotGeometry | undefined): Position[][] | null {
  if (!g || g.type !== 'Polygon' || !Array.isArray(g.coordinates)) return null;
  const rings: Position[][] = [];
  for (const ring of g.coordinates) {
    if (!Array.isArray(ring)) continue;
    const pts: Position[] = [];
    for (const p of ring) {
      const q = position(p);
      if (q) pts.push(q);
    }
    if (pts.length > 0) rings.push(pts);
  }
  return rings.length > 0 ? rings : null;
}

function pointOf(g: PlotGeometry | undefined): Position | null {
  return g && g.type === 'Point' ? position(g.coordinates) : null;
}

interface Projection {
  x: (lng: number) => number;
  y: (lat: number) => number;
  west: number;
  east: number;
  south: number;
  north: number;
  kmWide: number;
  kmHigh: number;
}

interface Shape {
  plot: PlotAssessment;
  rings: Position[][] | null;
  point: Position | null;
}

const KM_PER_DEG = 111.32;

/**
 * Equirectangular over the union box of every plot and loss cell (a loss cell's centre can sit just
 * outside a small plot, and should not fall off the map), x scaled by cos(mean latitude), padded 5 %
 * each side, fitted and centred in the drawing area.
 */
function project(shapes: Shape[]): Projection | null {
  let west = Infinity;
  let east = -Infinity;
  let south = Infinity;
  let north = -Infinity;
  const grow = (lng: number, lat: number) => {
    if (lng < west) west = lng;
    if (lng > east) east = lng;
    if (lat < south) south = lat;
    if (lat > north) north = lat;
  };
  for (const s of shapes) {
    if (s.rings) for (const ring of s.rings) for (const [lng, lat] of ring) grow(lng, lat);
    if (s.point) grow(s.point[0], s.point[1]);
    for (const c of s.plot.loss_cells ?? []) if (Number.isFinite(c.lng) && Number.isFinite(c.lat)) grow(c.lng, c.lat);
  }
  if (!Number.isFinite(west)) return null;
  if (east - west < MIN_SPAN_DEG) {
    const mid = (west + east) / 2;
    west = mid - MIN_SPAN_DEG / 2;
    east = mid + MIN_SPAN_DEG / 2;
  }
  if (north - south < MIN_SPAN_DEG) {
    const mid = (south + north) / 2;
    south = mid - MIN_SPAN_DEG / 2;
    north = mid + MIN_SPAN_DEG / 2;
  }
  // Near a pole the cosine goes to zero and the box would collapse to a line.
  const k = Math.max(0.01, Math.cos((((south + north) / 2) * Math.PI) / 180));
  const w = (east - west) * k;
  const h = north - south;
  const padW = w * PAD;
  const padH = h * PAD;
  const scale = Math.min(MAP_W / (w + 2 * padW), MAP_H / (h + 2 * padH));
  const ox = (MAP_W - (w + 2 * padW) * scale) / 2 + padW * scale;
  const oy = (MAP_H - (h + 2 * padH) * scale) / 2 + padH * scale;
  return {
    x: (lng) => ox + (lng - west) * k * scale,
    y: (lat) => oy + (north - lat) * scale,
    west,
    east,
    south,
    north,
    kmWide: w * KM_PER_DEG,
    kmHigh: h * KM_PER_DEG,
  };
}

const f2 = (v: number) => v.toFixed(2);

function label(plotId: unknown): string {
  const chars = Array.from(String(plotId));
  return escapeHtml(chars.length > LABEL_CHARS ? `${chars.slice(0, LABEL_CHARS - 1).join('')}…` : chars.join(''));
}

/** A label beside its anchor, turned towards the middle of the map so it does not run off an edge. */
function labelAt(x: number, y: number, plotId: unknown): string {
  const left = x > MAP_W * 0.6;
  const below = y < 4;
  const at = `x="${f2(left ? x - 0.9 : x + 0.9)}" y="${f2(below ? y + 3.2 : y - 0.9)}"${left ? ' text-anchor="end"' : ''}`;
  return `<text class="label" ${at}>${label(plotId)}</text>`;
}

/** The SVG map of the plots (about 170 × 110 mm) and a caption line for it. */
export function renderPlotMap(plots: readonly PlotAssessment[]): { svg: string; note: string } {
  const shapes: Shape[] = plots.map((plot) => ({ plot, rings: ringsOf(plot.geometry), point: pointOf(plot.geometry) }));
  const pr = project(shapes);
  const open = `<svg class="map" viewBox="0 0 ${MAP_W} ${MAP_H}" width="${MAP_W}mm" height="${MAP_H}mm" role="img" aria-label="map of the plots">`;
  if (!pr) {
    const empty = `<text x="${MAP_W / 2}" y="${MAP_H / 2}" text-anchor="middle" font-size="4" fill="#555">no plot geometry in this statement</text>`;
    return { svg: `${open}${empty}</svg>`, note: 'map: equirectangular, north up' };
  }
  const withLabels = plots.length <= DETAIL_LIMIT;
  const areas: string[] = [];
  const points: string[] = [];
  const dots: string[] = [];
  const labels: string[] = [];
  for (const { plot, rings, point } of shapes) {
    const title = `<title>${escapeHtml(plot.plot_id)}</title>`;
    const fill = verdictFill(plot.verdict);
    let anchor: Position | null = null;
    if (rings) {
      const d = rings.map((ring) => `M${ring.map(([lng, lat]) => `${f2(pr.x(lng))} ${f2(pr.y(lat))}`).join('L')}Z`).join('');
      // evenodd keeps holes open whatever their winding.
      areas.push(`<path class="plot" d="${d}" fill="${fill}" fill-rule="evenodd" stroke="${OUTLINE}" stroke-width="0.25" stroke-linejoin="round">${title}</path>`);
      anchor = rings[0]![0]!;
    } else if (point) {
      points.push(`<circle class="plot" cx="${f2(pr.x(point[0]))}" cy="${f2(pr.y(point[1]))}" r="1.3" fill="${fill}" stroke="${OUTLINE}" stroke-width="0.3">${title}</circle>`);
      anchor = point;
    }
    for (const c of plot.loss_cells ?? []) {
      if (!Number.isFinite(c.lng) || !Number.isFinite(c.lat)) continue;
      dots.push(`<circle class="loss" cx="${f2(pr.x(c.lng))}" cy="${f2(pr.y(c.lat))}" r="0.7" fill="${LOSS_FILL}" stroke="${OUTLINE}" stroke-width="0.2"/>`);
    }
    if (withLabels && anchor) labels.push(labelAt(pr.x(anchor[0]), pr.y(anchor[1]), plot.plot_id));
  }
  // Labels are drawn last with a white halo, so they stay legible over fills and other outlines.
  const labelGroup = labels.length > 0 ? `<g font-size="2.4" fill="#111" stroke="#fff" stroke-width="0.5" paint-order="stroke">${labels.join('')}</g>` : '';
  const svg = `${open}${areas.join('')}${points.join('')}${dots.join('')}${labelGroup}</svg>`;
  const box = `lat ${pr.south.toFixed(4)}…${pr.north.toFixed(4)}, lng ${pr.west.toFixed(4)}…${pr.east.toFixed(4)}`;
  const note = `map: equirectangular, north up · a point plot is a circle · box ${box} · about ${pr.kmWide.toFixed(2)} km × ${pr.kmHigh.toFixed(2)} km`;
  return { svg, note };
}

/** The legend: the four verdict colours and the loss-cell dot, as HTML with tiny inline swatches. */
export function renderLegend(): string {
  const swatch = (fill: string) =>
    `<svg class="sw" viewBox="0 0 4 3" width="4mm" height="3mm"><rect x="0.2" y="0.2" width="3.6" height="2.6" fill="${fill}" stroke="${OUTLINE}" stroke-width="0.3"/></svg>`;
  const items = VERDICTS.map((v) => `<span>${swatch(VERDICT_FILL[v])}${escapeHtml(v)}</span>`);
  const dot = `<svg class="sw" viewBox="0 0 3 3" width="3mm" height="3mm"><circle cx="1.5" cy="1.5" r="0.9" fill="${LOSS_FILL}" stroke="${OUTLINE}" stroke-width="0.3"/></svg>`;
  items.push(`<span>${dot}loss cell (forest lost after the cut-off)</span>`);
  return items.join('');
}
