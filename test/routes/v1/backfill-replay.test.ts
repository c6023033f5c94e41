/**
 * Item 13 of issue 13: a backfill signature was only over the request, so a captured request
 * ran again on the same responder (twice in the probe) and on another one that lists the same
 * attester. The signed body now binds the target responder's key (`responder`), a `nonce` and an
 * expiry (`expires_unix`): a nonce is used once until its expiry, a request signed for another
 * responder or past its expiry is refused, and a request without the binding (the old form) is
 * refused too, since nothing could stop its replay. Refusals are `unauthorized` (401) with
 * `details.reason`; nothing is fetched or written.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { startJsonUpstreams, type JsonUpstreams } from '../../sources/fixtures/json-upstreams.js';

const op = makeAttester('backfill-replay-operator');
const op2 = makeAttester('backfill-replay-second-operator');
let fx: JsonUpstreams;
let a: TestApp; // the responder the requests are meant for
let b: TestApp; // another responder listing the same attester
let skew = 0; // ms added to a's clock
let n = 0;
const freshCell = () => P.cellOf(-20 + n++ * 0.013, 30.5);
const nowS = () => Math.floor((Date.now() + skew) / 1000);

before(async () => {
  fx = await startJsonUpstreams();
  const cfg = { upstreams: fx.upstreams, attesterKeys: [op.publicKey, op2.publicKey], materializerTimeoutSecs: 2, backfillMaxTtlSecs: 120 };
  a = await build(cfg, {}, { now: () => new Date(Date.now() + skew) });
  b = await build(cfg);
});
after(async () => {
  await a.close();
  await b.close();
  await fx.close();
});
beforeEach(() => {
  fx.reset();
  skew = 0;
});

/** A request as a current client signs it: bound to `to`'s key, a fresh nonce, a short expiry. */
function signed(body: Record<string, unknown>, to: TestApp = a, extra: Record<string, unknown> = {}, who = op): Record<string, unknown> {
  const bound = { ...body, responder: to.service.keys.publicKeyB32, nonce: randomBytes(16).toString('hex'), expires_unix: nowS() + 60, ...extra, attester: who.publicKey };
  return sign(bound, who);
}
/** Signature over blake3(canonical CBOR of the body without signature), as every client signs. */
function sign(body: Record<string, unknown>, who = op): Record<string, unknown> {
  const sig = P.portableEd25519.sign(P.blake3(P.encodeCanonical(body as P.CborValue)), who.seed);
  return { ...body, signature: P.b32encode(sig) };
}
async function post(app: TestApp, payload: Record<string, unknown>) {
  const r = await app.app.inject({ method: 'POST', url: '/v1/backfill', payload });
  return { status: r.statusCode, body: r.json() };
}
const request = () => ({ cell: freshCell(), band: 'weather.temperature_2m', max_facts: 2 });

/** `run` is refused with reason `reason`, fetching and writing nothing on either responder. */
async function refusedQuietly(run: () => Promise<{ status: number; body: any }>, status: number, code: string, reason?: string) {
  const sizes = [await a.service.store.log.size(), await b.service.store.log.size()];
  const fetched = fx.requests.length;
  const r = await run();
  assert.deepEqual([r.status, r.body.code], [status, code], JSON.stringify(r.body));
  if (reason) assert.equal(r.body.details.reason, reason, JSON.stringify(r.body));
  assert.deepEqual([await a.service.store.log.size(), await b.service.store.log.size()], sizes, 'nothing written');
  assert.equal(fx.requests.length, fetched, 'nothing fetched');
  return r.body;
}

describe('backfill signatures cannot be replayed', () => {
  it('the same signed request twice: the second is refused (replayed)', async () => {
    const req = signed(request());
    const first = await post(a, req);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.ok(first.body.counts.materialized > 0, 'the first one did work');
    await refusedQuietly(() => post(a, req), 401, 'unauthorized', 'replayed');
  });

  it('a request signed for one responder is refused by another (wrong_responder)', async () => {
    const body = await refusedQuietly(() => post(b, signed(request(), a)), 401, 'unauthorized', 'wrong_responder');
    assert.equal(body.details.expected, b.service.keys.publicKeyB32);
    assert.equal(body.details.field, 'responder');
  });

  it('the old form (no responder, nonce or expiry) is refused: its replay could not be stopped', async () => {
    const legacy = sign({ ...request(), attester: op.publicKey });
    const body = await refusedQuietly(() => post(a, legacy), 401, 'unauthorized', 'unbound_signature');
    assert.deepEqual(body.details.required, ['responder', 'nonce', 'expires_unix']);
    // Each binding field alone is not enough either.
    await refusedQuietly(() => post(a, sign({ ...request(), responder: a.service.keys.publicKeyB32, attester: op.publicKey })), 401, 'unauthorized', 'unbound_signature');
  });

  it('past its expiry a request is refused (expired); an expiry beyond the bound is invalid', async () => {
    const req = signed(request(), a, { expires_unix: nowS() + 30 });
    skew = 31_000;
    await refusedQuietly(() => post(a, req), 401, 'unauthorized', 'expired');
    skew = 0;
    const far = await refusedQuietly(() => post(a, signed(request(), a, { expires_unix: nowS() + 121 })), 422, 'invalid_argument');
    assert.equal(far.details.field, 'expires_unix');
  });

  it('the binding is signed: changing the nonce, expiry or responder breaks the signature', async () => {
    const req = signed(request());
    await refusedQuietly(() => post(a, { ...req, nonce: randomBytes(16).toString('hex') }), 401, 'bad_signature');
    await refusedQuietly(() => post(a, { ...req, expires_unix: (req.expires_unix as number) + 1 }), 401, 'bad_signature');
    // The original still works: a refused copy did not use up its nonce.
    assert.equal((await post(a, req)).status, 200);
  });

  it('a nonce is used once even when the request then fails, and is tied to its attester', async () => {
    const nonce = randomBytes(16).toString('hex');
    const bad = signed({ cell: freshCell(), band: 'nope.nope' }, a, { nonce });
    assert.equal((await post(a, bad)).body.code, 'band_not_in_registry');
    await refusedQuietly(() => post(a, signed(request(), a, { nonce })), 401, 'unauthorized', 'replayed');
    // Another attester's nonce space is its own: nobody can use up someone else's nonces.
    assert.equal((await post(a, signed(request(), a, { nonce }, op2))).status, 200);
  });
});
