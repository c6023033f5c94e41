/**
 * Notes, their search and typed edges over REST and MCP (docs/memory.md): writes signed by the
 * agent key, ranking by the store engine plus cosine, filters, scope bearers, bi-temporal edge
 * recall, and receipts a client verifies.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester, type TestAttester } from '../../support/attester.js';
import { bearerFor } from '../../support/scopes.js';

const FIELD = P.cellOf(52.10001, 5.10001);
const NEAR = P.cellOf(52.10501, 5.10001); // about 550 m north
const FAR = P.cellOf(-33.9, 18.4);
const SCOPE = { agent_id: 'memory-notes-agent-a' };

/** A record body as a client builds it: filed under svc:entity:<anchorId(value)>. */
function rec(band: string, value: Record<string, unknown>, signed_at = '2026-11-20T12:00:00Z', scope?: P.Scope): Record<string, unknown> {
  return { kind: 'primary', cell: `svc:entity:${P.anchorId(value)}`, band, tslot: 0, value, signed_at, ...(scope ? { scope } : {}) };
}

let t: TestApp;
let a: TestAttester;
let b: TestAttester;
before(async () => {
  a = makeAttester('memory-notes-a');
  b = makeAttester('memory-notes-b');
  t = await build({ attesterKeys: [a.publicKey, b.publicKey] });
});
after(async () => t.close());

const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
  const r = await t.app.inject({ method: 'POST', url, payload: payload as object, headers });
  return { status: r.statusCode, body: r.json() };
};
const m = () => t.service.manifests;

