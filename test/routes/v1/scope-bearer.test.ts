/**
 * Binding scopes to keys and the read bearer (issue 13 item 4, docs/scopes.md): operator
 * configuration first (every configured member of the tuple must list the key), else first
 * claim (by a write or a bearer request); one scope per batch, also for the responder's own
 * mints; bearer requests are signed statements bound to this responder and a short expiry;
 * bearers die with the key's revocation and their expiry.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { scopeBearerRequestDigest } from '../../../src/protocol/scope-bearer.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { fakeConnector } from '../../support/fake-connector.js';
import { bearerFor, bearerRequest } from '../../support/scopes.js';

const alice = makeAttester('scope-bearer-alice');
const mallory = makeAttester('scope-bearer-mallory');
const carol = makeAttester('scope-bearer-carol');
const dave = makeAttester('scope-bearer-dave');
const outsider = makeAttester('scope-bearer-outsider');
const CELL = P.cellOf(35.6895, 139.6917);
const ndvi = (value: number, extra: Record<string, unknown> = {}) => ({ kind: 'primary', cell: CELL, band: 'indices.ndvi', tslot: 680, value, unit: 'unitless', ...extra });

describe('scope binding and read bearers', () => {
  let t: TestApp;
  let skewMs = 0;
  const fake = fakeConnector(['indices.ndvi'], { 'indices.ndvi': () => ({ status: 'value', value: 0.5, provenance: { source: 'fake' }, fn: 'fake@1' }) });
  before(async () => {
    t = await build(
      { attesterKeys: [alice.publicKey, mallory.publicKey, carol.publicKey, dave.publicKey] },
      {
        // carol is the configured key of org cfg-org; user cfg-user lists carol and dave.
        SVC_SCOPE_KEYS: JSON.stringify({ 'org_id:cfg-org': [carol.publicKey], 'user_id:cfg-user': [carol.publicKey, dave.publicKey] }),
      },
      { materializers: [fake], now: () => new Date(Date.now() + skewMs) },
    );
  });
  after(async () => t.close());

  const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
    const r = await t.app.inject({ method: 'POST', url, payload: payload as object, headers });
    return { status: r.statusCode, body: r.json() };
  };
  const attest = (who: typeof alice, facts: Record<string, unknown>[]) => post('/v1/attest', who.batch(facts, t.service.manifests));

  it('configuration binds a scope to its listed keys; a tuple is bound to the keys every configured member lists', async () => {
    assert.equal((await attest(carol, [ndvi(0.1, { scope: { org_id: 'cfg-org' } })])).status, 200);
    const intruder = await attest(alice, [ndvi(0.2, { scope: { org_id: 'cfg-org', run_id: 'r1' } })]);
    assert.equal(intruder.status, 403);
    assert.equal(intruder.body.code, 'unauthorized');
    assert.equal(intruder.body.details.reason, 'scope_not_bound');
    // dave is listed for the user but not for the org: both members are configured, so not bound.
    assert.equal((await attest(dave, [ndvi(0.3, { scope: { org_id: 'cfg-org', user_id: 'cfg-user' } })])).status, 403);
    assert.equal((await attest(carol, [ndvi(0.3, { scope: { org_id: 'cfg-org', user_id: 'cfg-user' } })])).status, 200);
    assert.equal((await attest(dave, [ndvi(0.4, { scope: { user_id: 'cfg-user' } })])).status, 200);
    // Configured scopes are never claimed: writing one first does not take it from its keys.
    assert.equal((await post('/v1/scope_bearer', bearerRequest(t, carol, { org_id: 'cfg-org' }))).body.binding, 'configured');
    assert.equal((await post('/v1/scope_bearer', bearerRequest(t, alice, { org_id: 'cfg-org' }))).status, 403);
  });

  it('first claim: the first listed key to ask for a bearer owns the scope; then only it writes there', async () => {
    const scope = { user_id: 'claimed-by-bearer' };
    const first = await post('/v1/scope_bearer', bearerRequest(t, alice, scope));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.binding, 'claimed');
    assert.match(first.body.bearer, /^sb1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.equal((await attest(mallory, [ndvi(0.9, { scope })])).status, 403);
    assert.equal((await attest(alice, [ndvi(0.8, { scope })])).status, 200);
    assert.equal((await post('/v1/scope_bearer', bearerRequest(t, mallory, scope))).status, 403);
    // A key the operator never listed cannot claim anything.
    const stranger = await post('/v1/scope_bearer', bearerRequest(t, outsider, { user_id: 'unclaimed-yet' }));
    assert.equal(stranger.status, 403);
    assert.equal(stranger.body.code, 'unauthorized');
  });

  it('a batch writes one scope or none, typed with the fact index, and nothing is written', async () => {
    const size = await t.service.store.log.size();
    const r = await attest(alice, [ndvi(0.11), ndvi(0.12, { scope: { user_id: 'mixed' } })]);
    assert.equal(r.status, 422);
    assert.equal(r.body.code, 'invalid_argument');
    assert.equal(r.body.details.field, 'facts[1].scope');
    assert.equal(await t.service.store.log.size(), size);
  });

  it("the responder mints a scoped read's facts into that scope, in a batch apart from public mints of the same moment", async () => {
    const scope = { user_id: 'materialized' };
    const auth = await bearerFor(t, alice, scope);
    const cell = P.cellOf(35.7, 139.7);
    const [scoped, open] = await Promise.all([post('/v1/recall', { cell, bands: ['indices.ndvi'], scope }, { authorization: auth }), post('/v1/recall', { cell, bands: ['indices.ndvi'] })]);
    assert.equal(scoped.status, 200, JSON.stringify(scoped.body));
    assert.deepEqual(scoped.body.facts[0].scope, scope);
    assert.equal(scoped.body.fact_meta[scoped.body.facts[0].fact_cid].attester, t.service.keys.publicKeyB32);
    assert.equal(open.body.facts[0].scope, undefined);
    const at = (r: typeof open) => r.body.fact_meta[r.body.facts[0].fact_cid].log_index;
    assert.notEqual(at(scoped), at(open), 'public and scoped mints never share a log entry');
    const entry = await t.app.inject({ method: 'GET', url: `/v1/log/entries/${at(open)}` });
    assert.equal(typeof entry.json().cbor_hex, 'string', 'the public mint stays verifiable by anyone');
  });

  it('a bearer request is a signed statement for this responder, and short-lived', async () => {
    const scope = { user_id: 'statement' };
    const good = bearerRequest(t, alice, scope);
    const forged = await post('/v1/scope_bearer', { ...good, key: mallory.publicKey });
    assert.equal(forged.status, 401);
    assert.equal(forged.body.code, 'bad_signature');
    // The same statement signed for another responder is no good here (no replay across responders).
    const otherResponder = P.portableEd25519.publicKey(P.blake3(P.utf8('another responder')));
    const digest = scopeBearerRequestDigest(scope, P.b32decode(alice.publicKey, 32), good.exp, otherResponder, t.service.config.prefix);
    const replayed = await post('/v1/scope_bearer', { ...good, signature: P.b32encode(P.portableEd25519.sign(digest, alice.seed)) });
    assert.equal(replayed.body.code, 'bad_signature');
    const other = await post('/v1/scope_bearer', { ...good, scope: { user_id: 'another' } });
    assert.equal(other.body.code, 'bad_signature', 'the statement binds its scope');
    const tooLong = await post('/v1/scope_bearer', bearerRequest(t, alice, scope, t.service.config.scopeBearerTtlSecs + 60));
    assert.equal(tooLong.status, 422);
    assert.equal(tooLong.body.details.field, 'exp');
    assert.equal((await post('/v1/scope_bearer', good)).status, 200);
  });

  it('refuses a bearer that is tampered, expired, of another scope, or whose key is revoked', async () => {
    const scope = { user_id: 'lifecycle' };
    const auth = await bearerFor(t, alice, scope);
    const read = (authorization: string, s: object = scope) => post('/v1/recall', { cell: CELL, bands: ['indices.ndvi'], scope: s }, { authorization });
    assert.equal((await read(auth)).status, 200);
    const [v, payload, sig] = auth.slice('Bearer '.length).split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const widened = Buffer.from(JSON.stringify({ ...claims, scope: { user_id: 'someone-else' } })).toString('base64url');
    const tampered = await read(`Bearer ${v}.${widened}.${sig}`, { user_id: 'someone-else' });
    assert.equal(tampered.status, 401);
    assert.equal(tampered.body.code, 'unauthorized');
    assert.equal((await read('Bearer not-a-bearer')).status, 401);
    const mismatch = await read(auth, { user_id: 'lifecycle', run_id: 'r2' });
    assert.equal(mismatch.status, 403, 'a bearer names one exact four-tuple');
    t.service.config.revokedKeys.push(alice.publicKey);
    try {
      const revoked = await read(auth);
      assert.equal(revoked.status, 403);
      assert.equal(revoked.body.code, 'attester_revoked');
      assert.equal((await post('/v1/scope_bearer', bearerRequest(t, alice, scope))).body.code, 'attester_revoked');
    } finally {
      t.service.config.revokedKeys.pop();
    }
    skewMs = (t.service.config.scopeBearerTtlSecs + 1) * 1000;
    try {
      const expired = await read(auth);
      assert.equal(expired.status, 401);
      assert.match(expired.body.message, /expired/);
    } finally {
      skewMs = 0;
    }
  });

  it('SVC_SCOPE_KEYS is validated at start', () => {
    assert.throws(() => loadConfig({ SVC_SCOPE_KEYS: '{not json' }), ConfigError);
    assert.throws(() => loadConfig({ SVC_SCOPE_KEYS: JSON.stringify({ 'tenant:x': [alice.publicKey] }) }), /user_id\|agent_id\|run_id\|org_id/);
    assert.throws(() => loadConfig({ SVC_SCOPE_KEYS: JSON.stringify({ 'org_id:x': ['short'] }) }), /b32 public keys/);
    assert.deepEqual(loadConfig({ SVC_SCOPE_KEYS: JSON.stringify({ 'org_id:x': [alice.publicKey] }) }).scopeKeys, { 'org_id:x': [alice.publicKey] });
  });
});
