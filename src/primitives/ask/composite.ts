/**
 * Composite questions (docs/ask.md, "Composite questions"): "is Lyon a safe place to buy a flat?"
 * asks about several topics at once. The router picks the topic that answers and lists up to
 * three others of the frame (router.ts, `composite`). Such a question is broad, so its answer
 * reads the telling bands of every topic it spans — the ones the frame names (lexicon.ts,
 * `reads`), else a topic's first scalar bands — in one recall, under one receipt: three of the
 * routed topic, two of each other. Every served fact carries its receipt (about 1.4 KB with it),
 * so reading every band of four topics would not fit the reply's 25 KB cap; next_steps reads
 * the rest of each topic at the same cell.
 */
import type { Registry, TopicEntry } from '../../registry/registry.js';
import { COMPOSITE_FRAMES } from './lexicon.js';
import type { RouteResult } from './router.js';

/** Bands read of the routed topic of a composite question, at most. */
export const COMPOSITE_ROUTED_BANDS = 3;
/** Bands read of each other topic, at most. */
export const COMPOSITE_BANDS_PER_TOPIC = 2;

/** One other topic of a composite question and the bands the answer reads of it. */
export interface CompositeRead {
  topic: TopicEntry;
  /** The bands read for the topic (the routed topic or an earlier one may read them too). */
  bands: string[];
}

/** What a composite answer reads: the routed topic's telling bands and each other topic's. */
export interface CompositePlan {
  routed: string[];
  others: CompositeRead[];
}

/** The telling bands of `topic` in `frame`, at most `n`. */
function telling(reg: Registry, frameKey: string, topic: TopicEntry, n: number): string[] {
  const named = (COMPOSITE_FRAMES.find((f) => f.key === frameKey)?.reads?.[topic.key] ?? []).filter((b) => reg.bands.has(b));
  const scalar = topic.bands.filter((b) => reg.bands.get(b)?.value_kind !== 'vector');
  return (named.length > 0 ? named : scalar).slice(0, n);
}

/** The reads of a composite question; null when the question is not one. */
export function compositePlan(reg: Registry, routed: TopicEntry, composite: RouteResult['composite']): CompositePlan | null {
  if (!composite || composite.topics.length === 0) return null;
  const others: CompositeRead[] = [];
  for (const key of composite.topics) {
    const topic = reg.topics.get(key);
    if (!topic) continue;
    const bands = telling(reg, composite.frame, topic, COMPOSITE_BANDS_PER_TOPIC);
    if (bands.length > 0) others.push({ topic, bands });
  }
  if (others.length === 0) return null;
  return { routed: telling(reg, composite.frame, routed, COMPOSITE_ROUTED_BANDS), others };
}

/** Every band a plan reads, each once. */
export function planBands(plan: CompositePlan): string[] {
  return [...new Set([...plan.routed, ...plan.others.flatMap((o) => o.bands)])];
}
