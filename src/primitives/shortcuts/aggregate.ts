/**
 * The aggregate step of the place shortcuts (docs/shortcuts.md): which cells to read for a place,
 * and per-band statistics over the facts read there. Pure functions over plain values, so the rules
 * (absences never averaged, an empty band is null with a reason, never 0) are testable alone.
 */
import { invalidArgument } from '../../protocol/errors.js';
import type { LocateResp } from '../../geo/types.js';
import type { BandEntry } from '../../registry/registry.js';
import { evenPick, isNum, round } from '../reads/common.js';
import { hasExtent } from './place.js';

/** Shortcut n_cells is 1..64 (docs/shortcuts.md, "Place shortcuts"). */
export const N_CELLS_MIN = 1;
export const N_CELLS_MAX = 64;

/**
 * `n_cells`, or undefined when not given. Anything but an integer 1..64 is HTTP 400
 * (docs/errors.md, "Another status than the catalogue's"), which is why the schemas leave the field
 * untyped: this check owns the status. Query strings arrive as text, so digits are accepted there
 * only.
 */
export function parseNCells(v: unknown, fromQuery = false): number | undefined {
  if (v === undefined) return undefined;
  const n = fromQuery && typeof v === 'string' && /^[0-9]{1,3}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < N_CELLS_MIN || n > N_CELLS_MAX) {
    throw invalidArgument('n_cells', `expected an integer ${N_CELLS_MIN}..${N_CELLS_MAX}, got ${JSON.stringify(v)}`, 400);
  }
  return n;
}

export interface Sampling {
  mode: 'point' | 'sampled';
  cells: string[];
  /** Cells the place offered (polygon_sample_cells), for the sample-size caveat. */
  available: number;
  requested: number;
}

/**
 * Cells to read: the locate cell for a point, or for `n_cells: 1`; otherwise n cells taken
 * evenly from polygon_sample_cells (deterministic, so repeated calls read the same cells).
 */
export function sampleCells(loc: LocateResp, nCells: number | undefined, defaultCells: number): Sampling {
  const requested = nCells ?? defaultCells;
  if (!hasExtent(loc) || requested === 1) return { mode: 'point', cells: [loc.cell64], available: loc.polygon_sample_cells?.length ?? 1, requested };
  const unique = [...new Set(loc.polygon_sample_cells)];
  return { mode: 'sampled', cells: evenPick(unique, requested), available: unique.length, requested };
}

/** The per-cell reading of one band as the aggregate sees it. */
export interface Reading {
  cell: string;
  kind: string;
  value: unknown;
}

interface Counts {
  band: string;
  unit: string | null;
  /** Cells with a usable value. */
  n: number;
  /** Cells with a signed absence (counted, never averaged in). */
  n_absent: number;
  /** Cells read without any usable fact (skipped upstream, or a value of the wrong shape). */
  n_missing: number;
  reason?: string;
}

export interface NumericStats extends Counts {
  kind: 'numeric';
  mean: number | null;
  median: number | null;
  min: number | null;
  max: number | null;
  /** Population standard deviation over the sampled cells. */
  std: number | null;
}

export interface CategoricalStats extends Counts {
  kind: 'categorical';
  mode: number | string | null;
  mode_label: string | null;
  distribution: Record<string, { count: number; fraction: number; label: string | null }>;
}

export interface VectorStats extends Counts {
  kind: 'vector';
}

export type BandStats = NumericStats | CategoricalStats | VectorStats;

function emptyReason(c: Counts, cells: number): string {
  const parts: string[] = [];
  if (c.n_absent > 0) parts.push(`${c.n_absent} signed absence${c.n_absent > 1 ? 's' : ''}`);
  if (c.n_missing > 0) parts.push(`${c.n_missing} cell${c.n_missing > 1 ? 's' : ''} without a usable fact (see materialize_notes)`);
  return `no values over the ${cells} cell${cells > 1 ? 's' : ''} read${parts.length ? `: ${parts.join(', ')}` : ''}; statistics are null, never 0`;
}

/** Median of a sorted list. */
export function median(sorted: readonly number[]): number {
  const m = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
}

/** Statistics of one band over the readings of the cells read (undefined = no fact at that cell). */
export function bandStats(key: string, band: BandEntry | undefined, readings: ReadonlyArray<Reading | undefined>): BandStats {
  const kind = band?.value_kind ?? 'scalar';
  const counts: Counts = { band: key, unit: band?.unit ?? null, n: 0, n_absent: 0, n_missing: 0 };
  const values: unknown[] = [];
  for (const r of readings) {
    if (!r) counts.n_missing++;
    else if (r.kind === 'absence') counts.n_absent++;
    else if (kind === 'vector' ? Array.isArray(r.value) : kind === 'categorical' ? r.value !== null && r.value !== undefined && !Array.isArray(r.value) : isNum(r.value)) values.push(r.value);
    else counts.n_missing++;
  }
  counts.n = values.length;
  if (counts.n === 0) counts.reason = emptyReason(counts, readings.length);

  if (kind === 'vector') {
    return { ...counts, kind: 'vector', reason: counts.reason ?? 'vector band: no scalar statistics (compare vectors with /v1/compare or /v1/find_similar)' };
  }
  if (kind === 'categorical') {
    const tally = new Map<string, number>();
    for (const v of values) tally.set(String(v), (tally.get(String(v)) ?? 0) + 1);
    // Numeric class ids sort numerically; ties for the mode go to the lowest id (deterministic).
    const ids = [...tally.keys()].sort((a, b) => Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0));
    const distribution: CategoricalStats['distribution'] = {};
    let mode: string | null = null;
    for (const id of ids) {
      const count = tally.get(id)!;
      distribution[id] = { count, fraction: round(count / counts.n, 6), label: band?.classes?.[id] ?? null };
      if (mode === null || count > tally.get(mode)!) mode = id;
    }
    const modeValue = mode === null ? null : Number.isFinite(Number(mode)) ? Number(mode) : mode;
    return { ...counts, kind: 'categorical', mode: modeValue, mode_label: mode === null ? null : (band?.classes?.[mode] ?? null), distribution };
  }
  const xs = (values as number[]).slice().sort((a, b) => a - b);
  if (xs.length === 0) return { ...counts, kind: 'numeric', mean: null, median: null, min: null, max: null, std: null };
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length;
  return {
    ...counts,
    kind: 'numeric',
    mean: round(mean),
    median: round(median(xs)),
    min: xs[0],
    max: xs[xs.length - 1],
    std: round(Math.sqrt(variance)),
  };
}

/** Sample-size caveats for a sampled answer. */
export function samplingCaveats(s: Sampling, read: number): string[] {
  if (s.mode === 'point') return [];
  const out = [
    `Statistics are over ${read} cell${read > 1 ? 's' : ''} sampled evenly from the place's polygon_sample_cells (${s.available} offered): a sample of about 10 m cells, not an area average.`,
  ];
  if (s.requested > s.available) out.push(`n_cells ${s.requested} asked, but the place offers only ${s.available} sample cells: all of them were read.`);
  if (read < 5) out.push(`Only ${read} cells read: treat the statistics as indicative.`);
  return out;
}
