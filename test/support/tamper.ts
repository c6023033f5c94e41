/**
 * Saved responses of every read primitive, and single edits of them: each field of a served
 * fact, each signed receipt field and a merkle sibling, one at a time; and edits of what a
 * reader acts on beside the facts (a fact left out, an answer's number, a hotspot's value or
 * place in the ranking, a search result's note, score or rank). Shared by the protocol, CLI
 * and browser tests of whole-response verification, so all three see the same cases.
 */
import * as P from '../../src/protocol/index.js';
import type { MaterializeOutcome, MaterializeRequest } from '../../src/sources/contract.js';
import { build, type TestApp } from './app.js';
import { makeAttester, sampleFact } from './attester.js';
import { fakeConnector, type Script } from './fake-connector.js';

export type Key = string | number;
export interface Edit {
  primitive: string;
  what: string;
  doc: unknown;
}

const CELL_A = P.cellOf(51.5074, -0.1278);
const CELL_B = P.cellOf(48.8566, 2.3522);
const OTHER_CELL = P.cellOf(-33.8688, 151.2093);
const SUMMIT = { lat: 27.9881, lng: 86.925 };
/** A hunt box (about 2 km): burn severity grows towards its north-east corner. */
const FIRE_BOX = { min_lat: 41.6, min_lng: -83.2, max_lat: 41.62, max_lng: -83.18 };

const value = (v: number): MaterializeOutcome => ({ status: 'value', value: v, provenance: { source: 'fake', captured_at: '2026-11-20T00:00:00Z' }, fn: 'fake@1' });
const near = (r: MaterializeRequest, p: { lat: number; lng: number }) => Math.abs(r.center.lat - p.lat) < 0.01 && Math.abs(r.center.lng - p.lng) < 0.01;
const SCRIPTS: Record<string, Script> = {
  // 8000 m on the summit (the answer the tamper tests edit to "12"), the connector's default elsewhere.
  'copdem30m.elevation_mean': (r) => (near(r, SUMMIT) ? value(8000) : { ...value(42.5), provenance: { source: 'fake', ref: 'dem', captured_at: '2026-11-20T00:00:00Z', version: 'v1' } }),
  'indices.dnbr': (r) => value(0.2 + Math.round((r.center.lat - 41.6 + (r.center.lng + 83.2)) * 1000) / 100),
  // A bloom in the western basin of Lake Erie, open water everywhere.
  'indices.ndci': (r) => value(r.center.lng < -82.5 ? 0.35 + Math.round((-82.5 - r.center.lng) * 100) / 1000 : 0.02),
  'indices.mndwi': () => value(0.5),
};

/** Notes of an agent, for the memory search responses. */
const NOTES = [
  { text: 'Irrigation pump at the north field failed; the pump house is flooded', tags: ['pump'], vector: [1, 0, 0] },
  { text: 'Maize emerged evenly after the irrigation pump was repaired', tags: ['maize'], vector: [0.8, 0.6, 0] },
  { text: 'Vineyard harvest at the cape, no irrigation needed', tags: ['grapes'], vector: [0, 0, 1] },
]
  .map((v) => ({ ...v, cell: CELL_A }))
  .map((value) => ({ kind: 'primary', cell: `svc:entity:${P.anchorId(value)}`, band: 'memory.note', tslot: 0, value, signed_at: '2026-11-20T12:00:00Z' }));

/** A responder holding attested and materialized facts at two cells, and its public key. */
export async function fixtureApp(): Promise<{ t: TestApp; key: string }> {
  const op = makeAttester('tamper');
  const t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [fakeConnector(Object.keys(SCRIPTS), SCRIPTS)] });
  const m = t.service.manifests;
  const facts = [
    sampleFact({ cell: CELL_A, band: 'weather.temperature_2m', value: 21.5 }),
    sampleFact({ cell: CELL_B, band: 'weather.temperature_2m', value: 18.25 }),
    sampleFact({ cell: CELL_A, band: 'weather.temperature_2m', value: 22.5, tslot: 20_000, signed_at: undefined }),
    sampleFact({ cell: CELL_A, band: 'weather.temperature_2m', value: 23, tslot: 20_001, signed_at: undefined }),
  ];
  const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch(facts, m) });
  if (r.statusCode !== 200) throw new Error(`fixture attest failed: ${r.body}`);
  const n = await t.app.inject({ method: 'POST', url: '/v1/memory/notes', payload: op.batch(NOTES, m) });
  if (n.statusCode !== 200) throw new Error(`fixture notes failed: ${n.body}`);
  return { t, key: t.service.keys.publicKeyB32 };
}

