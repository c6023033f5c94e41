/**
 * The sentences of an /v1/ask answer (docs/verification.md, "Ask answers: `answer_parts`") as
 * parts: words, and slots that print something from a signed fact or a signed cell. The responder
 * renders `answer` and `answer_md` from the parts with this module and ships the parts as
 * `answer_parts`; a verifier renders them again from the facts the response carries and compares.
 * So every reading (a value with its unit), class code, absence reason, observation date, hotspot
 * line, cell and coordinate pair of an answer is computed from what the receipt binds, while the
 * words between them (titles, the place label, interpretations) are display-only and may not carry
 * a reading of their own.
 */
import { cellCenter, cellOf, isCell } from './cell64.js';
import { formatNumber, formatValue, observedPhrase, readingInText } from './answer-format.js';

export type Slot =
  /** A primary fact's number with its unit in words (`unit`: the band's, only when the body has none). */
  | { reading: string; unit?: string }
  /** A categorical fact's class code. */
  | { code: string }
  /** An embedding fact's dimension count. */
  | { dims: string }
  /** A fact value of another shape, as JSON. */
  | { json: string }
  /** A signed absence's reason. */
  | { absence: string }
  /** When the fact was observed (`tempo`: the band's, for a fact without a capture time). */
  | { observed: string; tempo: string }
  /** A cell the receipt binds. */
  | { cell: string }
  /** Coordinates inside a cell the receipt binds. */
  | { point: [number, number]; cell: string }
  /** A hunt hotspot: rank, cell, its centre and value, from the hotspot's fact. */
  | { hotspot: string; rank: number };

export type Piece = string | Slot;
export type Sentence = Piece[];

export interface AnswerParts {
  lead: Sentence[];
  items: Sentence[];
  notes: Sentence[];
}

export interface AnswerEnv {
  /** A fact the response carries (body with fact_cid), by fact_cid. */
  fact(cid: string): Readonly<Record<string, unknown>> | undefined;
  /** Whether a receipt binds `cell` (verifiers; a responder rendering its own answer omits it). */
  cellBound?(cell: string): boolean;
  /** The fact_cid of the hotspot the response ranks `rank` (verifiers). */
  hotspotAt?(rank: number): string | undefined;
}

