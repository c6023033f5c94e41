/**
 * GET /v1/artifacts/<cid>.png: a grid artifact of known values (test/support/pictures.ts), put in
 * the responder's artifact store, served as a quick-look PNG with the artifact's caching, beside
 * the grid route it must not shadow.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { encodeGrid, GRID_MEDIA_TYPE } from '../../../src/primitives/rasters/grid-format.js';
import { ARTIFACT_CACHE_CONTROL } from '../../../src/api/ops/rasters.js';
import { build, type TestApp } from '../../support/app.js';
import { decodePng, distinctColours, pixel } from '../../support/png-decode.js';
import { artefactPath, gridFixture, rasterTokenFor } from '../../support/pictures.js';

/** A 3 × 2 grid of values k, k + 1, …. */
function smallGrid(k: number): Uint8Array {
  return encodeGrid({ width: 3, height: 2, epsg: 32633, geotransform: [0, 10, 0, 0, 0, -10], values: Array.from({ length: 6 }, (_, i) => k + i) });
}

describe('GET /v1/artifacts/<cid>.png', () => {
  let t: TestApp;
  let cid: string;
  let plain: string;
  before(async () => {
    t = await build();
    cid = (await t.service.store.artifacts.put(GRID_MEDIA_TYPE, gridFixture(), rasterTokenFor(t.service.config.prefix))).cid;
    // Another grid, stored without a rebuild hint.
    plain = (await t.service.store.artifacts.put(GRID_MEDIA_TYPE, smallGrid(1), null)).cid;
  });
  after(async () => t.close());

  it('serves the grid as a PNG with a legend, cached like the artifact', async () => {
    const r = await t.app.inject({ method: 'GET', url: `/v1/artifacts/${cid}.png` });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.headers['content-type'], 'image/png');
    assert.equal(r.headers['cache-control'], ARTIFACT_CACHE_CONTROL);
    assert.equal(r.headers.etag, `"${cid}.png-v1"`);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    writeFileSync(artefactPath('quick-look-route.png'), r.rawPayload);
    const png = decodePng(r.rawPayload);
    assert.equal(png.width, 512);
    assert.ok(png.height > 320);
    assert.equal(png.text['svc unit'], 's2.B04 surface reflectance (unitless)');
    assert.equal(png.text.Title, `quick-look of artifact ${cid}`);
    assert.equal(pixel(png, 2, 2)[3], 0, 'the no-data corner is transparent');
    assert.ok(distinctColours(png, 0, 320) > 60);
  });

  it('answers If-None-Match with 304, and HEAD with the headers', async () => {
    const etag = `"${cid}.png-v1"`;
    const r = await t.app.inject({ method: 'GET', url: `/v1/artifacts/${cid}.png`, headers: { 'if-none-match': `W/${etag}` } });
    assert.equal(r.statusCode, 304);
    assert.equal(r.body, '');
    const h = await t.app.inject({ method: 'HEAD', url: `/v1/artifacts/${cid}.png` });
    assert.equal(h.statusCode, 200);
    assert.equal(h.headers['content-type'], 'image/png');
    assert.equal(h.headers.etag, etag);
  });

  it('leaves the grid route as it was: /v1/artifacts/<cid> is still the grid bytes', async () => {
    const r = await t.app.inject({ method: 'GET', url: `/v1/artifacts/${cid}` });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], GRID_MEDIA_TYPE);
    assert.deepEqual(new Uint8Array(r.rawPayload), gridFixture());
    assert.equal(r.headers.etag, `"${cid}"`);
  });

  it('says the unit is not recorded when the artifact has no band_raster token', async () => {
    const png = decodePng((await t.app.inject({ method: 'GET', url: `/v1/artifacts/${plain}.png` })).rawPayload);
    assert.equal(png.text['svc unit'], 'unit not recorded');
  });

  it('refuses what has no quick-look: unknown, malformed, not a grid, evicted', async () => {
    const unknown = await t.app.inject({ method: 'GET', url: `/v1/artifacts/${'a'.repeat(52)}.png` });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'artifact_not_found');
    const bad = await t.app.inject({ method: 'GET', url: '/v1/artifacts/NOT-A-CID.png' });
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().code, 'invalid_argument');
    const other = (await t.service.store.artifacts.put('application/octet-stream', new Uint8Array([1, 2, 3]))).cid;
    const notGrid = await t.app.inject({ method: 'GET', url: `/v1/artifacts/${other}.png` });
    assert.equal(notGrid.statusCode, 422);
    assert.match(notGrid.json().message, /only grids/);
    const gone = (await t.service.store.artifacts.put(GRID_MEDIA_TYPE, smallGrid(2), rasterTokenFor(t.service.config.prefix))).cid;
    await t.service.store.artifacts.evict(gone);
    const evicted = await t.app.inject({ method: 'GET', url: `/v1/artifacts/${gone}.png` });
    assert.equal(evicted.statusCode, 404);
    assert.equal(evicted.json().details.state, 'evicted');
    assert.equal(evicted.json().details.rebuild.path, '/v1/raster/resolve');
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.ok(
      doc.paths['/v1/artifacts/{cid}.png']?.get,
      Object.keys(doc.paths)
        .filter((p: string) => p.includes('artifacts'))
        .join(', '),
    );
  });
});
