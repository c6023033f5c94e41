/**
 * Memory search results (POST /v1/memory/search): each result shows a note and carries the
 * note's signed fact, and the receipt lists the results' fact_cids in rank order. Checked here:
 * the note shown is the signed note's value (text, cell, tags, times, vector), and the results
 * stand in the order the receipt binds. Scores are the store engine's (bm25 over the caller's
 * scope, cosine against the caller's vector) and cannot be recomputed offline; what is checked
 * is that they fall along the bound order and agree with each other under the documented blend.
 */
import { fail, isObject, newCheck, sameJson, type CheckInput, type CheckReport } from './response-checks.js';

/** Rounding of served scores (6 decimals), twice over at most. */
const EPS = 2e-6;

const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** Whether `node` looks like a memory search response (its receipt, or results carrying notes). */
export function isSearchResponse(node: Record<string, unknown>, primitive: string | undefined): boolean {
  if (!Array.isArray(node.results)) return false;
  return (primitive?.endsWith('.memory_search') ?? false) || node.results.some((r) => isObject(r) && 'note' in r && 'fact' in r);
}

export function checkSearchResults(x: CheckInput): CheckReport {
  const r = newCheck('search_results', `${x.path}.results`);
  const results = x.node.results as unknown[];
  const bound = x.receipt && Array.isArray(x.receipt.fact_cids) ? (x.receipt.fact_cids as unknown[]) : undefined;
  if (!bound) {
    fail(r, 'rank_mismatch', `${r.path}: no valid receipt covers the results, so neither they nor their order are bound`);
    return r;
  }
  if (results.length !== bound.length) {
    fail(r, 'rank_mismatch', `${r.path}: ${results.length} result(s) shown, the receipt binds ${bound.length} in rank order`);
  }
  results.forEach((res, i) => {
    const p = `${r.path}[${i}]`;
    if (!isObject(res)) return fail(r, 'result_mismatch', `${p}: not a result object`);
    if (res.fact_cid !== bound[i]) {
      fail(r, 'rank_mismatch', `${p}: ${String(res.fact_cid)} is shown at rank ${i + 1}, the receipt binds ${String(bound[i] ?? 'nothing')} there`);
    }
    const fact = isObject(res.fact) && res.fact.fact_cid === res.fact_cid ? x.facts.get(res.fact_cid as string) : undefined;
    if (!fact) return fail(r, 'result_mismatch', `${p}: carries no note fact that recomputes to ${String(res.fact_cid)}`);
    if ('note' in res && !sameJson(res.note, fact.value)) {
      fail(r, 'result_mismatch', `${p}.note: differs from the signed note (${changedKeys(res.note, fact.value)})`);
    }
  });
  checkScores(x.node, results.filter(isObject), r);
  return r;
}

/** Which fields of a shown note differ from the signed one. */
function changedKeys(shown: unknown, signed: unknown): string {
  if (!isObject(shown) || !isObject(signed)) return 'not the same value';
  const keys = [...new Set([...Object.keys(shown), ...Object.keys(signed)])].filter((k) => !sameJson(shown[k], signed[k]));
  return keys.length ? keys.join(', ') : 'not the same value';
}

/**
 * Scores against the documented blend (docs/memory.md): text: score = text_score, the best
 * candidate at 1; vector: score = (cosine + 1) / 2 (0 without a vector); hybrid: the weighted
 * mean of the two with the weights shown; newest: no scores. Along the bound order, scores
 * never increase.
 */
function checkScores(node: Record<string, unknown>, results: Record<string, unknown>[], r: CheckReport): void {
  const bad = (i: number, msg: string) => fail(r, 'score_inconsistent', `${r.path}[${i}]: ${msg}`);
  const ranking = node.ranking;
  const w = isObject(node.weights) ? node.weights : undefined;
  if (ranking === 'hybrid' && !(w && isNum(w.text) && isNum(w.vector) && w.text >= 0 && w.vector >= 0 && w.text + w.vector > 0)) {
    fail(r, 'score_inconsistent', `${r.path}: a hybrid ranking shows no usable weights`);
    return;
  }
  results.forEach((res, i) => {
    const { score, text_score: t, cosine: c } = res;
    for (const [k, v, lo, hi] of [
      ['score', score, 0, 1],
      ['text_score', t, 0, 1],
      ['cosine', c, -1, 1],
    ] as const) {
      if (v !== null && v !== undefined && !(isNum(v) && v >= lo - EPS && v <= hi + EPS)) bad(i, `${k} ${JSON.stringify(v)} is not a number in [${lo}, ${hi}] or null`);
    }
    const v = isNum(c) ? (c + 1) / 2 : 0;
    switch (ranking) {
      case 'newest':
        if (score != null || t != null || c != null) bad(i, 'a newest-first listing carries no scores');
        break;
      case 'text':
        if (c != null) bad(i, 'a text ranking has no cosine');
        if (!isNum(t) || score !== t) bad(i, `a text ranking scores by text_score alone (score ${String(score)}, text_score ${String(t)})`);
        break;
      case 'vector':
        if (t != null) bad(i, 'a vector ranking has no text_score');
        if (!isNum(score) || Math.abs(score - v) > EPS) bad(i, `score ${String(score)} is not (cosine + 1) / 2 = ${v}`);
        break;
      case 'hybrid': {
        const want = isNum(t) ? ((w!.text as number) * t + (w!.vector as number) * v) / ((w!.text as number) + (w!.vector as number)) : NaN;
        if (!isNum(score) || !(Math.abs(score - want) <= EPS)) bad(i, `score ${String(score)} is not the weighted blend ${want} of text_score ${String(t)} and cosine ${String(c)}`);
        break;
      }
      default:
        if (i === 0) fail(r, 'score_inconsistent', `${r.path}: unknown ranking ${JSON.stringify(ranking)}`);
    }
    const next = results[i + 1]?.score;
    if (isNum(score) && isNum(next) && next > score) bad(i + 1, `score ${next} is above the ${score} of the result ranked before it`);
  });
  // Text scores are normalized to the best candidate, which ranks first.
  const top = results[0]?.text_score;
  if (ranking === 'text' && isNum(top) && top !== 1 && top !== 0) fail(r, 'score_inconsistent', `${r.path}[0]: the first text result scores ${top}; text scores are normalized so that the best is 1`);
}
