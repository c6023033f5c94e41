/**
 * Memory record rules (src/primitives/write/record-rules.ts, docs/writes.md "Memory records"):
 * every record band's value shape and subject rule, accepted and refused through POST /v1/attest
 * (L2 bands, an operator or device key) or the responder's own write path (L3 bands, mintFacts:
 * the same acceptBatch). Each refusal is typed, names the fact and field, and writes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as P from '../../src/protocol/index.js';
import { mintFacts } from '../../src/primitives/write/attest.js';
import { SvcError } from '../../src/protocol/errors.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester, type TestAttester } from '../support/attester.js';

let t: TestApp;
let op: TestAttester;
let device: TestAttester;
before(async () => {
  op = makeAttester('memory records operator');
  device = makeAttester('memory records device');
  t = await build({ attesterKeys: [op.publicKey], deviceKeys: [device.publicKey] }, {}, { materializers: [] });
});
after(async () => t.close());

const SIGNED_AT = '2026-11-20T12:00:00Z';
const CELL = P.cellOf(52.1, 5.1);
const FACT = P.contentId({ some: 'fact' });
const ENT = P.anchorId({ kind: 'field', name: 'north field' });
const KEY = makeAttester('a device being enrolled').publicKey;

let n = 0;
/** A record body built the way a client builds it (protocol/memory-records.ts). */
const rec = (band: string, value: Record<string, unknown>, over: Record<string, unknown> = {}) => ({ ...P.recordBody(band, value, { signed_at: SIGNED_AT }), ...over });
/** Each test's values differ, so no fact is a duplicate of another test's. */
const uniq = () => `n${++n}`;

async function attest(facts: Record<string, unknown>[], who: TestAttester = op) {
  return t.app.inject({ method: 'POST', url: '/v1/attest', payload: who.batch(facts, t.service.manifests) });
}

async function accepted(body: Record<string, unknown>, who: TestAttester = op): Promise<void> {
  const r = await attest([body], who);
  assert.equal(r.statusCode, 200, r.body);
  const stored = await t.service.store.getFact(P.factCid(body));
  assert.ok(stored, 'stored');
  assert.equal(stored.tslot, 0);
  assert.deepEqual(stored.body, body, 'stored exactly as signed');
}

/** Refused through /v1/attest with `code` naming `field`; the log and the store are unchanged. */
async function refused(body: Record<string, unknown>, code: string, field: string, who: TestAttester = op, status = code === 'level_too_low' ? 403 : 422) {
  const before = await t.service.store.log.size();
  const r = await attest([body], who);
  assert.equal(r.statusCode, status, r.body);
  const e = r.json();
  assert.equal(e.code, code, r.body);
  assert.equal(e.details.field, field, r.body);
  assert.ok(e.message.startsWith(field), e.message);
  assert.equal(await t.service.store.log.size(), before, 'nothing logged');
  assert.equal(await t.service.store.getFact(P.factCid(body)), null, 'nothing stored');
  return e;
}

/** The responder's own write path (L3 bands): the same acceptBatch. */
async function minted(body: Record<string, unknown>): Promise<void> {
  const res = await mintFacts(t.service, [body]);
  assert.equal(res.fact_cids[0], P.factCid(body));
  assert.deepEqual((await t.service.store.getFact(P.factCid(body)))!.body, body);
}

async function mintRefused(body: Record<string, unknown>, code: string, field: string) {
  const before = await t.service.store.log.size();
  await assert.rejects(mintFacts(t.service, [body]), (e: unknown) => {
    assert.ok(e instanceof SvcError, String(e));
    assert.equal(e.code, code, e.message);
    assert.equal(e.details.field, field, e.message);
    return true;
  });
  assert.equal(await t.service.store.log.size(), before, 'nothing logged');
}

