import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { build, type TestApp } from '../support/app.js';
import { OPERATIONS } from '../../src/api/ops/index.js';
import { ERROR_CATALOGUE } from '../../src/protocol/errors.js';

let t: TestApp;
let doc: any;
before(async () => {
  t = await build();
  doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
after(async () => t.close());

describe('GET /openapi.json', () => {
  it('is served as JSON, the same text on every request (encoded once)', async () => {
    const a = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    const b = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.match(String(a.headers['content-type']), /^application\/json/);
    assert.equal(a.body, b.body);
    assert.deepEqual(a.json(), JSON.parse(JSON.stringify(t.app.swagger())));
  });

  it('GET /v1/tools lists every operation as JSON, the same text each time', async () => {
    const a = await t.app.inject({ method: 'GET', url: '/v1/tools' });
    const b = await t.app.inject({ method: 'GET', url: '/v1/tools' });
    assert.match(String(a.headers['content-type']), /^application\/json/);
    assert.equal(a.body, b.body);
    const body = a.json();
    assert.equal(body.tools.length, OPERATIONS.length);
  });

  it('is a valid OpenAPI 3.1.0 document, version 1.1.0, Apache-2.0', async () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1.1.0');
    assert.equal(doc.info.license.name, 'Apache-2.0');
    const v = new Validator();
    const res = await v.validate(doc);
    assert.equal(res.valid, true, JSON.stringify(res.errors, null, 1)?.slice(0, 2000));
  });

  it('documents every route the server answers (except itself and hidden aliases)', () => {
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<any>(doc.paths)) for (const m of Object.keys(item)) documented.add(`${m.toUpperCase()} ${path}`);
    const routes = t.app.printRoutes({ commonPrefix: false });
    assert.ok(routes.length > 0);
    for (const op of OPERATIONS) {
      const p = op.path.replace(/:([a-z0-9_]+)/g, '{$1}');
      assert.ok(documented.has(`${op.method} ${p}`), `${op.method} ${op.path} is documented`);
    }
    for (const must of ['GET /health', 'GET /.well-known/svc.json', 'GET /v1/verifier_spec', 'POST /v1/attest', 'GET /v1/log/sth', 'POST /mcp', 'GET /v1/stream']) {
      assert.ok(documented.has(must), `${must} is documented`);
    }
    for (const p of Object.keys(doc.paths)) {
      assert.ok(
        p.startsWith('/v1/') || p === '/health' || p === '/ready' || p.startsWith('/mcp') || p.startsWith('/verify') || p.startsWith('/.well-known/') || p === '/agent.json',
        `${p} lives under the versioned prefix`,
      );
    }
  });

  it('request schemas in the document are the ones that validate requests', () => {
    const recall = doc.paths['/v1/recall'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(recall.required, ['cell']);
    assert.equal(recall.additionalProperties, false);
  });

  it('the error catalogue is complete and stable', async () => {
    const cat = (await t.app.inject({ method: 'GET', url: '/v1/errors' })).json();
    assert.deepEqual(cat.codes.map((c: any) => c.code).sort(), Object.keys(ERROR_CATALOGUE).sort());
  });
});