export interface Rendered {
  text: string;
  md: string;
  /** What could not be rendered from bound material, each naming its part. */
  errors: string[];
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Why a slot cannot be rendered from what the response binds. */
class SlotError extends Error {}

/** Render one slot (throws SlotError naming what is missing or unbound). */
function renderSlot(s: Record<string, unknown>, env: AnswerEnv): string {
  const factOf = (cid: unknown, want?: 'primary' | 'absence'): Readonly<Record<string, unknown>> => {
    if (typeof cid !== 'string') throw new SlotError('names no fact_cid');
    const f = env.fact(cid);
    if (!f) throw new SlotError(`cites ${cid}, which the response does not carry`);
    if (want && f.kind !== want) throw new SlotError(`cites ${cid}, a ${String(f.kind)} fact, as ${want === 'absence' ? 'an absence' : 'a value'}`);
    return f;
  };
  const bound = (cell: unknown): string => {
    if (!isCell(cell)) throw new SlotError(`${JSON.stringify(cell)} is not a cell`);
    if (env.cellBound && !env.cellBound(cell)) throw new SlotError(`cell ${cell} is not bound by the receipt`);
    return cell;
  };
  if ('reading' in s) {
    const f = factOf(s.reading, 'primary');
    if (typeof f.value !== 'number') throw new SlotError(`cites ${String(s.reading)}, whose value is not a number`);
    const unit = f.unit !== undefined && f.unit !== null ? String(f.unit) : typeof s.unit === 'string' ? s.unit : 'unitless';
    return formatValue(f.value, unit);
  }
  if ('code' in s || 'dims' in s || 'json' in s) {
    const f = factOf(s.code ?? s.dims ?? s.json, 'primary');
    if ('dims' in s) {
      if (!Array.isArray(f.value)) throw new SlotError('cites a fact whose value is not a vector');
      return String(f.value.length);
    }
    if ('code' in s) {
      if (typeof f.value !== 'number' && typeof f.value !== 'string') throw new SlotError('cites a fact whose value is not a class code');
      return String(f.value);
    }
    return JSON.stringify(f.value) ?? 'undefined';
  }
  if ('absence' in s) return String(factOf(s.absence, 'absence').absence_reason ?? 'no reason given').replace(/_/g, ' ');
  if ('observed' in s) return observedPhrase(factOf(s.observed), String(s.tempo));
  if ('point' in s) {
    const c = bound(s.cell);
    const p = s.point;
    if (!Array.isArray(p) || p.length !== 2 || !p.every((x) => typeof x === 'number' && Number.isFinite(x))) throw new SlotError('point: expected [lat, lng]');
    if (cellOf(p[0], p[1]) !== c) throw new SlotError(`${p[0]}, ${p[1]} is not inside cell ${c}`);
    return `${formatNumber(p[0], 'deg')}, ${formatNumber(p[1], 'deg')}`;
  }
  if ('cell' in s) return bound(s.cell);
  if ('hotspot' in s) {
    const f = factOf(s.hotspot, 'primary');
    if (typeof f.value !== 'number' || !isCell(f.cell)) throw new SlotError(`cites ${String(s.hotspot)}, not a value at a cell`);
    if (!Number.isInteger(s.rank)) throw new SlotError('hotspot: rank is not an integer');
    if (env.hotspotAt && env.hotspotAt(s.rank as number) !== s.hotspot) throw new SlotError(`hotspot #${String(s.rank)} is not ${String(s.hotspot)} in the ranked hotspots`);
    const c = cellCenter(f.cell);
    const unit = typeof f.unit === 'string' ? f.unit : undefined;
    return `#${String(s.rank)} cell ${f.cell} (${formatNumber(round6(c.lat), 'deg')}, ${formatNumber(round6(c.lng), 'deg')}): ${formatNumber(f.value, unit ?? 'unitless')}${unit ? ` ${unit}` : ''}`;
  }
  throw new SlotError(`unknown part ${JSON.stringify(Object.keys(s))}`);
}

// Where a slot stands in a sentence's words, when the words alone are checked.
const SLOT = '\u0000';

function renderSentence(s: unknown, path: string, env: AnswerEnv, errors: string[]): string {
  if (!Array.isArray(s)) {
    errors.push(`${path}: expected a list of parts`);
    return '';
  }
  const out = s
    .map((p, i) => {
      if (typeof p === 'string') return p;
      if (!isObj(p)) {
        errors.push(`${path}[${i}]: expected words or a slot`);
        return '';
      }
      try {
        return renderSlot(p, env);
      } catch (e) {
        // A malformed slot (a point off the globe, a cell that does not parse) is reported, not thrown.
        errors.push(`${path}[${i}]: ${(e as Error).message}`);
        return '?';
      }
    })
    .join('');
  // The words alone, slots marked: they must not print a reading of their own, nor a digit or a
  // sign against a slot that would change the number it prints ("-" + "12 metres", "1" + "2").
  const words = s.map((p) => (typeof p === 'string' ? p : SLOT)).join('');
  // Words in double quotes echo the question ("Springfield", "in 2021"): the asker's, not a reading.
  const r = readingInText(words.replace(/"[^"\u0000]*"/g, '""'));
  if (r !== undefined) errors.push(`${path}: the words "${r.replace(SLOT, '…')}" print a reading or a date that no fact stands for`);
  if (/[\d.+\-\u2212]\s*\u0000|\u0000\s*[\d.]/.test(words)) errors.push(`${path}: a digit or a sign in the words touches a slot and would change what it prints`);
  return out;
}

/** The answer text and its markdown, as the responder renders them from `parts`. */
export function renderAnswer(parts: unknown, env: AnswerEnv): Rendered {
  const errors: string[] = [];
  const p = isObj(parts) ? parts : {};
  if (!isObj(parts)) errors.push('answer_parts: expected {lead, items, notes}');
  const list = (k: 'lead' | 'items' | 'notes') => {
    const xs = p[k] ?? [];
    if (!Array.isArray(xs)) {
      errors.push(`answer_parts.${k}: expected a list of sentences`);
      return [];
    }
    return xs.map((s, i) => sentence(renderSentence(s, `answer_parts.${k}[${i}]`, env, errors)));
  };
  const head = list('lead');
  const items = list('items');
  const tail = list('notes');
  const text = [...head, ...items, ...tail].join(' ');
  const md = [...head, ...(items.length ? ['', ...items.map((i) => `- ${i}`)] : []), ...(tail.length ? ['', ...tail] : [])].join('\n');
  return { text, md, errors };
}

const sentence = (s: string) => (/[.!?]$/.test(s) ? s : `${s}.`);