describe('protocol/memory-records: recordSubject and recordBody', () => {
  it('files a record under the anchor of its value, a key record under the anchor of {key}', () => {
    const v = { text: 'hello' };
    assert.equal(P.recordSubject('memory.note', v), `svc:entity:${P.anchorId(v)}`);
    const e = { key: KEY, not_before: 1 };
    assert.equal(P.recordSubject('memory.bearer_revocation', e), `svc:entity:${P.anchorId({ key: KEY })}`);
    assert.equal(P.recordSubject('device.enrollment', { key: KEY, platform: 'x' }), P.recordSubject('device.revocation', { key: KEY }));
  });

  it('builds the exact body a client signs: primary, subject, band, tslot 0, value, signed_at, scope when set', () => {
    const v = { text: 'hello' };
    assert.deepEqual(P.recordBody('memory.note', v, { signed_at: SIGNED_AT }), { kind: 'primary', cell: `svc:entity:${P.anchorId(v)}`, band: 'memory.note', tslot: 0, value: v, signed_at: SIGNED_AT });
    assert.deepEqual(P.recordBody('memory.note', v, { signed_at: SIGNED_AT, scope: { agent_id: 'a' } }).scope, { agent_id: 'a' });
    assert.equal('scope' in P.recordBody('memory.note', v, { signed_at: SIGNED_AT, scope: {} }), false);
  });
});

describe('every record band', () => {
  it('tslot omitted resolves to 0; a non-zero tslot is tslot_mismatch', async () => {
    const body = rec('memory.note', { text: uniq() });
    delete body.tslot;
    await accepted(body);
    await refused(rec('memory.note', { text: uniq() }, { tslot: 7 }), 'tslot_mismatch', 'facts[0].tslot');
  });

  it('a record filed under another subject is unaddressable_subject, saying which one it must be', async () => {
    const value = { text: uniq() };
    const e = await refused(rec('memory.note', value, { cell: `svc:entity:${P.anchorId({ other: 1 })}` }), 'unaddressable_subject', 'facts[0].cell');
    assert.equal(e.details.expected, `svc:entity:${P.anchorId(value)}`);
    assert.match(e.message, new RegExp(P.anchorId(value)));
    // A map cell is refused by the band rule before the record rule.
    await refused(rec('memory.note', { text: uniq() }, { cell: CELL }), 'unaddressable_subject', 'facts[0].cell');
  });

  it('a record is a primary fact: an absence or a derivative is refused at kind', async () => {
    await refused(rec('memory.note', { text: uniq() }, { kind: 'absence', value: null, absence_reason: 'upstream_error' }), 'invalid_argument', 'facts[0].kind');
  });

  it('unknown keys in a value are refused by name', async () => {
    await refused(rec('memory.note', { text: uniq(), colour: 'red' }), 'invalid_argument', 'facts[0].value.colour');
    await refused(rec('memory.alias', { entity: ENT, phrase: uniq(), extra: 1 }), 'invalid_argument', 'facts[0].value.extra');
  });
});

