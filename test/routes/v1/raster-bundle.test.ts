/**
 * raster_bundle and raster_bundle_resolve over the Sentinel-2 fixture: a set of existing raster
 * tokens and band_raster requests under one signed svc:rasterset: token; the same set (in any
 * order, with repeats, as tokens or as requests) gives the same token; 2 to 64 distinct rasters;
 * a member without a scene is a typed absence; the receipt binds the set record and every member;
 * resolve lists every member's record and artifact and rebuilds an evicted one, byte for byte, on
 * both store drivers; MCP.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as P from '../../../src/protocol/index.js';
import { verifyResponse } from '../../../src/protocol/verify-response.js';
import { GRID_MEDIA_TYPE } from '../../../src/primitives/rasters/grid-format.js';
import { build, type TestApp } from '../../support/app.js';
import { startRasterUpstreams, type RasterUpstreams } from '../../sources/fixtures/raster-upstreams.js';
import { pgSkip } from '../../store/support/pg-env.js';
import { pixelBox, RASTER_NOW } from '../../support/rasters.js';

let up: RasterUpstreams;
let t: TestApp;
const BOX = pixelBox(100, 100, 160, 150);

async function post(app: TestApp, url: string, payload: unknown) {
  const r = await app.app.inject({ method: 'POST', url, payload: payload as object });
  return { status: r.statusCode, body: r.json() };
}
const bundle = (rasters: unknown[], app = t) => post(app, '/v1/raster_bundle', { rasters });

before(async () => {
  up = await startRasterUpstreams(['s2']);
  t = await build({ upstreams: up.upstreams }, {}, { now: () => RASTER_NOW });
});
after(async () => {
  await t?.close();
  await up?.close();
});

describe('raster_bundle', () => {
  let red: any;
  let first: any;

  it('mints one signed set token over an existing raster token and a band_raster request; the receipt binds the set and every member', async () => {
    red = (await post(t, '/v1/band_raster', { bbox: BOX, band: 's2.B04' })).body;
    assert.equal(red.status, 'raster');
    const r = await bundle([{ token: red.token }, { bbox: BOX, band: 's2.B08' }]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    first = r.body;
    assert.equal(first.status, 'rasterset');
    assert.equal(first.count, 2);
    const nir = first.members.find((m: any) => m.band === 's2.B08');
    assert.deepEqual(
      first.members.map((m: any) => m.derivation_cid),
      [red.derivation_cid, nir.derivation_cid].sort(),
      'members by derivation_cid',
    );
    assert.deepEqual(
      first.members.find((m: any) => m.band === 's2.B04'),
      {
        token: red.token,
        derivation_cid: red.derivation_cid,
        aoi_cid: red.aoi_cid,
        band: 's2.B04',
        tslot: 692,
        artifact_cid: red.artifact_cid,
        artifact_url: red.artifact_url,
        media_type: GRID_MEDIA_TYPE,
        bytes: red.bytes,
        from_request: [0],
      },
    );
    assert.deepEqual(nir.from_request, [1]);
    assert.equal(first.set_cid, P.anchorId({ kind: 'rasterset', members: first.members.map((m: any) => m.derivation_cid) }));
    assert.equal(first.token, `svc:rasterset:${first.set_cid}:${first.derivation_cid}`);
    assert.deepEqual([first.aoi_cid, first.bbox], [red.aoi_cid, red.bbox], 'one area: the envelope is the box');
    const rc = first.receipt;
    assert.deepEqual(rc.fact_cids, [first.derivation_cid, ...first.members.map((m: any) => m.derivation_cid)]);
    assert.deepEqual(rc.field, { aoi_cid: first.aoi_cid, derivation_cid: first.derivation_cid });
    const v = P.verifyReceipt(rc, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, JSON.stringify(v));
    assert.equal(v.field_bound, true);
    assert.equal(P.verifyReceipt({ ...rc, fact_cids: [rc.fact_cids[0], rc.fact_cids[1]] }).valid, false, 'the member list is signed');
    assert.equal(verifyResponse(first, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
    const rec = (await post(t, '/v1/memory_token/resolve', { token: first.record })).body.fact;
    assert.deepEqual([rec.fact_cid, rec.band, rec.value.recipe, rec.value.set_cid], [first.derivation_cid, 'raster.derivation', 'raster_bundle@1', first.set_cid]);
    assert.deepEqual(
      rec.value.members.map((m: any) => m.token),
      first.members.map((m: any) => m.token),
    );
  });

  it('the same set is the same token in any order, with repeats, as tokens or as requests; nothing new in the log; another set is another token', async () => {
    const size = await t.service.store.log.size();
    const nir = first.members.find((m: any) => m.band === 's2.B08');
    const again = await bundle([{ bbox: BOX, band: 's2.B08' }, { bbox: BOX, band: 's2.B04' }, { token: red.token }, { token: nir.token }]);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.token, first.token);
    assert.deepEqual(
      again.body.members.map((m: any) => [m.band, m.from_request]),
      first.members.map((m: any) => [m.band, m.band === 's2.B04' ? [1, 2] : [0, 3]]),
    );
    assert.equal(await t.service.store.log.size(), size);
    const other = await bundle([{ token: red.token }, { bbox: BOX, band: 's2.B03' }]);
    assert.equal(other.body.status, 'rasterset');
    assert.notEqual(other.body.set_cid, first.set_cid);
    assert.notEqual(other.body.token, first.token);
  });

  it('holds 2 to 64 distinct rasters: 64 are one set; 1, 65 or one raster twice are refused naming the cap before any upstream request', async () => {
    const many = Array.from({ length: 64 }, (_, i) => ({ bbox: pixelBox((i % 16) * 30, Math.floor(i / 16) * 30, (i % 16) * 30 + 9, Math.floor(i / 16) * 30 + 9), band: 's2.B04' }));
    const big = await bundle(many);
    assert.equal(big.status, 200, JSON.stringify(big.body).slice(0, 400));
    assert.deepEqual([big.body.status, big.body.count, big.body.receipt.fact_cids.length], ['rasterset', 64, 65]);
    assert.ok(P.verifyReceipt(big.body.receipt).valid);
    up.reset();
    for (const rasters of [[{ token: red.token }], [...many, many[0]], [{ token: red.token }, { token: red.token }], []]) {
      const r = await bundle(rasters);
      assert.deepEqual([r.status, r.body.code, r.body.details.cap], [422, 'invalid_argument', 'raster_bundle'], `${rasters.length} items`);
      assert.deepEqual([r.body.details.min, r.body.details.max], [2, 64]);
    }
    assert.equal(up.requests.length, 0);
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/v1/limits' })).json().raster_bundle, { min: 2, max: 64 });
  });

  it('a requested raster without a scene is a typed absence naming the item (nothing signed); bad items name their position', async () => {
    const size = await t.service.store.log.size();
    const r = await bundle([{ token: red.token }, { bbox: BOX, band: 's2.B04', observed_on: '2024-01-01' }]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'absence');
    assert.deepEqual(
      r.body.absences.map((a: any) => [a.index, a.reason]),
      [[1, 'no_scene_near_date']],
    );
    assert.equal(await t.service.store.log.size(), size);
    const malformed = await bundle([{ token: red.token }, { token: 'svc:raster:x:y:1:z' }]);
    assert.deepEqual([malformed.status, malformed.body.details.field, malformed.body.details.index], [422, 'rasters[1].token', 1]);
    const unknown = await bundle([{ token: red.token.replace(red.derivation_cid, 'a'.repeat(52)) }, { token: red.token }]);
    assert.deepEqual([unknown.status, unknown.body.code, unknown.body.details.index], [404, 'cid_not_found', 0]);
    assert.equal((await bundle([{ token: red.token }, { bbox: BOX }])).status, 422);
  });

  it("resolves to the set record and every member's record and stored artifact; bad tokens are typed", async () => {
    const r = await post(t, '/v1/raster_bundle/resolve', { token: first.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([r.body.set_cid, r.body.derivation_cid, r.body.record.fact_cid], [first.set_cid, first.derivation_cid, first.derivation_cid]);
    assert.deepEqual(
      r.body.members.map((m: any) => [m.token, m.record.fact_cid, m.artifact.cid, m.artifact.state]),
      first.members.map((m: any) => [m.token, m.derivation_cid, m.artifact_cid, 'stored']),
    );
    assert.ok(r.body.members.every((m: any) => P.verifyReceipt(m.record.receipt).valid));
    assert.deepEqual(r.body.receipt.fact_cids, first.receipt.fact_cids);
    assert.equal(P.verifyReceipt(r.body.receipt, { publicKey: t.service.keys.publicKeyB32 }).field_bound, true);
    const bad = (x: unknown) => post(t, '/v1/raster_bundle/resolve', { token: x });
    assert.equal((await bad(first.token.replace(':rasterset:', ':raster:'))).status, 422);
    assert.equal((await bad(`${first.token}:x`)).status, 422);
    assert.deepEqual(await bad(`svc:rasterset:${first.set_cid}:${'a'.repeat(52)}`).then((x) => [x.status, x.body.code]), [404, 'cid_not_found']);
    assert.deepEqual(await bad(`svc:rasterset:${'a'.repeat(26)}:${first.derivation_cid}`).then((x) => [x.status, x.body.code]), [409, 'token_claim_mismatch']);
    assert.deepEqual(await bad(`svc:rasterset:${first.set_cid}:${red.derivation_cid}`).then((x) => [x.status, x.body.code]), [404, 'cid_not_found'], 'a raster record is not a set record');
    assert.match((await post(t, '/v1/memory_token/resolve', { token: first.token })).body.message, /raster_bundle\/resolve/);
  });
});

for (const driver of ['sqlite', 'postgres'] as const) {
  describe(`raster_bundle_resolve rebuilds an evicted member (${driver})`, { skip: driver === 'postgres' ? pgSkip : false }, () => {
    let app: TestApp;
    before(async () => {
      app = await build({ upstreams: up.upstreams }, {}, { now: () => RASTER_NOW, driver });
    });
    after(async () => app?.close());

    it('the evicted member is read again from its pinned file, byte for byte; the other is served as stored', async () => {
      const made = (
        await bundle(
          [
            { bbox: pixelBox(10, 10, 59, 59), band: 's2.B04' },
            { bbox: pixelBox(10, 10, 59, 59), band: 's2.B12' },
          ],
          app,
        )
      ).body;
      assert.equal(made.status, 'rasterset', JSON.stringify(made));
      const victim = made.members[0];
      const original = (await app.app.inject({ method: 'GET', url: victim.artifact_url })).rawPayload;
      await app.service.store.artifacts.evict(victim.artifact_cid);
      assert.equal((await app.app.inject({ method: 'GET', url: victim.artifact_url })).statusCode, 404);
      up.reset();
      const r = await post(app, '/v1/raster_bundle/resolve', { token: made.token });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(
        r.body.members.map((m: any) => m.artifact.state),
        ['rebuilt', 'stored'],
      );
      assert.equal(up.count('/earth-search/v1/search'), 0, 'no scene search');
      const again = await app.app.inject({ method: 'GET', url: victim.artifact_url });
      assert.equal(again.statusCode, 200);
      assert.ok(again.rawPayload.equals(original));
      assert.equal(P.b32encode(P.blake3(again.rawPayload)), victim.artifact_cid);
    });
  });
}

describe('MCP', () => {
  it('raster_bundle and raster_bundle_resolve are callable tools of /mcp/full', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const c = new Client({ name: 'svc-test', version: '0.0.1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/full`)));
    const rasters = [
      { bbox: BOX, band: 's2.B04' },
      { bbox: BOX, band: 's2.B08' },
    ];
    const res: any = await c.callTool({ name: 'svc_raster_bundle', arguments: { rasters } });
    assert.equal(res.isError, undefined, JSON.stringify(res));
    assert.equal(res.structuredContent.token, (await bundle(rasters)).body.token);
    const rr: any = await c.callTool({ name: 'svc_raster_bundle_resolve', arguments: { token: res.structuredContent.token } });
    assert.equal(rr.structuredContent.members.length, 2);
    const one: any = await c.callTool({ name: 'svc_raster_bundle', arguments: { rasters: rasters.slice(0, 1) } });
    assert.deepEqual([one.isError, one.structuredContent.details.cap], [true, 'raster_bundle']);
    await c.close();
  });
});
