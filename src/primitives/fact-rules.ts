/**
 * The band registry's rules for one submitted fact (docs/writes.md): value against the band's
 * kind, dimension, classes and physical range; unit; absence reason; writer level; privacy;
 * derivative parents. Every refusal names the fact index and the field. Nothing here writes,
 * and only resolveParents reads the store. Reads never re-apply these rules: facts stored
 * before a rule existed stay readable as they were signed.
 */
import { isCell } from '../protocol/cell64.js';
import { SvcError, invalidArgument } from '../protocol/errors.js';
import type { BandEntry } from '../registry/registry.js';
import type { AbsenceReason } from '../sources/contract.js';
import type { FactKind } from '../store/contract.js';

/** Protocol level of each kind of writer (spec part 5: writes are L2; the responder's own key is L3). */
export const LEVEL_OF = { responder: 3, device: 2, operator: 2 } as const;
export type AttesterKind = keyof typeof LEVEL_OF;

/** Privacy classes a fact may declare; `restricted` needs a responder or device key at cell resolution. */
export const FACT_PRIVACY_CLASSES = ['public', 'restricted'] as const;

/** Spec 2.3: the typed reasons of an absence. */
export const ABSENCE_REASONS = [
  'unavailable_capability', 'outside_coverage', 'archetype_seed_unavailable', 'gpu_unavailable', 'upstream_error', 'upstream_timeout',
] as const satisfies readonly AbsenceReason[];

/** Parents one derivative may name: bounds the store lookups a single fact can cause. */
export const MAX_PARENTS = 64;
const FACT_CID_RE = /^[a-z2-7]{52}$/;

/** A short rendering of a refused value for a message (vectors can be long). */
function show(v: unknown): string {
  const s = v === undefined ? 'nothing' : JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function levelNumber(level: string): number {
  const m = /^L(\d)$/.exec(level);
  return m ? Number(m[1]) : 0;
}

/** A physically impossible value: outside the band's declared range. */
function outOfRange(field: string, v: number, band: BandEntry): SvcError | undefined {
  const r = band.value_range;
  if (r === undefined) return undefined;
  const [lo, hi] = r;
  if ((lo === null || v >= lo) && (hi === null || v <= hi)) return undefined;
  const span = `[${lo ?? '-inf'}, ${hi ?? 'inf'}]`;
  return new SvcError('invalid_argument', `${field}: ${v} is outside the physically possible range ${span} ${band.unit} of ${band.key}`, {
    field, band: band.key, value_range: [lo, hi],
  });
}

/** `value` of a primary or derivative fact against the band's value_kind (protocol.md §4). */
export function checkValue(at: string, value: unknown, band: BandEntry): void {
  const field = `${at}.value`;
  if (band.value_kind === 'record') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidArgument(field, `${band.key} is a record band: expected a map, got ${show(value)}`);
    return;
  }
  if (band.value_kind === 'scalar') {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidArgument(field, `${band.key} is a scalar band: expected a finite number, got ${show(value)}`);
    const e = outOfRange(field, value, band);
    if (e) throw e;
    return;
  }
  if (band.value_kind === 'vector') {
    const dim = band.dim!;
    if (!Array.isArray(value) || value.length !== dim) {
      throw invalidArgument(field, `${band.key} is a vector band: expected an array of exactly ${dim} numbers, got ${Array.isArray(value) ? `${value.length} items` : show(value)}`);
    }
    // A binary code band (unit `bit`) holds one sign bit per component.
    const bits = band.unit === 'bit';
    for (let j = 0; j < dim; j++) {
      const x = value[j];
      if (bits ? x !== 0 && x !== 1 : typeof x !== 'number' || !Number.isFinite(x)) {
        throw invalidArgument(`${field}[${j}]`, `${band.key} expects ${bits ? '0 or 1' : 'a finite number'} in every component, got ${show(x)}`);
      }
      const e = outOfRange(`${field}[${j}]`, x as number, band);
      if (e) throw e;
    }
    return;
  }
  // Categorical: the class id as the number the materializers sign (point-connector.ts), not its text.
  const classes = band.classes ?? {};
  if (typeof value !== 'number' || !Number.isInteger(value) || !(String(value) in classes)) {
    throw invalidArgument(field, `${band.key} is categorical: expected a class id number, one of ${Object.keys(classes).join(', ')}; got ${show(value)}`);
  }
}

/**
 * Everything about one fact that its band decides: value, unit, absence reason, writer level and
 * privacy. `kind` and `cell` are already checked; the body is never changed (an omitted unit
 * stays omitted: the signed bytes are the attester's).
 */
