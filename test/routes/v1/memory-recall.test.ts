/**
 * What note search finds in conversations (docs/memory.md, "How search ranks"): question words
 * set aside, the speaker as a field, a time expression in the query, a hit's neighbours in its
 * thread, observed_at on every result, and the same answer on SQLite and PostgreSQL.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp, type TestDriver } from '../../support/app.js';
import { makeAttester, type TestAttester } from '../../support/attester.js';
import { bearerFor } from '../../support/scopes.js';
import { pgSkip } from '../../store/support/pg-env.js';

const SCOPE = { agent_id: 'memory-recall-agent' };

function note(value: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'primary', cell: `svc:entity:${P.anchorId(value)}`, band: 'memory.note', tslot: 0, value, signed_at: '2026-11-20T12:00:00Z', scope: SCOPE };
}

/** Two sessions of a conversation between Caroline and Melanie, one note per turn. */
const TURNS: Array<[string, string, string, string]> = [
  // [thread, observed_at, speaker, text]
  ['s1', '2023-05-08T18:00:00Z', 'Caroline', 'I went to a peer circle for trans people yesterday, it was so welcoming'],
  ['s1', '2023-05-08T18:01:00Z', 'Melanie', 'That sounds wonderful, how did you find it?'],
  ['s1', '2023-05-08T18:02:00Z', 'Caroline', 'A friend from work told me about it; we meet every Tuesday'],
  ['s1', '2023-05-08T18:03:00Z', 'Melanie', 'I took the kids camping by the lake last weekend'],
  ['s1', '2023-05-08T18:04:00Z', 'Caroline', 'Camping with kids must be tiring but fun'],
  ['s2', '2023-08-14T19:00:00Z', 'Melanie', 'We pitched a tent in the mountains this time, camping again'],
  ['s2', '2023-08-14T19:01:00Z', 'Caroline', 'I started painting sunsets, pottery is next'],
  ['s2', '2023-08-14T19:02:00Z', 'Melanie', 'Your painting of the lake is lovely'],
  ['s2', '2023-08-14T19:03:00Z', 'Caroline', 'Thanks! The lake reminds me of the peer circle picnic'],
];
const BODIES = TURNS.map(([thread, observed_at, speaker, text]) => note({ text, speaker, thread, observed_at }));
const cid = (i: number) => P.factCid(BODIES[i]);

interface Hit {
  fact_cid: string;
  score: number;
  observed_at: string | null;
  in_time_window?: boolean;
  context?: { before: Array<{ fact: { fact_cid: string } }>; after: Array<{ fact: { fact_cid: string } }> };
}

async function open(driver: TestDriver, attester: TestAttester) {
  const t = await build({ attesterKeys: [attester.publicKey] }, {}, { driver });
  const r = await t.app.inject({ method: 'POST', url: '/v1/memory/notes', payload: attester.batch(BODIES, t.service.manifests) as object });
  assert.equal(r.statusCode, 200, r.body);
  return t;
}

async function searcher(t: TestApp, attester: TestAttester) {
  const auth = { authorization: await bearerFor(t, attester, SCOPE) };
  return async (body: Record<string, unknown>) => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/memory/search', payload: { scope: SCOPE, ...body }, headers: auth });
    assert.equal(r.statusCode, 200, r.body);
    return r.json() as { results: Hit[]; interpretation: Record<string, unknown>; engine: string; receipt: { fact_cids: string[] } };
  };
}