/** One saved response per read primitive (name → parsed JSON). */
export async function savedResponses(t: TestApp): Promise<Record<string, unknown>> {
  const post = async (url: string, payload: unknown) => {
    const r = await t.app.inject({ method: 'POST', url, payload: payload as object });
    if (r.statusCode !== 200) throw new Error(`${url}: ${r.statusCode} ${r.body}`);
    return r.json();
  };
  const get = async (url: string) => {
    const r = await t.app.inject({ method: 'GET', url });
    if (r.statusCode !== 200) throw new Error(`${url}: ${r.statusCode} ${r.body}`);
    return r.json();
  };
  const bands = ['weather.temperature_2m', 'copdem30m.elevation_mean'];
  const out: Record<string, unknown> = {};
  out.recall = await post('/v1/recall', { cell: CELL_A, bands });
  out.recall_many = await post('/v1/recall_many', { cells: [CELL_A, CELL_B], bands });
  out.recall_polygon = await post('/v1/recall_polygon', { cells: [CELL_A, CELL_B], bands });
  const cid = (out.recall as { facts: { fact_cid: string; band: string }[] }).facts.find((f) => f.band === 'weather.temperature_2m')!.fact_cid;
  out.fetch = await post('/v1/fetch', { cid });
  out.elevation = await post('/v1/elevation', { lat: 51.5074, lng: -0.1278 });
  out.at = await post('/v1/at', { lat: 51.5074, lng: -0.1278, bands: 'weather.temperature_2m' });
  out.verify = await post('/v1/verify', { cell: CELL_A, claim: { band: 'weather.temperature_2m', op: 'gt', value: 0, tslot: 20_001 } });
  out.query_region = await post('/v1/query_region', { geometry: `cells:${CELL_A},${CELL_B}`, bands: ['weather.temperature_2m'] });
  out.trajectory = await post('/v1/trajectory', { cell: CELL_A, band: 'weather.temperature_2m', window: [20_000 * 86_400, 20_001 * 86_400] });
  out.diff = await post('/v1/diff', { cell: CELL_A, band: 'weather.temperature_2m', tslot_a: 20_000, tslot_b: 20_001 });
  const token = (await post('/v1/memory_token', { fact_cid: cid })).token;
  out.memory_token_resolve = await post('/v1/memory_token/resolve', { token });
  const bundle = await post('/v1/memory_bundle', { fact_cids: [cid] });
  out.memory_bundle = await get(`/v1/memory_bundle/${encodeURIComponent(bundle.token)}`);
  out.cell_view = await get(`/v1/cells/${CELL_A}`);
  out.corpus_state_stats = await get('/v1/corpus_state_stats');
  out.ask = await post('/v1/ask', { q: `How high is it at ${SUMMIT.lat}, ${SUMMIT.lng}?` });
  out.ask_hunt = await post('/v1/ask', { q: 'where is the algal bloom in Lake Erie?' });
  out.hunt = await post('/v1/hunt', { event: 'wildfire', polygon_bbox: FIRE_BOX });
  out.memory_search = await post('/v1/memory/search', { query: 'irrigation pump' });
  out.memory_search_hybrid = await post('/v1/memory/search', { query: 'irrigation', vector: [0.8, 0.6, 0.1] });
  return out;
}

type Json = Record<string, unknown>;
const isObj = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Paths (key lists) of served facts and of receipt objects in a document. */
export function locate(doc: unknown): { facts: Key[][]; receipts: Key[][]; references: Key[][] } {
  const facts: Key[][] = [];
  const receipts: Key[][] = [];
  const references: Key[][] = [];
  const visit = (x: unknown, path: Key[]): void => {
    if (Array.isArray(x)) return x.forEach((e, i) => visit(e, [...path, i]));
    if (!isObj(x)) return;
    if (typeof x.fact_cid === 'string' && typeof x.kind === 'string' && ('band' in x || 'cell' in x)) {
      facts.push(path);
      if (isObj(x.receipt)) receipts.push([...path, 'receipt']);
      return;
    }
    if (typeof x.fact_cid === 'string') references.push([...path, 'fact_cid']);
    for (const [k, v] of Object.entries(x)) {
      if (k === 'receipt' && isObj(v) && Array.isArray(v.fact_cids)) receipts.push([...path, k]);
      else if ((k === 'evidence_cids' || k === 'fact_cids') && Array.isArray(v) && v.length > 0) references.push([...path, k, 0]);
      else if (k !== 'fact_meta' && k !== 'materialize_notes') visit(v, [...path, k]);
    }
  };
  if (isObj(doc) && typeof doc.signature === 'string') receipts.push([]);
  else visit(doc, []);
  return { facts, receipts, references };
}

