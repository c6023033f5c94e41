/**
 * Sentinel-1 VV change (band `s1.vv_change_db`, function `sar_change_db@1`, source
 * planetary_computer_s1): the latest RTC scene of the cell in the requested tslot, picked as
 * `s1.vv_db` picks it, then the scenes of the same relative orbit (`sat:relative_orbit`) in the
 * 90 days before it, from one STAC search (query extension on the orbit, filtered again here),
 * at most MAX_REFERENCE_READS of them read, newest first. value = VV dB of the latest scene −
 * median VV dB of the valid reference scenes, rounded to 0.01 dB (negative = darkening).
 */
import type { MaterializeOutcome, MaterializeRequest, ConnectorFactory } from './contract.js';
import { float32Text, isoSecond, round } from './cog/outcome.js';
import { notBegun } from './stac-search.js';
import { COLLECTION, SOURCE, sentinel1Core, sentinel1Materializer } from './sentinel1.js';
import { tslotOf } from '../protocol/tslot.js';

const BAND = 's1.vv_change_db';
const REFERENCE_DAYS = 90;
/** Reference scenes read at most (newest first); a cap on upstream reads per fact. */
export const MAX_REFERENCE_READS = 8;
const DAY_MS = 86_400_000;

/** Median of a non-empty list (mean of the two middle values for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const db = (linear: number) => 10 * Math.log10(linear);

/** Connector for `s1.vv_change_db`. */
export const sentinel1ChangeConnector: ConnectorFactory = (deps) => {
  const core = sentinel1Core(deps);

  async function run(req: MaterializeRequest): Promise<MaterializeOutcome> {
    const fn = req.band.function;
    if (req.band.key !== BAND) return { status: 'error', reason: `internal: ${req.band.key} is not the band of the Sentinel-1 change connector` };
    const future = notBegun(req.tslot, req.band.tempo);
    if (future) return { status: 'error', reason: future };
    const chosen = await core.pickFor(req);
    if ('absence' in chosen) return { status: 'absence', reason: chosen.absence, detail: chosen.detail, provenance: { source: SOURCE, ref: chosen.ref }, fn };
    const { item, values } = chosen.pick;
    const capturedMs = Date.parse(item.properties.datetime);
    const provenance = { source: SOURCE, ref: item.id, captured_at: isoSecond(capturedMs), version: COLLECTION };
    const tslot = tslotOf(Math.floor(capturedMs / 1000), req.band.tempo);
    const absent = (detail: string): MaterializeOutcome => ({ status: 'absence', reason: 'unavailable_capability', detail, provenance, fn, tslot });
    const v = values.vv;
    if (v.kind !== 'value') return absent(`VV is ${v.kind === 'outside' ? 'not in' : 'nodata in'} the latest scene ${item.id} at the pixel`);
    if (!(v.value > 0)) return absent(`linear VV backscatter ${v.value} ≤ 0 in the latest scene has no dB value`);
    const orbit = item.properties['sat:relative_orbit'];
    if (typeof orbit !== 'number' || !Number.isInteger(orbit)) return absent(`latest scene ${item.id} has no sat:relative_orbit`);

    // Same relative orbit, strictly before the latest scene, within 90 days.
    const found = await core.search(req, capturedMs - REFERENCE_DAYS * DAY_MS, capturedMs - 1, 100, { 'sat:relative_orbit': { eq: orbit } });
    const refs = found.filter((it) => it.id !== item.id && it.properties['sat:relative_orbit'] === orbit && Date.parse(it.properties.datetime) < capturedMs).slice(0, MAX_REFERENCE_READS);
    const reads = await Promise.all(refs.map(async (it) => ({ it, r: await core.readPol(req, it, 'vv') })));
    const valid = reads.flatMap(({ it, r }) => (r.kind === 'value' && r.value > 0 ? [{ id: it.id, db: db(r.value) }] : []));
    if (valid.length === 0) {
      return absent(`no valid VV at the pixel in ${refs.length} earlier scene(s) of relative orbit ${orbit} in the ${REFERENCE_DAYS} days before ${item.id}`);
    }
    const latestDb = db(v.value);
    const medianDb = median(valid.map((x) => x.db));
    return {
      status: 'value',
      value: round(latestDb - medianDb, 2),
      provenance,
      fn,
      tslot,
      args: {
        latest_item: item.id,
        reference_items: valid.map((x) => x.id),
        n_reference: valid.length,
        median_db: round(medianDb, 4),
        latest_db: round(latestDb, 4),
        relative_orbit: orbit,
        latest_linear: float32Text(v.value),
        pixel: [v.col, v.row],
        epsg: v.epsg,
        reference_days: REFERENCE_DAYS,
        max_reference_reads: MAX_REFERENCE_READS,
        reference_scenes_read: refs.length,
      },
    };
  }

  return sentinel1Materializer(core, [BAND], run);
};
