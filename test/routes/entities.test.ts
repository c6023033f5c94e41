/**
 * Entities over REST (docs/entities.md): idempotent minting (same content → same entity_cid),
 * polygon entities and their sample cells, aliases signed by the caller and refused for an
 * unknown entity without writing, resolve ranked by distinct attesters with the evidence, scope
 * isolation, and recall by entity; every receipt verifies as a client would check it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { OPERATIONS } from '../../src/api/ops/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester, type TestAttester } from '../support/attester.js';
import { bearerFor } from '../support/scopes.js';

const FIELD_CELL = P.cellOf(52.20001, 5.30001);
const SIGNED_AT = '2026-11-20T12:00:00Z';
const SCOPE = { agent_id: 'entities-test-scope-a' };
const OTHER_SCOPE = { agent_id: 'entities-test-scope-b' };
/** A square of about 110 m × 70 m (GeoJSON order [lng, lat]). */
const SQUARE = {
  type: 'Polygon',
  coordinates: [
    [
      [5.31, 52.21],
      [5.311, 52.21],
      [5.311, 52.211],
      [5.31, 52.211],
      [5.31, 52.21],
    ],
  ],
};

let t: TestApp;
let a: TestAttester;
let b: TestAttester;
let c: TestAttester;
before(async () => {
  a = makeAttester('entities-a');
  b = makeAttester('entities-b');
  c = makeAttester('entities-c');
  t = await build({ attesterKeys: [a.publicKey, b.publicKey, c.publicKey] });
});
after(async () => t.close());

const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
  const r = await t.app.inject({ method: 'POST', url, payload: payload as object, headers });
  return { status: r.statusCode, body: r.json() };
};
const m = () => t.service.manifests;
const alias = (entity: string, phrase: string, scope?: P.Scope) => P.recordBody('memory.alias', { entity, phrase }, { signed_at: SIGNED_AT, ...(scope ? { scope } : {}) });
const verified = (body: unknown) => {
  const v = P.verifyResponse(body, { publicKey: t.service.keys.publicKeyB32 });
  assert.equal(v.valid, true, JSON.stringify(v.errors).slice(0, 2000));
  return v;
};
async function mint(payload: Record<string, unknown>, headers: Record<string, string> = {}) {
  const r = await post('/v1/entity', payload, headers);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

describe('POST /v1/entity', () => {
  it('mints once: the same content returns the same entity (created false), other attributes another one', async () => {
    const first = await mint({ kind: 'field', name: '  Noordakker  ', geometry: { cell: FIELD_CELL }, attributes: { crop: 'maize', ha: 4.2 } });
    assert.equal(first.created, true);
    assert.match(first.entity_cid, /^[a-z2-7]{26}$/);
    assert.equal(first.token, `svc:entity:${first.entity_cid}`);
    assert.deepEqual(first.entity, { kind: 'field', name: 'Noordakker', geometry: { cell: FIELD_CELL }, attributes: { crop: 'maize', ha: 4.2 } });
    assert.equal(first.entity_cid, P.anchorId(first.entity), 'entity_cid is the anchor of the signed value');
    assert.deepEqual(first.cells, [FIELD_CELL]);
    assert.equal(first.fact.band, 'memory.entity');
    assert.equal(first.fact.cell, first.token);
    assert.equal(first.fact.signer, t.service.keys.publicKeyB32);
    verified(first);

    const again = await mint({ kind: 'field', name: 'Noordakker', geometry: { cell: `svc:cell:${FIELD_CELL}` }, attributes: { ha: 4.2, crop: 'maize' } });
    assert.equal(again.created, false);
    assert.equal(again.entity_cid, first.entity_cid);
    assert.equal(again.fact.fact_cid, first.fact.fact_cid, 'no second record');
    verified(again);

    const other = await mint({ kind: 'field', name: 'Noordakker', geometry: { cell: FIELD_CELL }, attributes: { crop: 'wheat', ha: 4.2 } });
    assert.equal(other.created, true);
    assert.notEqual(other.entity_cid, first.entity_cid);
    const bare = await mint({ kind: 'field', name: 'Noordakker', geometry: { cell: FIELD_CELL } });
    const empty = await mint({ kind: 'field', name: 'Noordakker', geometry: { cell: FIELD_CELL }, attributes: {} });
    assert.equal(empty.entity_cid, bare.entity_cid, 'no attributes and {} are the same content');
    assert.equal(empty.created, false);
  });

  it('a place name is resolved and stored as its cell64: the same entity as naming the cell', async () => {
    const named = await mint({ kind: 'city', name: 'Paris', geometry: { cell: 'Paris' } });
    assert.equal(named.place.query, 'Paris');
    assert.ok(P.isCell(named.entity.geometry.cell));
    assert.equal(named.entity.geometry.cell, named.place.cell64);
    const byCell = await mint({ kind: 'city', name: 'Paris', geometry: { cell: named.place.cell64 } });
    assert.equal(byCell.entity_cid, named.entity_cid);
    assert.equal(byCell.created, false);
    assert.equal(byCell.place, undefined);
  });

  it('a polygon entity covers the sample cells of its polygon', async () => {
    const e = await mint({ kind: 'farm', name: 'Hoeve de Linde', geometry: { polygon: SQUARE } });
    assert.equal(e.created, true);
    assert.ok(e.cells.length > 1 && e.cells.length <= 64, `${e.cells.length} cells`);
    for (const cell of e.cells) {
      const { lat, lng } = P.cellCenter(cell);
      assert.ok(lat >= 52.21 && lat <= 52.211 && lng >= 5.31 && lng <= 5.311, `${cell} lies inside`);
    }
    verified(e);
  });

  it('refuses malformed identities with the field named', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ kind: 'Field', name: 'x', geometry: { cell: FIELD_CELL } }, 'kind'],
      [{ kind: 'field', name: '   ', geometry: { cell: FIELD_CELL } }, 'name'],
      [{ kind: 'field', name: 'x', geometry: {} }, 'geometry'],
      [{ kind: 'field', name: 'x', geometry: { cell: FIELD_CELL, polygon: SQUARE } }, 'geometry'],
      [{ kind: 'field', name: 'x', geometry: { polygon: { ...SQUARE, coordinates: [SQUARE.coordinates[0], SQUARE.coordinates[0]] } } }, 'geometry.polygon.coordinates'],
      [{ kind: 'field', name: 'x', geometry: { cell: FIELD_CELL }, attributes: { nested: { no: 1 } } }, 'attributes'],
    ];
    for (const [payload, field] of cases) {
      const r = await post('/v1/entity', payload);
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.ok(String(r.body.details?.field ?? r.body.message ?? JSON.stringify(r.body)).includes(field), `${field}: ${JSON.stringify(r.body)}`);
    }
  });
});

