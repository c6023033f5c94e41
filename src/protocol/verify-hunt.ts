/**
 * Hunt hotspots (POST /v1/hunt, and the `hunt` block of an ask answer): each hotspot shows a
 * rank, a cell, its centre and a value, and carries the body of the fact the value comes from;
 * the receipt lists the hotspots' fact_cids first, in rank order. Checked here: each hotspot
 * against its fact (same fact_cid, cell, centre, value and unit), the hotspots' band is the one
 * a hunt event ranks on, and their order follows that event's direction (ties on cell64), as
 * the receipt's order also says.
 */
import { cellCenter, isCell } from './cell64.js';
import { compareRanked, HUNT_RANKING, rankOfBand, type Ranked } from './hunt-ranking.js';
import { fail, isObject, newCheck, type CheckInput, type CheckReport } from './response-checks.js';

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

export function checkHotspots(x: CheckInput): CheckReport {
  const r = newCheck('hotspots', `${x.path}.hotspots`);
  const hotspots = x.node.hotspots as unknown[];
  const bound = x.receipt && Array.isArray(x.receipt.fact_cids) ? (x.receipt.fact_cids as unknown[]) : undefined;
  if (!bound) {
    if (hotspots.length > 0) fail(r, 'rank_mismatch', `${r.path}: no valid receipt covers the hotspots, so neither they nor their order are bound`);
    return r;
  }
  const ranked: (Ranked & { band: unknown })[] = [];
  hotspots.forEach((h, i) => {
    const p = `${r.path}[${i}]`;
    if (!isObject(h)) return fail(r, 'hotspot_mismatch', `${p}: not a hotspot object`);
    if (h.rank !== i + 1) fail(r, 'rank_mismatch', `${p}: shows rank ${JSON.stringify(h.rank)} in position ${i + 1}`);
    if (bound[i] !== h.fact_cid) fail(r, 'rank_mismatch', `${p}: the receipt binds the hotspots first, in rank order; #${i + 1} there is ${String(bound[i])}, not ${String(h.fact_cid)}`);
    const f = isObject(h.fact) && h.fact.fact_cid === h.fact_cid ? x.facts.get(h.fact_cid as string) : undefined;
    if (!f) return fail(r, 'hotspot_mismatch', `${p}: carries no fact body that recomputes to ${String(h.fact_cid)}`);
    if (f.kind !== 'primary' || typeof f.value !== 'number' || !isCell(f.cell)) return fail(r, 'hotspot_mismatch', `${p}: its fact is not a number at a cell`);
    if (h.value !== f.value) fail(r, 'hotspot_mismatch', `${p}: value ${JSON.stringify(h.value)} differs from the signed ${f.value}`);
    if (h.cell64 !== f.cell) fail(r, 'hotspot_mismatch', `${p}: cell64 ${String(h.cell64)} differs from the signed ${f.cell}`);
    if ('unit' in h && h.unit !== f.unit) fail(r, 'hotspot_mismatch', `${p}: unit ${JSON.stringify(h.unit)} differs from the signed ${JSON.stringify(f.unit)}`);
    const c = cellCenter(f.cell);
    if (('lat' in h && h.lat !== round6(c.lat)) || ('lng' in h && h.lng !== round6(c.lng))) {
      fail(r, 'hotspot_mismatch', `${p}: ${String(h.lat)}, ${String(h.lng)} is not the centre ${round6(c.lat)}, ${round6(c.lng)} of its cell`);
    }
    ranked.push({ cell64: f.cell, value: f.value, band: f.band });
  });
  if (ranked.length === 0) return r;
  const band = ranked[0].band;
  if (ranked.some((h) => h.band !== band)) return failR(r, 'hotspot_mismatch', `${r.path}: the hotspots' facts are of different bands`);
  const dir = typeof band === 'string' ? rankOfBand(band) : undefined;
  if (!dir) return failR(r, 'hotspot_mismatch', `${r.path}: no hunt event ranks on ${String(band)}, so the order cannot be checked`);
  const ev = typeof x.node.event === 'string' ? HUNT_RANKING[x.node.event] : undefined;
  if (ev && ev.band !== band) fail(r, 'hotspot_mismatch', `${r.path}: event ${String(x.node.event)} ranks on ${ev.band}, the hotspots are ${String(band)} facts`);
  const primary = isObject(x.node.algorithm) ? x.node.algorithm.primary_band : undefined;
  if (primary !== undefined && primary !== band) fail(r, 'hotspot_mismatch', `${r.path}: algorithm.primary_band ${String(primary)} is not the hotspots' band ${String(band)}`);
  for (let i = 0; i + 1 < ranked.length; i++) {
    if (compareRanked(ranked[i], ranked[i + 1], dir) > 0) {
      fail(r, 'rank_mismatch', `${r.path}[${i + 1}]: ${ranked[i + 1].value} at ${ranked[i + 1].cell64} ranks before ${ranked[i].value} (${dir} by ${String(band)}), yet is shown after it`);
    }
  }
  const cells = x.receipt && Array.isArray(x.receipt.cells) ? x.receipt.cells.length : undefined;
  if (typeof x.node.cells_sampled === 'number' && cells !== undefined && x.node.cells_sampled !== cells) {
    fail(r, 'hotspot_mismatch', `${x.path}.cells_sampled: ${x.node.cells_sampled} cells shown as sampled, the receipt binds ${cells}`);
  }
  return r;
}

function failR(r: CheckReport, f: 'hotspot_mismatch', msg: string): CheckReport {
  fail(r, f, msg);
  return r;
}
