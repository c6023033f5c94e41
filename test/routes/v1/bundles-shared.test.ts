/**
 * Bundle definitions live in the store (src/primitives/tokens/bundles.ts; contract.ts,
 * DocumentStore), so a bundle minted on one responder resolves on every responder sharing its
 * PostgreSQL schema, each answering with its own receipt. Legacy definition files
 * (`<data>/bundles/<bundle_cid>.json`, written before the move) still resolve: the first read
 * imports a well-formed one into the store, after which every responder has it and the file is
 * no longer needed; a file that does not hash to its name is refused and not imported.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as P from '../../../src/protocol/index.js';
import { bundleCidOf, type BundleDefinition } from '../../../src/primitives/tokens/bundles.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester, sampleFact } from '../../support/attester.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../../store/support/pg-env.js';

const op = makeAttester('bundles-shared-operator');

async function call(t: TestApp, method: 'GET' | 'POST', url: string, payload?: unknown) {
  const r = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
  return { status: r.statusCode, body: r.json() };
}
const resolve = (t: TestApp, cid: string) => call(t, 'GET', `/v1/memory_bundle/svc:bundle:${cid}`);

async function attest(t: TestApp, n: number): Promise<string[]> {
  const r = await t.app.inject({
    method: 'POST',
    url: '/v1/attest',
    payload: op.batch(
      Array.from({ length: n }, () => sampleFact()),
      t.service.manifests,
    ),
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json().fact_cids;
}

/** A definition file as responders wrote them before bundles moved into the store. */
function writeLegacy(t: TestApp, def: BundleDefinition, cid = bundleCidOf(def)): string {
  mkdirSync(join(t.dataDir, 'bundles'), { recursive: true });
  writeFileSync(join(t.dataDir, 'bundles', `${cid}.json`), JSON.stringify({ v: 1, bundle_cid: cid, ...def, created_at: '2026-01-01T00:00:00Z' }) + '\n');
  return cid;
}

describe('bundles on two responders sharing a PostgreSQL schema', { skip: pgSkip }, () => {
  const schema = randomSchema();
  let a: TestApp;
  let b: TestApp;
  let cids: string[];
  before(async () => {
    const deployment = { attesterKeys: [op.publicKey], databaseUrl: pgUrl(), databaseSchema: schema };
    a = await build(deployment, {}, { materializers: [] });
    b = await build(deployment, {}, { materializers: [] });
    cids = await attest(a, 6);
  });
  after(async () => {
    await Promise.all([a, b].map((t) => t?.close()));
    await dropSchema(schema);
  });

  it("a bundle minted on A resolves on B, with B's receipt; re-minting it on B is the same bundle", async () => {
    const m = await call(a, 'POST', '/v1/memory_bundle', { fact_cids: [cids[1], cids[0]], label: 'shared' });
    assert.equal(m.status, 200, JSON.stringify(m.body));
    const r = await call(b, 'GET', `/v1/memory_bundle/${m.body.token}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.facts.map((f: { fact_cid: string }) => f.fact_cid),
      m.body.fact_cids,
    );
    assert.equal(r.body.label, 'shared');
    assert.deepEqual(r.body.missing, []);
    assert.ok(P.verifyReceipt(r.body.receipt, { publicKey: b.service.keys.publicKeyB32 }).valid);
    const viaOp = await call(b, 'POST', '/v1/memory_bundle/resolve', { token: m.body.token });
    assert.equal(viaOp.status, 200, JSON.stringify(viaOp.body));
    const again = await call(b, 'POST', '/v1/memory_bundle', { fact_cids: [cids[0], cids[1]], label: 'shared' });
    assert.equal(again.body.bundle_cid, m.body.bundle_cid);
  });

  it('a legacy file on A is imported at its first read there, then B resolves it too', async () => {
    const cid = writeLegacy(a, { fact_cids: [cids[2], cids[3]].sort(), label: 'old' });
    assert.equal((await resolve(b, cid)).status, 404, 'B has no such file, and the store has not seen it yet');
    const onA = await resolve(a, cid);
    assert.equal(onA.status, 200, JSON.stringify(onA.body));
    rmSync(join(a.dataDir, 'bundles'), { recursive: true });
    const onB = await resolve(b, cid);
    assert.equal(onB.status, 200, JSON.stringify(onB.body));
    assert.deepEqual(
      onB.body.facts.map((f: { fact_cid: string }) => f.fact_cid),
      [cids[2], cids[3]].sort(),
    );
    assert.equal(onB.body.label, 'old');
  });
});

describe('legacy bundle files on the embedded store', () => {
  let t: TestApp;
  let cids: string[];
  before(async () => {
    t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [], driver: 'sqlite' });
    cids = await attest(t, 3);
  });
  after(async () => t?.close());

  it('resolve a legacy file, importing it: it resolves once the file is gone; re-minting it is free and stores nothing new', async () => {
    const def = { fact_cids: [cids[0], cids[1]].sort() };
    const cid = writeLegacy(t, def);
    assert.equal(await t.service.store.documents.get('bundle', cid), null);
    assert.equal((await resolve(t, cid)).status, 200);
    const imported = await t.service.store.documents.get('bundle', cid);
    assert.equal(JSON.parse(imported!).created_at, '2026-01-01T00:00:00Z', 'the file as it was');
    rmSync(join(t.dataDir, 'bundles'), { recursive: true });
    const r = await resolve(t, cid);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.facts.map((f: { fact_cid: string }) => f.fact_cid),
      def.fact_cids,
    );
    const m = await call(t, 'POST', '/v1/memory_bundle', { fact_cids: [cids[1], cids[0]] });
    assert.equal(m.body.bundle_cid, cid);
    assert.equal(await t.service.store.documents.get('bundle', cid), imported, 'the stored text is unchanged');
  });

  it('a legacy file that does not hash to its name is refused and never imported', async () => {
    const cid = bundleCidOf({ fact_cids: [cids[2]] });
    writeLegacy(t, { fact_cids: [cids[0]] }, cid);
    const r = await resolve(t, cid);
    assert.equal(r.status, 404, JSON.stringify(r.body));
    assert.equal(r.body.code, 'cid_not_found');
    assert.equal(r.body.details.reason, 'stored definition does not hash to its bundle_cid');
    assert.equal(await t.service.store.documents.get('bundle', cid), null);
    // Minting the real definition stores it in the store, which is read before any file.
    assert.equal((await call(t, 'POST', '/v1/memory_bundle', { fact_cids: [cids[2]] })).status, 200);
    assert.equal((await resolve(t, cid)).status, 200);
  });
});
