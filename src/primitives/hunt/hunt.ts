/**
 * hunt (docs/hunt.md): where inside a region is an event happening. The region is sampled
 * (stratified, deterministic per UTC day), each sample is recalled for the algorithm's primary
 * band and its gate band in one parallel fan-out (recall's materialization coalesces identical
 * upstream reads and runs them in the shared pool), gate failures are dropped with their
 * reason, and the rest is ranked by the primary band alone. ONE receipt binds every fact_cid
 * the answer cites (the hotspots' first, in rank order), and each hotspot carries its fact's
 * body, so its value, cell and place in the ranking verify offline; every sample is reported.
 */
import type { Receipt } from '../../protocol/receipt.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import type { NextStep } from '../steps/next-steps.js';
import type { ServedFact } from '../facts/facts-view.js';
import type { MaterializeNote } from '../context/materialize-note.js';
import { recall } from '../reads/recall.js';
import { counting, mapLimit, type ProgressFn } from '../reads/common.js';
import { resolveEvent } from './events.js';
import { failedSample, readSample, type SampleReport } from './readings.js';
import { directionText, rankCandidates } from './rank.js';
import { resolveRegion, type HuntBox, type HuntRegion, type LocateFn } from './region.js';
import { sampleSeed, stratifiedSample } from './sample.js';
import { thresholdFor } from './thresholds.js';
import { huntNextSteps } from './steps.js';

/** Samples per hunt (8 for slow primary bands) and hotspots returned (docs/hunt.md). */
export const HUNT_SAMPLES = 32;
export const HUNT_SAMPLES_SLOW = 8;
export const HUNT_TOP = 8;

/** A hunt, as the operation's schema admits it (types checked; region vs polygon_bbox is checked here). */
export interface HuntRequest {
  event: string;
  region?: string;
  polygon_bbox?: HuntBox;
}

export interface HuntOptions {
  deadline?: number;
  /** Bench only: sample this many cells, beyond the 32-sample cap, to show how wall time scales. */
  samples?: number;
  locate?: LocateFn;
  /** Told once the cells are chosen (progress 0) and after each sampled cell's read settles. */
  onProgress?: ProgressFn;
}

export interface Hotspot {
  rank: number;
  cell64: string;
  lat: number;
  lng: number;
  value: number;
  unit?: string;
  fact_cid: string;
  scene_png: string;
  gate: SampleReport['gate'] | null;
  /** The signed fact the value comes from (its body; the hunt receipt binds it), so the value and cell check offline. */
  fact: Record<string, unknown>;
}

export interface HuntResult {
  event: string;
  algorithm: { key: string; formula: string; primary_band: string; gate_band: string | null; gate_rule: string | null; threshold: string; rank: string };
  region: HuntRegion['block'];
  sampling: { method: string; samples_max: number; strata: number; seed: string };
  cells_sampled: number;
  hotspots: Hotspot[];
  /** Set when hotspots is empty: why, in words. */
  empty_reason?: string;
  samples: SampleReport[];
  summary: Record<string, number>;
  materialize_notes: MaterializeNote[];
  caveats: string[];
  next_steps: NextStep[];
  receipt: Receipt;
}

/** Below this share of samples with a value, the answer suggests a retry, a backfill or a denser hunt. */
const MIN_DATA_SHARE = 0.5;

