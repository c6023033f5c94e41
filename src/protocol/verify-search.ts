/**
 * Memory search results (POST /v1/memory/search): each result shows a note and carries the
 * note's signed fact, and the receipt lists the results' fact_cids in rank order. Checked here:
 * the note shown is the signed note's value (text, cell, tags, times, vector), and the results
 * stand in the order the receipt binds. Scores are the service's (BM25F over the caller's
 * scope, cosine against the caller's vector) and cannot be recomputed offline; what is checked
 * is that they fall along the bound order and agree with each other under the documented blend,
 * and that `in_time_window` is what the signed note's valid time says.
 */
import { parseRfc3339 } from './rfc3339.js';
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
  checkTimeWindow(x, results, r);
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
 * candidate at 1; vector: score = max(0, cosine) / best_cosine (0 without a vector); hybrid: the
 * weighted mean of the two with the weights shown; each × the time boost shown when the result
 * is in the query's time window; newest: no scores. Along the bound order, scores never increase.
 */
function checkScores(node: Record<string, unknown>, results: Record<string, unknown>[], r: CheckReport): void {
  const bad = (i: number, msg: string) => fail(r, 'score_inconsistent', `${r.path}[${i}]: ${msg}`);
  const ranking = node.ranking;
  const w = isObject(node.weights) ? node.weights : undefined;
  if (ranking === 'hybrid' && !(w && isNum(w.text) && isNum(w.vector) && w.text >= 0 && w.vector >= 0 && w.text + w.vector > 0)) {
    fail(r, 'score_inconsistent', `${r.path}: a hybrid ranking shows no usable weights`);
    return;
  }
  const time = isObject(node.interpretation) && isObject(node.interpretation.time) ? node.interpretation.time : undefined;
  const boost = time?.applied === 'boost' && isNum(time.boost) && time.boost >= 1 ? time.boost : 1;
  const best = isNum(node.best_cosine) && node.best_cosine > 0 ? node.best_cosine : undefined;
  results.forEach((res, i) => {
    const { text_score: t, cosine: c } = res;
    const factor = res.in_time_window === true ? boost : 1;
    // The score before the time boost, which the blend rules speak of.
    const score = isNum(res.score) ? res.score / factor : res.score;
    for (const [k, v, lo, hi] of [
      ['score', score, 0, 1],
      ['text_score', t, 0, 1],
      ['cosine', c, -1, 1],
    ] as const) {
      if (v !== null && v !== undefined && !(isNum(v) && v >= lo - EPS && v <= hi + EPS)) bad(i, `${k} ${JSON.stringify(v)} is not a number in [${lo}, ${hi}] or null`);
    }
    const v = isNum(c) && best !== undefined ? Math.max(0, c) / best : 0;
    switch (ranking) {
      case 'newest':
        if (score != null || t != null || c != null) bad(i, 'a newest-first listing carries no scores');
        break;
      case 'text':
        if (c != null) bad(i, 'a text ranking has no cosine');
        if (!isNum(t) || !isNum(score) || Math.abs(score - t) > (factor === 1 ? 0 : EPS * factor))
          bad(i, `a text ranking scores by text_score alone (score ${String(res.score)}, text_score ${String(t)})`);
        break;
      case 'vector':
        if (t != null) bad(i, 'a vector ranking has no text_score');
        if (!isNum(score) || Math.abs(score - v) > EPS * factor) bad(i, `score ${String(score)} is not max(0, cosine) / best_cosine = ${v}`);
        break;
      case 'hybrid': {
        const want = isNum(t) ? ((w!.text as number) * t + (w!.vector as number) * v) / ((w!.text as number) + (w!.vector as number)) : NaN;
        if (!isNum(score) || !(Math.abs(score - want) <= EPS * factor)) bad(i, `score ${String(score)} is not the weighted blend ${want} of text_score ${String(t)} and cosine ${String(c)}`);
        break;
      }
      default:
        if (i === 0) fail(r, 'score_inconsistent', `${r.path}: unknown ranking ${JSON.stringify(ranking)}`);
    }
    const next = results[i + 1]?.score;
    if (isNum(res.score) && isNum(next) && next > res.score) bad(i + 1, `score ${next} is above the ${res.score} of the result ranked before it`);
  });
  // Text scores are normalized to the best candidate, which ranks first (unless a time boost reorders).
  const top = results[0]?.text_score;
  if (ranking === 'text' && boost === 1 && isNum(top) && top !== 1 && top !== 0)
    fail(r, 'score_inconsistent', `${r.path}[0]: the first text result scores ${top}; text scores are normalized so that the best is 1`);
}

/**
 * `in_time_window` against the signed note: its valid time (observed_at, else the fact's
 * signed_at) inside the window the interpretation shows, inclusive.
 */
function checkTimeWindow(x: CheckInput, results: unknown[], r: CheckReport): void {
  const time = isObject(x.node.interpretation) && isObject(x.node.interpretation.time) ? x.node.interpretation.time : undefined;
  const from = typeof time?.from === 'string' ? parseRfc3339(time.from) : Number.NaN;
  const to = typeof time?.to === 'string' ? parseRfc3339(time.to) : Number.NaN;
  results.forEach((res, i) => {
    if (!isObject(res) || typeof res.in_time_window !== 'boolean') return;
    const fact = isObject(res.fact) ? x.facts.get(res.fact_cid as string) : undefined;
    if (!fact || !Number.isFinite(from) || !Number.isFinite(to)) return fail(r, 'score_inconsistent', `${r.path}[${i}]: in_time_window shown without a window or a signed note to check it against`);
    const value = isObject(fact.value) ? fact.value : {};
    const at = parseRfc3339(typeof value.observed_at === 'string' ? value.observed_at : fact.signed_at);
    const inside = Number.isFinite(at) && Math.floor(at / 1000) * 1000 >= from && Math.floor(at / 1000) * 1000 <= to;
    if (inside !== res.in_time_window)
      fail(
        r,
        'score_inconsistent',
        `${r.path}[${i}]: in_time_window ${res.in_time_window}, but the signed note's valid time is ${inside ? 'inside' : 'outside'} ${String(time?.from)}..${String(time?.to)}`,
      );
  });
}
