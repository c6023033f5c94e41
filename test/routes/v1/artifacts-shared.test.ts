/**
 * Artifacts live in the store (contract.ts, ArtifactStore; docs/rasters.md): on two responders
 * sharing a PostgreSQL schema, a grid made on A is served by B; an eviction by one (under a tiny
 * SVC_ARTIFACT_MAX_BYTES) is seen by both, B rebuilds the artifact from the derivation record A
 * signed, byte for byte, and A serves the rebuilt bytes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { startRasterUpstreams, type RasterUpstreams } from '../../sources/fixtures/raster-upstreams.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../../store/support/pg-env.js';
import { pixelBox, RASTER_NOW } from '../../support/rasters.js';

async function post(t: TestApp, url: string, payload: unknown) {
  const r = await t.app.inject({ method: 'POST', url, payload: payload as object });
  return { status: r.statusCode, body: r.json() };
}
async function get(t: TestApp, url: string) {
  const r = await t.app.inject({ method: 'GET', url });
  return { status: r.statusCode, bytes: r.rawPayload, body: r.statusCode === 200 ? undefined : r.json() };
}

describe('artifacts on two responders sharing a PostgreSQL schema', { skip: pgSkip }, () => {
  const schema = randomSchema();
  let up: RasterUpstreams;
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    up = await startRasterUpstreams(['s2']);
    // 100 × 100 grids are 40 080 bytes: the store keeps one.
    const deployment = { upstreams: up.upstreams, databaseUrl: pgUrl(), databaseSchema: schema, artifactMaxBytes: 65_536 };
    a = await build(deployment, {}, { now: () => RASTER_NOW });
    b = await build(deployment, {}, { now: () => RASTER_NOW });
  });
  after(async () => {
    await Promise.all([a, b].map((t) => t?.close()));
    await up?.close();
    await dropSchema(schema);
  });

  it("a grid made on A is served by B; evicted by B's next grid, rebuilt by B from A's record, identical, and served by A", async () => {
    const one = (await post(a, '/v1/band_raster', { bbox: pixelBox(10, 10, 109, 109), band: 's2.B04' })).body;
    assert.equal(one.status, 'raster', JSON.stringify(one));
    const fromA = await get(a, one.artifact_url);
    const fromB = await get(b, one.artifact_url);
    assert.equal(fromB.status, 200);
    assert.ok(fromB.bytes.equals(fromA.bytes));
    // B resolves A's token: A's record, B's receipt.
    const r = await post(b, '/v1/raster/resolve', { token: one.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.artifact.state, 'stored');
    assert.equal(r.body.record.signer, a.service.keys.publicKeyB32);
    assert.equal(r.body.receipt.responder, b.service.keys.publicKeyB32);
    assert.ok(P.verifyReceipt(r.body.receipt).field_bound);

    const two = (await post(b, '/v1/band_raster', { bbox: pixelBox(300, 300, 399, 399), band: 's2.B04' })).body;
    assert.equal(two.status, 'raster');
    const gone = await get(a, one.artifact_url);
    assert.equal(gone.status, 404, "A sees B's eviction");
    assert.equal(gone.body.code, 'artifact_not_found');
    assert.equal(gone.body.details.rebuild.body.token, one.token);
    const rebuilt = await post(b, '/v1/raster/resolve', { token: one.token });
    assert.equal(rebuilt.status, 200, JSON.stringify(rebuilt.body));
    assert.equal(rebuilt.body.artifact.state, 'rebuilt');
    const again = await get(a, one.artifact_url);
    assert.equal(again.status, 200);
    assert.ok(again.bytes.equals(fromA.bytes), 'the bytes B rebuilt are the bytes A made');
    assert.equal(P.b32encode(P.blake3(again.bytes)), one.artifact_cid);
    assert.equal((await get(b, two.artifact_url)).status, 404);
    // The same box asked on B answers A's token: one record for the deployment.
    const same = (await post(b, '/v1/band_raster', { bbox: pixelBox(10, 10, 109, 109), band: 's2.B04' })).body;
    assert.equal(same.token, one.token);
  });
});
