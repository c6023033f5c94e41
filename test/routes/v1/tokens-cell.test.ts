/**
 * Cell tokens (spec 2.5): locate mints `svc:cell:<cell64>`, and every field that takes a cell
 * reads the same cell from the token as from the bare cell64 (the geocoders never see it). A token
 * with a malformed cell is invalid_cell. Resolving one answers the address and no facts.
 * Entity tokens, current and legacy (`meme:`), resolve alike to a typed miss.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { fakeConnector, type FakeConnector } from '../../support/fake-connector.js';

let t: TestApp;
let fake: FakeConnector;
const op = makeAttester('tokens-cell-operator');
const cell = P.cellOf(-33.9249, 18.4241);
const other = P.cellOf(-33.9301, 18.4302);
const DAY = 86_400;
const tok = (c: string, prefix = 'svc') => `${prefix}:cell:${c}`;

before(async () => {
  fake = fakeConnector(['copdem30m.elevation_mean', 'weather.temperature_2m']);
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [fake] });
  const temp = { kind: 'primary', band: 'weather.temperature_2m', unit: 'degC' };
  const elev = { kind: 'primary', band: 'copdem30m.elevation_mean', unit: 'm_msl', tslot: 0 };
  const r = await post(
    '/v1/attest',
    op.batch(
      [
        { ...temp, cell, tslot: 20_000, value: 18 },
        { ...temp, cell, tslot: 20_003, value: 21.5 },
        { ...temp, cell: other, tslot: 20_000, value: 17 },
        { ...elev, cell, value: 12 },
        { ...elev, cell: other, value: 30 },
      ],
      t.service.manifests,
    ),
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
});
after(async () => t.close());

async function post(url: string, payload: unknown, app = t) {
  const r = await app.app.inject({ method: 'POST', url, payload: payload as object });
  return { status: r.statusCode, body: r.json() };
}

function failsWith(r: { status: number; body: any }, status: number, code: string, field?: string) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.code, code, JSON.stringify(r.body));
  assert.equal(r.body.schema, 'svc.error.v1');
  if (field !== undefined) assert.equal(r.body.details.field, field, JSON.stringify(r.body));
}

/** The same read with the cell as a token and as a bare cell64 answers the same cells and facts. */
async function sameRead(url: string, withToken: object, withCell: object) {
  const a = await post(url, withToken);
  const b = await post(url, withCell);
  assert.equal(a.status, 200, `${url}: ${JSON.stringify(a.body).slice(0, 400)}`);
  assert.equal(b.status, 200, `${url}: ${JSON.stringify(b.body).slice(0, 400)}`);
  assert.deepEqual(a.body.receipt.cells, b.body.receipt.cells, url);
  assert.deepEqual(a.body.receipt.fact_cids, b.body.receipt.fact_cids, url);
  assert.ok(P.verifyReceipt(a.body.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid, url);
  return a.body;
}

describe('POST /v1/locate mints a cell token', () => {
  it('a place name answers token = svc:cell:<cell64>', async () => {
    const r = await post('/v1/locate', { place: 'Paris' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.token, tok(r.body.cell64));
  });

  it('coordinates answer the token of their cell', async () => {
    const r = await post('/v1/locate', { lat: -33.9249, lng: 18.4241 });
    assert.equal(r.body.token, tok(cell));
  });

  it('the token locate minted reads the located cell through recall', async () => {
    const loc = await post('/v1/locate', { lat: -33.9249, lng: 18.4241 });
    const r = await post('/v1/recall', { cell: loc.body.token, bands: ['weather.temperature_2m'], tslot: 20_000 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.cell, cell);
    assert.equal(r.body.place, undefined, 'a token is an address, not a place name: nothing was geocoded');
    assert.deepEqual(
      r.body.facts.map((f: any) => f.value),
      [18],
    );
  });

  it("the prefix word is the deployment's", async () => {
    const acme = await build({ prefix: 'acme' });
    try {
      const loc = await post('/v1/locate', { lat: -33.9249, lng: 18.4241 }, acme);
      assert.equal(loc.body.token, tok(cell, 'acme'));
      const r = await post('/v1/recall', { cell: loc.body.token, bands: ['copdem30m.elevation_mean'] }, acme);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.cell, cell);
    } finally {
      await acme.close();
    }
  });
});

describe('a cell token is accepted wherever a cell is', () => {
  const temp = 'weather.temperature_2m';

  it('recall', async () => {
    const body = await sameRead('/v1/recall', { cell: tok(cell), bands: [temp], tslot: 20_003 }, { cell, bands: [temp], tslot: 20_003 });
    assert.equal(body.cell, cell);
    assert.equal(body.facts[0].value, 21.5);
  });

  it('recall_many: each token is read as its cell', async () => {
    const r = await post('/v1/recall_many', { cells: [tok(cell), other], bands: [temp], tslot: 20_000 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.cells, [cell, other]);
    assert.deepEqual(
      r.body.by_cell[cell].facts.map((f: any) => f.value),
      [18],
    );
    assert.equal(r.body.by_cell[cell].place, undefined);
  });

  it('fetch, trajectory and diff', async () => {
    await sameRead('/v1/fetch', { cell: tok(cell), band: temp, tslot: 20_000 }, { cell, band: temp, tslot: 20_000 });
    const window = [20_000 * DAY, 20_003 * DAY + 5];
    const traj = await sameRead('/v1/trajectory', { cell: tok(cell), band: temp, window }, { cell, band: temp, window });
    assert.deepEqual(
      traj.points.map((p: any) => p.value),
      [18, 21.5],
    );
    const d = await sameRead('/v1/diff', { cell: tok(cell), band: temp, tslot_a: 20_000, tslot_b: 20_003 }, { cell, band: temp, tslot_a: 20_000, tslot_b: 20_003 });
    assert.equal(d.delta, 3.5);
  });

  it('compare, compare_bands and verify', async () => {
    await sameRead('/v1/compare', { a: tok(cell), b: tok(other), family: 'weather' }, { a: cell, b: other, family: 'weather' });
    await sameRead('/v1/compare_bands', { cell: tok(cell), a: temp, b: temp, tslot_a: 20_000, tslot_b: 20_003 }, { cell, a: temp, b: temp, tslot_a: 20_000, tslot_b: 20_003 });
    const claim = { band: temp, op: 'gt', value: 20, tslot: 20_003 };
    const v = await sameRead('/v1/verify', { cell: tok(cell), claim }, { cell, claim });
    assert.equal(v.holds, true);
  });

  it('state (a recall underneath)', async () => {
    const r = await post('/v1/state', { cell: tok(cell) });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.cell, cell);
  });

  it('the cell64 field of a shortcut, by POST and by GET', async () => {
    const a = await sameRead('/v1/elevation', { cell64: tok(cell) }, { cell64: cell });
    assert.equal(a.place.cell64, cell);
    const g = await t.app.inject({ method: 'GET', url: `/v1/elevation?cell64=${encodeURIComponent(tok(cell))}` });
    assert.equal(g.statusCode, 200, g.body);
    assert.equal(g.json().place.cell64, cell);
  });

  it('cell_view (both GET forms) and query_region', async () => {
    const view = async (url: string) => {
      const r = await t.app.inject({ method: 'GET', url });
      assert.equal(r.statusCode, 200, r.body);
      return r.json();
    };
    const bare = (await view(`/v1/cells/${cell}`)).receipt;
    for (const url of [`/v1/cells/${encodeURIComponent(tok(cell))}`, `/v1/cell_view?cell64=${encodeURIComponent(tok(cell))}`]) {
      const got = (await view(url)).receipt;
      assert.deepEqual([got.cells, got.fact_cids], [bare.cells, bare.fact_cids], url);
    }
    const q = await post('/v1/query_region', { geometry: tok(cell), bands: ['copdem30m.elevation_mean'] });
    assert.equal(q.status, 200, JSON.stringify(q.body));
    const plain = await post('/v1/query_region', { geometry: cell, bands: ['copdem30m.elevation_mean'] });
    assert.deepEqual(q.body.receipt.fact_cids, plain.body.receipt.fact_cids);
  });
});

describe('a cell token with a malformed cell is invalid_cell', () => {
  const bad = 'svc:cell:defi.zb400.bafi.bab';

  it('is refused before any geocoder, naming the field', async () => {
    failsWith(await post('/v1/recall', { cell: bad }), 422, 'invalid_cell', 'cell');
    failsWith(await post('/v1/recall', { cell: 'svc:cell:' }), 422, 'invalid_cell', 'cell');
    failsWith(await post('/v1/recall_many', { cells: [cell, bad] }), 422, 'invalid_cell', 'cells[1]');
    failsWith(await post('/v1/compare', { a: cell, b: bad }), 422, 'invalid_cell', 'b');
    failsWith(await post('/v1/elevation', { cell64: bad }), 422, 'invalid_cell', 'cell64');
    const view = await t.app.inject({ method: 'GET', url: `/v1/cells/${encodeURIComponent(bad)}` });
    failsWith({ status: view.statusCode, body: view.json() }, 422, 'invalid_cell', 'cell64');
    failsWith(await post('/v1/query_region', { geometry: bad, bands: ['copdem30m.elevation_mean'] }), 422, 'invalid_cell', 'geometry');
    failsWith(await post('/v1/memory_token/resolve', { token: bad }), 422, 'invalid_cell', 'token');
  });
});

describe('POST /v1/memory_token/resolve with a cell token', () => {
  it('answers the cell, its centre and where to read it: an address only, no facts', async () => {
    const r = await post('/v1/memory_token/resolve', { token: tok(cell) });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const b = r.body;
    assert.equal(b.kind, 'cell');
    assert.equal(b.cell, cell);
    assert.equal(b.address_only, true);
    assert.match(b.note, /address only/);
    assert.equal(b.fact, undefined);
    assert.equal(b.facts, undefined);
    assert.deepEqual([b.lat, b.lng], [P.cellCenter(cell).lat, P.cellCenter(cell).lng]);
    assert.deepEqual(b.next, { method: 'POST', path: '/v1/recall', body: { cell: tok(cell) } });
    assert.deepEqual(b.receipt.cells, [cell]);
    assert.deepEqual(b.receipt.fact_cids, []);
    assert.ok(P.verifyReceipt(b.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid);
  });
});

describe('entity tokens: current and legacy forms resolve alike', () => {
  const id = 'abcdefghijklmnopqrstuvwxyz';
  const unknown = P.anchorId({ kind: 'field', name: 'never minted here' });

  it('a well-formed id naming no entity is a typed 404, never a 5xx, alike in both forms', async () => {
    const current = await post('/v1/memory_token/resolve', { token: `svc:entity:${unknown}` });
    const legacy = await post('/v1/memory_token/resolve', { token: `meme:${unknown}` });
    for (const r of [current, legacy]) failsWith(r, 404, 'cid_not_found', 'token');
    assert.equal(current.body.message, legacy.body.message);
  });

  it('a minted entity resolves from its token, current and legacy alike', async () => {
    const minted = await post('/v1/entity', { kind: 'field', name: 'token test field', geometry: { cell: P.cellOf(10.5, 20.5) } });
    assert.equal(minted.status, 200, JSON.stringify(minted.body));
    for (const token of [minted.body.token, `meme:${minted.body.entity_cid}`]) {
      const r = await post('/v1/memory_token/resolve', { token });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.kind, 'entity');
      assert.equal(r.body.candidates[0].entity_cid, minted.body.entity_cid);
    }
  });

  it('a malformed id is invalid_argument naming the token, in both forms', async () => {
    for (const token of ['svc:entity:short', `meme:${id}x`, 'meme:', `meme:entity:${id}`, `svc:entity:${id.toUpperCase()}`]) {
      failsWith(await post('/v1/memory_token/resolve', { token }), 422, 'invalid_argument', 'token');
    }
  });
});
