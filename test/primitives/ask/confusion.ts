/** Precision, recall and a confusion summary of topic routing (shared by the test and bench/ask.ts). */

export interface Question {
  q: string;
  topic: string | null;
  intent: string;
  place: string | null;
  tags: string[];
}

export interface Confusion {
  n: number;
  accuracy: number;
  per_topic: Record<string, { precision: number; recall: number; support: number }>;
  /** Most frequent (expected → got) errors. */
  top_confusions: Array<{ expected: string; got: string; count: number }>;
}

const name = (t: string | null) => t ?? '(none)';

/** The confusion summary of (expected, got) pairs; null is "no topic". */
export function confusion(pairs: ReadonlyArray<{ expected: string | null; got: string | null }>): Confusion {
  const keys = new Set<string>();
  for (const p of pairs) {
    keys.add(name(p.expected));
    keys.add(name(p.got));
  }
  const per_topic: Confusion['per_topic'] = {};
  for (const k of [...keys].sort()) {
    const tp = pairs.filter((p) => name(p.expected) === k && name(p.got) === k).length;
    const predicted = pairs.filter((p) => name(p.got) === k).length;
    const support = pairs.filter((p) => name(p.expected) === k).length;
    per_topic[k] = { precision: predicted ? tp / predicted : 1, recall: support ? tp / support : 1, support };
  }
  const errs = new Map<string, number>();
  for (const p of pairs) if (name(p.expected) !== name(p.got)) errs.set(`${name(p.expected)}\u0000${name(p.got)}`, (errs.get(`${name(p.expected)}\u0000${name(p.got)}`) ?? 0) + 1);
  const top_confusions = [...errs.entries()]
    .map(([k, count]) => {
      const [expected, got] = k.split('\u0000');
      return { expected, got, count };
    })
    .sort((a, b) => b.count - a.count)
    .slice(0, 10);
  const correct = pairs.filter((p) => name(p.expected) === name(p.got)).length;
  return { n: pairs.length, accuracy: pairs.length ? correct / pairs.length : 1, per_topic, top_confusions };
}
