import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { signBits } from '../../../../src/sources/geotessera.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { attest, fails, post, vec, verifies } from './helpers.js';

let t: TestApp;
const op = makeAttester('reads-similar-operator');
const Q = P.cellOf(48.8566, 2.3522); // Paris: the query cell
const NEAR = P.cellOf(48.86, 2.36); // a vector close to Q's
const MID = P.cellOf(0.5, -30.5); // mid-Atlantic: no named place within 25 km
const FAR = P.cellOf(-33.9, 18.4);
const OLD = P.cellOf(10, 10); // newest vector differs from its older one
const SCOPED = P.cellOf(11, 11);
const ABSENT = P.cellOf(12, 12);
const SCALAR_ONLY = P.cellOf(13, 13);

const q = vec(1);
const near = q.map((x, i) => Number((x + (i % 7 === 0 ? 0.05 : 0)).toFixed(6)));
const mid = vec(3);
const far = q.map((x) => -x);
const oldFirst = vec(5);
const oldNewest = q.map((x, i) => Number((x * (1 + (i % 3) * 0.2)).toFixed(6)));

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}
const agreement = (a: number[], b: number[]) => 1 - signBits(a).filter((x, i) => x !== signBits(b)[i]).length / 128;
const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;

const cidOf: Record<string, string> = {};

before(async () => {
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [] });
  const real = (cell: string, value: number[], tslot = 55) => ({ kind: 'primary', cell, band: 'geotessera', tslot, value, unit: 'unitless' });
  const code = (cell: string, value: number[], tslot = 55) => ({ kind: 'primary', cell, band: 'geotessera.bin128', tslot, value: signBits(value), unit: 'bit' });
  const facts = [
    real(Q, q),
    code(Q, q),
    real(NEAR, near),
    code(NEAR, near),
    real(MID, mid),
    code(MID, mid),
    real(FAR, far),
    code(FAR, far),
    real(OLD, oldFirst, 54),
    real(OLD, oldNewest, 55),
    code(OLD, oldNewest),
    { ...real(SCOPED, q), scope: { user_id: 'alice' } },
    { kind: 'absence', cell: ABSENT, band: 'geotessera', tslot: 55, value: null, absence_reason: 'outside_coverage' },
    { kind: 'primary', cell: SCALAR_ONLY, band: 'indices.ndvi', tslot: 680, value: 0.4, unit: 'unitless' },
  ];
  // A batch writes one scope or none (docs/scopes.md): the scoped fact goes in a batch of its own.
  const scoped = facts.filter((f) => 'scope' in f);
  const open = facts.filter((f) => !('scope' in f));
  const byFact = new Map<object, string>();
  for (const group of [open, scoped]) (await attest(t, op, group)).forEach((cid, i) => byFact.set(group[i], cid));
  const cids = facts.map((f) => byFact.get(f)!);
  facts.forEach((f, i) => {
    cidOf[`${f.cell}|${f.band}|${f.tslot}|${'scope' in f ? 'scoped' : ''}`] = cids[i];
  });
});
after(async () => t.close());

const realCid = (cell: string, tslot = 55) => cidOf[`${cell}|geotessera|${tslot}|`];
const codeCid = (cell: string) => cidOf[`${cell}|geotessera.bin128|55|`];

