/**
 * Device enrollment and key revocation (docs/devices.md): a device key enrolled on an operator
 * key's word writes at L2; forged, expired or misdirected statements are refused with typed
 * errors and write nothing; resolve shows the record and the standing now; a revocation ends
 * the key's writes and bearers at once and erases nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { OPERATIONS } from '../../src/api/ops/index.js';
import { deviceEnrollmentDigest } from '../../src/protocol/device-statements.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester, sampleFact } from '../support/attester.js';
import { bearerRevokeRequest, enrollRequest, revokeRequest } from '../support/devices.js';
import { fakeConnector } from '../support/fake-connector.js';
import { bearerFor, bearerRequest } from '../support/scopes.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../store/support/pg-env.js';

const op = makeAttester('devices-operator');
const op2 = makeAttester('devices-operator-2');
const selfRevoker = makeAttester('devices-operator-self');
const revokedOp = makeAttester('devices-operator-revoked');
const device = makeAttester('devices-device');
const other = makeAttester('devices-other-device');
const stranger = makeAttester('devices-stranger');
const revoker = makeAttester('devices-operator-revoker');
const CELL = P.cellOf(48.85, 2.35);

describe('device statements', () => {
  it('match the byte-by-byte example of docs/devices.md', () => {
    const key = (l: string) => P.portableEd25519.publicKey(P.blake3(P.utf8(l)));
    assert.equal(P.toHex(P.streamHeader('device_enrollment')), '7376632e707265696d6167652e763100110000006465766963655f656e726f6c6c6d656e74');
    const digest = deviceEnrollmentDigest(key('doc device'), 'operator_vouched', key('doc voucher'), 1800000000, key('doc responder'));
    assert.equal(P.toHex(digest), '2431fc02efdb130281e1754076a2adba4b038aae7097c9a9a3bb57e9a15333fb');
    assert.equal(P.b32encode(key('doc device')), 't4eigbrytuvoxmiay3sji65iwd5k5pf3kohgznwekktbm5wdn4xa');
  });
});

describe('device enrollment and revocation', () => {
  let t: TestApp;
  const fake = fakeConnector(['indices.ndvi'], { 'indices.ndvi': () => ({ status: 'value', value: 0.5, provenance: { source: 'fake' }, fn: 'fake@1' }) });
  before(async () => {
    t = await build(
      { attesterKeys: [op.publicKey, op2.publicKey, selfRevoker.publicKey, revokedOp.publicKey], revokedKeys: [revokedOp.publicKey], revokerKeys: [revoker.publicKey] },
      {},
      { materializers: [fake] },
    );
  });
  after(async () => t.close());

  const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
    const r = await t.app.inject({ method: 'POST', url, payload: payload as object, headers });
    return { status: r.statusCode, body: r.json() };
  };
  const attest = (who: typeof op, facts: Record<string, unknown>[]) => post('/v1/attest', who.batch(facts, t.service.manifests));
  const fixes = () => ({ kind: 'primary', cell: CELL, band: 'device.position_fixes', value: 3, unit: 'count', signed_at: '2026-11-20T12:00:00Z' });
  const logSize = () => t.service.store.log.size();

  let attestation = '';
  let deviceFact = '';

  it('lists the platforms honestly: operator_vouched verified, vendor attestations not', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/v1/device_platforms' });
    assert.equal(r.statusCode, 200);
    const body = r.json();
    const by = Object.fromEntries(body.platforms.map((p: { platform: string }) => [p.platform, p]));
    assert.equal(by.operator_vouched.supported, true);
    for (const p of ['android_key_attestation', 'apple_app_attest', 'tpm2_quote']) {
      assert.equal(by[p].supported, false, p);
      assert.match(by[p].verification, /root/i);
    }
    assert.equal(body.responder_key, t.service.keys.publicKeyB32);
  });

  it('an unenrolled key may not write', async () => {
    const r = await attest(device, [sampleFact()]);
    assert.equal(r.status, 403);
    assert.equal(r.body.code, 'unauthorized');
  });

  it("enrolls a device on a voucher's word; the device then attests at L2 (and writes what only devices may)", async () => {
    const r = await post('/v1/device_platforms', enrollRequest(t, device, op));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.match(r.body.attestation, /^svc:attestation:[a-z2-7]{52}$/);
    assert.equal(r.body.key, device.publicKey);
    assert.equal(r.body.platform, 'operator_vouched');
    assert.equal(r.body.already_enrolled, false);
    assert.equal(r.body.fact.band, 'device.enrollment');
    assert.equal(r.body.fact.signer, t.service.keys.publicKeyB32);
    assert.equal(r.body.fact.cell, P.recordSubject('device.enrollment', { key: device.publicKey }));
    assert.equal(r.body.fact.value.evidence.voucher, op.publicKey);
    assert.deepEqual(r.body.receipt.fact_cids, [r.body.attestation.slice('svc:attestation:'.length)]);
    attestation = r.body.attestation;

    const w = await attest(device, [sampleFact()]);
    assert.equal(w.status, 200, JSON.stringify(w.body));
    deviceFact = w.body.fact_cids[0];
    // Served, the fact names its writer as a device (its enrollment record, not configuration).
    const served = await post('/v1/fetch', { cid: deviceFact });
    assert.equal(served.body.fact_meta[deviceFact].attester_role, 'device');
    // device.position_fixes at full cell resolution: devices may, operator keys may not.
    assert.equal((await attest(device, [fixes()])).status, 200);
    assert.equal((await attest(op, [fixes()])).body.code, 'privacy_refused');

    const again = await post('/v1/device_platforms', enrollRequest(t, device, op2));
    assert.equal(again.status, 200);
    assert.equal(again.body.already_enrolled, true);
    assert.equal(again.body.attestation, attestation, 're-enrolling returns the existing record');
  });

  it('refuses forged, expired and misdirected statements with typed errors, writing nothing', async () => {
    const size = await logSize();
    const good = enrollRequest(t, other, op);
    const forgedDevice = await post('/v1/device_platforms', { ...good, device_signature: enrollRequest(t, stranger, op).device_signature });
    assert.equal(forgedDevice.status, 401);
    assert.equal(forgedDevice.body.code, 'bad_signature');
    assert.equal(forgedDevice.body.details.field, 'device_signature');
    // A voucher signature over another device's statement does not carry over.
    const forgedVoucher = await post('/v1/device_platforms', { ...good, voucher_signature: enrollRequest(t, stranger, op).voucher_signature });
    assert.equal(forgedVoucher.body.code, 'bad_signature');
    assert.equal(forgedVoucher.body.details.field, 'voucher_signature');
    // The statement binds the platform and the voucher.
    assert.equal((await post('/v1/device_platforms', { ...good, voucher: op2.publicKey })).body.code, 'bad_signature');
    const expired = await post('/v1/device_platforms', enrollRequest(t, other, op, { ttlS: -5 }));
    assert.equal(expired.status, 422);
    assert.equal(expired.body.code, 'invalid_argument');
    assert.equal(expired.body.details.field, 'exp');
    assert.equal(expired.body.details.reason, 'expired');
    const tooLong = await post('/v1/device_platforms', enrollRequest(t, other, op, { ttlS: 1000 }));
    assert.equal(tooLong.status, 422);
    assert.equal(tooLong.body.details.reason, 'too_far_ahead');
    const unlistedVoucher = await post('/v1/device_platforms', enrollRequest(t, other, stranger));
    assert.equal(unlistedVoucher.status, 403);
    assert.equal(unlistedVoucher.body.code, 'unauthorized');
    assert.equal(unlistedVoucher.body.details.reason, 'voucher_not_listed');
    const revokedVoucher = await post('/v1/device_platforms', enrollRequest(t, other, revokedOp));
    assert.equal(revokedVoucher.status, 403);
    assert.equal(revokedVoucher.body.code, 'attester_revoked');
    const selfVouched = await post('/v1/device_platforms', enrollRequest(t, op, op));
    assert.equal(selfVouched.status, 422);
    assert.equal(await logSize(), size, 'nothing was written');
    assert.equal((await attest(other, [sampleFact()])).status, 403, 'the device was not enrolled');
  });

  it('refuses unknown and unsupported platforms with typed errors', async () => {
    const size = await logSize();
    const unknown = await post('/v1/device_platforms', enrollRequest(t, other, op, { platform: 'palm_pilot' }));
    assert.equal(unknown.status, 422);
    assert.equal(unknown.body.code, 'invalid_argument');
    assert.equal(unknown.body.details.field, 'platform');
    assert.ok(unknown.body.details.known.includes('operator_vouched'));
    const apple = await post('/v1/device_platforms', { platform: 'apple_app_attest', key: other.publicKey, evidence: { fmt: 'apple-appattest' } });
    assert.equal(apple.status, 501);
    assert.equal(apple.body.code, 'not_yet_implemented');
    assert.equal(apple.body.details.platform, 'apple_app_attest');
    assert.match(apple.body.details.workaround, /operator_vouched/);
    assert.equal(await logSize(), size);
  });

  it('resolves an svc:attestation: token (and its bare fact_cid) to the record and the standing now', async () => {
    const r = await post('/v1/device_platforms/resolve', { attestation });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.key, device.publicKey);
    assert.equal(r.body.standing, 'enrolled');
    assert.equal(r.body.writes_as, 'device');
    assert.equal(r.body.revocation, null);
    assert.equal(r.body.record.evidence.voucher, op.publicKey);
    assert.equal(r.body.fact.fact_cid, attestation.slice('svc:attestation:'.length));
    const bare = await post('/v1/device_platforms/resolve', { attestation: r.body.fact.fact_cid });
    assert.equal(bare.status, 200);
    // A fact that is not an enrollment is not an attestation.
    const notOne = await post('/v1/device_platforms/resolve', { attestation: deviceFact });
    assert.equal(notOne.status, 404);
    assert.equal(notOne.body.code, 'cid_not_found');
    const op_ = OPERATIONS.find((o) => o.path === '/v1/device_platforms/resolve');
    assert.equal(op_?.mcp, 'full');
    for (const o of OPERATIONS.filter((x) => x.method === 'POST' && ['/v1/device_platforms', '/v1/device_platforms/revoke'].includes(x.path))) assert.equal(o.mcp, false, o.name);
  });

  it('a key listed to write cannot revoke another key: 403, nothing written, the other key keeps writing', async () => {
    const size = await logSize();
    // op2 is operator-listed but neither op nor device's voucher: it may not silence either.
    for (const victim of [op, device]) {
      const r = await post('/v1/device_platforms/revoke', revokeRequest(t, victim, op2, 'hostile'));
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(r.body.code, 'unauthorized');
      assert.equal(r.body.details.reason, 'not_allowed_to_revoke');
    }
    assert.equal(await logSize(), size);
    assert.equal((await attest(op, [sampleFact()])).status, 200);
    assert.equal((await attest(device, [sampleFact()])).status, 200);
    const status = await post('/v1/device_platforms/resolve', { attestation });
    assert.equal(status.body.standing, 'enrolled');
  });

  it('only the key, its voucher or a revoker key revokes it', async () => {
    const size = await logSize();
    const byStranger = await post('/v1/device_platforms/revoke', revokeRequest(t, device, stranger));
    assert.equal(byStranger.status, 403);
    assert.equal(byStranger.body.details.reason, 'not_allowed_to_revoke');
    const forged = await post('/v1/device_platforms/revoke', { ...revokeRequest(t, device, op), reason: 'changed after signing' });
    assert.equal(forged.status, 401);
    assert.equal(forged.body.code, 'bad_signature');
    const unknownSelf = await post('/v1/device_platforms/revoke', revokeRequest(t, stranger, stranger));
    assert.equal(unknownSelf.status, 403);
    assert.equal(unknownSelf.body.details.reason, 'unknown_key');
    const expired = await post('/v1/device_platforms/revoke', revokeRequest(t, device, op, 'lost', -1));
    assert.equal(expired.status, 422);
    assert.equal(await logSize(), size);
  });

  it('revocation ends writes (attester_revoked) and bearers at once, erasing nothing', async () => {
    const scope = { user_id: 'device-owned' };
    const auth = await bearerFor(t, device, scope); // an enrolled device may claim a scope
    const read = () => post('/v1/recall', { cell: CELL, bands: ['indices.ndvi'], scope }, { authorization: auth });
    assert.equal((await read()).status, 200);

    const r = await post('/v1/device_platforms/revoke', revokeRequest(t, device, op, 'device stolen'));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.revoked, true);
    assert.equal(r.body.already_revoked, false);
    assert.equal(r.body.requested_by, op.publicKey);
    assert.equal(r.body.fact.band, 'device.revocation');
    assert.equal(r.body.fact.cell, P.recordSubject('device.revocation', { key: device.publicKey }));

    const w = await attest(device, [sampleFact()]);
    assert.equal(w.status, 403);
    assert.equal(w.body.code, 'attester_revoked');
    assert.equal(w.body.details.revocation, r.body.revocation);
    const b = await read();
    assert.equal(b.status, 403);
    assert.equal(b.body.code, 'attester_revoked');
    assert.equal((await post('/v1/scope_bearer', bearerRequest(t, device, scope))).body.code, 'attester_revoked');
    const again = await post('/v1/device_platforms', enrollRequest(t, device, op));
    assert.equal(again.body.code, 'attester_revoked', 'a revoked key is not enrolled again');

    const resolved = await post('/v1/device_platforms/resolve', { attestation });
    assert.equal(resolved.body.standing, 'revoked');
    assert.equal(resolved.body.revocation.fact_cid, r.body.revocation);
    assert.equal(resolved.body.revocation.record.reason, 'device stolen');
    assert.deepEqual(resolved.body.receipt.fact_cids, [attestation.slice('svc:attestation:'.length), r.body.revocation]);

    // Nothing is erased: what the key wrote before stays served.
    const f = await post('/v1/fetch', { cid: deviceFact });
    assert.equal(f.status, 200);
    assert.equal(f.body.fact.fact_cid, deviceFact);
    // Revoking again (a fresh statement of an allowed key) returns the record; a stranger learns nothing.
    const twice = await post('/v1/device_platforms/revoke', revokeRequest(t, device, op, 'again'));
    assert.equal(twice.body.already_revoked, true);
    assert.equal(twice.body.revocation, r.body.revocation);
    assert.equal((await post('/v1/device_platforms/revoke', revokeRequest(t, device, op2, 'again'))).status, 403);
  });

  it('an operator revoker key (SVC_REVOKER_KEYS) may revoke any key', async () => {
    const victim = makeAttester('devices-revoked-by-revoker');
    assert.equal((await post('/v1/device_platforms', enrollRequest(t, victim, op2))).status, 200);
    const r = await post('/v1/device_platforms/revoke', revokeRequest(t, victim, revoker, 'operator decision'));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.requested_by, revoker.publicKey);
    assert.equal((await attest(victim, [sampleFact()])).body.code, 'attester_revoked');
  });

  it('every key statement is single-use: a replay is refused 401 replayed and writes nothing', async () => {
    const d = makeAttester('devices-replayed');
    const enroll = enrollRequest(t, d, op);
    assert.equal((await post('/v1/device_platforms', enroll)).status, 200);
    const size = await logSize();
    const again = await post('/v1/device_platforms', enroll);
    assert.equal(again.status, 401, JSON.stringify(again.body));
    assert.equal(again.body.details.reason, 'replayed');
    assert.equal(again.body.details.statement, 'device_enrollment');
    const revoke = revokeRequest(t, d, op, 'replay test');
    assert.equal((await post('/v1/device_platforms/revoke', revoke)).status, 200);
    const replayed = await post('/v1/device_platforms/revoke', revoke);
    assert.equal(replayed.status, 401);
    assert.equal(replayed.body.details.reason, 'replayed');
    assert.equal(await logSize(), size + 1, 'only the first revocation wrote');
  });

  it('the voucher that enrolled a device may revoke it, and a listed key may revoke itself', async () => {
    const d = makeAttester('devices-vouched-by-op2');
    assert.equal((await post('/v1/device_platforms', enrollRequest(t, d, op2))).status, 200);
    assert.equal((await attest(d, [sampleFact()])).status, 200);
    assert.equal((await post('/v1/device_platforms/revoke', revokeRequest(t, d, op2, 'retired'))).status, 200);
    assert.equal((await attest(d, [sampleFact()])).body.code, 'attester_revoked');

    assert.equal((await attest(selfRevoker, [sampleFact()])).status, 200);
    const self = await post('/v1/device_platforms/revoke', revokeRequest(t, selfRevoker, selfRevoker, 'key leaked'));
    assert.equal(self.status, 200, JSON.stringify(self.body));
    assert.equal((await attest(selfRevoker, [sampleFact()])).body.code, 'attester_revoked');
    // A revoked key vouches for nobody any more.
    assert.equal((await post('/v1/device_platforms', enrollRequest(t, other, selfRevoker))).body.code, 'attester_revoked');
  });

  it("the responder's own key is never revoked this way", async () => {
    const responder = { publicKey: t.service.keys.publicKeyB32, seed: new Uint8Array(32) } as typeof op;
    const r = await post('/v1/device_platforms/revoke', { ...revokeRequest(t, op, op), key: responder.publicKey });
    assert.equal(r.status, 422);
    assert.equal(r.body.details.field, 'key');
  });
});

/**
 * Two responders on one PostgreSQL schema, each with its own in-process hot cache and its own
 * key: what one accepts about a key binds the other at its next request.
 */