export function checkAgainstBand(at: string, body: Record<string, unknown>, kind: FactKind, cell: string, band: BandEntry, writer: AttesterKind): void {
  if (levelNumber(band.min_level) > LEVEL_OF[writer]) {
    throw new SvcError('level_too_low', `${at}.band: ${band.key} needs level ${band.min_level} (a ${writer} key is L${LEVEL_OF[writer]})`, { field: `${at}.band`, required: band.min_level });
  }
  // Records (answer steps) live at entity subjects only, so a read of a cell never meets one.
  if (band.value_kind === 'record' && !cell.startsWith('svc:entity:')) {
    throw new SvcError('unaddressable_subject', `${at}.cell: ${band.key} records are filed under an svc:entity: subject, not a cell`, { field: `${at}.cell` });
  }
  if (kind === 'absence') {
    if (body.value !== null) throw invalidArgument(`${at}.value`, 'must be null for an absence');
    const reason = body.absence_reason;
    if (typeof reason !== 'string' || !(ABSENCE_REASONS as readonly string[]).includes(reason)) {
      throw invalidArgument(`${at}.absence_reason`, `an absence needs one of ${ABSENCE_REASONS.join(', ')}; got ${show(reason)}`);
    }
  } else {
    if ('absence_reason' in body) throw invalidArgument(`${at}.absence_reason`, `only an absence carries one (this fact is ${kind})`);
    checkValue(at, body.value, band);
  }
  if ('unit' in body && body.unit !== band.unit) {
    throw invalidArgument(`${at}.unit`, `${band.key} is declared in ${band.unit}; got ${show(body.unit)} (send ${band.unit} or leave unit out)`);
  }
  const declared = body.privacy_class;
  if (declared !== undefined && (typeof declared !== 'string' || !(FACT_PRIVACY_CLASSES as readonly string[]).includes(declared))) {
    throw invalidArgument(`${at}.privacy_class`, `expected one of ${FACT_PRIVACY_CLASSES.join(', ')}`);
  }
  // A fact may be stricter than its band, never laxer.
  if (band.privacy_class === 'restricted' && declared === 'public') {
    throw invalidArgument(`${at}.privacy_class`, `${band.key} is restricted: a fact on it cannot be declared public`);
  }
  const privacy = declared ?? band.privacy_class;
  if (privacy === 'restricted' && writer === 'operator' && isCell(cell)) {
    throw new SvcError('privacy_refused', `${at}.privacy_class: restricted facts at full cell resolution need a responder or device key (or an svc:entity: subject)`, { field: `${at}.privacy_class` });
  }
}

/** The parents a derivative names (`derivation.parents`), shape-checked; resolution comes later. */
export function derivativeParents(at: string, body: Record<string, unknown>): string[] {
  const derivation = body.derivation;
  const field = `${at}.derivation.parents`;
  if (typeof derivation !== 'object' || derivation === null || Array.isArray(derivation)) {
    throw invalidArgument(`${at}.derivation`, 'a derivative needs derivation: {fn, parents: [fact_cid, ...]}');
  }
  const parents = (derivation as Record<string, unknown>).parents;
  if (!Array.isArray(parents) || parents.length === 0 || parents.length > MAX_PARENTS) {
    throw invalidArgument(field, `a derivative names 1 to ${MAX_PARENTS} parent fact_cids; got ${show(parents)}`);
  }
  parents.forEach((p, j) => {
    if (typeof p !== 'string' || !FACT_CID_RE.test(p)) throw invalidArgument(`${field}[${j}]`, `expected a fact_cid (52 base32 characters), got ${show(p)}`);
  });
  return parents as string[];
}

/**
 * Every parent must already be stored here (a parent in the same batch is not yet): a derivative
 * over facts this responder cannot show is not checkable. Unknown → cid_not_found naming the
 * parent's field. Each distinct cid is looked up once per batch.
 */
export async function resolveParents(items: { at: string; parents: string[] }[], exists: (cid: string) => Promise<boolean>): Promise<void> {
  const seen = new Map<string, Promise<boolean>>();
  const lookup = (cid: string) => {
    let p = seen.get(cid);
    if (!p) seen.set(cid, (p = exists(cid)));
    return p;
  };
  const found = await Promise.all(items.map((it) => Promise.all(it.parents.map(lookup))));
  items.forEach((it, i) => {
    const j = found[i].indexOf(false);
    if (j >= 0) {
      const field = `${it.at}.derivation.parents[${j}]`;
      throw new SvcError('cid_not_found', `${field}: no fact is stored here under ${it.parents[j]} (store the parent first)`, { field, fact_cid: it.parents[j] });
    }
  });
}