describe('note search over a conversation', () => {
  const attester = makeAttester('memory-recall');
  let t: TestApp;
  let search: Awaited<ReturnType<typeof searcher>>;
  before(async () => {
    t = await open(process.env.SVC_TEST_DRIVER === 'postgres' ? 'postgres' : 'sqlite', attester);
    search = await searcher(t, attester);
  });
  after(async () => t?.close());

  it('sets question words aside and says which terms it ranked by', async () => {
    const r = await search({ query: 'What did Caroline go to for support?' });
    assert.equal(r.engine, 'bm25f');
    const terms = r.interpretation.terms as string[];
    assert.ok(terms.includes('carolin') && terms.includes('support'), JSON.stringify(terms));
    assert.ok((r.interpretation.set_aside as string[]).includes('what'));
  });

  it("finds a speaker's own words by the speaker's name", async () => {
    const r = await search({ query: 'Caroline camping', feedback: false });
    // Both camping notes by Melanie hold the word; Caroline's note on camping holds it and is hers.
    assert.equal(r.results[0].fact_cid, cid(4));
  });

  it('reads a time expression and puts notes observed inside it first', async () => {
    const may = await search({ query: 'camping in May 2023' });
    assert.deepEqual(new Set(may.results.slice(0, 2).map((h) => h.fact_cid)), new Set([cid(3), cid(4)]));
    assert.equal(may.results[0].in_time_window, true);
    assert.equal(may.results[2].fact_cid, cid(5), 'the August note after both May notes');
    assert.equal(may.results[2].in_time_window, false);
    const time = may.interpretation.time as { expression: string; from: string; to: string; applied: string };
    assert.equal(time.applied, 'boost');
    assert.equal(time.from, '2023-05-01T00:00:00Z');
    // The boost and in_time_window check offline against the signed notes' valid times.
    assert.equal(P.verifyResponse(may, { publicKey: t.service.keys.publicKeyB32 }).trusted, true);
    const forged = structuredClone(may) as typeof may;
    forged.results[2].in_time_window = true;
    const v = P.verifyResponse(forged, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.trusted, false);
    assert.ok(v.failures.includes('score_inconsistent'), JSON.stringify(v.failures));
    const august = await search({ query: 'camping in August 2023' });
    assert.equal(august.results[0].fact_cid, cid(5));
    const off = await search({ query: 'camping in August 2023', time: 'off' });
    assert.equal(off.interpretation.time, undefined);
    assert.equal(off.results[0].in_time_window, undefined);
    // Only a time expression: the window's notes, newest first.
    const only = await search({ query: 'in August 2023', limit: 50 });
    assert.deepEqual(new Set(only.results.map((h) => h.fact_cid)), new Set([5, 6, 7, 8].map(cid)));
  });

  it('answers "when" from observed_at on each result', async () => {
    const r = await search({ query: 'When did Melanie pitch a tent?' });
    assert.equal(r.results[0].fact_cid, cid(5));
    assert.equal(r.results[0].observed_at, '2023-08-14T19:00:00Z');
  });

  it("returns a hit's neighbours in its thread, each signed", async () => {
    const r = await search({ query: 'friend from work told me', context: 1, limit: 1 });
    assert.equal(r.results[0].fact_cid, cid(2));
    assert.deepEqual(
      r.results[0].context?.before.map((n) => n.fact.fact_cid),
      [cid(1)],
    );
    assert.deepEqual(
      r.results[0].context?.after.map((n) => n.fact.fact_cid),
      [cid(3)],
    );
    assert.deepEqual(r.receipt.fact_cids, [cid(2)], 'the ranked note; each neighbour carries its own fact receipt');
    const v = P.verifyResponse(r, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.trusted, true, JSON.stringify(v));
    // The first note of a thread has nothing before it; neighbours never cross threads.
    const first = await search({ query: 'pitched a tent mountains', context: 2, limit: 1 });
    assert.equal(first.results[0].fact_cid, cid(5));
    assert.deepEqual(first.results[0].context?.before, []);
    assert.deepEqual(
      first.results[0].context?.after.map((n) => n.fact.fact_cid),
      [cid(6), cid(7)],
    );
  });

  it('refuses a context beyond 5', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/memory/search', payload: { query: 'lake', context: 6 } });
    assert.equal(r.statusCode, 422);
  });
});

describe('note search answers alike on SQLite and PostgreSQL', { skip: pgSkip }, () => {
  const attester = makeAttester('memory-recall-both');
  let lite: TestApp;
  let pg: TestApp;
  before(async () => {
    lite = await open('sqlite', attester);
    pg = await open('postgres', attester);
  });
  after(async () => {
    await lite?.close();
    await pg?.close();
  });

  it('ranks the same notes with the same scores, feedback and time included', async () => {
    const queries = [
      { query: 'camping lake' },
      { query: 'What did Caroline go to for support?' },
      { query: 'camping in May 2023' },
      { query: 'painting the lake', feedback: false },
      { query: 'peer circle picnic', context: 1 },
      { query: 'Melanie', limit: 50 },
    ];
    const [a, b] = [await searcher(lite, attester), await searcher(pg, attester)];
    for (const q of queries) {
      const [x, y] = await Promise.all([a(q), b(q)]);
      const shape = (r: Awaited<ReturnType<typeof a>>) => ({
        interpretation: r.interpretation,
        results: r.results.map((h) => ({ fact_cid: h.fact_cid, score: h.score, context: h.context?.after.map((n) => n.fact.fact_cid) })),
      });
      assert.deepEqual(shape(y), shape(x), JSON.stringify(q));
      assert.ok(x.results.length > 0, JSON.stringify(q));
    }
  });
});
