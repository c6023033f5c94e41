/**
 * Bad input, generated: every operation and every path-parameter route gets bodies, query strings
 * and path segments built from its own field names with arbitrary JSON values (and wholly
 * arbitrary bodies). Whatever arrives, the answer is either a success or a typed error in the
 * spec's envelope whose code is in the catalogue — never an untyped 500 — and nothing is written.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OPERATIONS } from '../../src/api/ops/index.js';
import { errorCatalogueDocument } from '../../src/protocol/errors.js';
import * as P from '../../src/protocol/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';

let t: TestApp;
const op = makeAttester('fuzz-operator');
const CODES = new Set(errorCatalogueDocument().codes.map((c: { code: string }) => c.code));
const RUNS = Number(process.env.SVC_FUZZ_RUNS ?? 150);
const cell = P.cellOf(47.3769, 8.5417);
let cids: string[] = [];

before(async () => {
  t = await build({ attesterKeys: [op.publicKey], timeoutSecs: 5 }, {}, { materializers: [] });
  const facts = [
    { kind: 'primary', cell, band: 'indices.ndvi', tslot: 680, value: 0.5, unit: 'unitless' },
    { kind: 'primary', cell, band: 'geotessera', tslot: 55, value: Array.from({ length: 128 }, (_, i) => Math.fround(Math.sin(i))), unit: 'unitless' },
  ];
  const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch(facts, t.service.manifests) });
  assert.equal(r.statusCode, 200, r.body);
  cids = r.json().fact_cids;
});
after(async () => t.close());

/** Values that often reach deeper than a schema check: right-looking strings, numbers at edges, wrong shapes. */
const value = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    cell,
    'defi.nope',
    '',
    ' ',
    'Zürich',
    'inline:[1,2]',
    'indices.ndvi',
    'geotessera',
    -1,
    0,
    1e308,
    2 ** 53,
    1.5,
    [],
    {},
    null,
    [cell],
    ['indices.ndvi'],
    [0, 1],
    'svc:fact:x:y',
    '\u0000',
    'a'.repeat(300),
  ),
);

type Schema = { type?: string; enum?: unknown[]; minimum?: number; items?: Schema; properties?: Record<string, Schema> };

/** Plausible values for a field, from its name and schema: the starting points that mutations break. */
function plausible(name: string, sc: Schema): fc.Arbitrary<unknown> {
  if (sc.enum) return fc.constantFrom(...sc.enum);
  const n = name.toLowerCase();
  if (sc.type === 'array') {
    if (n.includes('cell')) return fc.constant([cell]);
    if (n.includes('cid')) return fc.constant(cids.slice(0, 2));
    if (n === 'bbox') return fc.constant([8.5, 47.3, 8.6, 47.4]);
    if (n === 'window') return fc.constant([0, 2 ** 31]);
    return plausible(n.replace(/s$/, ''), sc.items ?? {}).map((v) => [v]);
  }
  if (sc.type === 'integer') return n.includes('tslot') ? fc.constantFrom(55, 680, 0) : fc.constantFrom(Math.max(sc.minimum ?? 1, 1), 2, 10);
  if (sc.type === 'number') return fc.constant(n === 'lat' ? 47.3769 : n === 'lng' || n === 'lon' ? 8.5417 : 1);
  if (sc.type === 'boolean') return fc.boolean();
  if (sc.type === 'object') return fc.constant({});
  if (n.includes('cid')) return fc.constantFrom(...cids);
  if (n.includes('token')) return fc.constant(`svc:fact:${cell}:${cids[0]}`);
  if (['place', 'name', 'q', 'query'].includes(n)) return fc.constant('Zürich');
  if (n.includes('band') || n === 'encoder' || n === 'family' || n === 'a' || n === 'b') return fc.constantFrom('indices.ndvi', 'geotessera', cell);
  return fc.constantFrom(cell, `inline:${JSON.stringify(Array.from({ length: 128 }, (_, i) => i % 3))}`); // cell, key, geometry…: a stored cell goes deepest
}

