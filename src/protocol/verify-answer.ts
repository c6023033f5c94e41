/**
 * Ask answers (POST /v1/ask): `answer` and `answer_md` are rendered from `answer_parts` by the
 * pure renderer of answer-parts.ts. Checked here: rendered again from the facts the response
 * carries that its receipt binds, the parts give exactly the answer shown; every slot cites a
 * carried, bound fact of the right kind or a cell the receipt binds; the words between slots
 * print no reading or date of their own. An edited number, unit or date in the answer, or an
 * answer without parts beside an ask receipt, fails as `answer_mismatch`.
 */
import { renderAnswer } from './answer-parts.js';
import { fail, isObject, newCheck, type CheckInput, type CheckReport } from './response-checks.js';

/** Whether `node` is an ask answer to check: it shows an answer and carries parts, or holds an ask receipt (`primitive`: its own receipt's). */
export function isAnswer(node: Record<string, unknown>, primitive: string | undefined): boolean {
  return typeof node.answer === 'string' && ('answer_parts' in node || (primitive?.endsWith('.ask') ?? false));
}

export function checkAnswer(x: CheckInput): CheckReport {
  const r = newCheck('answer', `${x.path}.answer`);
  if (x.node.answer_parts === undefined) {
    fail(r, 'answer_mismatch', `${r.path}: the answer carries no answer_parts, so nothing it states can be checked against its facts`);
    return r;
  }
  if (!x.receipt) {
    fail(r, 'answer_mismatch', `${r.path}: no valid receipt covers the answer`);
    return r;
  }
  const cids = new Set(Array.isArray(x.receipt.fact_cids) ? x.receipt.fact_cids : []);
  const cells = new Set(Array.isArray(x.receipt.cells) ? x.receipt.cells : []);
  const hotspots = isObject(x.node.hunt) && Array.isArray(x.node.hunt.hotspots) ? x.node.hunt.hotspots : [];
  const out = renderAnswer(x.node.answer_parts, {
    fact: (cid) => (cids.has(cid) ? x.facts.get(cid) : undefined),
    cellBound: (cell) => cells.has(cell),
    hotspotAt: (rank) => {
      const h = hotspots[rank - 1];
      return isObject(h) && typeof h.fact_cid === 'string' ? h.fact_cid : undefined;
    },
  });
  for (const e of out.errors) fail(r, 'answer_mismatch', `${x.path}.${e}`);
  if (out.text !== x.node.answer) fail(r, 'answer_mismatch', `${r.path}: differs from what its parts render from the signed facts ${firstDifference(String(x.node.answer), out.text)}`);
  // answer_md may be left empty when a reply is cut to its size cap; an empty text states nothing.
  const md = x.node.answer_md;
  if (md !== undefined && md !== '' && md !== out.md)
    fail(r, 'answer_mismatch', `${x.path}.answer_md: differs from what its parts render from the signed facts ${firstDifference(String(md), out.md)}`);
  return r;
}

/** Where two texts part, with a little context: `at 41: "… 12 …" where the facts give "… 8000 metres …"`. */
function firstDifference(shown: string, rendered: string): string {
  let i = 0;
  while (i < shown.length && i < rendered.length && shown[i] === rendered[i]) i++;
  const cut = (t: string) => JSON.stringify(`${i > 12 ? '…' : ''}${t.slice(Math.max(0, i - 12), i + 28)}${t.length > i + 28 ? '…' : ''}`);
  return `(at character ${i}: ${cut(shown)} where the facts give ${cut(rendered)})`;
}
