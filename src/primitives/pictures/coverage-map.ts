/**
 * coverage_map.svg (docs/reads.md, "Single-cell reads"): a plate-carrée picture of where the
 * corpus has cells, counted in one-degree bins, over Natural Earth land and country borders, with
 * a legend strip beneath the map. Only stored cells are counted: the basemap is context, and
 * nothing is inferred from it. The picture scales to its container (viewBox, 100% wide).
 */
import { cellCenter, type LatLng } from '../../protocol/index.js';
import type { ServiceContext } from '../context/context.js';
import { basemap } from './basemap.js';

const COLS = 360;
const ROWS = 180;
/** The legend strip under the map, in the same units (one per degree). */
const LEGEND_H = 26;

/**
 * Colour classes on a half-decade log scale of the bin's cell count (1-2, 3-9, 10-29, 30-99,
 * 100-299, 300+): a bin with one cell and a bin with a thousand stay distinguishable, and a
 * one-degree bin can hold at most the scan cap (10 000 by default) so six classes cover it.
 */
export const CLASSES: readonly { min: number; fill: string; label: string }[] = [
  { min: 1, fill: '#ffffb2', label: '1–2' },
  { min: 3, fill: '#fed976', label: '3–9' },
  { min: 10, fill: '#feb24c', label: '10–29' },
  { min: 30, fill: '#fd8d3c', label: '30–99' },
  { min: 100, fill: '#f03b20', label: '100–299' },
  { min: 300, fill: '#bd0026', label: '300+' },
];

const OCEAN = '#1d3149';
export const LAND = '#46505a';
const COAST = '#8796a5';
const BORDER = '#6c7a88';
const GRATICULE = '#4a6688';
const STRIP = '#101b29';
const INK = '#e8eef5';
const NOTE = '#a9b7c6';
const WARN = '#ffb454';
export const NATURAL_EARTH_CREDIT = 'Coastlines and borders: Natural Earth 1:50m (public domain)';

export interface CoverageMeta {
  /** The cell scan stopped at its cap: the map shows only the first cells in text order. */
  truncated: boolean;
  /** Cells the scan returned (including any that failed to decode). */
  scanned: number;
  /** Deployment prefix, shown in the title. */
  prefix: string;
}

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

function classOf(count: number): (typeof CLASSES)[number] {
  let k = 0;
  while (k + 1 < CLASSES.length && count >= CLASSES[k + 1]!.min) k++;
  return CLASSES[k]!;
}

/** Bin index of a point: row 0 is 89..90°N, column 0 is 180..179°W; the edges (±90, ±180) clamp inward. */
export function binOf(p: LatLng): { col: number; row: number } {
  const col = Math.min(COLS - 1, Math.max(0, Math.floor(p.lng + 180)));
  const row = Math.min(ROWS - 1, Math.max(0, Math.floor(90 - p.lat)));
  return { col, row };
}

/** Land, borders and a 30° graticule, clipped to the map frame. */
function background(): string {
  const b = basemap();
  const d: string[] = [];
  for (let x = 30; x < COLS; x += 30) d.push(`M${x} 0V${ROWS}`);
  for (let y = 30; y < ROWS; y += 30) d.push(`M0 ${y}H${COLS}`);
  return [
    `<defs><clipPath id="coverage-frame"><rect x="0" y="0" width="${COLS}" height="${ROWS}"/></clipPath></defs>`,
    `<rect x="0" y="0" width="${COLS}" height="${ROWS}" fill="${OCEAN}"/>`,
    `<g id="basemap" clip-path="url(#coverage-frame)" stroke-linejoin="round">`,
    `<path id="land" d="${b.land}" fill="${LAND}" fill-rule="evenodd" stroke="${COAST}" stroke-width="0.12"/>`,
    `<path id="borders" d="${b.borders}" fill="none" stroke="${BORDER}" stroke-width="0.08"/>`,
    `<path id="graticule" d="${d.join('')}" stroke="${GRATICULE}" stroke-width="0.15" stroke-opacity="0.7" fill="none"/>`,
    '</g>',
  ].join('\n');
}