function at(doc: unknown, path: Key[]): any {
  return path.reduce<any>((x, k) => x[k], doc);
}

/** Flip the last character of a base32 text to another valid one. */
function flip(text: string): string {
  const last = text.at(-1)!;
  return text.slice(0, -1) + (last === 'a' ? 'b' : 'a');
}

function changed(v: unknown): unknown {
  if (typeof v === 'number') return v + 1;
  if (Array.isArray(v)) return v.length > 0 ? [changed(v[0]), ...v.slice(1)] : [0];
  if (v === null) return 0;
  if (typeof v === 'string') return `${v}x`;
  return 1;
}

/** Every single edit the verifiers must reject, for one saved response. */
export function editsOf(primitive: string, doc: unknown, maxFacts = 2): Edit[] {
  const edits: Edit[] = [];
  const edit = (what: string, path: Key[], mutate: (o: any) => void) => {
    const copy = structuredClone(doc);
    mutate(at(copy, path));
    edits.push({ primitive, what, doc: copy });
  };
  const { facts, receipts, references } = locate(doc);
  for (const fp of facts.slice(0, maxFacts)) {
    const where = `fact ${JSON.stringify(fp)}`;
    edit(`${where}.value`, fp, (f) => {
      f.value = changed(f.value);
    });
    edit(`${where}.unit`, fp, (f) => {
      f.unit = 'furlongs';
    });
    edit(`${where}.tslot`, fp, (f) => {
      f.tslot = typeof f.tslot === 'number' ? f.tslot + 1 : 1;
    });
    edit(`${where}.cell`, fp, (f) => {
      f.cell = f.cell === OTHER_CELL ? CELL_A : OTHER_CELL;
    });
    edit(`${where}.band`, fp, (f) => {
      f.band = f.band === 'indices.ndvi' ? 'weather.temperature_2m' : 'indices.ndvi';
    });
    edit(`${where}.kind`, fp, (f) => {
      f.kind = f.kind === 'absence' ? 'primary' : 'absence';
    });
    edit(`${where}.fact_cid`, fp, (f) => {
      f.fact_cid = flip(f.fact_cid);
    });
  }
  const rps = [receipts[0], receipts.find((p) => at(doc, p).merkle_proof)].filter((p, i, a): p is Key[] => p !== undefined && a.indexOf(p) === i);
  for (const rp of rps) {
    const where = `receipt ${JSON.stringify(rp)}`;
    edit(`${where}.request_id`, rp, (r) => {
      r.request_id = r.request_id.slice(0, -1) + (r.request_id.endsWith('0') ? '1' : '0');
    });
    edit(`${where}.served_at`, rp, (r) => {
      r.served_at = '2001-01-01T00:00:00Z';
    });
    edit(`${where}.primitive`, rp, (r) => {
      r.primitive = `${r.primitive}x`;
    });
    edit(`${where}.cells`, rp, (r) => {
      r.cells = [...r.cells, OTHER_CELL];
    });
    edit(`${where}.fact_cids`, rp, (r) => {
      r.fact_cids = r.fact_cids.length > 0 ? [flip(r.fact_cids[0]), ...r.fact_cids.slice(1)] : [P.b32encode(new Uint8Array(32))];
    });
    edit(`${where}.signature`, rp, (r) => {
      r.signature = flip(r.signature);
    });
    const proof = at(doc, rp).merkle_proof;
    if (proof?.siblings.length > 0)
      edit(`${where}.merkle_proof.siblings[0]`, rp, (r) => {
        r.merkle_proof.siblings[0] = flip(r.merkle_proof.siblings[0]);
      });
    else if (proof)
      edit(`${where}.merkle_proof.root`, rp, (r) => {
        r.merkle_proof.root = flip(r.merkle_proof.root);
      });
  }
  for (const ref of references.slice(0, 2)) {
    const key = ref.at(-1)!;
    edit(`reference ${JSON.stringify(ref)}`, ref.slice(0, -1), (holder) => {
      holder[key] = flip(holder[key]);
    });
  }
  return [...edits, ...shownEdits(primitive, doc)];
}