describe('two responders in one process', () => {
  it('each stores its own record when both mint the same entity at once (in-flight mints are per store)', async () => {
    const other = await build({ attesterKeys: [a.publicKey] });
    try {
      const body = { kind: 'field', name: 'Two responders field', geometry: { cell: FIELD_CELL } };
      const [x, y] = await Promise.all([t.app.inject({ method: 'POST', url: '/v1/entity', payload: body }), other.app.inject({ method: 'POST', url: '/v1/entity', payload: body })]);
      assert.equal(x.statusCode, 200, x.body);
      assert.equal(y.statusCode, 200, y.body);
      assert.equal(x.json().entity_cid, y.json().entity_cid);
      for (const app of [t, other]) {
        const w = await app.app.inject({ method: 'POST', url: '/v1/entity/alias', payload: a.batch([alias(x.json().entity_cid, 'the twin field')], app.service.manifests) as object });
        assert.equal(w.statusCode, 200, w.body);
      }
    } finally {
      await other.close();
    }
  });
});

describe('aliases and resolve', () => {
  let meadow: string;
  let pasture: string;
  const aliasCids: string[] = [];
  before(async () => {
    meadow = (await mint({ kind: 'field', name: 'Kerkweide', geometry: { cell: P.cellOf(52.3, 5.4) } })).entity_cid;
    pasture = (await mint({ kind: 'field', name: 'Molenkamp', geometry: { cell: P.cellOf(52.31, 5.41) } })).entity_cid;
    for (const [who, entity, phrase] of [
      [a, meadow, 'the big meadow'],
      [b, meadow, 'big meadow by the church'],
      [c, pasture, 'big meadow'],
    ] as const) {
      const r = await post('/v1/entity/alias', who.batch([alias(entity, phrase)], m()));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.aliases, [{ fact_cid: P.factCid(alias(entity, phrase)), entity_cid: entity, phrase }]);
      verified(r.body);
      aliasCids.push(r.body.aliases[0].fact_cid);
    }
  });

  it('ranks the entity two distinct attesters aliased above the one a single attester did, with the evidence', async () => {
    const r = await post('/v1/entity/resolve', { phrase: 'big meadow' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const [first, second] = r.body.candidates;
    assert.equal(first.entity_cid, meadow);
    assert.equal(first.token, `svc:entity:${meadow}`);
    assert.equal(first.entity.name, 'Kerkweide');
    assert.deepEqual(first.corroboration, { distinct_attesters: 2, alias_attesters: [a.publicKey, b.publicKey].sort(), fact_attesters: [] });
    assert.deepEqual(new Set(first.evidence.filter((e: any) => e.type === 'alias').map((e: any) => e.fact_cid)), new Set(aliasCids.slice(0, 2)));
    assert.equal(second.entity_cid, pasture);
    assert.equal(second.corroboration.distinct_attesters, 1);
    assert.deepEqual(second.corroboration.alias_attesters, [c.publicKey]);
    assert.ok(first.score > 0 && second.score > 0);
    const cited = r.body.candidates.flatMap((x: any) => x.evidence.filter((e: any) => e.fact_cid).map((e: any) => e.fact_cid));
    assert.deepEqual(new Set(r.body.receipt.fact_cids), new Set(cited));
    verified(r.body);
    // kind and limit filter; a token names the entity directly.
    assert.equal((await post('/v1/entity/resolve', { phrase: 'big meadow', kind: 'river' })).body.candidates.length, 0);
    assert.equal((await post('/v1/entity/resolve', { phrase: 'big meadow', limit: 1 })).body.candidates.length, 1);
    const tok = await post('/v1/entity/resolve', { token: `meme:${pasture}` });
    assert.equal(tok.status, 200, JSON.stringify(tok.body));
    assert.deepEqual(
      tok.body.candidates.map((x: any) => x.entity_cid),
      [pasture],
    );
    verified(tok.body);
  });

  it('facts filed under the entity corroborate it too', async () => {
    const fact = { kind: 'primary', cell: `svc:entity:${pasture}`, band: 'weather.temperature_2m', value: 11.5, unit: 'degC', signed_at: SIGNED_AT };
    const w = await post('/v1/attest', a.batch([fact], m()));
    assert.equal(w.status, 200, JSON.stringify(w.body));
    const r = await post('/v1/entity/resolve', { phrase: 'big meadow' });
    const p = r.body.candidates.find((x: any) => x.entity_cid === pasture);
    assert.deepEqual(p.corroboration, { distinct_attesters: 2, alias_attesters: [c.publicKey], fact_attesters: [a.publicKey] });
    assert.ok(p.evidence.some((e: any) => e.type === 'facts' && e.attester === a.publicKey && e.facts === 1));
    verified(r.body);
  });

  it('refuses an alias for an unknown entity and writes nothing', async () => {
    const size = await t.service.store.log.size();
    const ghost = P.anchorId({ nothing: 'here' });
    const r = await post('/v1/entity/alias', a.batch([alias(meadow, 'fine'), alias(ghost, 'nowhere')], m()));
    assert.equal(r.status, 404, JSON.stringify(r.body));
    assert.equal(r.body.code, 'cid_not_found');
    assert.equal(r.body.details.field, 'facts[1].value.entity');
    assert.equal(await t.service.store.log.size(), size);
    // A forged batch is refused for its signature, not told whether the entity exists.
    const forged = { ...b.batch([alias(ghost, 'nowhere')], m()), attester: a.publicKey };
    const f = await post('/v1/entity/alias', forged);
    assert.equal(f.status, 401, JSON.stringify(f.body));
    // Other bands go elsewhere.
    const note = P.recordBody('memory.note', { text: 'hello' }, { signed_at: SIGNED_AT });
    assert.equal((await post('/v1/entity/alias', a.batch([note], m()))).status, 422);
    assert.equal(await t.service.store.log.size(), size);
  });
});

describe('scopes', () => {
  it('a scoped entity and its aliases are invisible outside the scope: the answer is "nothing there"', async () => {
    const value = { kind: 'orchard', name: 'Zwartbessenhof', geometry: { cell: P.cellOf(51.9, 4.9) } };
    assert.equal((await post('/v1/entity', { ...value, scope: SCOPE })).status, 401, 'a scoped mint needs the bearer');
    const auth = { authorization: await bearerFor(t, a, SCOPE) };
    const e = await mint({ ...value, scope: SCOPE }, auth);
    assert.equal(e.created, true);
    assert.deepEqual(e.receipt.scope, SCOPE);
    verified(e);
    const w = await post('/v1/entity/alias', a.batch([alias(e.entity_cid, 'blackcurrant yard', SCOPE)], m()));
    assert.equal(w.status, 200, JSON.stringify(w.body));
    // Inside the scope it resolves.
    const inside = await post('/v1/entity/resolve', { phrase: 'blackcurrant yard', scope: SCOPE }, auth);
    assert.equal(inside.status, 200, JSON.stringify(inside.body));
    assert.deepEqual(
      inside.body.candidates.map((x: any) => x.entity_cid),
      [e.entity_cid],
    );
    verified(inside.body);

    // Outside: the same as a phrase nothing matches.
    const nothing = await post('/v1/entity/resolve', { phrase: 'qqqq zzzz' });
    const publicView = await post('/v1/entity/resolve', { phrase: 'blackcurrant yard' });
    const otherAuth = { authorization: await bearerFor(t, b, OTHER_SCOPE) };
    const otherView = await post('/v1/entity/resolve', { phrase: 'blackcurrant yard', scope: OTHER_SCOPE }, otherAuth);
    for (const r of [publicView, otherView]) {
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.candidates, nothing.body.candidates);
      assert.deepEqual([r.body.receipt.cells, r.body.receipt.fact_cids], [[], []]);
    }
    assert.equal((await post('/v1/entity/resolve', { phrase: 'Zwartbessenhof' })).body.candidates.length, 0, 'the name is scoped too');
    // By id: the same 404 as an id never minted.
    const never = P.anchorId({ never: 'minted' });
    for (const [url, field] of [
      ['/v1/entity/resolve', 'token'],
      ['/v1/entity/recall', 'entity'],
    ] as const) {
      const hidden = await post(url, { [field]: e.token });
      const missing = await post(url, { [field]: `svc:entity:${never}` });
      assert.equal(hidden.status, 404);
      assert.equal(hidden.body.code, missing.body.code);
      assert.equal(hidden.body.message.replace(e.entity_cid, '<cid>'), missing.body.message.replace(never, '<cid>'));
    }
    // An alias outside the scope finds no entity; a public mint of the same content is a new record.
    const out = await post('/v1/entity/alias', b.batch([alias(e.entity_cid, 'blackcurrant yard')], m()));
    assert.equal(out.status, 404);
    const pub = await mint(value);
    assert.equal(pub.entity_cid, e.entity_cid);
    assert.equal(pub.created, true);
    assert.notEqual(pub.fact.fact_cid, e.fact.fact_cid);
  });
});

