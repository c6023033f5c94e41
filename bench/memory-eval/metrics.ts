/**
 * Recall figures over ranked answers: for each question the turn ids a ranker returned, best
 * first. A question is a hit at k when ANY of its evidence turns is in the first k; `all@10`
 * (multi_hop) needs every evidence turn in the first 10.
 */
import { QUESTION_TYPES, type Question } from './questions.js';

export interface Ranked {
  question: Question;
  /** Turn ids, best first. */
  ranked: string[];
}

export interface RecallSummary {
  n: number;
  recall_at_5: number;
  recall_at_10: number;
  recall_at_25: number;
  multi_hop_all_at_10: number | null;
  /** Per question type: n and recall@10. */
  by_type: Record<string, { n: number; recall_at_10: number }>;
  /** recall@10 of the questions worded with another paraphrase than their evidence, and of the rest. */
  paraphrased_recall_at_10: number | null;
  same_wording_recall_at_10: number | null;
}

const hitAt = (r: Ranked, k: number) => r.question.evidence.some((e) => r.ranked.slice(0, k).includes(e));
const allAt = (r: Ranked, k: number) => r.question.evidence.every((e) => r.ranked.slice(0, k).includes(e));
const round = (x: number) => Number(x.toFixed(4));

function rate(rows: Ranked[], f: (r: Ranked) => boolean): number | null {
  return rows.length === 0 ? null : round(rows.filter(f).length / rows.length);
}

export function summarise(rows: Ranked[]): RecallSummary {
  const by_type: RecallSummary['by_type'] = {};
  for (const t of QUESTION_TYPES) {
    const of = rows.filter((r) => r.question.type === t);
    if (of.length > 0) by_type[t] = { n: of.length, recall_at_10: rate(of, (r) => hitAt(r, 10)) as number };
  }
  const multi = rows.filter((r) => r.question.type === 'multi_hop');
  return {
    n: rows.length,
    recall_at_5: rate(rows, (r) => hitAt(r, 5)) ?? 0,
    recall_at_10: rate(rows, (r) => hitAt(r, 10)) ?? 0,
    recall_at_25: rate(rows, (r) => hitAt(r, 25)) ?? 0,
    multi_hop_all_at_10: rate(multi, (r) => allAt(r, 10)),
    by_type,
    paraphrased_recall_at_10: rate(
      rows.filter((r) => r.question.paraphrased === true),
      (r) => hitAt(r, 10),
    ),
    same_wording_recall_at_10: rate(
      rows.filter((r) => r.question.paraphrased === false),
      (r) => hitAt(r, 10),
    ),
  };
}

/** a / b rounded, null when b is 0. */
export const ratio = (a: number, b: number): number | null => (b === 0 ? null : round(a / b));