describe('enrollment and revocation across responders sharing a store', { skip: pgSkip }, () => {
  const schema = randomSchema();
  let a1: TestApp;
  let a2: TestApp;
  const dev = makeAttester('devices-shared-store-device');
  before(async () => {
    const deployment = { attesterKeys: [op.publicKey], databaseUrl: pgUrl(), databaseSchema: schema };
    a1 = await build(deployment, {}, { materializers: [] });
    a2 = await build(deployment, {}, { materializers: [] });
  });
  after(async () => {
    await Promise.all([a1, a2].map((t) => t?.close()));
    await dropSchema(schema);
  });
  const post = async (t: TestApp, url: string, payload: unknown, headers: Record<string, string> = {}) => {
    const r = await t.app.inject({ method: 'POST', url, payload: payload as object, headers });
    return { status: r.statusCode, body: r.json() };
  };
  const attest = (t: TestApp) => post(t, '/v1/attest', dev.batch([sampleFact()], t.service.manifests));

  it('an enrollment at one responder lets the device write at the other; a revocation there ends it at once', async () => {
    assert.equal((await attest(a2)).status, 403);
    const e = await post(a1, '/v1/device_platforms', enrollRequest(a1, dev, op));
    assert.equal(e.status, 200, JSON.stringify(e.body));
    assert.equal((await attest(a2)).status, 200, 'a2 reads the enrollment a1 minted');
    const scope = { user_id: 'shared-store-device' };
    const auth = await bearerFor(a2, dev, scope);
    const read = () => post(a2, '/v1/fetch', { cell: CELL, band: 'indices.ndvi', scope }, { authorization: auth });
    const before_ = await read();
    assert.equal(before_.status, 200, JSON.stringify(before_.body));
    // Warm a2's hot cache on the key's subject: the standing check must not be answered from it.
    const subject = P.recordSubject('device.enrollment', { key: dev.publicKey });
    await a2.service.store.latest({ cell: subject, bands: ['device.enrollment', 'device.revocation'], scope: null });
    await a2.service.store.latest({ cell: subject, bands: ['device.enrollment', 'device.revocation'], scope: null });

    const r = await post(a1, '/v1/device_platforms/revoke', revokeRequest(a1, dev, op, 'shared store'));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const w = await attest(a2);
    assert.equal(w.status, 403);
    assert.equal(w.body.code, 'attester_revoked');
    const b = await read();
    assert.equal(b.status, 403);
    assert.equal(b.body.code, 'attester_revoked');
    const resolved = await post(a2, '/v1/device_platforms/resolve', { attestation: e.body.attestation });
    assert.equal(resolved.body.standing, 'revoked');
  });

  it('a bearer revocation at one responder voids the bearers the other issued', async () => {
    const agent = op;
    const scope = { agent_id: 'shared-store-agent' };
    const auth = await bearerFor(a2, agent, scope);
    const read = () => post(a2, '/v1/fetch', { cell: CELL, band: 'indices.ndvi', scope }, { authorization: auth });
    const before_ = await read();
    assert.equal(before_.status, 200, JSON.stringify(before_.body));
    const iat = JSON.parse(Buffer.from(auth.split('.')[1], 'base64url').toString()).iat as number;
    while (Math.floor(a1.service.now().getTime() / 1000) <= iat) await new Promise((res) => setTimeout(res, 50));
    const rv = await post(a1, '/v1/memory/bearer/revoke', bearerRevokeRequest(a1, agent, Math.floor(a1.service.now().getTime() / 1000)));
    assert.equal(rv.status, 200, JSON.stringify(rv.body));
    const refused = await read();
    assert.equal(refused.status, 401);
    assert.equal(refused.body.details.reason, 'bearer_revoked');
  });
});