describe('memory notes and search', () => {
  const pump = rec('memory.note', {
    text: 'Irrigation pump at the north field failed; the pump house is flooded',
    cell: FIELD,
    tags: ['pump', 'maize'],
    observed_at: '2026-02-01T00:00:00Z',
    vector: [1, 0, 0],
  });
  const maize = rec('memory.note', { text: 'Maize emerged evenly after the irrigation was repaired', cell: NEAR, tags: ['maize'], observed_at: '2026-04-01T00:00:00Z', vector: [0.8, 0.6, 0] });
  const cape = rec('memory.note', { text: 'Vineyard harvest at the cape, no irrigation needed', cell: FAR, tags: ['grapes'], vector: [0, 0, 1] });

  before(async () => {
    const r1 = await post('/v1/memory/notes', a.batch([pump, maize], m()));
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    assert.deepEqual(
      r1.body.notes.map((n: { fact_cid: string }) => n.fact_cid),
      [P.factCid(pump), P.factCid(maize)],
    );
    const r2 = await post('/v1/memory/notes', b.batch([cape], m()));
    assert.equal(r2.status, 200, JSON.stringify(r2.body));
  });

  it('ranks by the engine and returns signed notes whose receipt binds every result', async () => {
    const r = await post('/v1/memory/search', { query: 'pump irrigation' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.ranking, 'text');
    assert.equal(r.body.results[0].fact_cid, P.factCid(pump));
    assert.equal(r.body.results[0].score, 1);
    assert.ok(r.body.results.every((x: { score: number }) => x.score > 0 && x.score <= 1));
    assert.deepEqual(r.body.results[0].note, pump.value);
    assert.equal(r.body.results[0].attester, a.publicKey);
    assert.deepEqual(new Set(r.body.receipt.fact_cids), new Set(r.body.results.map((x: { fact_cid: string }) => x.fact_cid)));
    const v = P.verifyResponse(r.body, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.trusted, true, JSON.stringify(v.failures));
  });

  it('blends cosine over agent vectors, and ranks by vector alone', async () => {
    const hybrid = await post('/v1/memory/search', { query: 'irrigation', vector: [0, 0, 1] });
    assert.equal(hybrid.body.ranking, 'hybrid');
    assert.equal(hybrid.body.results[0].fact_cid, P.factCid(cape), 'the vector pulls the cape note up');
    const vec = await post('/v1/memory/search', { vector: [0.8, 0.6, 0] });
    assert.equal(vec.body.ranking, 'vector');
    assert.equal(vec.body.results[0].fact_cid, P.factCid(maize));
    assert.equal(vec.body.results[0].cosine, 1);
  });

  it('filters by radius, tags, time, author; refuses nonsense with a typed error', async () => {
    const near = await post('/v1/memory/search', { cell: FIELD, radius_m: 1000 });
    assert.deepEqual(new Set(near.body.results.map((x: { fact_cid: string }) => x.fact_cid)), new Set([P.factCid(pump), P.factCid(maize)]));
    const tight = await post('/v1/memory/search', { cell: FIELD, radius_m: 100 });
    assert.deepEqual(
      tight.body.results.map((x: { fact_cid: string }) => x.fact_cid),
      [P.factCid(pump)],
    );
    const tags = await post('/v1/memory/search', { query: 'irrigation', tags: ['maize'] });
    assert.deepEqual(new Set(tags.body.results.map((x: { fact_cid: string }) => x.fact_cid)), new Set([P.factCid(pump), P.factCid(maize)]));
    const april = await post('/v1/memory/search', { query: 'irrigation', observed_from: '2026-03-01T00:00:00Z' });
    assert.ok(april.body.results.every((x: { fact_cid: string }) => x.fact_cid !== P.factCid(pump)));
    const byB = await post('/v1/memory/search', { query: 'irrigation', authors: [b.publicKey] });
    assert.deepEqual(
      byB.body.results.map((x: { fact_cid: string }) => x.fact_cid),
      [P.factCid(cape)],
    );
    for (const bad of [{ radius_m: 10 }, { vector: [0, 0] }, { observed_from: 'yesterday' }, { limit: 0 }, { query: 'x', extra: 1 }]) {
      const r = await post('/v1/memory/search', bad);
      assert.equal(r.status, 422, JSON.stringify(bad));
      assert.equal(r.body.code, 'invalid_argument');
    }
  });

  it('refuses a note from an unlisted key, a malformed note and a wrong band, writing nothing', async () => {
    const stranger = makeAttester('memory-notes-stranger');
    const size = await t.service.store.log.size();
    const r1 = await post('/v1/memory/notes', stranger.batch([rec('memory.note', { text: 'hello' })], m()));
    assert.equal(r1.status, 403);
    const r2 = await post('/v1/memory/notes', a.batch([rec('memory.note', { text: '' })], m()));
    assert.equal(r2.status, 422, JSON.stringify(r2.body));
    const r3 = await post('/v1/memory/notes', a.batch([rec('memory.edge', { type: 'related_to', from: P.anchorId({ x: 1 }), to: P.anchorId({ x: 2 }), valid_from: '2026-01-01T00:00:00Z' })], m()));
    assert.equal(r3.status, 422);
    assert.equal(await t.service.store.log.size(), size);
  });

  it('keeps scoped notes to the scope: bearer required, invisible to the public and to MCP', async () => {
    const secret = rec('memory.note', { text: 'secret pump replacement budget', cell: FIELD }, '2026-11-20T12:00:00Z', SCOPE);
    const w = await post('/v1/memory/notes', a.batch([secret], m()));
    assert.equal(w.status, 200, JSON.stringify(w.body));
    const pub = await post('/v1/memory/search', { query: 'secret budget' });
    assert.deepEqual(pub.body.results, []);
    const noBearer = await post('/v1/memory/search', { query: 'secret budget', scope: SCOPE });
    assert.equal(noBearer.status, 401);
    const bearer = await bearerFor(t, a, SCOPE);
    const mine = await post('/v1/memory/search', { query: 'secret budget', scope: SCOPE }, { authorization: bearer });
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.deepEqual(
      mine.body.results.map((x: { fact_cid: string }) => x.fact_cid),
      [P.factCid(secret)],
    );
    assert.deepEqual(mine.body.receipt.scope, SCOPE);
    const other = await bearerFor(t, b, { agent_id: 'memory-notes-agent-b' });
    const theirs = await post('/v1/memory/search', { query: 'secret budget', scope: { agent_id: 'memory-notes-agent-b' } }, { authorization: other });
    assert.deepEqual(theirs.body.results, []);
  });
});

describe('typed edges', () => {
  const plot = P.anchorId({ kind: 'field', name: 'plot 7 (edges test)' });
  const farmX = P.anchorId({ kind: 'farm', name: 'X (edges test)' });
  const farmY = P.anchorId({ kind: 'farm', name: 'Y (edges test)' });
  let beforeSale = '';

  before(async () => {
    const e1 = rec('memory.edge', { type: 'part_of', from: plot, to: farmX, valid_from: '2026-01-01T00:00:00Z' });
    const r1 = await post('/v1/edges', a.batch([e1], m()));
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    assert.equal(r1.body.edges[0].edge_cid, P.factCid(e1));
    beforeSale = r1.body.accepted_at;
    // Transaction time has second precision: the sale is recorded at least a second later.
    await new Promise((res) => setTimeout(res, 1100));
    const e2 = rec('memory.edge', { type: 'part_of', from: plot, to: farmY, valid_from: '2026-06-01T00:00:00Z' });
    // The same key records the sale: only the key that stated an edge may close it.
    const r2 = await post('/v1/edges', a.batch([e2], m()));
    assert.equal(r2.status, 200, JSON.stringify(r2.body));
  });

  it('answers as-of queries before and after the invalidation, and keeps both edges', async () => {
    const march = await post('/v1/edges/recall', { record: plot, direction: 'out', valid_at: '2026-03-01T00:00:00Z' });
    assert.equal(march.status, 200, JSON.stringify(march.body));
    assert.deepEqual(
      march.body.edges.map((e: { to: string }) => e.to),
      [farmX],
    );
    assert.equal(march.body.edges[0].effective_valid_to, '2026-06-01T00:00:00Z');
    const july = await post('/v1/edges/recall', { record: `svc:entity:${plot}`, direction: 'out', valid_at: '2026-07-01T00:00:00Z' });
    assert.deepEqual(
      july.body.edges.map((e: { to: string }) => e.to),
      [farmY],
    );
    const then = await post('/v1/edges/recall', { record: plot, valid_at: '2026-07-01T00:00:00Z', recorded_at: beforeSale });
    assert.deepEqual(
      then.body.edges.map((e: { to: string }) => e.to),
      [farmX],
    );
    assert.equal(then.body.edges[0].closed_at, null);
    assert.deepEqual(then.body.receipt.as_of, { transaction_time: beforeSale });
    const all = await post('/v1/edges/recall', { record: plot });
    assert.equal(all.body.edges.length, 2);
    assert.deepEqual([...all.body.receipt.edge_cids].sort(), all.body.edges.map((e: { edge_cid: string }) => e.edge_cid).sort());
    const v = P.verifyReceipt(all.body.receipt, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.trusted, true, JSON.stringify(v.failures));
  });

  it('is an MCP tool in /mcp/full, and the writes are not', async () => {
    const list = await t.app.inject({ method: 'POST', url: '/mcp/full', payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { accept: 'application/json, text/event-stream' } });
    const names: string[] = (list.json().result?.tools ?? []).map((x: { name: string }) => x.name);
    for (const n of ['svc_memory_search', 'svc_edges_recall']) assert.ok(names.includes(n), n);
    for (const n of ['svc_memory_notes', 'svc_edges']) assert.ok(!names.includes(n), n);
    const call = await t.app.inject({
      method: 'POST',
      url: '/mcp/full',
      headers: { accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'svc_edges_recall', arguments: { record: plot, valid_at: '2026-07-01T00:00:00Z' } } },
    });
    const res = call.json().result;
    assert.ok(!res.isError, JSON.stringify(res));
    assert.equal(res.structuredContent.edges[0].to, farmY);
  });
});
