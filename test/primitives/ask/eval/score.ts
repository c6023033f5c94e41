/**
 * Scoring of the /v1/ask routing evaluation set (set.json beside this file), shared by its test and
 * `npm run bench ask-eval`. Every item is read offline (time, place words, topic routing: no store,
 * no network) and scored three ways: the top-1 topic, the place the question names, and, for
 * out-of-scope items, whether the router refused. The set is split once, by a hash of each question,
 * into a tuning half and a held-out half; only the tuning half's misses are ever listed.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { normalizeName } from '../../../../src/geo/normalize.js';
import type { Registry } from '../../../../src/registry/registry.js';
import { understand, type Understanding } from '../../../../src/primitives/ask/understand.js';

export type Split = 'tuning' | 'held_out';

export interface EvalItem {
  q: string;
  /** A topic key, or `out_of_scope`. */
  topic: string;
  place: string | null;
  persona: string;
  kind: string;
  /** Composite questions: the other topics a full answer draws on. */
  also?: string[];
  split: Split;
}

export const OUT_OF_SCOPE = 'out_of_scope';

/** The half a question belongs to: the first byte of the SHA-256 of its UTF-8 text, below 128 → tuning. */
export function splitOf(q: string): Split {
  return createHash('sha256').update(q, 'utf8').digest()[0] < 128 ? 'tuning' : 'held_out';
}

export function loadSet(): EvalItem[] {
  const { items } = JSON.parse(readFileSync(new URL('./set.json', import.meta.url), 'utf8')) as { items: EvalItem[] };
  return items;
}

export interface ItemResult {
  item: EvalItem;
  /** The routed topic (null: refused or no topic). */
  got: string | null;
  refused: boolean;
  topicOk: boolean;
  /** Null for out-of-scope items (their place is not scored). */
  placeOk: boolean | null;
  /** What the place reading found: a gazetteer label, the words passed on to locate, a point or a cell. */
  placeGot: string | null;
  /** Composite items: how many of the `also` topics the routing lists (matched topics, or the composite frame's topics). */
  alsoRanked?: number;
}

/** The place a reading found, as text to compare: the gazetteer label, else the unresolved words. */
function placeFound(u: Understanding): { label: string | null; text: string | null } {
  const p = u.extraction.place;
  if (p?.kind === 'name') return { label: p.match?.selected.label ?? null, text: p.text };
  if (p) return { label: `@${p.kind}`, text: null };
  return { label: null, text: u.extraction.unknown ?? null };
}

/**
 * A named place is found when the label (or the words passed on to locate) starts with the expected
 * name, or the words read as the place are exactly it ("Köln" for "Cologne" is a miss unless the
 * question says "Köln"); case, accents and punctuation folded. No place expected: none may be found.
 */
export function placeMatches(expected: string | null, found: { label: string | null; text: string | null }): boolean {
  if (expected === null) return found.label === null && found.text === null;
  const e = normalizeName(expected);
  const label = found.label ? normalizeName(found.label) : '';
  const text = found.text ? normalizeName(found.text) : '';
  return (label !== '' && label.startsWith(e)) || text === e || (label === '' && text.startsWith(e));
}

export function scoreItem(reg: Registry, item: EvalItem, now: Date): ItemResult {
  const u = understand(reg, item.q, now);
  const r = u.routing;
  const refused = r.out_of_scope;
  const got = refused ? null : r.topic;
  const found = placeFound(u);
  const res: ItemResult = {
    item,
    got,
    refused,
    topicOk: item.topic === OUT_OF_SCOPE ? refused : got === item.topic,
    placeOk: item.topic === OUT_OF_SCOPE ? null : placeMatches(item.place, found),
    placeGot: found.label ?? found.text,
  };
  if (item.also) res.alsoRanked = item.also.filter((t) => r.matched_topics.includes(t) || r.composite?.topics.includes(t) === true).length;
  return res;
}

export interface HalfSummary {
  n: number;
  in_scope: number;
  out_of_scope: number;
  /** In-scope items routed to the expected top-1 topic. */
  topic_accuracy: number;
  /** In-scope items whose named place (or its absence) was read right. */
  place_accuracy: number;
  /** Out-of-scope items refused. */
  out_of_scope_refusal: number;
  /** In-scope items wrongly refused. */
  false_refusals: number;
  /** Topic accuracy by kind (topic, family:…, composite). */
  by_kind: Record<string, { n: number; topic_accuracy: number }>;
  /** Composite items: the share of their `also` topics the routing lists (matched topics or the composite frame's). */
  composite_also_ranked: number | null;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const share = (k: number, n: number) => (n === 0 ? 1 : r3(k / n));

export function summarize(results: readonly ItemResult[]): HalfSummary {
  const inScope = results.filter((x) => x.item.topic !== OUT_OF_SCOPE);
  const oos = results.filter((x) => x.item.topic === OUT_OF_SCOPE);
  const kinds = new Map<string, ItemResult[]>();
  for (const x of inScope) {
    const k = x.item.kind.startsWith('family:') ? 'family' : x.item.kind;
    for (const key of new Set([k, x.item.kind])) kinds.set(key, [...(kinds.get(key) ?? []), x]);
  }
  const composites = inScope.filter((x) => x.item.also);
  const alsoTotal = composites.reduce((s, x) => s + x.item.also!.length, 0);
  return {
    n: results.length,
    in_scope: inScope.length,
    out_of_scope: oos.length,
    topic_accuracy: share(inScope.filter((x) => x.topicOk).length, inScope.length),
    place_accuracy: share(inScope.filter((x) => x.placeOk).length, inScope.length),
    out_of_scope_refusal: share(oos.filter((x) => x.refused).length, oos.length),
    false_refusals: inScope.filter((x) => x.refused).length,
    by_kind: Object.fromEntries(
      [...kinds.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, xs]) => [k, { n: xs.length, topic_accuracy: share(xs.filter((x) => x.topicOk).length, xs.length) }]),
    ),
    composite_also_ranked: composites.length
      ? share(
          composites.reduce((s, x) => s + (x.alsoRanked ?? 0), 0),
          alsoTotal,
        )
      : null,
  };
}

/** A held-out summary: by kind only as topic, family and composite (a breakdown per family would name single items). */
export function coarse(s: HalfSummary): HalfSummary {
  return { ...s, by_kind: Object.fromEntries(Object.entries(s.by_kind).filter(([k]) => !k.startsWith('family:'))) };
}

/** The misses of a half, for tuning only: topic misses with their confusion pairs, and place misses. */
export function misses(results: readonly ItemResult[]) {
  const topic = results.filter((x) => !x.topicOk).map((x) => ({ q: x.item.q, expected: x.item.topic, got: x.got ?? OUT_OF_SCOPE }));
  const pairs = new Map<string, number>();
  for (const m of topic) pairs.set(`${m.expected} → ${m.got}`, (pairs.get(`${m.expected} → ${m.got}`) ?? 0) + 1);
  return {
    confusion: [...pairs.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([pair, count]) => ({ pair, count })),
    topic,
    place: results.filter((x) => x.placeOk === false).map((x) => ({ q: x.item.q, expected: x.item.place, got: x.placeGot })),
  };
}

/** Score the whole set at `now` (a fixed clock keeps time words deterministic). */
export function evaluateSet(reg: Registry, now: Date, items: readonly EvalItem[] = loadSet()): Record<Split, ItemResult[]> {
  const out: Record<Split, ItemResult[]> = { tuning: [], held_out: [] };
  for (const item of items) out[item.split].push(scoreItem(reg, item, now));
  return out;
}
