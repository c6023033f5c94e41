/**
 * next_steps of a hunt answer when too few samples carried data: read the failed cells again,
 * backfill the primary band's history there, or hunt a smaller box more densely. Same step
 * shape as /v1/ask (method, path, url, body, why) so agents replay them the same way.
 */
import type { NextStep } from '../steps/next-steps.js';
import type { SampleReport } from './readings.js';

type Box = { min_lat: number; min_lng: number; max_lat: number; max_lng: number };

/** The area form of backfill takes up to 64 cells (docs/writes.md, "Backfill"). */
const BACKFILL_CELLS = 64;
const r5 = (x: number) => Math.round(x * 1e5) / 1e5;

/** A box of half the width and height of `box`, centred on the samples that had data (else on the box). */
function denserBox(box: Box, withData: SampleReport[]): Box {
  const lat = withData.length ? withData.reduce((s, x) => s + x.lat, 0) / withData.length : (box.min_lat + box.max_lat) / 2;
  const lng = withData.length ? withData.reduce((s, x) => s + x.lng, 0) / withData.length : (box.min_lng + box.max_lng) / 2;
  const h = (box.max_lat - box.min_lat) / 4;
  const w = (box.max_lng - box.min_lng) / 4;
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  const cLat = clamp(lat, box.min_lat + h, box.max_lat - h);
  const cLng = clamp(lng, box.min_lng + w, box.max_lng - w);
  return { min_lat: r5(cLat - h), min_lng: r5(cLng - w), max_lat: r5(cLat + h), max_lng: r5(cLng + w) };
}

export function huntNextSteps(event: string, primaryBand: string, box: Box, samples: SampleReport[]): NextStep[] {
  const steps: NextStep[] = [];
  const retry = samples.filter((s) => s.status === 'timeout' || s.status === 'upstream_error').map((s) => s.cell64);
  if (retry.length > 0) {
    const body = { cells: retry, bands: [primaryBand] };
    steps.push({
      action: 'recall_failed_cells',
      method: 'POST',
      path: '/v1/recall_polygon',
      url: '/v1/recall_polygon',
      body,
      why: `${retry.length} sampled cells timed out or failed upstream; reading them again materializes what the upstream now answers (a failure backs off for about 15 s)`,
    });
  }
  const empty = samples
    .filter((s) => s.status !== 'candidate' && s.status !== 'gate_failed' && s.status !== 'no_materializer')
    .map((s) => s.cell64)
    .slice(0, BACKFILL_CELLS);
  if (empty.length > 0) {
    steps.push({
      action: 'backfill',
      method: 'POST',
      path: '/v1/backfill',
      url: '/v1/backfill',
      body: { cells: empty, band: primaryBand },
      why: `fill the recent history of ${primaryBand} at the cells without a current value, then hunt again; a write: add attester and signature, see docs/writes.md`,
      auth: 'attester_signature',
    });
  }
  const withData = samples.filter((s) => s.primary.value !== undefined);
  steps.push({
    action: 'hunt_denser',
    method: 'POST',
    path: '/v1/hunt',
    url: '/v1/hunt',
    body: { event, polygon_bbox: denserBox(box, withData) },
    why: 'the same number of samples over a quarter of the area: four times the sampling density where data was found',
  });
  return steps;
}
