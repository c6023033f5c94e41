/**
 * GET /metrics (docs/deploy.md, "Metrics"): a per-service Prometheus registry in the text format,
 * parsed strictly (test/support/prom-text.ts). Families exist with their types, counters move with
 * the traffic that feeds them, histograms are cumulative with `_count` equal to the +Inf bucket,
 * routes are labelled by pattern, and nothing scope-private reaches a label; the switch and the
 * bearer token of SVC_METRICS / SVC_METRICS_TOKEN.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';
import { fakeConnector } from '../support/fake-connector.js';
import { histogramSeries, parseExposition, sampleValue, type Family, type MetricType } from '../support/prom-text.js';

const op = makeAttester('metrics-route');
const SECRET_SCOPE = 'metrics-secret-scope-7f3a';
const UNKNOWN_TOOL = 'svc_metrics_made_up_tool_q9';
const CELL = P.cellOf(48.8566, 2.3522);

let t: TestApp;
let base: string;

before(async () => {
  // One band answers, one fails upstream: both kinds of materialization outcome are counted.
  const fake = fakeConnector(['copdem30m.elevation_mean', 'weather.temperature_2m'], {
    'weather.temperature_2m': () => ({ status: 'error', reason: 'scripted upstream failure' }),
  });
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [fake] });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => t.close());

async function scrape(headers: Record<string, string> = {}): Promise<{ status: number; contentType: string; text: string }> {
  const r = await fetch(`${base}/metrics`, { headers });
  return { status: r.status, contentType: r.headers.get('content-type') ?? '', text: await r.text() };
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

const mcp = (name: string, args: Record<string, unknown> = {}) =>
  post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }, { accept: 'application/json, text/event-stream' });

function family(fams: Map<string, Family>, name: string, type: MetricType): Family {
  const f = fams.get(name);
  assert.ok(f, `family ${name} is exposed`);
  assert.equal(f.type, type, `${name} is a ${type}`);
  assert.ok(f.help && f.help.length > 0, `${name} has a HELP text`);
  return f;
}

describe('GET /metrics', () => {
  let before_: Map<string, Family>;
  let after_: Map<string, Family>;
  let afterText: string;
  const ids: { attested?: string } = {};

  before(async () => {
    const first = await scrape();
    assert.equal(first.status, 200);
    before_ = parseExposition(first.text);

    // Traffic: a recall that materializes (one band fetched, one failing upstream), a signed
    // attest (a log append), the same fact fetched twice (a cache miss, then a hit), a scoped
    // write and a scoped read without its bearer, a raw URL with a query string, MCP calls.
    const recall = await post('/v1/recall', { cell: CELL, bands: ['copdem30m.elevation_mean', 'weather.temperature_2m'] });
    assert.equal(recall.status, 200, JSON.stringify(recall.json));
    const fact = { kind: 'primary', cell: P.cellOf(10, 20), band: 'weather.temperature_2m', tslot: 20_000, value: 21.5, unit: 'degC' };
    const attest = await post('/v1/attest', op.batch([fact], t.service.manifests));
    assert.equal(attest.status, 200, JSON.stringify(attest.json));
    ids.attested = attest.json.fact_cids[0];
    for (let i = 0; i < 2; i++) assert.equal((await post('/v1/fetch', { cid: ids.attested })).status, 200);
    const scoped = { ...fact, cell: P.cellOf(11, 21), scope: { user_id: SECRET_SCOPE } };
    assert.equal((await post('/v1/attest', op.batch([scoped], t.service.manifests))).status, 200);
    const denied = await post('/v1/recall', { cell: scoped.cell, bands: ['weather.temperature_2m'], scope: { user_id: SECRET_SCOPE } });
    assert.ok(denied.status >= 400, `a scoped read without a bearer is refused (${denied.status})`);
    assert.equal((await fetch(`${base}/v1/cells/${CELL}?bands=copdem30m.elevation_mean`)).status, 200);
    const ok = await mcp('svc_corpus_state_stats');
    assert.equal(ok.status, 200);
    assert.equal(ok.json.result.isError, undefined);
    const bad = await mcp('svc_recall', { cell: 'defi.zb400' });
    assert.equal(bad.json.result.isError, true);
    assert.equal(bad.json.result.structuredContent.code, 'invalid_cell');
    await mcp(UNKNOWN_TOOL);

    const second = await scrape();
    after_ = parseExposition(second.text);
    afterText = second.text;
  });

  it('is the Prometheus text format 0.0.4, parsed strictly', async () => {
    const r = await scrape();
    assert.equal(r.status, 200);
    assert.match(r.contentType, /^text\/plain; version=0\.0\.4; charset=utf-8$/);
    assert.doesNotThrow(() => parseExposition(r.text));
  });

  it('exposes every svc_ family with its type, and the default process metrics', () => {
    family(after_, 'svc_http_request_duration_seconds', 'histogram');
    family(after_, 'svc_mcp_tool_duration_seconds', 'histogram');
    family(after_, 'svc_upstream_calls_total', 'counter');
    family(after_, 'svc_upstream_errors_total', 'counter');
    family(after_, 'svc_materializations_total', 'counter');
    family(after_, 'svc_log_entries', 'gauge');
    family(after_, 'svc_log_append_duration_seconds', 'histogram');
    family(after_, 'svc_cache_hits_total', 'counter');
    family(after_, 'svc_cache_misses_total', 'counter');
    family(after_, 'svc_info', 'gauge');
    family(after_, 'process_cpu_user_seconds_total', 'counter');
    family(after_, 'process_start_time_seconds', 'gauge');
    family(after_, 'nodejs_heap_size_used_bytes', 'gauge');
    family(after_, 'nodejs_eventloop_lag_seconds', 'gauge');
    for (const name of after_.keys()) {
      assert.ok(/^(svc_|process_|nodejs_)/.test(name), `${name} has a known prefix`);
    }
    assert.equal(sampleValue(after_, 'svc_info', 'svc_info', { driver: t.service.store.driver, cache: 'memory' }), 1);
  });

  it('counters and histograms moved with the traffic that feeds them', async () => {
    const grew = (fam: string, name: string, labels: Record<string, string>, by = 1) => {
      const a = sampleValue(before_, fam, name, labels);
      const b = sampleValue(after_, fam, name, labels);
      assert.ok(b - a >= by, `${name}${JSON.stringify(labels)}: ${a} → ${b}`);
    };
    const http = 'svc_http_request_duration_seconds';
    grew(http, `${http}_count`, { route: '/v1/recall', method: 'POST', status_class: '2xx' });
    grew(http, `${http}_count`, { route: '/v1/attest', method: 'POST', status_class: '2xx' }, 2);
    grew(http, `${http}_count`, { route: '/v1/fetch', method: 'POST', status_class: '2xx' }, 2);
    grew(http, `${http}_count`, { route: '/v1/recall', method: 'POST', status_class: '4xx' });
    grew(http, `${http}_count`, { route: '/v1/cells/:cell64', method: 'GET', status_class: '2xx' });
    grew(http, `${http}_count`, { route: '/mcp', method: 'POST', status_class: '2xx' }, 3);
    grew(http, `${http}_count`, { route: '/metrics', method: 'GET', status_class: '2xx' });
    const mcpH = 'svc_mcp_tool_duration_seconds';
    grew(mcpH, `${mcpH}_count`, { tool: 'svc_corpus_state_stats', outcome: 'ok' });
    grew(mcpH, `${mcpH}_count`, { tool: 'svc_recall', outcome: 'invalid_cell' });
    grew(mcpH, `${mcpH}_count`, { tool: 'unknown', outcome: 'unknown_tool' });
    grew('svc_upstream_calls_total', 'svc_upstream_calls_total', { source: 'fake' }, 2);
    grew('svc_upstream_errors_total', 'svc_upstream_errors_total', { source: 'fake', kind: 'error' });
    grew('svc_materializations_total', 'svc_materializations_total', { source: 'fake', outcome: 'value' });
    grew('svc_materializations_total', 'svc_materializations_total', { source: 'fake', outcome: 'upstream_error' });
    const append = 'svc_log_append_duration_seconds';
    // Two attests and the materialized fact.
    grew(append, `${append}_count`, { outcome: 'ok' }, 3);
    grew('svc_log_entries', 'svc_log_entries', {}, 3);
    grew('svc_cache_hits_total', 'svc_cache_hits_total', { kind: 'fact' });
    grew('svc_cache_misses_total', 'svc_cache_misses_total', { kind: 'fact' });
    // The log gauge is read at scrape time from the store itself.
    const now = parseExposition((await scrape()).text);
    assert.equal(sampleValue(now, 'svc_log_entries', 'svc_log_entries'), await t.service.store.log.size());
  });

  it('histogram buckets are cumulative, bounds ascend to +Inf, and _count is the +Inf bucket', () => {
    let checked = 0;
    for (const f of after_.values()) {
      if (f.type !== 'histogram') continue;
      for (const h of histogramSeries(f)) {
        const where = `${f.name}${JSON.stringify(h.labels)}`;
        assert.ok(h.buckets.length >= 2, `${where} has buckets`);
        for (let i = 1; i < h.buckets.length; i++) {
          assert.ok(h.buckets[i][0] > h.buckets[i - 1][0], `${where}: bounds ascend`);
          assert.ok(h.buckets[i][1] >= h.buckets[i - 1][1], `${where}: counts are cumulative`);
        }
        const [lastBound, lastCount] = h.buckets[h.buckets.length - 1];
        assert.equal(lastBound, Number.POSITIVE_INFINITY, `${where}: the last bucket is +Inf`);
        assert.equal(h.count, lastCount, `${where}: _count equals the +Inf bucket`);
        assert.ok(Number.isFinite(h.sum) && h.sum >= 0, `${where}: _sum is a finite duration`);
        checked++;
      }
    }
    assert.ok(checked >= 8, `histogram series checked: ${checked}`);
  });

  it('labels routes by pattern and never carries a URL, a cell, a scope, a key or a made-up tool name', () => {
    const routes = new Set<string>();
    for (const s of after_.get('svc_http_request_duration_seconds')!.samples) {
      const { route, method } = s.labels;
      routes.add(route);
      assert.ok(route === 'unmatched' || t.app.hasRoute({ method: method as 'GET', url: route }), `route label ${method} ${route} is a registered pattern`);
      assert.ok(!route.includes('?'), `route label ${route} has no query string`);
    }
    assert.ok(routes.has('/v1/cells/:cell64'), 'the pattern, not the URL');
    for (const secret of [CELL, SECRET_SCOPE, UNKNOWN_TOOL, op.publicKey, t.service.keys.publicKeyB32, ids.attested!]) {
      assert.ok(!afterText.includes(secret), `${secret.slice(0, 24)}… appears nowhere in the exposition`);
    }
  });

  it('uses a registry of its own: a second responder in the process starts from zero', async () => {
    const other = await build();
    try {
      const r = await other.app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(r.statusCode, 200);
      const fams = parseExposition(r.body);
      assert.equal(sampleValue(fams, 'svc_http_request_duration_seconds', 'svc_http_request_duration_seconds_count', { route: '/v1/attest' }), 0);
      assert.equal(sampleValue(fams, 'svc_log_append_duration_seconds', 'svc_log_append_duration_seconds_count'), 0);
    } finally {
      await other.close();
    }
  });
});

describe('GET /metrics: switch and token', () => {
  const TOKEN = 'scrape-secret-0123456789abcdef';
  let guarded: TestApp;
  let off: TestApp;
  before(async () => {
    guarded = await build({}, { SVC_METRICS_TOKEN: TOKEN });
    off = await build({}, { SVC_METRICS: '0' });
  });
  after(async () => {
    await guarded.close();
    await off.close();
  });

  it('SVC_METRICS=0: no route (404 not_found)', async () => {
    const r = await off.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(r.statusCode, 404);
    assert.equal(r.json().code, 'not_found');
  });

  it('SVC_METRICS_TOKEN: 401 unauthorized without the bearer or with another, 200 with it', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Bearer ${TOKEN}x`, TOKEN]) {
      const r = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      assert.equal(r.statusCode, 401, String(authorization));
      assert.equal(r.json().code, 'unauthorized');
      assert.equal(r.headers['www-authenticate'], 'Bearer realm="metrics"');
    }
    const r = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(r.statusCode, 200);
    assert.ok(parseExposition(r.body).has('svc_http_request_duration_seconds'));
  });

  it('configuration: on by default, 0/1 only, a token of 16..256 printable characters', () => {
    assert.equal(loadConfig({}).metricsEnabled, true);
    assert.equal(loadConfig({ SVC_METRICS: '0' }).metricsEnabled, false);
    assert.equal(loadConfig({ SVC_METRICS: '1' }).metricsEnabled, true);
    assert.throws(() => loadConfig({ SVC_METRICS: 'yes' }), ConfigError);
    assert.equal(loadConfig({ SVC_METRICS_TOKEN: TOKEN }).metricsToken, TOKEN);
    assert.throws(() => loadConfig({ SVC_METRICS_TOKEN: 'short' }), ConfigError);
    assert.throws(() => loadConfig({ SVC_METRICS_TOKEN: 'has a space in it, long enough' }), ConfigError);
  });
});
