/**
 * Memory bearers (docs/scopes.md, "Memory bearers"): POST /v1/memory/bearer issues the scope
 * bearer (now carrying iat); a bearer reads its scope until it expires, its key is revoked, or
 * its key voids the bearers issued before a time (POST /v1/memory/bearer/revoke), after which it
 * is refused 401 bearer_revoked while a bearer issued since still works.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { domainDigest, segment } from '../../src/protocol/preimage.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';
import { bearerRevokeRequest } from '../support/devices.js';
import { fakeConnector } from '../support/fake-connector.js';
import { bearerRequest } from '../support/scopes.js';

const agent = makeAttester('memory-bearer-agent');
const other = makeAttester('memory-bearer-other');
const stranger = makeAttester('memory-bearer-stranger');
const CELL = P.cellOf(52.37, 4.89);
const scope = { agent_id: 'memory-bearer-agent' };

describe('memory bearers', () => {
  let t: TestApp;
  let skewMs = 0;
  const fake = fakeConnector(['indices.ndvi'], { 'indices.ndvi': () => ({ status: 'value', value: 0.5, provenance: { source: 'fake' }, fn: 'fake@1' }) });
  before(async () => {
    t = await build({ attesterKeys: [agent.publicKey, other.publicKey] }, {}, { materializers: [fake], now: () => new Date(Date.now() + skewMs) });
  });
  after(async () => t.close());

  const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
    const r = await t.app.inject({ method: 'POST', url, payload: payload as object, headers });
    return { status: r.statusCode, body: r.json() };
  };
  const nowS = () => Math.floor(t.service.now().getTime() / 1000);
  const issue = async (who = agent) => {
    const r = await post('/v1/memory/bearer', bearerRequest(t, who, scope));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as { bearer: string; issued_at: string; expires_at: string };
  };
  const read = (bearer: string) => post('/v1/recall', { cell: CELL, bands: ['indices.ndvi'], scope }, { authorization: `Bearer ${bearer}` });
  const claimsOf = (bearer: string) => JSON.parse(Buffer.from(bearer.split('.')[1], 'base64url').toString());
  /** Wait until the responder's clock is in a later second than `s`. */
  const nextSecond = async (s: number) => {
    while (nowS() <= s) await new Promise((r) => setTimeout(r, 50));
  };

  it('issues the scope bearer at /v1/memory/bearer, with iat, and it reads the scope', async () => {
    const b = await issue();
    assert.match(b.bearer, /^sb1\./);
    const claims = claimsOf(b.bearer);
    assert.equal(claims.key, agent.publicKey);
    assert.deepEqual(claims.scope, scope);
    assert.ok(Number.isSafeInteger(claims.iat) && Math.abs(claims.iat - nowS()) <= 1);
    assert.equal(b.issued_at, P.isoSeconds(claims.iat * 1000));
    const r = await read(b.bearer);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    // The same statement is good at either path (one issuance).
    assert.equal((await post('/v1/scope_bearer', bearerRequest(t, agent, scope))).status, 200);
    // A bearer is for its key's scope only.
    assert.equal((await post('/v1/memory/bearer', bearerRequest(t, other, scope))).status, 403);
  });

  it('expires', async () => {
    const b = await issue();
    skewMs = (t.service.config.scopeBearerTtlSecs + 5) * 1000;
    try {
      const r = await read(b.bearer);
      assert.equal(r.status, 401);
      assert.match(r.body.message, /expired/);
    } finally {
      skewMs = 0;
    }
  });

  it('revocation voids the bearers issued before not_before (401 bearer_revoked); later bearers work', async () => {
    const old = await issue();
    assert.equal((await read(old.bearer)).status, 200);
    const issuedAt = claimsOf(old.bearer).iat;
    await nextSecond(issuedAt);
    const nb = nowS();
    const r = await post('/v1/memory/bearer/revoke', bearerRevokeRequest(t, agent, nb));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.not_before, nb);
    assert.equal(r.body.already_covered, false);
    assert.equal(r.body.fact.band, 'memory.bearer_revocation');
    assert.deepEqual(r.body.fact.value, { key: agent.publicKey, not_before: nb });
    assert.equal(r.body.fact.cell, P.recordSubject('memory.bearer_revocation', { key: agent.publicKey }));

    const refused = await read(old.bearer);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'unauthorized');
    assert.equal(refused.body.details.reason, 'bearer_revoked');
    assert.equal(refused.body.details.revocation, r.body.revocation);

    const fresh = await issue(); // issued at or after not_before
    assert.ok(claimsOf(fresh.bearer).iat >= nb);
    assert.equal((await read(fresh.bearer)).status, 200);

    // A replayed or older statement changes nothing and mints nothing.
    const size = await t.service.store.log.size();
    const older = await post('/v1/memory/bearer/revoke', bearerRevokeRequest(t, agent, nb - 10));
    assert.equal(older.status, 200);
    assert.equal(older.body.already_covered, true);
    assert.equal(older.body.not_before, nb);
    assert.equal(await t.service.store.log.size(), size);
    assert.equal((await read(fresh.bearer)).status, 200);
  });

  it('a signed bearer request is single-use: replayed after the bearers were voided, it gives nothing', async () => {
    const req = bearerRequest(t, agent, scope);
    const first = await post('/v1/memory/bearer', req);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    await nextSecond(claimsOf(first.body.bearer).iat);
    assert.equal((await post('/v1/memory/bearer/revoke', bearerRevokeRequest(t, agent, nowS()))).status, 200);
    assert.equal((await read(first.body.bearer)).body.details.reason, 'bearer_revoked');
    for (const path of ['/v1/memory/bearer', '/v1/scope_bearer']) {
      const replay = await post(path, req);
      assert.equal(replay.status, 401, JSON.stringify(replay.body));
      assert.equal(replay.body.code, 'unauthorized');
      assert.equal(replay.body.details.reason, 'replayed');
      assert.equal(replay.body.bearer, undefined);
    }
    // The same holds for the revocation statement itself.
    const rv = bearerRevokeRequest(t, agent, nowS() - 1);
    assert.equal((await post('/v1/memory/bearer/revoke', rv)).status, 200);
    assert.equal((await post('/v1/memory/bearer/revoke', rv)).body.details.reason, 'replayed');
  });

  it('a bearer without iat (issued before iat existed) is void once its key revoked bearers', async () => {
    const payload = P.utf8(JSON.stringify({ v: 1, scope, key: agent.publicKey, exp: nowS() + 300 }));
    const sig = t.service.keys.signer.sign(domainDigest('scope_bearer', [segment(1, payload)], t.service.config.prefix));
    const legacy = `sb1.${Buffer.from(payload).toString('base64url')}.${Buffer.from(sig).toString('base64url')}`;
    const r = await read(legacy);
    assert.equal(r.status, 401);
    assert.equal(r.body.details.reason, 'bearer_revoked');
  });

  it('without not_before, the second the statement was signed at is used', async () => {
    const b = await issue();
    await nextSecond(claimsOf(b.bearer).iat);
    const r = await post('/v1/memory/bearer/revoke', bearerRevokeRequest(t, agent));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.already_covered, false);
    assert.ok(r.body.not_before > claimsOf(b.bearer).iat);
    assert.equal((await read(b.bearer)).body.details.reason, 'bearer_revoked');
  });

  it('refuses a future not_before, a forged or expired statement, and keys with no bearers, writing nothing', async () => {
    const size = await t.service.store.log.size();
    const future = await post('/v1/memory/bearer/revoke', bearerRevokeRequest(t, agent, nowS() + 60));
    assert.equal(future.status, 422);
    assert.equal(future.body.details.field, 'not_before');
    const good = bearerRevokeRequest(t, agent, nowS());
    const forged = await post('/v1/memory/bearer/revoke', { ...good, signature: bearerRevokeRequest(t, other, nowS()).signature });
    assert.equal(forged.status, 401);
    assert.equal(forged.body.code, 'bad_signature');
    const expired = await post('/v1/memory/bearer/revoke', bearerRevokeRequest(t, agent, nowS(), -1));
    assert.equal(expired.status, 422);
    assert.equal(expired.body.details.field, 'exp');
    const unknown = await post('/v1/memory/bearer/revoke', bearerRevokeRequest(t, stranger, nowS()));
    assert.equal(unknown.status, 403);
    assert.equal(unknown.body.details.reason, 'unknown_key');
    assert.equal(await t.service.store.log.size(), size);
  });

  it("another key's bearers are untouched", async () => {
    const s2 = { agent_id: 'memory-bearer-other' };
    const r = await post('/v1/memory/bearer', bearerRequest(t, other, s2));
    assert.equal(r.status, 200);
    const ok = await post('/v1/recall', { cell: CELL, bands: ['indices.ndvi'], scope: s2 }, { authorization: `Bearer ${r.body.bearer}` });
    assert.equal(ok.status, 200);
  });
});
