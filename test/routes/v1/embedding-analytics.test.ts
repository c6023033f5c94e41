/**
 * Embedding analytics over regions (docs/embeddings.md, "Analytics over regions"):
 * embedding_centroid, region_similarity, embedding_diversity and neighborhood_consistency, over
 * geotessera vectors attested by a test operator key.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { bearerFor } from '../../support/scopes.js';
import { attest, fails, post, vec, verifies } from './reads/helpers.js';

let t: TestApp;
const op = makeAttester('embedding-analytics-operator');
const SCOPE = { user_id: 'analytics-alice' };
const DIM = 128;

const line = (lat: number, lng: number, n: number) => Array.from({ length: n }, (_, i) => P.cellOf(lat + i * 0.0002, lng));
const A = line(10, 10, 3); // three different vectors
const NEG = line(11, 11, 3); // their opposites
const ORTH = line(12, 12, 2); // two orthogonal vectors
const SAME = line(13, 13, 3); // one vector three times
const EMPTY = line(17, 17, 4); // nothing stored
const ONE = line(19, 19, 2); // a vector at the first cell only
const MANY = line(20, 20, 300); // beyond the diversity threshold
const SCOPED = P.cellOf(16, 16);
const FALLBACK = P.cellOf(18, 18); // a vector at tslot 54, a signed absence at 55
const CALM = P.cellOf(14, 14); // itself and its 8 neighbours alike
const ODD = P.cellOf(15, 15); // its 8 neighbours alike, itself opposite
const LONELY = P.cellOf(21, 21); // a vector, no neighbour with one
const PARIS = P.cellOf(48.8534, 2.3488); // inside the square read around the place "Paris"
const CALM_RING = P.neighbours(CALM);
const ODD_RING = P.neighbours(ODD);

const va = [vec(1), vec(2), vec(3)];
const neg = (v: number[]) => v.map((x) => -x);
const basis = (i: number) => Array.from({ length: DIM }, (_, k) => (k === i ? 1 : 0));
const old = vec(9);

const real = (cell: string, value: number[], tslot = 55) => ({ kind: 'primary', cell, band: 'geotessera', tslot, value, unit: 'unitless' });
const cidOf = new Map<string, string>();
const key = (cell: string, tslot = 55) => `${cell}|${tslot}`;

function unitMean(vs: number[][]): number[] {
  const m = vs[0].map((_, i) => vs.reduce((s, v) => s + v[i], 0) / vs.length);
  const len = Math.hypot(...m);
  return m.map((x) => x / len);
}
function cos(a: number[], b: number[]): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += a[i] * b[i];
  return d / Math.hypot(...a) / Math.hypot(...b);
}
const close = (a: number, b: number, eps = 1e-9) => assert.ok(Math.abs(a - b) < eps, `${a} ≉ ${b}`);
/** The documented centroid record, recomputed: base32(BLAKE3(canonical CBOR of {encoder, dim, centroid, fact_cids ascending})). */
const recordCid = (b: any) => P.b32encode(P.blake3(P.encodeCanonical({ encoder: b.encoder, dim: b.dim, centroid: b.centroid, fact_cids: [...b.fact_cids].sort() })));

before(async () => {
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [] });
  const facts = [
    ...A.map((c, i) => real(c, va[i])),
    ...NEG.map((c, i) => real(c, neg(va[i]))),
    real(ORTH[0], basis(0)),
    real(ORTH[1], basis(1)),
    ...SAME.map((c) => real(c, va[0])),
    real(ONE[0], va[1]),
    ...MANY.map((c, i) => real(c, vec(100 + i))),
    real(FALLBACK, old, 54),
    { kind: 'absence', cell: FALLBACK, band: 'geotessera', tslot: 55, value: null, absence_reason: 'outside_coverage' },
    ...[CALM, ...CALM_RING].map((c) => real(c, va[0])),
    real(ODD, neg(va[0])),
    ...ODD_RING.map((c) => real(c, va[0])),
    real(LONELY, va[2]),
    real(PARIS, va[1]),
    real(A[0], old, 54), // an older vintage under A's first cell
  ];
  const cids = await attest(t, op, facts);
  facts.forEach((f, i) => cidOf.set(key(f.cell as string, f.tslot as number), cids[i]));
  // A batch writes one scope or none: the scoped vector goes alone.
  const [scoped] = await attest(t, op, [{ ...real(SCOPED, va[2]), scope: SCOPE }]);
  cidOf.set(`${SCOPED}|scoped`, scoped);
});
after(async () => t.close());

