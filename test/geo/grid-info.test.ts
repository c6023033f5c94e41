/** GET /v1/grid_info with the optional `resolution` parameter: only the served one is described. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { build, type TestApp } from '../support/app.js';

let t: TestApp;
before(async () => {
  t = await build();
});
after(async () => t.close());

const get = async (url: string) => {
  const r = await t.app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.json() };
};

describe('GET /v1/grid_info', () => {
  it('without resolution, and with the served one, describes the grid', async () => {
    const plain = await get('/v1/grid_info');
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.body.resolutions, [plain.body.resolution]);
    const served = await get(`/v1/grid_info?resolution=${plain.body.resolution}`);
    assert.equal(served.status, 200);
    assert.deepEqual(served.body, plain.body);
  });

  for (const asked of ['1', '-1', '12', 'fine', '0.5', '']) {
    it(`resolution=${JSON.stringify(asked)} → 422 invalid_resolution naming the served one`, async () => {
      const r = await get(`/v1/grid_info?resolution=${encodeURIComponent(asked)}`);
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.equal(r.body.code, 'invalid_resolution');
      assert.equal(r.body.schema, 'svc.error.v1');
      assert.equal(r.body.details.field, 'resolution');
      assert.equal(r.body.details.served, 0);
      assert.match(r.body.message, /serves resolution 0 only/);
    });
  }

  it('is documented with its query parameter', async () => {
    const doc = (await get('/openapi.json')).body;
    const params = doc.paths['/v1/grid_info'].get.parameters as Array<{ name: string; in: string }>;
    assert.ok(
      params.some((p) => p.name === 'resolution' && p.in === 'query'),
      JSON.stringify(params),
    );
  });
});