describe('memory.note', () => {
  it('accepts a bare note and a note with every field', async () => {
    await accepted(rec('memory.note', { text: `pump failed ${uniq()}` }));
    await accepted(
      rec('memory.note', {
        text: `maize wilting ${uniq()}`,
        cell: CELL,
        entity: ENT,
        facts: [FACT],
        tags: ['pump', 'maize', 'crop:maize-2026'],
        observed_at: '2026-11-19T08:00:00+01:00',
        vector: [0.1, -0.2, 0.3],
      }),
      device,
    );
    await accepted(rec('memory.note', { text: 'x'.repeat(8000) }));
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['a blank text', { text: '   ' }, 'facts[0].value.text'],
    ['an empty text', { text: '' }, 'facts[0].value.text'],
    ['text over 8000 characters', { text: 'y'.repeat(8001) }, 'facts[0].value.text'],
    ['no text', { tags: ['a'] }, 'facts[0].value.text'],
    ['a cell that is no cell64', { text: 'a', cell: 'nowhere' }, 'facts[0].value.cell'],
    ['an entity that is a fact_cid', { text: 'a', entity: FACT }, 'facts[0].value.entity'],
    ['a malformed fact link', { text: 'a', facts: [FACT, 'nope'] }, 'facts[0].value.facts[1]'],
    ['65 fact links', { text: 'a', facts: Array.from({ length: 65 }, (_, i) => P.contentId(i)) }, 'facts[0].value.facts'],
    ['an upper-case tag', { text: 'a', tags: ['ok', 'Pump'] }, 'facts[0].value.tags[1]'],
    ['a duplicate tag', { text: 'a', tags: ['pump', 'pump'] }, 'facts[0].value.tags[1]'],
    ['33 tags', { text: 'a', tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }, 'facts[0].value.tags'],
    ['observed_at that is no RFC 3339', { text: 'a', observed_at: '2026-02-31T00:00:00Z' }, 'facts[0].value.observed_at'],
    ['a one-number vector', { text: 'a', vector: [1] }, 'facts[0].value.vector'],
    ['a vector with text in it', { text: 'a', vector: [1, 'x'] }, 'facts[0].value.vector[1]'],
    ['a 1025-number vector', { text: 'a', vector: Array.from({ length: 1025 }, () => 0.5) }, 'facts[0].value.vector'],
  ];
  for (const [name, value, field] of bad) {
    it(`refuses ${name} at ${field}`, async () => {
      await refused(rec('memory.note', value), 'invalid_argument', field);
    });
  }
});

describe('memory.alias', () => {
  it('accepts {entity, phrase, lang?}', async () => {
    await accepted(rec('memory.alias', { entity: ENT, phrase: `the north field ${uniq()}` }));
    await accepted(rec('memory.alias', { entity: ENT, phrase: `de noordakker ${uniq()}`, lang: 'nl-NL' }));
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['a blank phrase', { entity: ENT, phrase: ' \n' }, 'facts[0].value.phrase'],
    ['a phrase over 200 characters', { entity: ENT, phrase: 'p'.repeat(201) }, 'facts[0].value.phrase'],
    ['an entity that is no entity_cid', { entity: 'svc:entity:x', phrase: 'p' }, 'facts[0].value.entity'],
    ['no entity', { phrase: 'p' }, 'facts[0].value.entity'],
    ['a lang of 36 characters', { entity: ENT, phrase: 'p', lang: 'a'.repeat(36) }, 'facts[0].value.lang'],
  ];
  for (const [name, value, field] of bad) {
    it(`refuses ${name} at ${field}`, async () => {
      await refused(rec('memory.alias', value), 'invalid_argument', field);
    });
  }
});

describe('memory.edge', () => {
  it('accepts a typed edge between a fact and an entity, with valid_to, invalidates and reason', async () => {
    await accepted(rec('memory.edge', { type: 'located_in', from: FACT, to: ENT, valid_from: '2026-01-01T00:00:00Z', reason: uniq() }));
    await accepted(
      rec('memory.edge', {
        type: 'related_to',
        from: ENT,
        to: P.anchorId({ n: uniq() }),
        valid_from: '2026-01-01T00:00:00Z',
        valid_to: '2026-06-01T00:00:00Z',
        invalidates: [FACT],
      }),
    );
  });

  const edge = (over: Record<string, unknown>) => ({ type: 'related_to', from: FACT, to: ENT, valid_from: '2026-01-01T00:00:00Z', reason: uniq(), ...over });
  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['supersedes (implied by facts themselves)', edge({ type: 'supersedes' }), 'facts[0].value.type'],
    ['derived_from (implied by derivatives)', edge({ type: 'derived_from' }), 'facts[0].value.type'],
    ['an unknown type', edge({ type: 'likes' }), 'facts[0].value.type'],
    ['a from that is neither a fact_cid nor an entity_cid', edge({ from: 'abc' }), 'facts[0].value.from'],
    ['from equal to to', edge({ to: FACT }), 'facts[0].value.to'],
    ['no valid_from', edge({ valid_from: undefined }), 'facts[0].value.valid_from'],
    ['valid_to before valid_from', edge({ valid_to: '2025-12-31T00:00:00Z' }), 'facts[0].value.valid_to'],
    ['valid_to equal to valid_from', edge({ valid_to: '2026-01-01T00:00:00Z' }), 'facts[0].value.valid_to'],
    ['17 invalidated edges', edge({ invalidates: Array.from({ length: 17 }, (_, i) => P.contentId(i)) }), 'facts[0].value.invalidates'],
    ['a reason over 500 characters', edge({ reason: 'r'.repeat(501) }), 'facts[0].value.reason'],
  ];
  for (const [name, value, field] of bad) {
    it(`refuses ${name} at ${field}`, async () => {
      const v = JSON.parse(JSON.stringify(value));
      await refused(rec('memory.edge', v), 'invalid_argument', field);
    });
  }
});

describe('memory.entity (L3: the responder mints it)', () => {
  const square = (lng: number, lat: number) => [
    [lng, lat],
    [lng + 0.01, lat],
    [lng + 0.01, lat + 0.01],
    [lng, lat + 0.01],
    [lng, lat],
  ];

  it('an operator key may not write one (level_too_low)', async () => {
    await refused(rec('memory.entity', { kind: 'field', name: 'x', geometry: { cell: CELL } }), 'level_too_low', 'facts[0].band');
  });

  it('accepts a cell entity and a polygon entity with attributes', async () => {
    await minted(rec('memory.entity', { kind: 'field', name: `north field ${uniq()}`, geometry: { cell: CELL } }));
    await minted(
      rec('memory.entity', {
        kind: 'farm_plot',
        name: `plot ${uniq()}`,
        geometry: { polygon: { type: 'Polygon', coordinates: [square(5.1, 52.1)] } },
        attributes: { crop: 'maize', hectares: 2.5, irrigated: true },
      }),
    );
  });

  const ok = () => ({ kind: 'field', name: `f ${uniq()}`, geometry: { cell: CELL } });
  const poly = (ring: unknown) => ({ ...ok(), geometry: { polygon: { type: 'Polygon', coordinates: [ring] } } });
  const bad: Array<[string, () => Record<string, unknown>, string]> = [
    ['a kind with capitals', () => ({ ...ok(), kind: 'Field' }), 'facts[0].value.kind'],
    ['a blank name', () => ({ ...ok(), name: '  ' }), 'facts[0].value.name'],
    ['both a cell and a polygon', () => ({ ...ok(), geometry: { cell: CELL, polygon: {} } }), 'facts[0].value.geometry'],
    ['a geometry cell that is no cell64', () => ({ ...ok(), geometry: { cell: 'x' } }), 'facts[0].value.geometry.cell'],
    ['a ring that is not closed', () => poly(square(5, 52).slice(0, 4)), 'facts[0].value.geometry.polygon.coordinates[0][3]'],
    [
      'a ring of three positions',
      () =>
        poly([
          [5, 52],
          [5.1, 52],
          [5, 52],
        ]),
      'facts[0].value.geometry.polygon.coordinates[0]',
    ],
    [
      'a latitude beyond 90',
      () =>
        poly([
          [5, 52],
          [5.1, 95],
          [5.1, 52.1],
          [5, 52],
        ]),
      'facts[0].value.geometry.polygon.coordinates[0][1]',
    ],
    ['a polygon with a hole', () => ({ ...ok(), geometry: { polygon: { type: 'Polygon', coordinates: [square(5, 52), square(5.002, 52.002)] } } }), 'facts[0].value.geometry.polygon.coordinates'],
    ['a MultiPolygon', () => ({ ...ok(), geometry: { polygon: { type: 'MultiPolygon', coordinates: [square(5, 52)] } } }), 'facts[0].value.geometry.polygon.type'],
    ['an attribute holding an object', () => ({ ...ok(), attributes: { owner: { name: 'x' } } }), 'facts[0].value.attributes.owner'],
    ['an attribute string over 500 characters', () => ({ ...ok(), attributes: { note: 'n'.repeat(501) } }), 'facts[0].value.attributes.note'],
    ['65 attributes', () => ({ ...ok(), attributes: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`a${i}`, i])) }), 'facts[0].value.attributes'],
    ['no geometry', () => ({ kind: 'field', name: 'x' }), 'facts[0].value.geometry'],
  ];
  for (const [name, value, field] of bad) {
    it(`refuses ${name} at ${field}`, async () => {
      await mintRefused(rec('memory.entity', value()), 'invalid_argument', field);
    });
  }
});