describe('POST /v1/embedding_centroid', () => {
  it('is the unit-length normalised mean, named by a centroid_cid that recomputes from the documented record', async () => {
    const r = await post(t, '/v1/embedding_centroid', { cells: A });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const b = r.body;
    assert.equal(b.status, 'ok');
    assert.equal(b.algorithm, 'embedding_centroid@1');
    assert.deepEqual([b.encoder, b.dim, b.cells_sampled, b.cells_with_vector, b.is_exhaustive], ['geotessera', DIM, 3, 3, true]);
    assert.equal(b.centroid.length, DIM);
    close(Math.hypot(...b.centroid), 1);
    unitMean(va).forEach((x, i) => close(b.centroid[i], x));
    const cids = A.map((c) => cidOf.get(key(c))!).sort();
    assert.deepEqual(b.fact_cids, cids);
    assert.equal(b.centroid_cid, recordCid(b));
    assert.equal(b.centroid_cid.length, 52);
    // Signed over every cell and fact_cid used; the newest vintage of A[0] (55), not its 54.
    assert.ok(verifies(t, b.receipt));
    assert.ok(P.verifyReceipt(b.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid);
    assert.equal(b.receipt.primitive, 'svc.embedding_centroid');
    assert.deepEqual([...b.receipt.fact_cids].sort(), cids);
    assert.deepEqual([...b.receipt.cells].sort(), [...A].sort());
    assert.deepEqual(b.tslots, [55]);
  });

  it('the same region by bbox reads the same cells; a smaller max_cells samples and says so', async () => {
    const bbox = [9.9999, 9.9999, 10.0001, 10.0005];
    const byBox = (await post(t, '/v1/embedding_centroid', { bbox })).body;
    const byCells = (await post(t, '/v1/embedding_centroid', { cells: A })).body;
    assert.equal(byBox.status, 'ok');
    assert.deepEqual(byBox.region.kind, 'bbox');
    assert.equal(byBox.centroid_cid, byCells.centroid_cid);
    const small = (await post(t, '/v1/embedding_centroid', { bbox, max_cells: 2 })).body;
    assert.equal(small.is_exhaustive, false);
    assert.equal(small.cells_sampled, 2);
    assert.ok(
      small.caveats.some((c: string) => /max_cells 2/.test(c)),
      small.caveats.join(' | '),
    );
  });

  it('a place is read as a square around its point, the stored cells inside found by a walk', async () => {
    const r = (await post(t, '/v1/embedding_centroid', { place: 'Paris' })).body;
    assert.equal(r.status, 'ok', JSON.stringify(r));
    assert.equal(r.region.kind, 'place');
    assert.match(r.region.place.label, /Paris/);
    assert.equal(r.region.place.radius_m, 1000);
    assert.deepEqual(r.fact_cids, [cidOf.get(key(PARIS))]);
    assert.deepEqual(r.receipt.cells, [PARIS]);
  });

  it('tslot picks a vintage; a signed absence in the newest slot falls back to the newest primary vector', async () => {
    const r = (await post(t, '/v1/embedding_centroid', { cells: [A[0]], tslot: 54 })).body;
    assert.deepEqual(r.fact_cids, [cidOf.get(key(A[0], 54))]);
    unitMean([old]).forEach((x, i) => close(r.centroid[i], x));
    const f = (await post(t, '/v1/embedding_centroid', { cells: [FALLBACK] })).body;
    assert.equal(f.status, 'ok');
    assert.deepEqual(f.fact_cids, [cidOf.get(key(FALLBACK, 54))]);
    const at55 = (await post(t, '/v1/embedding_centroid', { cells: [FALLBACK], tslot: 55 })).body;
    assert.deepEqual([at55.status, at55.reason, at55.cells_absent, at55.cells_with_vector], ['inconclusive', 'no_vectors', 1, 0]);
  });

  it('no vector in the region: a signed inconclusive answer with the counts, never a zero vector', async () => {
    const r = await post(t, '/v1/embedding_centroid', { cells: EMPTY });
    assert.equal(r.status, 200);
    const b = r.body;
    assert.deepEqual([b.status, b.reason, b.centroid, b.centroid_cid, b.cells_sampled, b.cells_with_vector], ['inconclusive', 'no_vectors', null, null, 4, 0]);
    assert.match(b.detail, /no stored geotessera vector in the region \(4 cell\(s\) read/);
    assert.ok(verifies(t, b.receipt));
    assert.deepEqual(b.receipt.fact_cids, []);
    // A vector and its opposite cancel out: no direction, so no centroid either.
    const zero = (await post(t, '/v1/embedding_centroid', { cells: [A[0], NEG[0]] })).body;
    assert.deepEqual([zero.status, zero.reason, zero.centroid, zero.cells_with_vector], ['inconclusive', 'zero_mean', null, 2]);
  });

  it("a scoped vector is invisible without the scope, and read with the scope's bearer", async () => {
    const open = (await post(t, '/v1/embedding_centroid', { cells: [SCOPED] })).body;
    assert.deepEqual([open.status, open.cells_with_vector], ['inconclusive', 0]);
    assert.ok(!JSON.stringify(open).includes(cidOf.get(`${SCOPED}|scoped`)!));
    const refused = await post(t, '/v1/embedding_centroid', { cells: [SCOPED], scope: SCOPE });
    fails(refused, 401, 'unauthorized');
    const own = await post(t, '/v1/embedding_centroid', { cells: [SCOPED], scope: SCOPE }, { authorization: await bearerFor(t, op, SCOPE) });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.body.status, 'ok');
    assert.deepEqual(own.body.fact_cids, [cidOf.get(`${SCOPED}|scoped`)]);
    assert.deepEqual(own.body.receipt.scope, SCOPE);
    assert.ok(verifies(t, own.body.receipt));
  });

  it('typed errors: unknown band, a binary band, a non-vector band, a bad region', async () => {
    fails(await post(t, '/v1/embedding_centroid', { cells: A, encoder: 'nope.band' }), 404, 'band_not_in_registry');
    const bin = await post(t, '/v1/embedding_centroid', { cells: A, encoder: 'geotessera.bin128' });
    fails(bin, 422, 'invalid_argument', 'encoder');
    assert.match(bin.body.message, /use geotessera/);
    fails(await post(t, '/v1/embedding_centroid', { cells: A, encoder: 'indices.ndvi' }), 422, 'invalid_argument', 'encoder');
    fails(await post(t, '/v1/embedding_centroid', {}), 422, 'invalid_argument', 'exactly one of');
    fails(await post(t, '/v1/embedding_centroid', { cells: A, bbox: [0, 0, 1, 1] }), 422, 'invalid_argument', 'exactly one of');
    fails(await post(t, '/v1/embedding_centroid', { cells: ['not-a-cell'] }), 422, 'invalid_cell', 'cells[0]');
    fails(await post(t, '/v1/embedding_centroid', { bbox: [10, 11, 10.1, 10.9] }), 422, 'invalid_argument', 'bbox');
    fails(
      await post(t, '/v1/embedding_centroid', {
        polygon: {
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [1, 0],
              [1, 1],
            ],
          ],
        },
      }),
      422,
      'invalid_argument',
      'polygon',
    );
    fails(await post(t, '/v1/embedding_centroid', { cells: A, radius_m: 100 }), 422, 'invalid_argument', 'radius_m');
    const tooMany = await post(t, '/v1/embedding_centroid', { cells: Array.from({ length: 1025 }, () => A[0]) });
    assert.equal(tooMany.status, 422, JSON.stringify(tooMany.body));
    assert.match(JSON.stringify(tooMany.body), /1024/);
  });
});

