/**
 * One sampled cell's recall, read as a hunt sample: the primary value (or why there is none:
 * a signed absence, a timeout, an upstream error, no connector) and the gate's verdict. A
 * missing value is always reported as such and never as a zero.
 */
import { cellCenter } from '../../protocol/cell64.js';
import type { ServedFact } from '../facts/facts-view.js';
import type { MaterializeNote } from '../context/materialize-note.js';
import type { RecallResult } from '../reads/recall.js';
import type { Gate, GateResult } from './gates.js';

export type SampleStatus = 'candidate' | 'below_threshold' | 'gate_failed' | 'gate_unknown' | 'absence' | 'timeout' | 'upstream_error' | 'no_materializer' | 'no_data' | 'error';

export interface PrimaryReading {
  band: string;
  value?: number;
  unit?: string;
  fact_cid?: string;
  absence_reason?: string;
}

export interface SampleReport {
  cell64: string;
  lat: number;
  lng: number;
  status: SampleStatus;
  primary: PrimaryReading;
  gate?: GateResult;
  reason?: string;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

function factOf(r: RecallResult, band: string): ServedFact | undefined {
  return r.facts.find((f) => f.band === band);
}

function noteOf(r: RecallResult, band: string): MaterializeNote | undefined {
  return r.materialize_notes.find((n) => n.band === band);
}

/** Why a band has no fact at this cell, as a status and the note's words. */
function missing(r: RecallResult, band: string): { status: SampleStatus; reason: string } {
  const n = noteOf(r, band);
  if (!n) return { status: 'no_data', reason: `no ${band} fact is stored here and none was fetched` };
  const status: SampleStatus = n.reason_class === 'timeout' ? 'timeout' : n.reason_class === 'no_materializer' ? 'no_materializer' : n.reason_class === 'upstream_error' ? 'upstream_error' : 'no_data';
  return { status, reason: `${band}: ${n.reason}` };
}

function gateOf(r: RecallResult, gate: Gate): GateResult {
  const f = factOf(r, gate.band);
  const base = { band: gate.band, rule: gate.rule };
  if (!f) return { ...base, status: 'unknown', reason: missing(r, gate.band).reason };
  if (f.kind !== 'primary' || typeof f.value !== 'number') {
    return { ...base, status: 'unknown', reason: `${gate.band}: signed absence (${String(f.absence_reason ?? 'no data')})`, fact_cid: f.fact_cid };
  }
  return { ...base, status: gate.test(f.value) ? 'pass' : 'fail', value: f.value, fact_cid: f.fact_cid };
}

/** The sample report of one cell from its recall over [primary, gate band]. */
export function readSample(cell: string, r: RecallResult, primaryBand: string, gate: Gate | undefined): SampleReport {
  const c = cellCenter(cell);
  const out: SampleReport = { cell64: cell, lat: round6(c.lat), lng: round6(c.lng), status: 'candidate', primary: { band: primaryBand } };
  if (gate) out.gate = gateOf(r, gate);
  const f = factOf(r, primaryBand);
  if (!f) {
    const m = missing(r, primaryBand);
    return { ...out, status: m.status, reason: m.reason };
  }
  out.primary.fact_cid = f.fact_cid;
  if (f.kind !== 'primary' || typeof f.value !== 'number') {
    out.primary.absence_reason = String(f.absence_reason ?? 'no data');
    return { ...out, status: 'absence', reason: `${primaryBand}: signed absence (${out.primary.absence_reason})` };
  }
  out.primary.value = f.value;
  out.primary.unit = typeof f.unit === 'string' ? f.unit : undefined;
  // The gate only ever drops a cell: a failing or unreadable gate keeps the value visible but out of the ranking.
  if (out.gate?.status === 'fail') return { ...out, status: 'gate_failed', reason: `gate failed: ${out.gate.rule} (${out.gate.band} = ${out.gate.value})` };
  if (out.gate?.status === 'unknown') return { ...out, status: 'gate_unknown', reason: `gate not decidable: ${out.gate.reason}` };
  return out;
}

/** A cell whose recall threw (reported, never dropped silently). */
export function failedSample(cell: string, primaryBand: string, err: unknown): SampleReport {
  const c = cellCenter(cell);
  return { cell64: cell, lat: round6(c.lat), lng: round6(c.lng), status: 'error', primary: { band: primaryBand }, reason: (err as Error)?.message ?? String(err) };
}
