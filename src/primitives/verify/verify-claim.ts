/**
 * verify (docs/reads.md, "Verifying a claim: `POST /v1/verify`"): decide a structured claim about
 * one band at one cell against signed facts, returning the fact_cids the verdict rests on. A claim
 * that cannot be true or false (NaN, a number against a vector band, a set for a non-set op) is
 * `claim_undecidable`, never a silent false; a claim with no evidence is false with an explanation
 * that says so.
 */
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { Receipt, Scope } from '../../protocol/receipt.js';
import { currentTslot } from '../../protocol/tslot.js';
import type { BandEntry } from '../../registry/registry.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import type { MaterializeNote } from '../context/materialize-note.js';
import { recall, resolveCell } from '../reads/recall.js';
import { isNum, isVec, newestPerTslot, optionalTslot, parseWindow, requireBand, usableValue } from '../reads/common.js';
import { requestScope } from '../scopes/request.js';
import { windowTslots } from '../reads/series.js';

export const CLAIM_OPS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'in', 'ni', 'exists', 'absent'] as const;
export const CLAIM_AGGS = ['any', 'all', 'mean', 'min', 'max'] as const;
export type ClaimOp = (typeof CLAIM_OPS)[number];
export type ClaimAgg = (typeof CLAIM_AGGS)[number];

/** A claim, as the operation's schema admits it (fields, op and agg checked; the value is checked here). */
export interface Claim {
  band: string;
  op: ClaimOp;
  value: unknown;
  tslot?: number;
  window?: readonly number[];
  agg: ClaimAgg;
}

/** A claim to verify, as the operation's schema admits it (mode defaults to fast). */
export interface VerifyRequest {
  claim: Claim;
  cell: string;
  mode: 'fast' | 'resolve';
  scope?: Scope;
}

export interface VerifyResult {
  holds: boolean;
  evidence_cids: string[];
  explanation: string;
  mode: 'fast' | 'resolve';
  materialize_notes: MaterializeNote[];
  receipt: Receipt;
}

const undecidable = (why: string, details: Record<string, unknown> = {}) => new SvcError('claim_undecidable', `claim: ${why}`, { field: 'claim.value', ...details });

/** Normalise a class id (number or decimal text) for categorical comparison. */
function classId(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string' && /^(?:0|[1-9][0-9]*)$/.test(v)) return v;
  return undefined;
}

function describe(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return JSON.stringify(v)?.slice(0, 80) ?? String(v);
}

/** Type-check the claim value against the band (claim_undecidable on mismatch). */
function checkValue(band: BandEntry, op: ClaimOp, v: unknown, agg: ClaimAgg): void {
  if (op === 'exists' || op === 'absent') return;
  const one = (x: unknown, at: string) => {
    if (typeof x === 'number' && !Number.isFinite(x)) throw undecidable(`${at} is ${describe(x)}: NaN and infinities compare with nothing`);
    if (typeof x === 'string' && !Number.isFinite(Number(x)) && band.value_kind !== 'categorical') throw undecidable(`${at} ${describe(x)} is not a number (band ${band.key} is ${band.value_kind})`);
    if (band.value_kind === 'vector') {
      if (!isVec(x, band.dim)) throw undecidable(`${at} ${describe(x)} is not a ${band.dim}-element vector; band ${band.key} holds vectors`, { value_kind: 'vector', dim: band.dim });
    } else if (band.value_kind === 'categorical') {
      if (classId(x) === undefined) throw undecidable(`${at} ${describe(x)} is not a class id of categorical band ${band.key}`);
    } else if (!isNum(x)) {
      throw undecidable(`${at} ${describe(x)} is not a number; band ${band.key} is scalar`, { value_kind: 'scalar' });
    }
  };
  if (op === 'in' || op === 'ni') {
    if (!Array.isArray(v) || v.length === 0) throw undecidable(`op ${op} needs a non-empty set (array) as value, got ${describe(v)}`);
    v.forEach((x, i) => one(x, `value[${i}]`));
  } else {
    // A vector value is itself an array; for scalar bands an array can only be a set.
    if (Array.isArray(v) && band.value_kind !== 'vector') throw undecidable(`a set value is only for in/ni (op is ${op})`);
    one(v, 'value');
  }
  if ((op === 'lt' || op === 'le' || op === 'gt' || op === 'ge') && band.value_kind !== 'scalar') {
    throw undecidable(`${op} orders numbers; band ${band.key} is ${band.value_kind}`);
  }
  if ((agg === 'mean' || agg === 'min' || agg === 'max') && band.value_kind !== 'scalar') {
    throw undecidable(`agg ${agg} needs a scalar band; ${band.key} is ${band.value_kind}`);
  }
}

function equal(band: BandEntry, a: number | number[], b: unknown): boolean {
  if (band.value_kind === 'categorical') return classId(a) === classId(b);
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => x === b[i]);
  return a === Number(b);
}

function test(band: BandEntry, op: ClaimOp, a: number | number[], v: unknown): boolean {
  switch (op) {
    case 'eq':
      return equal(band, a, v);
    case 'ne':
      return !equal(band, a, v);
    case 'lt':
      return (a as number) < (v as number);
    case 'le':
      return (a as number) <= (v as number);
    case 'gt':
      return (a as number) > (v as number);
    case 'ge':
      return (a as number) >= (v as number);
    case 'in':
      return (v as unknown[]).some((x) => equal(band, a, x));
    case 'ni':
      return !(v as unknown[]).some((x) => equal(band, a, x));
    default:
      return false;
  }
}

