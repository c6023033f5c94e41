/**
 * Item 9 of issue 13: an anonymous caller created 300 bundle files in 0.3 s. Creating a bundle
 * stores its definition (now in the store's documents), so it is metered per client address (an IPv6 /64 counts as one): at most
 * `count` new bundles and `bytes` of definitions per window, beyond which the answer is 429
 * `rate_limited` with retry_after (the seconds until the window ends) and the same Retry-After.
 * Re-minting a stored bundle (same facts, in any order, with repeats) is the same bundle: it
 * stores nothing and costs nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bundleCidOf, type BundleDefinition } from '../../../src/primitives/tokens/bundles.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester, sampleFact } from '../../support/attester.js';

const op = makeAttester('bundle-quota-operator');
let t: TestApp;
let cids: string[];
let clock = Date.parse('2026-05-01T10:00:00Z');
/** A label whose mint the first flood accepted: which five win a concurrent race is not fixed. */
let acceptedLabel = '';

before(async () => {
  t = await build({ attesterKeys: [op.publicKey], bundleQuota: { count: 5, bytes: 4000, windowSecs: 600 } }, {}, { now: () => new Date(clock) });
  // Signed before the responder's clock above: a fact signed ahead of it is refused.
  const r = await t.app.inject({
    method: 'POST',
    url: '/v1/attest',
    payload: op.batch(
      Array.from({ length: 40 }, () => sampleFact({ signed_at: '2026-05-01T09:00:00Z' })),
      t.service.manifests,
    ),
  });
  assert.equal(r.statusCode, 200, r.body);
  cids = r.json().fact_cids;
});
after(async () => t.close());

async function mint(body: Record<string, unknown>, remoteAddress: string) {
  const r = await t.app.inject({ method: 'POST', url: '/v1/memory_bundle', payload: body, remoteAddress });
  return { status: r.statusCode, body: r.json(), headers: r.headers };
}
/** How many of these definitions the store holds (documents of kind `bundle`, by bundle_cid). */
async function stored(defs: BundleDefinition[]): Promise<number> {
  const got = await Promise.all(defs.map((d) => t.service.store.documents.get('bundle', bundleCidOf({ ...d, fact_cids: [...d.fact_cids].sort() }))));
  return got.filter((x) => x !== null).length;
}
function assertLimited(r: Awaited<ReturnType<typeof mint>>, what: RegExp): void {
  assert.equal(r.status, 429, JSON.stringify(r.body));
  assert.equal(r.body.code, 'rate_limited');
  assert.match(r.body.message, what);
  assert.ok(Number.isInteger(r.body.retry_after) && r.body.retry_after > 0);
  assert.equal(r.headers['retry-after'], String(r.body.retry_after));
}

describe('bundle creation per client address', () => {
  it('one address gets `count` new bundles per window, concurrently too, then rate_limited with retry_after', async () => {
    const floods = Array.from({ length: 30 }, (_, i) => ({ fact_cids: [cids[0]], label: `flood ${i}` }));
    assert.equal(await stored(floods), 0);
    const answers = await Promise.all(floods.map((f) => mint(f, '203.0.113.7')));
    const ok = answers.filter((r) => r.status === 200);
    assert.equal(ok.length, 5, answers.map((r) => r.status).join(','));
    acceptedLabel = floods[answers.findIndex((r) => r.status === 200)].label;
    for (const r of answers.filter((a) => a.status !== 200)) assertLimited(r, /bundles/);
    assert.equal(await stored(floods), 5, 'a refused mint stores nothing');
    // Half the window later the wait is the rest of it.
    clock += 300_000;
    const later = await mint({ fact_cids: [cids[1]] }, '203.0.113.7');
    assertLimited(later, /bundles/);
    assert.ok(later.body.retry_after <= 300 && later.body.retry_after > 290, String(later.body.retry_after));
  });

  it('the same facts are the same bundle: no new file, no quota spent, even over the limit', async () => {
    const defs = [{ fact_cids: [cids[0]], label: acceptedLabel }, { fact_cids: [cids[2], cids[3]] }];
    const before = await stored(defs);
    assert.equal(before, 1, `the accepted '${acceptedLabel}' is stored`);
    const again = await mint({ fact_cids: [cids[0], cids[0]], label: acceptedLabel }, '203.0.113.7');
    assert.equal(again.status, 200, JSON.stringify(again.body));
    const other = await mint({ fact_cids: [cids[3], cids[2], cids[3]] }, '198.51.100.1');
    const same = await mint({ fact_cids: [cids[2], cids[3]] }, '198.51.100.1');
    assert.equal(same.body.bundle_cid, other.body.bundle_cid);
    assert.equal((await stored(defs)) - before, 1, 'one definition stored for the new set, none for the re-mints');
  });

  it('another address has its own quota; addresses of one IPv6 /64 share one', async () => {
    assert.equal((await mint({ fact_cids: [cids[4]] }, '198.51.100.2')).status, 200);
    for (let i = 0; i < 5; i++) assert.equal((await mint({ fact_cids: [cids[5 + i]] }, `2001:db8:1:2::${i + 1}`)).status, 200);
    assertLimited(await mint({ fact_cids: [cids[11]] }, '2001:db8:1:2:ffff::9'), /bundles/);
    assert.equal((await mint({ fact_cids: [cids[11]] }, '2001:db8:1:3::1')).status, 200, 'another /64');
  });

  it('bytes are metered too: large definitions run out before the count does', async () => {
    // 20 fact_cids make a definition of about 1.2 kB: the 4 000-byte budget holds three.
    const big = (k: number) => ({ fact_cids: cids.slice(k, k + 20) });
    for (let k = 0; k < 3; k++) assert.equal((await mint(big(k), '192.0.2.50')).status, 200);
    assertLimited(await mint(big(3), '192.0.2.50'), /bytes/);
  });

  it('the window ends: the address may create bundles again', async () => {
    clock += 301_000;
    assert.equal((await mint({ fact_cids: [cids[12]] }, '203.0.113.7')).status, 200);
  });

  it('MCP callers are metered by their address as REST callers are', async () => {
    const call = (i: number) =>
      t.app.inject({
        method: 'POST',
        url: '/mcp/full',
        remoteAddress: '192.0.2.99',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        payload: { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'svc_memory_bundle', arguments: { fact_cids: [cids[20 + i]] } } },
      });
    const results = [];
    for (let i = 0; i < 7; i++) results.push((await call(i)).json().result);
    assert.deepEqual(
      results.map((r) => r.isError === true),
      [false, false, false, false, false, true, true],
    );
    assert.equal(results[5].structuredContent.code, 'rate_limited');
    assert.ok(results[5].structuredContent.retry_after > 0);
  });
});