/** The strip under the map: what a colour means, how many cells and bins, what is drawn beneath. */
function legend(cells: number, bins: number, meta: CoverageMeta): string {
  const y = ROWS;
  const out = [`<g id="legend" font-family="DejaVu Sans, Verdana, Arial, sans-serif" fill="${INK}">`];
  out.push(`<rect x="0" y="${y}" width="${COLS}" height="${LEGEND_H}" fill="${STRIP}"/>`);
  out.push(`<text x="4" y="${y + 9.5}" font-size="5.2" font-weight="bold">Stored cells per 1° bin</text>`);
  CLASSES.forEach((c, k) => {
    const x = 80 + k * 30;
    out.push(
      `<rect class="swatch" x="${x}" y="${y + 5.4}" width="5" height="5" fill="${c.fill}" stroke="${INK}" stroke-width="0.2"/><text x="${x + 6.5}" y="${y + 9.6}" font-size="5">${escapeXml(c.label)}</text>`,
    );
  });
  out.push(`<text id="counts" x="${COLS - 4}" y="${y + 9.5}" font-size="5" text-anchor="end">${cells} cells in ${bins} bins</text>`);
  const note = meta.truncated ? `<tspan fill="${WARN}">Scan cap reached: only the first ${meta.scanned} cells are counted.</tspan>` : 'Only stored public cells are counted; nothing is inferred.';
  out.push(`<text x="4" y="${y + 20}" font-size="4" fill="${NOTE}">${note}</text>`);
  out.push(`<text id="attribution" x="${COLS - 4}" y="${y + 20}" font-size="4" fill="${NOTE}" text-anchor="end">${escapeXml(NATURAL_EARTH_CREDIT)}</text>`);
  out.push('</g>');
  return out.join('\n');
}

/**
 * Render cell centres as the coverage map. Pure and deterministic: bins are written in row-major
 * order with fixed number formatting, so the same centres give the same bytes. Centres that are
 * not finite numbers are not counted.
 */
export function renderCoverageMap(centres: Iterable<LatLng>, meta: CoverageMeta): string {
  const counts = new Uint32Array(COLS * ROWS);
  let cells = 0;
  for (const p of centres) {
    if (!Number.isFinite(p.lat) || !Number.isFinite(p.lng)) continue;
    const { col, row } = binOf(p);
    counts[row * COLS + col]!++;
    cells++;
  }

  const rects: string[] = [];
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i]!;
    if (n === 0) continue;
    const col = i % COLS;
    const row = (i - col) / COLS;
    rects.push(`<rect x="${col}" y="${row}" width="1" height="1" fill="${classOf(n).fill}" data-count="${n}"/>`);
  }

  const title = `${meta.prefix} coverage map: ${cells} cells in ${rects.length} one-degree bins${meta.truncated ? ` (first ${meta.scanned} cells scanned; scan cap reached)` : ''}`;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${COLS} ${ROWS + LEGEND_H}" width="100%" height="100%" preserveAspectRatio="xMidYMid meet" role="img" data-cells="${cells}" data-bins="${rects.length}" data-scanned="${meta.scanned}" data-truncated="${meta.truncated}">`,
    `<title>${escapeXml(title)}</title>`,
    `<desc>Stored cells counted in one-degree bins (plate carrée, north up), drawn over land and country borders. ${escapeXml(NATURAL_EARTH_CREDIT)}.</desc>`,
    background(),
    legend(cells, rects.length, meta),
  ];
  if (rects.length > 0) out.push(`<g id="bins" shape-rendering="crispEdges">${rects.join('')}</g>`);
  else {
    // Say why the map is blank rather than leave an empty frame that could pass for a fault.
    const why = meta.scanned === 0 ? 'no cells stored yet' : `no mappable cells among ${meta.scanned} scanned`;
    out.push(
      `<text x="${COLS / 2}" y="${ROWS / 2}" text-anchor="middle" font-family="sans-serif" font-size="8" fill="${INK}" stroke="${OCEAN}" stroke-width="0.4" paint-order="stroke">${escapeXml(why)}</text>`,
    );
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** One rendered map per service, with the corpus state it was drawn from. */
const cache = new WeakMap<ServiceContext, { key: string; svg: Promise<string> }>();

async function render(ctx: ServiceContext): Promise<string> {
  // Public cells only: the map must not show where scoped (private) facts are.
  const { cells, truncated } = await ctx.store.cellsWithPrefix('', ctx.config.scanCellLimit, null);
  const centres: LatLng[] = [];
  for (const cell of cells) {
    try {
      centres.push(cellCenter(cell));
    } catch {
      // A stored key that is not a geographic cell has no place on the map.
    }
  }
  return renderCoverageMap(centres, { truncated, scanned: cells.length, prefix: ctx.config.prefix });
}

/**
 * The coverage map of the current corpus. A repeat on an unchanged corpus reuses the last render
 * instead of rescanning. The key is the log size together with the index's public cell count:
 * the embedded store makes a log entry durable a moment before it indexes the entry's cells, so
 * the size alone could pin a map drawn in that gap; the cell count moves once they are indexed.
 * Concurrent requests on one state share one render.
 */
export async function coverageMap(ctx: ServiceContext): Promise<string> {
  const stats = await ctx.store.stats();
  const key = `${stats.log_size}:${stats.cells}`;
  const hit = cache.get(ctx);
  if (hit?.key === key) return hit.svg;
  const svg = render(ctx);
  cache.set(ctx, { key, svg });
  svg.catch(() => {
    if (cache.get(ctx)?.svg === svg) cache.delete(ctx); // a failed scan is retried, not served again
  });
  return svg;
}
