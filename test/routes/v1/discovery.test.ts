import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { build, type TestApp } from '../../support/app.js';
import { ERROR_CATALOGUE } from '../../../src/protocol/errors.js';
import { verifyReceipt } from '../../../src/protocol/receipt.js';

let t: TestApp;
before(async () => {
  t = await build();
});
after(async () => t.close());

const get = async (url: string) => {
  const r = await t.app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.json(), headers: r.headers };
};

describe('discovery (spec 4.1)', () => {
  it('GET /health is ok', async () => {
    const r = await get('/health');
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'ok');
  });

  it('GET /.well-known/svc.json publishes the responder key and epoch', async () => {
    const r = await get('/.well-known/svc.json');
    assert.equal(r.status, 200);
    assert.equal(r.body.responder_pubkey_b32, t.service.keys.publicKeyB32);
    assert.equal(r.body.responder_key_epoch, 0);
    assert.deepEqual(r.body.retired_keys, []);
    assert.equal(r.body.responder_pubkey_b32.length, 52);
  });

  it('creates the responder key with mode 0600 on first start', () => {
    const mode = statSync(join(t.dataDir, 'keys', 'responder.json')).mode & 0o777;
    assert.equal(mode, 0o600);
  });

  it('GET /v1/grid_info names the cell kind and pitch', async () => {
    const r = await get('/v1/grid_info');
    assert.equal(r.body.cell_kind, 'cell64');
    assert.ok(Math.abs(r.body.pitch_m - 9.5546) < 0.001);
  });

  it('GET /v1/verifier_spec and /.well-known/svc-verifier.json serve the same segment tables and vectors', async () => {
    const a = await get('/v1/verifier_spec');
    const b = await get('/.well-known/svc-verifier.json');
    assert.deepEqual(a.body, b.body);
    assert.equal(a.body.prefix, 'svc');
    assert.equal(a.body.receipt.merkle_sub_preimage.absent_marker_hex, '0500000000');
    assert.equal(a.body.receipt.versions['2'].tags.length, 11);
    const gv = a.body.golden_vectors.receipt;
    assert.equal(verifyReceipt(gv.receipt, { publicKey: a.body.golden_vectors.example_public_key }).valid, true);
  });

  it('GET /v1/errors lists every code of spec part 7 with status and MCP code', async () => {
    const r = await get('/v1/errors');
    assert.equal(r.body.schema, 'svc.errors.v1');
    const codes = new Map(r.body.codes.map((c: any) => [c.code, c]));
    for (const code of [
      'invalid_cell',
      'tslot_mismatch',
      'band_not_in_registry',
      'no_geocoder_match',
      'invalid_argument',
      'bad_signature',
      'canonical_encoding_divergence',
      'rate_limited',
      'internal',
      'unaddressable_subject',
    ]) {
      assert.ok(codes.has(code), code);
    }
    assert.equal((codes.get('invalid_cell') as any).http_status, 422);
    assert.equal((codes.get('invalid_cell') as any).mcp_error_code, -27);
    assert.equal(r.body.codes.length, Object.keys(ERROR_CATALOGUE).length);
    assert.ok(Array.isArray(r.body.next));
  });

  it('GET /v1/manifests lists CIDs that receipts pin', async () => {
    const m = (await get('/v1/manifests')).body;
    const stats = (await get('/v1/corpus_state_stats')).body;
    assert.equal(stats.receipt.registry_cid, m.registry_cid);
    assert.equal(stats.receipt.schema_cid, m.schema_cid);
    for (const k of ['bands', 'sources', 'functions', 'algorithms', 'topics']) assert.equal(m[k].length, 52, k);
  });

  it('catalogues: bands with tempo and privacy class, 26 topics, algorithms, functions, sources, limits, schema', async () => {
    const bands = (await get('/v1/bands')).body.bands;
    assert.ok(bands.find((b: any) => b.key === 'copdem30m.elevation_mean' && b.tempo === 'static' && b.privacy_class));
    assert.equal((await get('/v1/topics')).body.topics.length, 26);
    const algos = (await get('/v1/algorithms')).body.algorithms;
    assert.ok(algos.find((a: any) => a.key === 'spi_meteorological_drought@1'));
    const one = await get('/v1/algorithms/algal_bloom_chlorophyll_ndci@1');
    assert.equal(one.status, 200);
    assert.ok(one.body.formula && one.body.citation);
    assert.ok((await get('/v1/functions')).body.functions.length > 0);
    assert.ok((await get('/v1/sources')).body.sources.length > 0);
    const limits = (await get('/v1/limits')).body;
    assert.equal(limits.recall_many_cells, 256);
    assert.equal(limits.rate_limit.requests_per_minute, Math.round(t.service.config.rateLimitRps * 60));
    const { loadConfig } = await import('../../../src/config.js');
    assert.equal(loadConfig({}).rateLimitRps * 60, 600, 'default: 600 requests per minute');
    assert.equal(loadConfig({}).rateLimitBurst, 120);
    assert.ok((await get('/v1/schema')).body.profile);
  });

  it('an unknown algorithm is a typed 404', async () => {
    const r = await get('/v1/algorithms/nope@1');
    assert.equal(r.status, 404);
    assert.equal(r.body.code, 'function_not_in_registry');
    assert.equal(r.body.schema, 'svc.error.v1');
  });

  it('an unknown route is a typed 404 in the envelope', async () => {
    const r = await get('/v1/nope');
    assert.equal(r.status, 404);
    assert.equal(r.body.schema, 'svc.error.v1');
    assert.equal(r.body.path, '/v1/nope');
  });
});