export async function hunt(ctx: ServiceContext, req: HuntRequest, opts: HuntOptions = {}): Promise<HuntResult> {
  const ev = resolveEvent(ctx, req.event);
  const region = await resolveRegion(ctx, req, opts.locate);
  const max = opts.samples ?? (ev.slow ? HUNT_SAMPLES_SLOW : HUNT_SAMPLES);
  const day = ctx.now().toISOString().slice(0, 10);
  const sample = stratifiedSample(region.area, max, sampleSeed(region.area, day));
  const bands = ev.gate ? [ev.primary.key, ev.gate.band] : [ev.primary.key];

  const n = sample.cells.length;
  opts.onProgress?.({ progress: 0, total: n, message: `${ev.event}: reading ${bands.join(' and ')} at ${n} sampled cells` });
  // Every sample at once: the materializer pool bounds upstream fan-out and coalesces repeats.
  const readCell = (cell: string) =>
    recall(ctx, { cell, bands }, { primitive: 'hunt', deadline: opts.deadline }).then(
      (r) => ({ report: readSample(cell, r, ev.primary.key, ev.gate), notes: r.materialize_notes, fact: r.facts.find((f) => f.band === ev.primary.key) }),
      (e: unknown) => ({ report: failedSample(cell, ev.primary.key, e), notes: [] as MaterializeNote[], fact: undefined }),
    );
  const reads = await mapLimit(sample.cells, n, counting(readCell, n, opts.onProgress, 'sampled cells read'));
  const samples = reads.map((r) => r!.report);
  const notes = reads.flatMap((r) => r!.notes);
  const primaryFacts = new Map(reads.flatMap((r) => (r!.fact ? [[r!.fact.fact_cid, r!.fact] as const] : [])));

  const gated = samples.filter((s) => s.status === 'candidate');
  const threshold = thresholdFor(
    ev.event,
    gated.map((s) => s.primary.value!),
  );
  for (const s of gated) {
    if (threshold.flags(s.primary.value!)) continue;
    s.status = 'below_threshold';
    s.reason = `${ev.primary.key} = ${s.primary.value} does not meet ${threshold.rule}`;
  }
  const candidates = gated.filter((s) => s.status === 'candidate').map((s) => ({ ...s, value: s.primary.value! }));
  const hotspots: Hotspot[] = rankCandidates(candidates, ev.rank)
    .slice(0, HUNT_TOP)
    .map((s, i) => ({
      rank: i + 1,
      cell64: s.cell64,
      lat: s.lat,
      lng: s.lng,
      value: s.value,
      unit: s.primary.unit,
      fact_cid: s.primary.fact_cid!,
      scene_png: `/v1/cells/${s.cell64}/scene.png`,
      gate: s.gate ?? null,
      fact: factBody(primaryFacts.get(s.primary.fact_cid!)!),
    }));

  const summary: Record<string, number> = {};
  for (const s of samples) summary[s.status] = (summary[s.status] ?? 0) + 1;
  const withData = samples.filter((s) => s.primary.value !== undefined).length;

  // The receipt binds every fact the answer cites (values, signed absences and gate readings), over every sampled cell;
  // the hotspots' come first, in rank order, so that the signature binds the ranking too.
  const cited = samples.flatMap((s) => [s.primary.fact_cid, s.gate?.fact_cid]).filter((c): c is string => typeof c === 'string');
  const cids = [...new Set([...hotspots.map((h) => h.fact_cid), ...cited])];
  const receipt = issueReceipt(ctx, 'hunt', sample.cells, cids);

  const out: HuntResult = {
    event: ev.event,
    algorithm: {
      key: ev.algorithm.key,
      formula: ev.algorithm.formula,
      primary_band: ev.primary.key,
      gate_band: ev.gate?.band ?? null,
      gate_rule: ev.gate?.rule ?? null,
      threshold: threshold.rule,
      rank: `${ev.rank} (${directionText(ev.rank)} by ${ev.primary.key})`,
    },
    region: region.block,
    sampling: { method: sample.method, samples_max: max, strata: sample.strata, seed: sample.seed },
    cells_sampled: sample.cells.length,
    hotspots,
    samples,
    summary,
    materialize_notes: notes,
    caveats: caveats(ev, max, sample.cells.length, withData, summary),
    next_steps: withData < Math.ceil(sample.cells.length * MIN_DATA_SHARE) ? huntNextSteps(ev.event, ev.primary.key, region.area.bbox, samples) : [],
    receipt,
  };
  if (hotspots.length === 0) out.empty_reason = emptyReason(ev.primary.key, summary, sample.cells.length, threshold.rule);
  return out;
}

/** A served fact without its per-fact receipt: the hunt receipt binds it, and the body alone recomputes its fact_cid. */
function factBody(f: ServedFact): Record<string, unknown> {
  const { receipt: _r, ...body } = f;
  return body;
}

function caveats(ev: ReturnType<typeof resolveEvent>, max: number, n: number, withData: number, summary: Record<string, number>): string[] {
  const out = [
    `${n} cells sampled (cap ${max}${ev.slow ? ', a slow primary band' : ''}) out of the region's many: a hotspot is the most extreme sample, not necessarily the most extreme place; hunt a smaller region for density.`,
    `Ranked by ${ev.primary.key} alone, ${directionText(ev.rank)}; the gate band only admits or drops cells, and only values meeting the event threshold are hotspots.`,
    `${withData} of ${n} samples carried a ${ev.primary.key} value.`,
  ];
  if (ev.primary.cadence_s > 0)
    out.push(
      `${ev.primary.key}: native cadence about ${Math.round((ev.primary.cadence_s / 86400) * 10) / 10} days; each value is the newest scene at its cell, so samples may come from different days.`,
    );
  const missingKinds = (['absence', 'timeout', 'upstream_error', 'no_materializer', 'no_data', 'error'] as const).filter((k) => summary[k]);
  if (missingKinds.length) out.push(`Samples without a value: ${missingKinds.map((k) => `${summary[k]} ${k}`).join(', ')} — reported per cell in samples[], never counted as zero.`);
  if (summary.no_materializer) out.push(`No connector is wired for ${ev.primary.key} (or its gate band) on this responder: those samples could not be read at all.`);
  return out;
}

function emptyReason(primary: string, summary: Record<string, number>, n: number, rule: string): string {
  const parts = Object.entries(summary)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  if (summary.no_materializer === n) return `no hotspots: no connector is wired for ${primary} on this responder, so none of the ${n} samples could be read (${parts})`;
  if (summary.below_threshold) return `no hotspots: no sample reached the event threshold ${rule} (${parts})`;
  if (summary.gate_failed) return `no hotspots: every sample with a value failed the gate (${parts})`;
  return `no hotspots: none of the ${n} samples yielded a gated ${primary} value (${parts})`;
}
