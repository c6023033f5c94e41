import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UpstreamClient } from '../../src/sources/http.js';
import { allowedUpstreams } from '../../src/sources/index.js';
import { loadConfig } from '../../src/config.js';
import { loadRegistry } from '../../src/registry/registry.js';

describe('egress allow-list', () => {
  const client = new UpstreamClient({ userAgent: 't', timeoutMs: 1000, allowedBaseUrls: ['https://api.example.org', 'https://*.blob.core.windows.net'] });
  it('admits configured hosts and wildcard suffixes, nothing else', () => {
    assert.equal(client.isAllowed('https://api.example.org/v1/x'), true);
    assert.equal(client.isAllowed('https://acct.blob.core.windows.net/c/x.tif?sig=1'), true);
    assert.equal(client.isAllowed('http://acct.blob.core.windows.net/c/x.tif'), false, 'scheme must match');
    assert.equal(client.isAllowed('https://blob.core.windows.net.evil.test/x'), false);
    assert.equal(client.isAllowed('https://evil.test/?https://api.example.org'), false);
    assert.equal(client.isAllowed('https://api.example.org:8443/x'), false, 'port must match');
    assert.equal(client.isAllowed('not a url'), false);
  });
  it('refuses before any request', async () => {
    await assert.rejects(client.request('https://evil.test/x'), (e: any) => e.kind === 'egress');
    assert.equal(client.requests, 0);
  });
  it('the service admits the STAC asset stores of Sentinel-2 and Sentinel-1 by default, and overrides replace them', () => {
    const reg = loadRegistry();
    const list = allowedUpstreams(loadConfig({}), reg);
    assert.ok(list.includes('https://sentinel-cogs.s3.us-west-2.amazonaws.com'));
    assert.ok(list.includes('https://*.blob.core.windows.net'));
    const over = allowedUpstreams(loadConfig({ SVC_UPSTREAM_EARTH_SEARCH_S2_ASSETS_URL: 'http://127.0.0.1:9999' }), reg);
    assert.ok(over.includes('http://127.0.0.1:9999'));
    assert.ok(!over.includes('https://sentinel-cogs.s3.us-west-2.amazonaws.com'));
  });
});