function valueOf(band: BandEntry, f: StoredFact): number | number[] {
  const v = band.value_kind === 'categorical' ? (classId(f.body.value) !== undefined ? Number(f.body.value) : undefined) : usableValue(f, band);
  if (v === undefined)
    throw new SvcError('claim_undecidable', `claim: the stored value of ${f.fact_cid} does not have band ${band.key}'s ${band.value_kind} shape`, { field: 'claim.band', fact_cid: f.fact_cid });
  return v;
}

/** Check the claim against the registry (tslot xor window → invalid_argument; semantics → claim_undecidable). */
function parseClaim(ctx: ServiceContext, c: Claim) {
  const band = requireBand(ctx, c.band, 'claim.band');
  if ((c.tslot === undefined) === (c.window === undefined)) throw invalidArgument(c.tslot === undefined ? 'claim.tslot' : 'claim.window', 'exactly one of tslot or window must be set');
  const tslot = optionalTslot(ctx, c.tslot, band, 'claim.tslot');
  const window = c.window === undefined ? undefined : parseWindow(c.window, 'claim.window');
  const { op, agg } = c;
  checkValue(band, op, c.value, agg);
  return { band, op, value: c.value, tslot, window, agg };
}

/** Decide a claim at a cell; `resolve` may materialize the current slot through recall, `fast` reads stored facts only. */
export async function verifyClaim(ctx: ServiceContext, req: VerifyRequest, opts: { deadline?: number } = {}): Promise<VerifyResult> {
  const claim = parseClaim(ctx, req.claim);
  const mode = req.mode;
  const { cell } = await resolveCell(ctx, req.cell, 'cell');
  const scope = requestScope(req.scope);
  const { band, op, value, agg } = claim;
  const range: [number, number] = claim.tslot !== undefined ? [claim.tslot, claim.tslot] : windowTslots(band, claim.window!);
  const read = async () => newestPerTslot(await ctx.store.history({ cell, bands: [band.key], tslot_from: range[0], tslot_to: range[1], scope: scope ?? null, limit: ctx.config.scanCellLimit }));

  let evidence = await read();
  const notes: MaterializeNote[] = [];
  if (mode === 'resolve' && !evidence.some((f) => f.kind !== 'absence')) {
    // Only a slot an upstream can answer now is fetched: the named tslot, or the current one in a window.
    const now = band.tempo === 'static' ? 0 : currentTslot(band.tempo, ctx.now().getTime());
    const target = claim.tslot ?? (now >= range[0] && now <= range[1] ? now : undefined);
    if (target !== undefined) {
      const r = await recall(ctx, { cell, bands: [band.key], tslot: target, scope }, { primitive: 'verify', deadline: opts.deadline });
      notes.push(...r.materialize_notes);
      evidence = await read();
    }
  }

  const where = claim.tslot !== undefined ? `tslot ${claim.tslot}` : `window [${claim.window![0]}, ${claim.window![1]}] (tslots ${range[0]}..${range[1]})`;
  const primaries = evidence.filter((f) => f.kind !== 'absence');
  const absences = evidence.filter((f) => f.kind === 'absence');
  let holds: boolean;
  let cited: StoredFact[];
  let explanation: string;
  if (op === 'exists' || op === 'absent') {
    const exists = agg === 'all' ? evidence.length > 0 && absences.length === 0 : primaries.length > 0;
    holds = op === 'exists' ? exists : !exists;
    cited = exists ? primaries : absences;
    explanation = exists
      ? `${primaries.length} primary fact(s) for ${band.key} at ${where}.`
      : absences.length > 0
        ? `No primary fact for ${band.key} at ${where}; ${absences.length} signed absence(s) say no data exists.`
        : `No fact for ${band.key} is stored at ${where}${mode === 'fast' ? ' (fast mode reads stored facts only)' : ''}.`;
  } else if (primaries.length === 0) {
    holds = false;
    cited = absences;
    explanation = `No evidence: no primary fact for ${band.key} at ${where}${absences.length > 0 ? ` (${absences.length} signed absence(s))` : ''}${mode === 'fast' ? '; fast mode reads stored facts only, resolve may materialize the current slot' : ''}.`;
  } else {
    const vals = primaries.map((f) => valueOf(band, f));
    if (agg === 'mean' || agg === 'min' || agg === 'max') {
      const xs = vals as number[];
      const a = agg === 'mean' ? xs.reduce((s, x) => s + x, 0) / xs.length : agg === 'min' ? Math.min(...xs) : Math.max(...xs);
      holds = test(band, op, a, value);
      cited = primaries;
      explanation = `${agg} of ${xs.length} value(s) at ${where} is ${a}; ${op} ${describe(value)} is ${holds}.`;
    } else {
      const ok = vals.map((v) => test(band, op, v, value));
      holds = agg === 'all' ? ok.every(Boolean) : ok.some(Boolean);
      cited = agg === 'any' && holds ? primaries.filter((_, i) => ok[i]) : primaries;
      const n = ok.filter(Boolean).length;
      explanation = `${n} of ${ok.length} stored value(s) at ${where} satisfy ${op} ${describe(value)}; agg ${agg} → ${holds}.`;
    }
  }
  const evidence_cids = cited.map((f) => f.fact_cid);
  const receipt = issueReceipt(ctx, 'verify', [cell], evidence_cids, { scope, merkle_proof: cited[0]?.proof, cost: { credits: 0, was_cached: false } });
  return { holds, evidence_cids, explanation, mode, materialize_notes: notes, receipt };
}