describe('recall by entity', () => {
  it('returns the facts filed under the entity plus the facts at its cells', async () => {
    const cell = P.cellOf(48.1, 11.6);
    const e = await mint({ kind: 'building', name: 'Pumphouse', geometry: { cell } });
    const own = { kind: 'primary', cell: e.token, band: 'weather.temperature_2m', value: 7.25, unit: 'degC', signed_at: SIGNED_AT };
    const atCell = { kind: 'primary', cell, band: 'weather.temperature_2m', value: 8.5, unit: 'degC', signed_at: SIGNED_AT };
    const w = await post('/v1/attest', a.batch([own, atCell], m()));
    assert.equal(w.status, 200, JSON.stringify(w.body));
    const r = await post('/v1/entity/recall', { entity: e.entity_cid });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.entity_cid, e.entity_cid);
    assert.deepEqual(r.body.cells, [cell]);
    assert.deepEqual(new Set(r.body.own_facts.map((f: any) => f.fact_cid)), new Set([e.fact.fact_cid, P.factCid(own)]));
    assert.deepEqual(
      r.body.by_cell[cell].facts.map((f: any) => f.fact_cid),
      [P.factCid(atCell)],
    );
    const v = verified(r.body);
    assert.ok(v.facts.length >= 3 && v.facts.every((f) => f.ok));
    const legacy = await post('/v1/entity/recall', { entity: `meme:${e.entity_cid}` });
    assert.equal(legacy.status, 200);
    // recall takes cells: an entity token there is pointed at entity recall, never geocoded.
    const rc = await post('/v1/recall', { cell: e.token });
    assert.equal(rc.status, 422);
    assert.equal(rc.body.details.next.path, '/v1/entity/recall');
  });

  it('is a read over MCP; aliases stay REST-only writes', () => {
    const byName = new Map(OPERATIONS.map((o) => [o.name, o]));
    assert.equal(byName.get('entity_resolve')?.mcp, 'full');
    assert.equal(byName.get('entity_recall')?.mcp, 'full');
    assert.equal(byName.get('entity')?.mcp, 'full');
    assert.equal(byName.get('entity_alias')?.mcp, false);
  });
});
