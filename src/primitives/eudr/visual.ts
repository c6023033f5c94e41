/**
 * Visual evidence of a plot (docs/eudr.md, "Visual evidence"): at a few of its cells (loss cells
 * first, then forest cells), NDVI once a year from 2020 to the current year and the Sentinel-1 VV
 * change now, with a scene picture per cell. Verdict: no NDVI reading in 2020 → the change cannot
 * be judged (`indeterminate_no_baseline`); an NDVI drop against 2020 of at least 0.15, or a VV
 * drop of at least 3 dB → `visual_deforestation_suspected`; otherwise `no_visual_deforestation`.
 * Each year is read at its growing-season slot (mid-July north of the equator, mid-January south),
 * so the years compare like with like. Every reading is a signed fact the statement's receipt cites.
 */
import { tslotOf } from '../../protocol/tslot.js';
import type { ServiceContext } from '../context/context.js';
import { mapLimit } from '../reads/common.js';
import { recall } from '../reads/recall.js';
import type { NdviYear, VisualEvidence } from './types.js';

export const NDVI_DROP_THRESHOLD = 0.15;
export const VV_DROP_THRESHOLD_DB = 3;
/** Cells a plot's visual evidence reads. */
export const VISUAL_CELLS = 3;
export const BASELINE_YEAR = 2020;

const NDVI = 'indices.ndvi';
const VV_CHANGE = 's1.vv_change_db';
const r4 = (x: number) => Math.round(x * 10000) / 10000;

function seasonUnix(year: number, lat: number): number {
  return Date.UTC(year, lat >= 0 ? 6 : 0, 15, 12) / 1000;
}

function numberOf(facts: ReadonlyArray<Record<string, unknown>>, band: string): { value: number; cid: string } | undefined {
  const f = facts.find((x) => x.band === band && x.kind === 'primary' && typeof x.value === 'number');
  return f ? { value: f.value as number, cid: String(f.fact_cid) } : undefined;
}

/** The visual evidence at `cells` (each with its latitude), and every fact_cid it read. */
export async function visualEvidence(ctx: ServiceContext, cells: ReadonlyArray<{ cell: string; lat: number }>, deadline: number): Promise<{ evidence: VisualEvidence; factCids: string[] }> {
  const picked = cells.slice(0, VISUAL_CELLS);
  const thisYear = ctx.now().getUTCFullYear();
  const years = Array.from({ length: Math.max(1, thisYear - BASELINE_YEAR + 1) }, (_, i) => BASELINE_YEAR + i);
  const cids: string[] = [];
  const jobs = picked.flatMap((c) => years.map((year) => ({ c, year })));
  const ndvi = await mapLimit(jobs, 8, async ({ c, year }) => {
    const tslot = tslotOf(seasonUnix(year, c.lat), 'medium');
    const r = await recall(ctx, { cell: c.cell, bands: [NDVI], tslot }, { primitive: 'eudr_dds', deadline });
    return numberOf(r.facts as ReadonlyArray<Record<string, unknown>>, NDVI);
  });
  const vv = await mapLimit(picked, 8, async (c) =>
    numberOf((await recall(ctx, { cell: c.cell, bands: [VV_CHANGE] }, { primitive: 'eudr_dds', deadline })).facts as ReadonlyArray<Record<string, unknown>>, VV_CHANGE),
  );
  const timeline: NdviYear[] = years.map((year) => {
    const vals = jobs.map((j, i) => (j.year === year ? ndvi[i] : undefined)).filter((v): v is { value: number; cid: string } => v !== undefined);
    for (const v of vals) cids.push(v.cid);
    return { year, ndvi: vals.length > 0 ? r4(vals.reduce((s, v) => s + v.value, 0) / vals.length) : null, cells_with_value: vals.length };
  });
  const vvVals = vv.filter((v): v is { value: number; cid: string } => v !== undefined);
  for (const v of vvVals) cids.push(v.cid);
  const vvChange = vvVals.length > 0 ? r4(vvVals.reduce((s, v) => s + v.value, 0) / vvVals.length) : null;
  const base = timeline[0].ndvi;
  const newest = [...timeline].reverse().find((y) => y.year > BASELINE_YEAR && y.ndvi !== null);
  const drop = base !== null && newest ? r4(base - newest.ndvi!) : null;
  let verdict: VisualEvidence['verdict'];
  let reason: string;
  if (base === null) {
    verdict = 'indeterminate_no_baseline';
    reason = `no NDVI reading in ${BASELINE_YEAR} at the ${picked.length} evidence cells, so no change against the cut-off year can be judged`;
  } else if ((drop !== null && drop >= NDVI_DROP_THRESHOLD) || (vvChange !== null && -vvChange >= VV_DROP_THRESHOLD_DB)) {
    verdict = 'visual_deforestation_suspected';
    reason = `NDVI ${base} in ${BASELINE_YEAR}${newest ? ` and ${newest.ndvi} in ${newest.year} (drop ${drop})` : ''}; VV change ${vvChange ?? 'not read'} dB; thresholds: NDVI drop ${NDVI_DROP_THRESHOLD}, VV drop ${VV_DROP_THRESHOLD_DB} dB`;
  } else {
    verdict = 'no_visual_deforestation';
    reason = `NDVI ${base} in ${BASELINE_YEAR}${newest ? ` and ${newest.ndvi} in ${newest.year} (drop ${drop})` : ', no later year read'}; VV change ${vvChange ?? 'not read'} dB; under both thresholds`;
  }
  return {
    evidence: {
      verdict,
      cells: picked.map((c) => c.cell),
      ndvi_timeline: timeline,
      ndvi_drop: drop,
      ndvi_drop_threshold: NDVI_DROP_THRESHOLD,
      vv_change_db: vvChange,
      vv_drop_threshold_db: VV_DROP_THRESHOLD_DB,
      scene_urls: Object.fromEntries(picked.map((c) => [c.cell, `/v1/cells/${encodeURIComponent(c.cell)}/scene.png`])),
      reason,
    },
    factCids: cids,
  };
}