describe('GET /v1/corpus_state_stats', () => {
  it('is a signed snapshot, valid on an empty corpus', async () => {
    const r = await get('/v1/corpus_state_stats');
    assert.equal(r.status, 200);
    assert.equal(r.body.facts_scanned, 0);
    assert.equal(r.body.receipt.primitive, 'svc.corpus_state_stats');
    assert.equal(r.body.receipt.preimage_version, 2);
    const v = verifyReceipt(r.body.receipt, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid && v.trusted, true, v.errors.join('; '));
  });
});

describe('POST /v1/verify_receipt', () => {
  it('reports a served receipt valid with its preimage', async () => {
    const receipt = (await get('/v1/corpus_state_stats')).body.receipt;
    const r = await t.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: receipt });
    assert.equal(r.statusCode, 200);
    const b = r.json();
    assert.equal(b.valid, true);
    assert.equal(b.signer, t.service.keys.publicKeyB32);
    assert.equal(b.signer_is_this_responder, true);
    assert.equal(b.preimage_blake3_hex.length, 64);
    assert.ok(Buffer.from(b.preimage_b64, 'base64').toString('latin1').startsWith('svc.preimage.v1\0'));
    assert.deepEqual(b.errors, []);
  });
  it('reports a changed byte as valid:false, not an error', async () => {
    const receipt = (await get('/v1/corpus_state_stats')).body.receipt;
    receipt.served_at = receipt.served_at.replace(/.$/, 'Y');
    const r = await t.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: { receipt } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.json().valid, false);
    assert.ok(r.json().errors.length > 0);
  });
  it('reports garbage as valid:false with the problems named', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: { hello: 1 } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.json().valid, false);
    assert.match(r.json().errors.join(' '), /request_id/);
  });
});

describe('bad input', () => {
  it('malformed JSON is a typed invalid_argument, never a 500', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: '{"a":', headers: { 'content-type': 'application/json' } });
    assert.equal(r.statusCode, 400);
    assert.equal(r.json().code, 'invalid_argument');
    assert.equal(r.json().schema, 'svc.error.v1');
  });
  it('a body over the cap is payload_too_large', async () => {
    const small = await build({ bodyLimitBytes: 1024 });
    try {
      const r = await small.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: { x: 'a'.repeat(5000) } });
      assert.equal(r.statusCode, 413);
      assert.equal(r.json().code, 'payload_too_large');
    } finally {
      await small.close();
    }
  });
  it('a wrong content type is refused in the envelope', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: '<x/>', headers: { 'content-type': 'application/xml' } });
    assert.equal(r.statusCode, 415);
    assert.equal(r.json().code, 'invalid_argument');
  });
});
