/**
 * Which next steps an answer offers (docs/ask.md, "next_steps": each item is a literal follow-up
 * call): retries for bands that failed, reads for
 * algorithm inputs still missing, the shortcut for algorithms that need neighbours or history,
 * area sampling for places with extent, the hunt call, the thumbnail, other candidates of an
 * ambiguous place. Deduplicated by call, in that order.
 */
import type { LocateResp } from '../../geo/types.js';
import type { Registry, TopicEntry } from '../../registry/registry.js';
import type { ServiceContext } from '../context/context.js';
import type { MaterializeNote } from '../context/materialize-note.js';
import type { AlgorithmForQuestion } from './evaluate.js';
import { areaStep, disambiguateStep, huntStep, recallStep, sceneStep, shortcutStep, type NextStep } from '../steps/next-steps.js';

/** Cells sampled by an area step: enough for statistics, small enough for a short reply. */
const AREA_CELLS = 16;

/** True when the place is a feature with extent (not the centre cell's own box). */
export function hasExtent(loc: LocateResp): boolean {
  return loc.polygon_bbox?.source !== undefined && loc.polygon_bbox.source !== 'centre_cell_bbox' && loc.polygon_sample_cells.length > 1;
}

/** Cells to sample for a place: its polygon sample, or the centre and its 8 neighbours for a point. */
export function sampleCells(loc: LocateResp, max = AREA_CELLS): string[] {
  return hasExtent(loc) ? loc.polygon_sample_cells.slice(0, max) : [loc.cell64, ...loc.neighborhood_cells].slice(0, max);
}

/** Scalar and class bands of a list (vectors are not area-sampled in a short answer). */
function plainBands(reg: Registry, bands: readonly string[]): string[] {
  return bands.filter((b) => reg.bands.get(b)?.value_kind !== 'vector');
}

export function dedupe(steps: readonly NextStep[]): NextStep[] {
  const seen = new Set<string>();
  return steps.filter((s) => {
    const k = `${s.method} ${s.url} ${JSON.stringify(s.body)}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export interface TopicalSteps {
  ctx: ServiceContext;
  q: string;
  topic: TopicEntry;
  loc: LocateResp;
  query?: string;
  missing: readonly string[];
  notes: readonly MaterializeNote[];
  algorithms: readonly AlgorithmForQuestion[];
  huntEvent?: string;
}

/** Next steps of a place-anchored topical answer. */
export function topicalSteps(x: TopicalSteps): NextStep[] {
  const { ctx, loc } = x;
  const cell = loc.cell64;
  const steps: NextStep[] = [];
  const wired = (b: string) => ctx.materializers.forBand(b) !== undefined;
  // Bands that failed upstream (retryable) or were never fetched: one recall reads them again.
  const retry = x.missing.filter((b) => {
    const n = x.notes.find((m) => m.band === b);
    return n ? n.retryable : wired(b);
  });
  if (retry.length > 0) steps.push(recallStep(cell, retry, 'reads the missing bands again; a timeout or upstream failure is retryable, and a recall materializes on a miss'));
  const inputs = new Set<string>();
  for (const a of x.algorithms) for (const b of a.missing_bands ?? []) if (!retry.includes(b) && wired(b)) inputs.add(b);
  if (inputs.size > 0) steps.push(recallStep(cell, [...inputs], 'fetches the inputs the routed algorithms still lack at this cell'));
  for (const a of x.algorithms) if (a.computed_by) steps.push(shortcutStep(a.computed_by, cell, a.key));
  if (hasExtent(loc)) {
    steps.push(areaStep(sampleCells(loc), plainBands(ctx.registry, x.topic.bands), loc.label));
    if (x.huntEvent) steps.push(huntStep(x.huntEvent, { region: x.query ?? loc.label }));
  }
  if (loc.selected?.is_high_confidence === false) for (const alt of loc.alternatives.slice(0, 2)) steps.push(disambiguateStep(x.q, alt.label));
  return dedupe(steps);
}

/**
 * Next steps of a composite question (router.ts, `composite`): the answer reads the routed topic
 * and the telling bands of the others (composite.ts); each other topic gets one recall of the rest
 * of its bands at the same cell, so the caller can complete the picture with literal calls.
 */
export function compositeSteps(ctx: ServiceContext, cell: string, alreadyRead: readonly string[], others: readonly string[], frame: string): NextStep[] {
  const read = new Set(alreadyRead);
  const steps: NextStep[] = [];
  for (const key of others) {
    const t = ctx.registry.topics.get(key);
    if (!t) continue;
    const bands = plainBands(ctx.registry, t.bands).filter((b) => !read.has(b));
    if (bands.length === 0) continue;
    for (const b of bands) read.add(b);
    steps.push(recallStep(cell, bands, `the ${t.title.toLowerCase()} side of this ${frame} question (topic ${t.key}): reads its bands at the same cell`));
  }
  return steps;
}

/** Next steps of a hunt question: the hunt call (not served yet) and today's workaround read. */
export function huntSteps(ctx: ServiceContext, event: string, algorithm: string | null, loc: LocateResp | null, region: string | undefined): NextStep[] {
  const steps: NextStep[] = [];
  if (region) steps.push(huntStep(event, { region }));
  else if (loc && hasExtent(loc) && loc.polygon_bbox) {
    const { min_lat, min_lng, max_lat, max_lng } = loc.polygon_bbox;
    steps.push(huntStep(event, { polygon_bbox: { min_lat, min_lng, max_lat, max_lng } }));
  }
  const a = algorithm ? ctx.registry.algorithms.get(algorithm) : undefined;
  // Without an algorithm (oil slick), the registry's workaround reads radar and wind.
  const bands = a ? plainBands(ctx.registry, a.bands).slice(0, 3) : ['s1.vv_db', 's1.vv_change_db', 'weather.wind_speed_10m'];
  if (loc && bands.length > 0) steps.push(areaStep(sampleCells(loc), bands, loc.label));
  return dedupe(steps);
}

/** The thumbnail step, when asked for. */
export function imageSteps(include: boolean | undefined, loc: LocateResp | null): NextStep[] {
  return include && loc ? [sceneStep(loc.cell64)] : [];
}
