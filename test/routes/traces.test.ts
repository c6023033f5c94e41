/**
 * Execution traces (docs/devices.md): a device.trace record signed by an enrolled device (or a
 * listed key) goes in through POST /v1/substrates and comes back as an svc:trace: token;
 * trace_resolve answers the record, the signer's standing now and a receipt binding the trace
 * with its input and output fact_cids. Anything else is refused, typed, and writes nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { OPERATIONS } from '../../src/api/ops/index.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester, sampleFact, type TestAttester } from '../support/attester.js';
import { enrollRequest, revokeRequest } from '../support/devices.js';

const op = makeAttester('traces-operator');
const device = makeAttester('traces-device');
const stranger = makeAttester('traces-stranger');

describe('execution traces', () => {
  let t: TestApp;
  before(async () => {
    t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [] });
  });
  after(async () => t.close());

  const post = async (url: string, payload: unknown) => {
    const r = await t.app.inject({ method: 'POST', url, payload: payload as object });
    return { status: r.statusCode, body: r.json() };
  };
  const traceValue = (inputs: string[], outputs: string[], extra: Record<string, unknown> = {}) => ({
    substrate: { kind: 'onnxruntime', version: '1.18.0', hardware: 'arm64-npu' },
    inputs,
    outputs,
    steps_digest: 'ab'.repeat(32),
    started_at: '2026-01-02T03:04:05Z',
    ended_at: '2026-01-02T03:04:09Z',
    summary: 'segmentation run',
    ...extra,
  });
  const traceFact = (value: Record<string, unknown>, over: Record<string, unknown> = {}) => ({ ...P.recordBody('device.trace', value, { signed_at: '2026-01-02T03:04:10Z' }), ...over });
  const submit = (who: TestAttester, facts: Record<string, unknown>[]) => post('/v1/substrates', who.batch(facts, t.service.manifests));

  let input = '';
  let output = '';
  let token = '';

  before(async () => {
    assert.equal((await post('/v1/device_platforms', enrollRequest(t, device, op))).status, 200);
    const w = await post('/v1/attest', device.batch([sampleFact(), sampleFact()], t.service.manifests));
    assert.equal(w.status, 200, JSON.stringify(w.body));
    [input, output] = w.body.fact_cids;
  });

  it('describes the record and its limits', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/v1/substrates' });
    assert.equal(r.statusCode, 200);
    assert.equal(r.json().band, 'device.trace');
    assert.match(r.json().record.inputs, /256/);
  });

  it('an enrolled device submits a trace and gets an svc:trace: token', async () => {
    const r = await submit(device, [traceFact(traceValue([input], [output]))]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.match(r.body.trace, /^svc:trace:[a-z2-7]{52}$/);
    assert.equal(r.body.trace, `svc:trace:${r.body.fact_cid}`);
    assert.equal(r.body.attester, device.publicKey);
    assert.equal(r.body.duplicate, false);
    assert.equal(typeof r.body.log_index, 'number');
    assert.ok(r.body.merkle_proofs[r.body.fact_cid]);
    assert.deepEqual(r.body.receipt.fact_cids, [r.body.fact_cid]);
    token = r.body.trace;
    const again = await submit(device, [traceFact(traceValue([input], [output]))]);
    assert.equal(again.body.duplicate, true);
    // An operator-listed key may submit one too.
    assert.equal((await submit(op, [traceFact(traceValue([], [input]))])).status, 200);
  });

  it('resolves a trace: record, signer, its standing now, and a receipt binding inputs and outputs', async () => {
    const r = await post('/v1/trace_resolve', { trace: token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.trace, token);
    assert.equal(r.body.attester, device.publicKey);
    assert.equal(r.body.attester_standing.standing, 'device');
    assert.match(r.body.attester_standing.enrollment, /^svc:attestation:/);
    assert.deepEqual(r.body.record.inputs, [input]);
    assert.equal(r.body.fact.band, 'device.trace');
    assert.deepEqual(new Set(r.body.receipt.fact_cids), new Set([r.body.fact_cid, input, output]));
    assert.equal((await post('/v1/trace_resolve', { trace: r.body.fact_cid })).status, 200, 'the bare fact_cid resolves too');
    const notTrace = await post('/v1/trace_resolve', { trace: input });
    assert.equal(notTrace.status, 404);
    assert.equal(notTrace.body.code, 'cid_not_found');
    assert.equal((await post('/v1/trace_resolve', { trace: 'svc:trace:nope' })).status, 422);
    assert.equal(OPERATIONS.find((o) => o.name === 'trace_resolve')?.mcp, 'full');
    assert.equal(OPERATIONS.find((o) => o.name === 'trace_submit')?.mcp, false);
  });

  it('refuses other keys, other shapes and bad records, writing nothing', async () => {
    const size = await t.service.store.log.size();
    const unlisted = await submit(stranger, [traceFact(traceValue([], []))]);
    assert.equal(unlisted.status, 403);
    assert.equal(unlisted.body.code, 'unauthorized');
    const two = await submit(device, [traceFact(traceValue([], [])), traceFact(traceValue([input], []))]);
    assert.equal(two.status, 422);
    const notTrace = await submit(device, [sampleFact()]);
    assert.equal(notTrace.status, 422);
    assert.equal(notTrace.body.details.field, 'facts[0].band');
    const badDigest = await submit(device, [traceFact(traceValue([], [], { steps_digest: 'xyz' }))]);
    assert.equal(badDigest.status, 422);
    assert.equal(badDigest.body.details.field, 'facts[0].value.steps_digest');
    const elsewhere = await submit(device, [traceFact(traceValue([], []), { cell: 'svc:entity:aaaaaaaaaaaaaaaaaaaaaaaaaa' })]);
    assert.equal(elsewhere.body.code, 'unaddressable_subject');
    const scoped = await submit(device, [traceFact(traceValue([], []), { scope: { user_id: 'u' } })]);
    assert.equal(scoped.body.details.field, 'facts[0].scope');
    assert.equal(await t.service.store.log.size(), size);
  });

  it('after revocation the device submits nothing more, and its traces show it revoked', async () => {
    const r = await post('/v1/device_platforms/revoke', revokeRequest(t, device, device, 'decommissioned'));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const w = await submit(device, [traceFact(traceValue([output], []))]);
    assert.equal(w.status, 403);
    assert.equal(w.body.code, 'attester_revoked');
    const resolved = await post('/v1/trace_resolve', { trace: token });
    assert.equal(resolved.status, 200);
    assert.equal(resolved.body.attester_standing.standing, 'revoked');
    assert.equal(resolved.body.attester_standing.revocation, r.body.revocation);
  });
});
