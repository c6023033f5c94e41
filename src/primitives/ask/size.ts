/**
 * Reply shaping (docs/ask.md, "Size": non-verbose replies fit a 25 KB cap; the receipt is intact
 * either way). verbose:false always drops what only a careful reader wants (boundary polygons,
 * full formulas, long sample-cell lists); then, only if the reply is still over the cap, the
 * less useful blocks are cut step by step. Signed material — facts, receipts, the state token —
 * is never cut, and `trimmed` names every cut.
 */
import type { LocateResp } from '../../geo/types.js';
import { withFactMeta } from '../facts/fact-meta.js';

/** The cap of a non-verbose reply, in bytes of JSON (docs/ask.md, "Size"). */
export const ASK_REPLY_CAP_BYTES = 25_000;
const FORMULA_CHARS = 120;

type Reply = Record<string, any>;

/**
 * The reply's size in bytes of JSON, `Buffer.byteLength(JSON.stringify(r))`, as it changes
 * under the cuts below, measuring again only the members whose value was replaced since the
 * last call (every cut assigns a new value; `trimmed` grows in place, so it is always measured).
 * JSON of an object is `{` + its members `"key":value` joined by commas + `}`, members whose
 * value has no JSON left out, so the sum is exact (a test compares it with the whole
 * serialisation after every change). Serialising a 25 KB reply a dozen times was a third of
 * the CPU of a warm ask.
 */
export function memberSizer(r: Reply): () => number {
  const memo = new Map<string, { value: unknown; bytes: number }>();
  return () => {
    let total = 2;
    let members = 0;
    for (const key of Object.keys(r)) {
      const value = r[key];
      let m = memo.get(key);
      if (m === undefined || m.value !== value || key === 'trimmed') {
        const json = JSON.stringify(value);
        m = { value, bytes: json === undefined ? -1 : Buffer.byteLength(JSON.stringify(key)) + 1 + Buffer.byteLength(json) };
        memo.set(key, m);
      }
      if (m.bytes < 0) continue;
      total += m.bytes;
      members++;
    }
    return total + Math.max(0, members - 1);
  };
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
  // fact_meta is attached here rather than by the REST adapter, so the cap counts it exactly and
  // the last cut below can shorten it (the adapter keeps a map the reply already has).
  const r: Reply = withFactMeta({ ...reply });
  // The list of cuts is part of the reply, so it is counted as it grows.
  r.trimmed = trimmed;
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
    [
      'materialize_notes of bands fetched as asked (their facts are served; every other note is kept)',
      (x) => {
        x.materialize_notes = x.materialize_notes.filter((n: any) => !(n.status === 'materialized' && n.ok === true));
      },
    ],
    [
      'state.record (state_resolve with state.token returns it, and record_cid checks it)',
      (x) => {
        if (x.state?.persisted) {
          const { record: _r, ...rest } = x.state;
          x.state = rest;
        }
      },
    ],
    [
      'next_steps beyond 6',
      (x) => {
        if (x.next_steps.length > 6) x.next_steps = x.next_steps.slice(0, 6);
      },
    ],
    [
      'place_resolved lists emptied: names, neighbour and sample cells, alternatives (locate gives them)',
      (x) => {
        const p = x.place_resolved;
        if (p && typeof p.cell64 === 'string') x.place_resolved = { ...p, localized_names: {}, neighborhood_cells: [], polygon_sample_cells: [], alternatives: [], data_at_this_cell: {} };
      },
    ],
    [
      'fact_meta beyond attester, attester_role and log_index (GET /v1/fact/<cid> shows the whole)',
      (x) => {
        if (x.fact_meta)
          x.fact_meta = Object.fromEntries(
            Object.entries(x.fact_meta as Record<string, any>).map(([cid, m]) => [cid, { attester: m.attester, attester_role: m.attester_role, log_index: m.log_index }]),
          );
      },
    ],
    [
      "fact_meta emptied (each fact's signer field names its key; GET /v1/fact/<cid> has the rest)",
      (x) => {
        if (x.fact_meta) x.fact_meta = {};
      },
    ],
  ];
  const size = memberSizer(r);
  for (const [what, cut] of cuts) {
    if (size() <= ASK_REPLY_CAP_BYTES) break;
    cut(r);
    trimmed.push(what);
  }
  // Facts and their receipts are the answer's evidence: a reply of many facts may stay over the
  // cap, and says so rather than dropping any.
  if (size() > ASK_REPLY_CAP_BYTES) trimmed.push(`still over ${ASK_REPLY_CAP_BYTES} bytes: signed facts and their receipts are never cut`);
  return r;
}