describe('device.trace', () => {
  const trace = (over: Record<string, unknown> = {}) => ({
    substrate: { kind: 'onnxruntime', version: '1.19.0', hardware: 'arm64-npu' },
    inputs: [FACT],
    outputs: [P.contentId({ out: uniq() })],
    steps_digest: 'ab'.repeat(32),
    started_at: '2026-11-20T10:00:00Z',
    ended_at: '2026-11-20T10:00:05Z',
    summary: 'ran a crop classifier',
    ...over,
  });

  it('accepts a trace from a device key', async () => {
    await accepted(rec('device.trace', trace()), device);
    await accepted(rec('device.trace', JSON.parse(JSON.stringify(trace({ steps_digest: undefined, summary: undefined, inputs: [], substrate: { kind: 'wasm', version: '2' } })))), device);
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['ended_at before started_at', trace({ ended_at: '2026-11-20T09:59:59Z' }), 'facts[0].value.ended_at'],
    ['an upper-case steps_digest', trace({ steps_digest: 'AB'.repeat(32) }), 'facts[0].value.steps_digest'],
    ['an unknown substrate field', trace({ substrate: { kind: 'k', version: 'v', os: 'linux' } }), 'facts[0].value.substrate.os'],
    ['a substrate without version', trace({ substrate: { kind: 'k' } }), 'facts[0].value.substrate.version'],
    ['an input that is no fact_cid', trace({ inputs: ['x'] }), 'facts[0].value.inputs[0]'],
    ['257 outputs', trace({ outputs: Array.from({ length: 257 }, (_, i) => P.contentId(i)) }), 'facts[0].value.outputs'],
    ['a summary over 2000 characters', trace({ summary: 's'.repeat(2001) }), 'facts[0].value.summary'],
  ];
  for (const [name, value, field] of bad) {
    it(`refuses ${name} at ${field}`, async () => {
      await refused(rec('device.trace', JSON.parse(JSON.stringify(value))), 'invalid_argument', field, device);
    });
  }
});

describe('key records (L3: device.enrollment, device.revocation, memory.bearer_revocation)', () => {
  it('are filed under the anchor of {key}, not of the whole value', async () => {
    const value = { key: KEY, platform: 'android-key-attestation', evidence: { chain: ['x'] }, enrolled_at: '2026-11-20T12:00:00Z' };
    const body = rec('device.enrollment', value);
    assert.equal(body.cell, `svc:entity:${P.anchorId({ key: KEY })}`);
    await minted(body);
    await mintRefused(rec('device.enrollment', { ...value, platform: 'tpm' }, { cell: `svc:entity:${P.anchorId({ ...value, platform: 'tpm' })}` }), 'unaddressable_subject', 'facts[0].cell');
  });

  it('accept a revocation and a bearer revocation (not_before in Unix seconds)', async () => {
    await minted(rec('device.revocation', { key: KEY, reason: 'lost', requested_by: KEY, revoked_at: '2026-11-21T00:00:00Z' }));
    await minted(rec('memory.bearer_revocation', { key: KEY, not_before: 1_795_000_000 }));
  });

  it('refuse a bad key, a missing field and a not_before that is not Unix seconds', async () => {
    await mintRefused(
      rec('device.revocation', { key: 'nope', reason: 'lost', requested_by: KEY, revoked_at: '2026-11-21T00:00:00Z' }, { cell: `svc:entity:${P.anchorId({ key: 'nope' })}` }),
      'invalid_argument',
      'facts[0].value.key',
    );
    await mintRefused(rec('device.enrollment', { key: KEY, platform: 'tpm', enrolled_at: '2026-11-20T12:00:00Z' }), 'invalid_argument', 'facts[0].value.evidence');
    await mintRefused(rec('memory.bearer_revocation', { key: KEY, not_before: '2026-11-20T12:00:00Z' }), 'invalid_argument', 'facts[0].value.not_before');
  });

  it('an operator key may not write them (level_too_low)', async () => {
    await refused(rec('memory.bearer_revocation', { key: op.publicKey, not_before: 1 }), 'level_too_low', 'facts[0].band');
  });
});
