/**
 * Reply shaping (docs/ask.md, "Size": non-verbose replies fit a 25 KB cap; the receipt is intact
 * either way). verbose:false always drops what only a careful reader wants (boundary polygons,
 * full formulas, long sample-cell lists); then, only if the reply is still over the cap, the
 * less useful blocks are cut step by step. Signed material — facts, receipts, the state token —
 * is never cut, and `trimmed` names every cut.
 */
import type { LocateResp } from '../../geo/types.js';

/** The cap of a non-verbose reply, in bytes of JSON (docs/ask.md, "Size"). */
export const ASK_REPLY_CAP_BYTES = 25_000;
/** Room kept for what the REST adapter adds after the primitive (fact_meta: about 300 bytes a fact). */
const FACT_META_BYTES = 320;
const FORMULA_CHARS = 120;

type Reply = Record<string, any>;

function sizeOf(r: Reply): number {
  const facts = (r.facts?.facts?.length ?? 0) as number;
  return Buffer.byteLength(JSON.stringify(r)) + facts * FACT_META_BYTES;
}

/** The LocateResp without its boundary and with short lists (what a non-verbose reply carries). */
function slimPlace(loc: LocateResp, topics: readonly string[]): Record<string, unknown> {
  const { polygon_geojson: _g, polygon_sample_cells: sample, alternatives, localized_names: names, data_at_this_cell: data, ...rest } = loc;
  return {
    ...rest,
    localized_names: Object.fromEntries(Object.entries(names ?? {}).slice(0, 4)),
    polygon_sample_cells: sample.slice(0, 8),
    polygon_sample_cells_total: sample.length,
    alternatives: alternatives.slice(0, 3),
    data_at_this_cell: Object.fromEntries(Object.entries(data ?? {}).filter(([k]) => topics.includes(k))),
  };
}

/** Shape a reply for verbose:false: always-on trims, then cuts until it fits the cap. */
export function fitReply(reply: Reply, topics: readonly string[]): Reply {
  const trimmed: string[] = [];
  const r: Reply = { ...reply };
  if (r.place_resolved) {
    r.place_resolved = slimPlace(r.place_resolved as LocateResp, topics);
    trimmed.push("place_resolved: boundary polygon, long lists and other topics' inventory");
  }
  r.algorithms_for_question = (r.algorithms_for_question as Array<Record<string, unknown>>).map((a) => {
    const f = String(a.formula);
    return f.length > FORMULA_CHARS ? { ...a, formula: `${f.slice(0, FORMULA_CHARS - 1)}…` } : a;
  });
  trimmed.push(`algorithms_for_question: formulas cut to ${FORMULA_CHARS} characters (GET /v1/algorithms/<key> has them whole)`);
  if (r.hunt?.region?.polygon_geojson) {
    r.hunt = { ...r.hunt, region: { ...r.hunt.region, polygon_geojson: undefined } };
    trimmed.push('hunt.region: boundary polygon (POST /v1/hunt gives it)');
  }
  const cuts: Array<[string, (x: Reply) => void]> = [
    // A hunt reads up to 64 bands: its notes are counted in hunt.summary, and POST /v1/hunt lists them all.
    [
      'materialize_notes beyond 8 (hunt.summary counts them)',
      (x) => {
        if (x.materialize_notes.length > 8) x.materialize_notes = x.materialize_notes.slice(0, 8);
      },
    ],
    [
      'topic_routing.matched_keywords beyond 12',
      (x) => {
        x.topic_routing = { ...x.topic_routing, matched_keywords: x.topic_routing.matched_keywords.slice(0, 12) };
      },
    ],
    [
      'foundation_embeddings neighbours beyond 5',
      (x) => {
        x.foundation_embeddings = Object.fromEntries(
          Object.entries(x.foundation_embeddings ?? {}).map(([k, v]: [string, any]) => [k, v?.neighbors ? { ...v, neighbors: v.neighbors.slice(0, 5) } : v]),
        );
      },
    ],
    [
      'place_resolved.data_at_this_cell',
      (x) => {
        if (x.place_resolved) x.place_resolved = { ...x.place_resolved, data_at_this_cell: {} };
      },
    ],
    [
      'caveats beyond 6',
      (x) => {
        x.caveats = x.caveats.slice(0, 6);
      },
    ],
    [
      'answer_md (answer holds the same text)',
      (x) => {
        x.answer_md = '';
      },
    ],
    [
      'topic_inventory descriptions',
      (x) => {
        if (x.topic_inventory) x.topic_inventory = x.topic_inventory.map((t: any) => ({ key: t.key, title: t.title }));
      },
    ],
  ];
  for (const [what, cut] of cuts) {
    if (sizeOf(r) <= ASK_REPLY_CAP_BYTES) break;
    cut(r);
    trimmed.push(what);
  }
  r.trimmed = trimmed;
  return r;
}