describe('POST /v1/region_similarity', () => {
  it('a region with itself is 1; with the opposite vectors −1; both centroid_cids and counts come back', async () => {
    const same = (await post(t, '/v1/region_similarity', { a: { cells: A }, b: { cells: A } })).body;
    assert.equal(same.status, 'ok', JSON.stringify(same));
    assert.equal(same.algorithm, 'embedding_cosine_similarity@1');
    assert.equal(same.similarity, 1);
    assert.equal(same.a.centroid_cid, same.b.centroid_cid);
    const opp = (await post(t, '/v1/region_similarity', { a: { cells: A }, b: { cells: NEG } })).body;
    assert.equal(opp.similarity, -1);
    assert.deepEqual([opp.a.cells_with_vector, opp.b.cells_with_vector], [3, 3]);
    assert.equal(opp.a.centroid_cid, recordCid({ ...opp.a, encoder: opp.encoder, dim: opp.dim }));
    assert.equal(opp.b.centroid_cid, recordCid({ ...opp.b, encoder: opp.encoder, dim: opp.dim }));
    const all = [...A, ...NEG].map((c) => cidOf.get(key(c))!).sort();
    assert.deepEqual([...opp.receipt.fact_cids].sort(), all);
    assert.ok(verifies(t, opp.receipt));
    const some = (await post(t, '/v1/region_similarity', { a: { cells: A }, b: { cells: ORTH } })).body;
    close(some.similarity, cos(unitMean(va), unitMean([basis(0), basis(1)])));
  });

  it('a side without a vector: inconclusive with both sides counted; a bad side names its field', async () => {
    const r = (await post(t, '/v1/region_similarity', { a: { cells: A }, b: { cells: EMPTY } })).body;
    assert.deepEqual([r.status, r.reason, r.similarity], ['inconclusive', 'side_inconclusive', null]);
    assert.deepEqual([r.a.status, r.a.cells_with_vector, r.b.status, r.b.reason, r.b.cells_sampled, r.b.cells_with_vector], ['ok', 3, 'inconclusive', 'no_vectors', 4, 0]);
    assert.match(r.detail, /^b: /);
    assert.ok(verifies(t, r.receipt));
    fails(await post(t, '/v1/region_similarity', { a: { cells: A }, b: {} }), 422, 'invalid_argument', 'b.place');
  });
});

