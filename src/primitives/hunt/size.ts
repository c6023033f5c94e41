/**
 * The non-verbose hunt reply (docs/hunt.md, "Size"): what a model needs — the hotspots with their
 * signed fact bodies, the algorithm and threshold, the counts per status, the receipt and every
 * fact_cid it binds — under HUNT_REPLY_CAP_BYTES. The per-cell detail (samples[], every
 * materialize note, the region's boundary polygon) is behind verbose: true. The receipt is the
 * one the verbose reply carries, and every fact_cid it binds is still shown (the hotspots', then
 * `fact_cids`), so the reply verifies offline exactly as the verbose one does. Like ask's
 * size.ts: the always-on trims first, then cuts one by one while over the cap, each named in
 * `trimmed`; signed material is never cut.
 */
import type { MaterializeNote } from '../context/materialize-note.js';
import type { Hotspot, HuntResult } from './hunt.js';

/** The cap of a non-verbose hunt reply, in bytes of JSON. */
export const HUNT_REPLY_CAP_BYTES = 16_000;
/** Materialize notes a non-verbose reply keeps (failures only; summary counts every sample). */
const NOTES_KEPT = 8;
const CAVEATS_KEPT = 3;
/** Hotspots that keep their fact body whatever the size (the rest may move to more_hotspots). */
const HOTSPOTS_KEPT = 3;

/** A hotspot without its fact body: shown and bound by the receipt, its value not checkable offline here. */
export type BareHotspot = Pick<Hotspot, 'rank' | 'cell64' | 'lat' | 'lng' | 'value' | 'unit' | 'fact_cid'>;

export interface CompactHuntResult extends Omit<HuntResult, 'samples' | 'hotspots'> {
  hotspots: Array<Omit<Hotspot, 'scene_png' | 'gate'> & { scene_png?: string; gate?: Partial<NonNullable<Hotspot['gate']>> | null }>;
  /** Set when the cap moved the lowest-ranked hotspots here, without their fact bodies. */
  more_hotspots?: BareHotspot[];
  /** Every fact_cid the receipt binds that the reply shows nowhere else (sample values, signed absences, gate readings). */
  fact_cids: string[];
  /** What was left out (verbose: true has it). */
  trimmed: string[];
}

function sizeOf(r: unknown): number {
  return Buffer.byteLength(JSON.stringify(r));
}

/** A note worth showing without samples[]: anything but a successful fetch (whose fact is cited). */
const failed = (n: MaterializeNote) => !(n.status === 'materialized' && n.ok);

/** The bound fact_cids the hotspots do not show (hotspot values, their gate readings, the moved ones). */
function unshown(r: CompactHuntResult): string[] {
  const shown = new Set<string>();
  for (const h of r.hotspots) {
    shown.add(h.fact_cid);
    if (h.gate?.fact_cid) shown.add(h.gate.fact_cid);
  }
  for (const h of r.more_hotspots ?? []) shown.add(h.fact_cid);
  return r.receipt.fact_cids.filter((c) => !shown.has(c));
}

export function fitHuntReply(full: HuntResult): CompactHuntResult {
  const { samples: _samples, region, hotspots, ...rest } = full;
  const trimmed: string[] = [];
  const notes = full.materialize_notes.filter(failed);
  const r: CompactHuntResult = {
    ...rest,
    region: { ...region },
    hotspots: hotspots.map((h) => ({ ...h })),
    fact_cids: [],
    materialize_notes: notes.slice(0, NOTES_KEPT),
    trimmed,
  };
  r.fact_cids = unshown(r);
  trimmed.push('samples (summary counts them; their fact_cids are in fact_cids)');
  if (notes.length < full.materialize_notes.length || notes.length > NOTES_KEPT) {
    trimmed.push(notes.length > NOTES_KEPT ? `materialize_notes: fetches that succeeded, and failures beyond ${NOTES_KEPT}` : 'materialize_notes: fetches that succeeded');
  }
  if (r.region.polygon_geojson) {
    delete r.region.polygon_geojson;
    trimmed.push('region.polygon_geojson');
  }
  /** Each cut says whether it changed anything (only those are named in trimmed). */
  const cuts: Array<[string, (x: CompactHuntResult) => boolean]> = [
    [
      'materialize_notes emptied',
      (x) => {
        const had = x.materialize_notes.length > 0;
        x.materialize_notes = [];
        return had;
      },
    ],
    [
      'hotspots[].scene_png (GET /v1/cells/<cell64>/scene.png)',
      (x) => {
        for (const h of x.hotspots) delete h.scene_png;
        return x.hotspots.length > 0;
      },
    ],
    [
      'hotspots[].gate band and rule (see algorithm)',
      (x) => {
        let changed = false;
        for (const h of x.hotspots) {
          if (h.gate) {
            const { band: _b, rule: _r, ...g } = h.gate;
            h.gate = g;
            changed = true;
          }
        }
        return changed;
      },
    ],
    [
      `caveats beyond ${CAVEATS_KEPT}`,
      (x) => {
        const had = x.caveats.length > CAVEATS_KEPT;
        x.caveats = x.caveats.slice(0, CAVEATS_KEPT);
        return had;
      },
    ],
  ];
  for (const [what, cut] of cuts) {
    if (sizeOf(r) <= HUNT_REPLY_CAP_BYTES) break;
    if (cut(r)) trimmed.push(what);
  }
  // Last: the lowest-ranked hotspots give up their fact bodies, one at a time. They stay listed,
  // in rank order, and bound (the receipt binds the hotspots first in rank order, so the ones
  // kept whole still verify with their order).
  let moved = 0;
  while (sizeOf(r) > HUNT_REPLY_CAP_BYTES && r.hotspots.length > HOTSPOTS_KEPT) {
    const h = r.hotspots.pop()!;
    const bare: BareHotspot = { rank: h.rank, cell64: h.cell64, lat: h.lat, lng: h.lng, value: h.value, ...(h.unit !== undefined ? { unit: h.unit } : {}), fact_cid: h.fact_cid };
    r.more_hotspots = [bare, ...(r.more_hotspots ?? [])];
    r.fact_cids = unshown(r);
    moved++;
  }
  if (moved > 0) {
    trimmed.push(`hotspots ranked ${r.hotspots.length + 1} to ${r.hotspots.length + moved}: in more_hotspots, without their fact bodies`);
  }
  if (sizeOf(r) > HUNT_REPLY_CAP_BYTES) trimmed.push(`still over ${HUNT_REPLY_CAP_BYTES} bytes: the top hotspots' signed facts, the receipt and its fact_cids are never cut`);
  trimmed.push('verbose: true gives all of it');
  return r;
}