describe('POST /v1/find_similar', () => {
  it('cosine (default): stored public neighbours by descending cosine, the query cell left out, a verifying receipt in rank order', async () => {
    const r = await post(t, '/v1/find_similar', { key: Q });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.band, 'geotessera');
    assert.equal(r.body.mode, 'cosine');
    const cells = r.body.neighbors.map((n: any) => n.cell);
    assert.deepEqual(cells, [NEAR, OLD, MID, FAR]);
    const expected: Record<string, number[]> = { [NEAR]: near, [OLD]: oldNewest, [MID]: mid, [FAR]: far };
    for (const n of r.body.neighbors) {
      assert.ok(close(n.score, cosine(q, expected[n.cell])), `${n.cell}: ${n.score}`);
      assert.equal(n.fact_cid, realCid(n.cell));
      const c = P.cellCenter(n.cell);
      assert.equal(n.lat, c.lat);
      assert.equal(n.lng, c.lng);
    }
    assert.ok(close(r.body.neighbors[3].score, -1));
    assert.equal(r.body.query.fact_cid, realCid(Q));
    assert.equal(r.body.receipt.primitive, 'svc.find_similar');
    assert.deepEqual(r.body.receipt.cells, [Q, ...cells]);
    assert.deepEqual(r.body.receipt.fact_cids, [realCid(Q), ...cells.map((c: string) => realCid(c))]);
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(r.body.searched.index_complete, true);
  });

  it('each cell is searched at its newest vector; scoped facts and absences are never searched', async () => {
    const r = await post(t, '/v1/find_similar', { key: Q, k: 1000 });
    const cells = r.body.neighbors.map((n: any) => n.cell);
    assert.ok(!cells.includes(SCOPED), 'a scoped vector equal to the query is private to its scope');
    assert.ok(!cells.includes(ABSENT));
    const old = r.body.neighbors.find((n: any) => n.cell === OLD);
    assert.equal(old.tslot, 55);
    assert.equal(old.fact_cid, realCid(OLD, 55));
    assert.match(r.body.caveats.join(' '), /4 neighbour\(s\) found for k = 1000/);
  });

  it('place_label_cached names the nearest place within about 25 km, else null (never absent)', async () => {
    const r = await post(t, '/v1/find_similar', { key: FAR, k: 10 });
    const byCell = Object.fromEntries(r.body.neighbors.map((n: any) => [n.cell, n]));
    assert.match(byCell[Q].place_label_cached, /^Paris, FR$/);
    assert.ok('place_label_cached' in byCell[MID]);
    assert.equal(byCell[MID].place_label_cached, null);
  });

  it('k bounds the answer', async () => {
    const r = await post(t, '/v1/find_similar', { key: Q, k: 1 });
    assert.deepEqual(
      r.body.neighbors.map((n: any) => n.cell),
      [NEAR],
    );
    assert.deepEqual(r.body.receipt.cells, [Q, NEAR]);
  });

  it('hamming: agreement of the .bin128 codes in [0, 1], scored from the code facts', async () => {
    const r = await post(t, '/v1/find_similar', { key: Q, mode: 'hamming' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const expected: Record<string, number[]> = { [NEAR]: near, [OLD]: oldNewest, [MID]: mid, [FAR]: far };
    let last = Infinity;
    for (const n of r.body.neighbors) {
      assert.ok(close(n.score, agreement(q, expected[n.cell])), `${n.cell}: ${n.score}`);
      assert.ok(n.score >= 0 && n.score <= 1 && n.score <= last);
      last = n.score;
      assert.equal(n.fact_cid, codeCid(n.cell));
    }
    assert.equal(r.body.neighbors.at(-1).cell, FAR);
    assert.equal(r.body.neighbors.at(-1).score, 0);
    assert.equal(r.body.query.code_fact_cid, codeCid(Q));
    assert.ok(verifies(t, r.body.receipt));
  });

  it('hamming_then_rerank: Hamming triage, then cosine scores from the real vectors', async () => {
    const r = await post(t, '/v1/find_similar', { key: Q, mode: 'hamming_then_rerank', k: 3 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.neighbors.map((n: any) => n.cell),
      [NEAR, OLD, MID],
    );
    assert.ok(close(r.body.neighbors[0].score, cosine(q, near)));
    assert.equal(r.body.neighbors[0].fact_cid, realCid(NEAR));
  });

  it('an inline vector: no query cell to leave out; lat and lng are null (never absent), as the spec has it for inline queries', async () => {
    const r = await post(t, '/v1/find_similar', { key: `inline:${JSON.stringify(q)}`, k: 2 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.query.kind, 'inline');
    assert.deepEqual(
      r.body.neighbors.map((n: any) => n.cell),
      [Q, NEAR],
    );
    for (const n of r.body.neighbors) assert.deepEqual([n.lat, n.lng, 'lat' in n, 'lng' in n], [null, null, true, true]);
    assert.match(r.body.neighbors[0].place_label_cached, /^Paris, FR$/, 'the label still comes from the cell');
    assert.ok(close(r.body.neighbors[0].score, 1));
    assert.deepEqual(r.body.receipt.cells, [Q, NEAR]);
    const bits = await post(t, '/v1/find_similar', { key: `inline:${JSON.stringify(signBits(q))}`, band: 'geotessera.bin128', k: 1 });
    assert.equal(bits.body.mode, 'hamming', 'a binary band defaults to hamming');
    assert.deepEqual(
      bits.body.neighbors.map((n: any) => [n.cell, n.score]),
      [[Q, 1]],
    );
  });

  it('follows the log: a vector attested after a search is found by the next one', async () => {
    const NEW = P.cellOf(20, 20);
    await attest(t, op, [{ kind: 'primary', cell: NEW, band: 'geotessera', tslot: 55, value: q.map((x) => x * 2), unit: 'unitless' }]);
    const r = await post(t, '/v1/find_similar', { key: Q, k: 1 });
    assert.equal(r.body.neighbors[0].cell, NEW);
    assert.ok(close(r.body.neighbors[0].score, 1));
  });

  it('exact: false asks the HNSW graph (its parameters in the answer) and, re-scored exactly, agrees with the full scan here; a small band is scanned exactly by default', async () => {
    const full = await post(t, '/v1/find_similar', { key: Q, k: 3 });
    assert.equal(full.body.searched.exact, true);
    assert.equal(full.body.searched.index, null);
    const approx = await post(t, '/v1/find_similar', { key: Q, k: 3, exact: false });
    assert.equal(approx.status, 200, JSON.stringify(approx.body));
    assert.equal(approx.body.searched.exact, false);
    assert.equal(approx.body.searched.index.kind, 'hnsw');
    assert.equal(approx.body.searched.index.metric, 'cos');
    assert.ok(approx.body.searched.index.rescored >= 3);
    assert.deepEqual(
      approx.body.neighbors.map((n: any) => [n.cell, n.score, n.fact_cid]),
      full.body.neighbors.map((n: any) => [n.cell, n.score, n.fact_cid]),
    );
    assert.ok(approx.body.caveats.some((c: string) => /approximate search/.test(c)));
    assert.ok(verifies(t, approx.body.receipt));
  });

  it('a query cell without a vector: cid_not_found naming the bands attested there', async () => {
    const r = await post(t, '/v1/find_similar', { key: SCALAR_ONLY });
    fails(r, 404, 'cid_not_found', 'key');
    assert.deepEqual(r.body.details.bands_attested_at_cell, ['indices.ndvi']);
    fails(await post(t, '/v1/find_similar', { key: ABSENT }), 404, 'cid_not_found', 'key');
    fails(await post(t, '/v1/find_similar', { key: SCOPED }), 404, 'cid_not_found', 'key');
  });

  it('bad input: typed errors naming the field', async () => {
    fails(await post(t, '/v1/find_similar', {}), 422, 'invalid_argument', 'key');
    fails(await post(t, '/v1/find_similar', { key: Q, k: 0 }), 422, 'invalid_argument', 'k');
    fails(await post(t, '/v1/find_similar', { key: Q, k: 1001 }), 422, 'invalid_argument', 'k');
    fails(await post(t, '/v1/find_similar', { key: Q, mode: 'euclid' }), 422, 'invalid_argument', 'mode');
    fails(await post(t, '/v1/find_similar', { key: Q, band: 'ndvi' }), 404, 'band_not_in_registry', 'band');
    fails(await post(t, '/v1/find_similar', { key: Q, band: 'indices.ndvi' }), 422, 'invalid_argument', 'band');
    fails(await post(t, '/v1/find_similar', { key: Q, band: 'geotessera.bin128', mode: 'cosine' }), 422, 'invalid_argument', 'mode');
    fails(await post(t, '/v1/find_similar', { key: 'inline:[1,2,3]' }), 422, 'invalid_argument', 'key');
    fails(await post(t, '/v1/find_similar', { key: 'inline:[1,' }), 422, 'invalid_argument', 'key');
    fails(await post(t, '/v1/find_similar', { key: `inline:${JSON.stringify(q)}`, band: 'geotessera.bin128' }), 422, 'invalid_argument', 'key');
    fails(await post(t, '/v1/find_similar', { key: 'defi.nope' }), 422, 'invalid_cell', 'key');
  });
});

describe('find_similar after a restart', () => {
  it('the index is saved at close and loaded at start: a responder reopened on the same data answers as before without reading the old log again', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-similar-restart-'));
    try {
      const A = P.cellOf(-1, -1);
      const B = P.cellOf(-1.001, -1);
      const first = await build({ attesterKeys: [op.publicKey], dataDir }, {}, { materializers: [] });
      await attest(first, op, [
        { kind: 'primary', cell: A, band: 'geotessera', tslot: 55, value: q, unit: 'unitless' },
        { kind: 'primary', cell: B, band: 'geotessera', tslot: 55, value: near, unit: 'unitless' },
      ]);
      const before = await post(first, '/v1/find_similar', { key: A });
      await first.close();
      const again = await build({ attesterKeys: [op.publicKey], dataDir }, {}, { materializers: [] });
      try {
        const after = await post(again, '/v1/find_similar', { key: A });
        assert.equal(after.status, 200, JSON.stringify(after.body));
        assert.deepEqual(after.body.neighbors, before.body.neighbors);
        assert.equal(after.body.searched.index_complete, true);
        const { vectorIndexOf } = await import('../../../../src/primitives/embeddings/similar.js');
        assert.equal(vectorIndexOf(again.service).start.from, 'disk', JSON.stringify(vectorIndexOf(again.service).start));
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('find_similar at extreme magnitudes', () => {
  let x: TestApp;
  before(async () => {
    x = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [] });
  });
  after(async () => x.close());

  it('extreme magnitudes keep exact cosines: a vector scaled by 1e300 or 1e-300 scores 1, never NaN or 0', async () => {
    const BASE = P.cellOf(29, 29);
    const HUGE = P.cellOf(30, 30);
    const TINY = P.cellOf(31, 31);
    await attest(x, op, [
      { kind: 'primary', cell: BASE, band: 'geotessera', tslot: 55, value: q, unit: 'unitless' },
      { kind: 'primary', cell: HUGE, band: 'geotessera', tslot: 55, value: q.map((x) => x * 1e300), unit: 'unitless' },
      { kind: 'primary', cell: TINY, band: 'geotessera', tslot: 55, value: q.map((x) => x * 1e-300), unit: 'unitless' },
    ]);
    const r = await post(x, '/v1/find_similar', { key: `inline:${JSON.stringify(q.map((x) => x * 1e200))}`, k: 3 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const byCell = Object.fromEntries(r.body.neighbors.map((n: any) => [n.cell, n.score]));
    assert.ok(close(byCell[HUGE], 1) && close(byCell[TINY], 1) && close(byCell[BASE], 1), JSON.stringify(byCell));
  });
});