describe('POST /v1/embedding_diversity', () => {
  it('identical vectors are 0, two orthogonal ones 1', async () => {
    const same = (await post(t, '/v1/embedding_diversity', { cells: SAME })).body;
    assert.deepEqual([same.status, same.algorithm, same.diversity, same.vector_sample.method, same.vector_sample.pairs], ['ok', 'embedding_diversity@1', 0, 'all', 3]);
    const orth = (await post(t, '/v1/embedding_diversity', { cells: ORTH })).body;
    assert.equal(orth.diversity, 1);
    assert.ok(verifies(t, orth.receipt));
    assert.deepEqual([...orth.receipt.fact_cids].sort(), ORTH.map((c) => cidOf.get(key(c))!).sort());
  });

  it('above 256 vectors: a seeded subset, reported, the same on a repeat, and recomputable from the documented rule', async () => {
    const r1 = (await post(t, '/v1/embedding_diversity', { cells: MANY })).body;
    const r2 = (await post(t, '/v1/embedding_diversity', { cells: MANY })).body;
    assert.equal(r1.status, 'ok');
    assert.deepEqual(r1.vector_sample, { method: 'seeded_subset', threshold: 256, seed: 0, vectors_available: 300, vectors_used: 256, pairs: (256 * 255) / 2 });
    assert.equal(r1.diversity, r2.diversity);
    assert.deepEqual(r1.fact_cids, r2.fact_cids);
    assert.equal(r1.fact_cids.length, 256);
    assert.deepEqual([...r1.receipt.fact_cids].sort(), r1.fact_cids);
    assert.ok(r1.caveats.some((c: string) => /exceed 256/.test(c)));
    // The subset: the 256 fact_cids with the smallest hex(BLAKE3("embedding_diversity@1|0|" fact_cid)).
    const byCid = new Map(MANY.map((c, i) => [cidOf.get(key(c))!, vec(100 + i)]));
    const chosen = [...byCid.keys()].sort((x, y) => (P.toHex(P.blake3(P.utf8(`embedding_diversity@1|0|${x}`))) < P.toHex(P.blake3(P.utf8(`embedding_diversity@1|0|${y}`))) ? -1 : 1)).slice(0, 256);
    assert.deepEqual([...chosen].sort(), r1.fact_cids);
    const vs = chosen.map((c) => byCid.get(c)!);
    let sum = 0;
    for (let i = 0; i < vs.length; i++) for (let j = i + 1; j < vs.length; j++) sum += 1 - cos(vs[i], vs[j]);
    close(r1.diversity, sum / ((256 * 255) / 2));
    const other = (await post(t, '/v1/embedding_diversity', { cells: MANY, seed: 7 })).body;
    assert.notDeepEqual(other.fact_cids, r1.fact_cids);
    assert.equal(other.vector_sample.seed, 7);
  });

  it('fewer than 2 vectors: inconclusive with the counts', async () => {
    const r = (await post(t, '/v1/embedding_diversity', { cells: ONE })).body;
    assert.deepEqual([r.status, r.reason, r.diversity, r.cells_sampled, r.cells_with_vector], ['inconclusive', 'too_few_vectors', null, 2, 1]);
    assert.ok(verifies(t, r.receipt));
  });
});

