/**
 * Item 10 of issue 13: anyone can make Ed25519 keys, so 41 self-made witness keys with 41
 * operator labels read as "41 independent operators". Only keys the operator lists in
 * SVC_WITNESS_KEYS (key=operator name) count, under the configured name whatever label they
 * send; the others' co-signatures are kept and listed apart as unverified.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester, sampleFact } from '../../support/attester.js';

const witness = (label: string) => {
  const seed = P.blake3(P.utf8(`witness-operators ${label}`));
  return { seed, key: P.b32encode(P.portableEd25519.publicKey(seed)) };
};
const acme1 = witness('acme-1');
const acme2 = witness('acme-2');
const beta = witness('beta');
const op = makeAttester('witness-operators-attester');
let t: TestApp;
let head: { tree_size: number; root: string };

before(async () => {
  const env = { SVC_WITNESS_KEYS: `${acme1.key}=Acme Audit, ${acme2.key}=Acme Audit,${beta.key}=Beta Watch` };
  t = await build({ attesterKeys: [op.publicKey] }, env);
  const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch([sampleFact()], t.service.manifests) });
  head = r.json().tree_head;
});
after(async () => t.close());

async function cosign(w: { seed: Uint8Array; key: string }, operator?: string) {
  const signature = P.b32encode(P.portableEd25519.sign(P.witnessDigest(head.tree_size, P.b32decode(head.root, 32), P.b32decode(w.key, 32)), w.seed));
  const r = await t.app.inject({ method: 'POST', url: '/v1/log/witness', payload: { tree_size: head.tree_size, root: head.root, witness: w.key, signature, ...(operator ? { operator } : {}) } });
  return { status: r.statusCode, body: r.json() };
}

describe('witness operators', () => {
  it('41 self-made keys with 41 labels count as no independent operator; they are listed apart as unverified', async () => {
    for (let i = 0; i < 41; i++) {
      const r = await cosign(witness(`sybil ${i}`), `Independent Operator ${i}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.verified, false);
    }
    const list = (await t.app.inject({ method: 'GET', url: '/v1/log/witnesses' })).json();
    assert.equal(list.independent_operators, 0);
    assert.equal(list.distinct_witness_keys, 0);
    assert.deepEqual(list.witnesses, []);
    assert.equal(list.unverified.witnesses.length, 41);
    assert.equal(list.unverified.distinct_witness_keys, 41);
    assert.ok(list.unverified.witnesses.every((w: any) => w.verified === false));
  });

  it('configured keys count once per configured operator, under the configured name whatever label they send', async () => {
    const a = await cosign(acme1, 'Totally Different Org');
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.deepEqual([a.body.verified, a.body.operator], [true, 'Acme Audit']);
    await cosign(acme2);
    await cosign(beta, 'Beta Watch');
    const list = (await t.app.inject({ method: 'GET', url: '/v1/log/witnesses' })).json();
    assert.equal(list.independent_operators, 2, 'Acme Audit (two keys) and Beta Watch');
    assert.equal(list.distinct_witness_keys, 3);
    assert.deepEqual(list.witnesses.map((w: any) => w.operator).sort(), ['Acme Audit', 'Acme Audit', 'Beta Watch']);
    assert.ok(list.witnesses.every((w: any) => w.verified === true));
    assert.equal(list.unverified.witnesses.length, 41, 'the self-made keys stay apart');
    assert.equal(list.unverified.distinct_witness_keys, 41);
  });

  it('the listing is paged: limit per list and next_after, the counts covering everything', async () => {
    const first = (await t.app.inject({ method: 'GET', url: '/v1/log/witnesses?limit=10' })).json();
    assert.equal(first.unverified.witnesses.length, 10);
    assert.equal(first.unverified.total, 41);
    assert.equal(first.unverified.distinct_witness_keys, 41);
    const seen = new Set(first.unverified.witnesses.map((w: any) => w.witness));
    let next = first.unverified.next_after;
    while (next) {
      const page = (await t.app.inject({ method: 'GET', url: `/v1/log/witnesses?limit=10&after=${next}` })).json();
      for (const w of page.unverified.witnesses) seen.add(w.witness);
      next = page.unverified.next_after;
    }
    assert.equal(seen.size, 41, 'every co-signature once, across the pages');
    const bad = await t.app.inject({ method: 'GET', url: '/v1/log/witnesses?limit=100000' });
    assert.equal(bad.statusCode, 422);
  });

  it('SVC_WITNESS_KEYS refuses entries that are not <key>=<operator name>', async () => {
    const { loadConfig, ConfigError } = await import('../../../src/config.js');
    assert.throws(() => loadConfig({ SVC_WITNESS_KEYS: 'not-a-key=Someone' }), ConfigError);
    assert.throws(() => loadConfig({ SVC_WITNESS_KEYS: `${beta.key}` }), ConfigError);
    assert.throws(() => loadConfig({ SVC_WITNESS_KEYS: `${beta.key}=` }), ConfigError);
    assert.deepEqual(loadConfig({ SVC_WITNESS_KEYS: ` ${beta.key} = Beta Watch ` }).witnessKeys, { [beta.key]: 'Beta Watch' });
  });
});

describe('witness quota', () => {
  it('co-signatures by unlisted keys are metered per client address; listed keys are not', async () => {
    const env = { SVC_WITNESS_KEYS: `${beta.key}=Beta Watch`, SVC_WITNESS_QUOTA_COUNT: '3' };
    const q = await build({ attesterKeys: [op.publicKey] }, env);
    try {
      const r = await q.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch([sampleFact()], q.service.manifests) });
      const h = r.json().tree_head as { tree_size: number; root: string };
      const send = (w: { seed: Uint8Array; key: string }) => {
        const signature = P.b32encode(P.portableEd25519.sign(P.witnessDigest(h.tree_size, P.b32decode(h.root, 32), P.b32decode(w.key, 32)), w.seed));
        return q.app.inject({ method: 'POST', url: '/v1/log/witness', payload: { tree_size: h.tree_size, root: h.root, witness: w.key, signature } });
      };
      for (let i = 0; i < 3; i++) assert.equal((await send(witness(`throwaway ${i}`))).statusCode, 200);
      const over = await send(witness('throwaway 3'));
      assert.equal(over.statusCode, 429, over.body);
      assert.equal(over.json().code, 'rate_limited');
      assert.ok(over.json().details.retry_after > 0);
      assert.equal((await send(beta)).statusCode, 200, 'a listed key is not metered');
      const list = (await q.app.inject({ method: 'GET', url: '/v1/log/witnesses' })).json();
      assert.equal(list.unverified.total, 3);
    } finally {
      await q.close();
    }
  });
});
