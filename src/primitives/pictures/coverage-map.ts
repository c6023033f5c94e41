/**
 * coverage_map.svg (docs/reads.md, "Single-cell reads"): a 1440 x 720 plate-carree picture of where
 * the corpus has cells, counted in one-degree bins. Only stored cells are drawn: no basemap,
 * nothing inferred.
 */
import { cellCenter, type LatLng } from '../../protocol/index.js';
import type { ServiceContext } from '../context/context.js';

const COLS = 360;
const ROWS = 180;

/**
 * Colour classes on a half-decade log scale of the bin's cell count (1-2, 3-9, 10-29, 30-99,
 * 100-299, 300+): a bin with one cell and a bin with a thousand stay distinguishable, and a
 * one-degree bin can hold at most the scan cap (10 000 by default) so six classes cover it.
 */
const CLASSES: readonly { min: number; fill: string; label: string }[] = [
  { min: 1, fill: '#ffffb2', label: '1–2' },
  { min: 3, fill: '#fed976', label: '3–9' },
  { min: 10, fill: '#feb24c', label: '10–29' },
  { min: 30, fill: '#fd8d3c', label: '30–99' },
  { min: 100, fill: '#f03b20', label: '100–299' },
  { min: 300, fill: '#bd0026', label: '300+' },
];

const OCEAN = '#1d3149';
const GRATICULE = '#3a5574';
const INK = '#e8eef5';

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

/** Thin lines every 30° so a viewer can place the bins without a basemap. */
function graticule(): string {
  const d: string[] = [];
  for (let x = 30; x < COLS; x += 30) d.push(`M${x} 0V${ROWS}`);
  for (let y = 30; y < ROWS; y += 30) d.push(`M0 ${y}H${COLS}`);
  return `<path d="${d.join('')}" stroke="${GRATICULE}" stroke-width="0.25" fill="none"/>`;
}

/**
 * The legend sits in the South Pacific (west of Drake Passage) and is drawn beneath the bins,
 * so a stored cell there is never hidden by it.
 */
function legend(cells: number, bins: number, truncated: boolean): string {
  const x = 4;
  const y = 128;
  const out = [`<g font-family="sans-serif" font-size="3.2" fill="${INK}">`];
  out.push(`<rect x="${x - 2}" y="${y - 5}" width="62" height="${truncated ? 39 : 35}" fill="#000" fill-opacity="0.35" rx="1"/>`);
  out.push(`<text x="${x}" y="${y}">cells per 1° bin</text>`);
  CLASSES.forEach((c, k) => {
    const ky = y + 2 + k * 4;
    out.push(`<rect x="${x}" y="${ky}" width="3" height="3" fill="${c.fill}"/><text x="${x + 5}" y="${ky + 2.6}">${escapeXml(c.label)}</text>`);
  });
  out.push(`<text x="${x}" y="${y + 29}">${cells} cells in ${bins} bins</text>`);
  if (truncated) out.push(`<text x="${x}" y="${y + 33}">scan cap reached: partial map</text>`);
  out.push('</g>');
  return out.join('');
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
    `<svg xmlns="http://www.w3.org/2000/svg" width="1440" height="720" viewBox="0 0 ${COLS} ${ROWS}" data-cells="${cells}" data-bins="${rects.length}" data-scanned="${meta.scanned}" data-truncated="${meta.truncated}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="0" width="${COLS}" height="${ROWS}" fill="${OCEAN}"/>`,
    graticule(),
    legend(cells, rects.length, meta.truncated),
  ];
  if (rects.length > 0) out.push(`<g shape-rendering="crispEdges">${rects.join('')}</g>`);
  else {
    // Say why the map is blank rather than leave an empty frame that could pass for a fault.
    const why = meta.scanned === 0 ? 'no cells stored yet' : `no mappable cells among ${meta.scanned} scanned`;
    out.push(`<text x="${COLS / 2}" y="${ROWS / 2}" text-anchor="middle" font-family="sans-serif" font-size="8" fill="${INK}">${escapeXml(why)}</text>`);
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