function bodyFor(props: Record<string, Schema>) {
  const fields = Object.keys(props);
  const base = fc.record(Object.fromEntries(fields.map((f) => [f, plausible(f, props[f])])) as Record<string, fc.Arbitrary<unknown>>);
  const mutated = fc.tuple(base, fc.subarray(fields, { maxLength: Math.min(2, fields.length) }), fc.array(value, { minLength: 2, maxLength: 2 }), fc.boolean()).map(([b0, keys, vals, drop]) => {
    const b: Record<string, unknown> = { ...b0 };
    keys.forEach((k, i) => {
      if (drop && i === 0) delete b[k];
      else b[k] = vals[i];
    });
    return b;
  });
  return fc.oneof(
    { weight: 3, arbitrary: base },
    { weight: 5, arbitrary: mutated },
    { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...(fields.length > 0 ? fields : ['x'])), value, { maxKeys: Math.max(1, fields.length) }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );
}

/** A typed answer: success, or the error envelope with a catalogued code; never an untyped 5xx. */
function assertTyped(label: string, status: number, text: string): void {
  if (status < 400 || status === 304) return;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    assert.fail(`${label}: ${status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  assert.equal(body.schema, 'svc.error.v1', `${label}: ${status} ${text.slice(0, 300)}`);
  assert.ok(CODES.has(body.code), `${label}: code ${body.code} is catalogued`);
  assert.notEqual(body.code, 'internal', `${label}: an internal error is a bug: ${text.slice(0, 300)}`);
}

describe('generated bad input', () => {
  it('every operation answers arbitrary bodies and query strings with a success or a typed, catalogued error, and writes nothing', { timeout: 600_000 }, async () => {
    const sizeBefore = await t.service.store.log.size();
    let answered = 0;
    for (const o of OPERATIONS) {
      await fc.assert(
        fc.asyncProperty(bodyFor((o.input as Schema).properties ?? {}), async (body) => {
          const r =
            o.method === 'GET'
              ? await t.app.inject({
                  method: 'GET',
                  url: o.path,
                  query: Object.fromEntries(Object.entries(typeof body === 'object' && body && !Array.isArray(body) ? body : {}).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])),
                })
              : await t.app.inject({ method: 'POST', url: o.path, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
          assertTyped(`${o.method} ${o.path} ${JSON.stringify(body).slice(0, 200)}`, r.statusCode, r.body);
          // Only a step kept as a fact (keep: public or scope) enters the log; transient ones do not.
          if (o.name === 'ask' && r.statusCode === 200 && ['public', 'scope'].includes(JSON.parse(r.body).state?.kept)) answered++;
        }),
        { numRuns: RUNS },
      );
    }
    // Writes need a listed attester's signature over the batch: nothing generated can carry one.
    // The one exception is ask with keep "public" or "scope", which keeps its answer step (its
    // svc:state: record) as a fact: exactly one log entry per such answer, nothing else.
    assert.equal(await t.service.store.log.size(), sizeBefore + answered);
  });

  it('path parameters: cells, tokens, log indices and fact ids of any shape get typed answers', async () => {
    const segment = fc.oneof(fc.string({ maxLength: 80 }), fc.constantFrom(cell, 'defi.nope', '-1', '1e99', '9007199254740993', '%00', '..', 'svc:fact:a:b'));
    const routes = ['/v1/cells/', '/v1/cells/{}/scene.png', '/v1/memory_bundle/', '/v1/log/entries/', '/verify/', '/v1/algorithms/'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), segment, async (route, s) => {
        const enc = encodeURIComponent(s);
        const url = route.includes('{}') ? route.replace('{}', enc) : route + enc;
        const r = await t.app.inject({ method: 'GET', url });
        if (r.headers['content-type']?.toString().startsWith('text/html')) return; // the verifier page answers any fact id with its page
        assertTyped(`GET ${url}`, r.statusCode, r.body);
      }),
      { numRuns: RUNS * 5 },
    );
  });
});