describe('POST /v1/neighborhood_consistency', () => {
  it('a cell among identical neighbours is 1 (outlier 0); an opposite cell −1 (outlier 2)', async () => {
    const calm = (await post(t, '/v1/neighborhood_consistency', { cell64: CALM })).body;
    assert.equal(calm.status, 'ok', JSON.stringify(calm));
    assert.deepEqual([calm.algorithm, calm.consistency, calm.outlier_score, calm.neighbours_total, calm.neighbours_with_vector], ['neighborhood_consistency@1', 1, 0, 8, 8]);
    assert.deepEqual(
      calm.neighbours.map((n: any) => n.cell),
      CALM_RING,
    );
    const odd = (await post(t, '/v1/neighborhood_consistency', { cell64: ODD })).body;
    assert.deepEqual([odd.consistency, odd.outlier_score], [-1, 2]);
    assert.equal(odd.fact_cid, cidOf.get(key(ODD)));
    assert.ok(verifies(t, odd.receipt));
    assert.deepEqual(
      odd.receipt.fact_cids,
      [ODD, ...ODD_RING].map((c) => cidOf.get(key(c))),
    );
    assert.deepEqual(odd.receipt.cells, [ODD, ...ODD_RING]);
    // lat/lng name the same cell.
    const c = P.cellCenter(CALM);
    const byLatLng = (await post(t, '/v1/neighborhood_consistency', { lat: c.lat, lng: c.lng })).body;
    assert.deepEqual([byLatLng.cell, byLatLng.consistency], [CALM, 1]);
  });

  it('inconclusive without a vector at the cell, or without a neighbour with one', async () => {
    const none = (await post(t, '/v1/neighborhood_consistency', { cell64: EMPTY[0] })).body;
    assert.deepEqual([none.status, none.reason, none.consistency, none.outlier_score, none.fact_cid], ['inconclusive', 'no_vector_at_cell', null, null, null]);
    const lonely = (await post(t, '/v1/neighborhood_consistency', { cell64: LONELY })).body;
    assert.deepEqual([lonely.status, lonely.reason, lonely.neighbours_with_vector, lonely.fact_cid], ['inconclusive', 'no_neighbour_vectors', 0, cidOf.get(key(LONELY))]);
    assert.ok(lonely.neighbours.every((n: any) => n.fact_cid === null && n.cosine === null));
    assert.ok(verifies(t, lonely.receipt));
    fails(await post(t, '/v1/neighborhood_consistency', {}), 422, 'invalid_argument');
    fails(await post(t, '/v1/neighborhood_consistency', { cell64: CALM, lat: 1, lng: 1 }), 422, 'invalid_argument');
  });
});

describe('MCP /mcp/full', () => {
  it('svc_embedding_centroid answers as REST does, with a verifying receipt', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const client = new Client({ name: 'svc-test', version: '0.0.1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/full`)));
    try {
      const { tools } = await client.listTools();
      for (const name of ['embedding_centroid', 'region_similarity', 'embedding_diversity', 'neighborhood_consistency'])
        assert.ok(
          tools.some((x) => x.name === `svc_${name}`),
          name,
        );
      const res: any = await client.callTool({ name: 'svc_embedding_centroid', arguments: { cells: A } });
      assert.equal(res.isError, undefined, JSON.stringify(res));
      const sc = res.structuredContent;
      const rest = (await post(t, '/v1/embedding_centroid', { cells: A })).body;
      assert.equal(sc.centroid_cid, rest.centroid_cid);
      assert.ok(P.verifyReceipt(sc.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid);
    } finally {
      await client.close();
    }
  });
});