/**
 * Edits of what a reader acts on beside the facts, each leaving every fact body and receipt
 * intact: a bound fact left out, an answer's number, a hotspot's value, cell or rank, a search
 * result's note, score or rank.
 */
function shownEdits(primitive: string, doc: unknown): Edit[] {
  const edits: Edit[] = [];
  const edit = (what: string, mutate: (d: any) => void) => {
    const copy = structuredClone(doc) as any;
    mutate(copy);
    edits.push({ primitive, what, doc: copy });
  };
  const d = doc as any;
  if (Array.isArray(d?.facts) && d.facts.length > 1)
    edit('a bound fact left out of facts[]', (c) => {
      c.facts.splice(0, 1);
    });
  if (typeof d?.answer === 'string') {
    const reading = /\d[\d.]* metres|\d[\d.]* unitless/.exec(d.answer)?.[0];
    if (reading) {
      const twelve = reading.replace(/^[\d.]+/, '12');
      edit(`answer: "${reading}" → "${twelve}"`, (c) => {
        c.answer = c.answer.replace(reading, twelve);
      });
      edit(`answer and answer_md: "${reading}" → "${twelve}"`, (c) => {
        c.answer = c.answer.replace(reading, twelve);
        c.answer_md = c.answer_md.replace(reading, twelve);
      });
      // A reply cut to its size cap leaves answer_md empty: then there is nothing to edit there.
      if (d.answer_md.includes(reading))
        edit(`answer_md: "${reading}" → "${twelve}"`, (c) => {
          c.answer_md = c.answer_md.replace(reading, twelve);
        });
    }
    edit('answer: a sentence appended', (c) => {
      c.answer += ' Readings above 12 metres are flooded.';
    });
    // Words and parts edited together: a reading typed as words is refused.
    edit('answer and its parts: a reading typed as words', (c) => {
      c.answer = c.answer.replace(/\.$/, '; 12 metres.');
      c.answer_md = '';
      const last = c.answer_parts.lead.length - 1;
      c.answer_parts.lead[last].push('; 12 metres');
    });
    edit('answer_parts removed', (c) => {
      delete c.answer_parts;
    });
  }
  const hunt = Array.isArray(d?.hotspots) ? d : Array.isArray(d?.hunt?.hotspots) ? d.hunt : undefined;
  const at = (c: any) => (Array.isArray(c.hotspots) ? c : c.hunt);
  if (hunt?.hotspots.length > 1) {
    edit('hotspots[0].value', (c) => {
      at(c).hotspots[0].value += 1;
    });
    edit('hotspots[0].cell64 and its centre', (c) => {
      const [h0, h1] = at(c).hotspots;
      [h0.cell64, h0.lat, h0.lng] = [h1.cell64, h1.lat, h1.lng];
    });
    edit('hotspots[0] and [1] swapped, ranks renumbered', (c) => {
      const hs = at(c).hotspots;
      [hs[0], hs[1]] = [hs[1], hs[0]];
      hs.forEach((h: any, i: number) => {
        h.rank = i + 1;
      });
    });
    edit('hotspots[0] left out, ranks renumbered', (c) => {
      const hs = at(c).hotspots;
      hs.splice(0, 1);
      hs.forEach((h: any, i: number) => {
        h.rank = i + 1;
      });
    });
  }
  if (Array.isArray(d?.results) && d.results.length > 1) {
    edit('results[0].note.text', (c) => {
      c.results[0].note.text = 'The pump works fine';
    });
    edit('results[0].note.tags', (c) => {
      c.results[0].note.tags = ['all clear'];
    });
    edit('results[0].score lowered below results[1]', (c) => {
      const r = c.results[0];
      r.score = c.results[1].score / 2;
      if (c.ranking === 'text') r.text_score = r.score;
    });
    edit('results[1].score alone changed', (c) => {
      c.results[1].score = Number((c.results[1].score * 0.9).toFixed(6));
    });
    edit('results[0] and [1] swapped', (c) => {
      [c.results[0], c.results[1]] = [c.results[1], c.results[0]];
    });
    edit('results[0] left out', (c) => {
      c.results.splice(0, 1);
    });
  }
  return edits;
}
