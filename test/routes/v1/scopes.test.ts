/**
 * Scope isolation over every route that returns facts or counts, on the embedded store and on
 * PostgreSQL (issue 13 item 2, docs/scopes.md). Each public route is asked the same questions
 * before and after a tenant writes a scope (a new cell, a new band, another version at a public
 * cell, a vector equal to a public query): the answers must not move, and no answer may name
 * the scope, its values or its fact_cids. Reads by cid, token and bundle answer a scoped fact
 * exactly as a cid never stored; every read naming the scope is refused without a bearer, with
 * the same answer for an empty scope; the log publishes a scoped entry's leaf hash only.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as P from '../../../src/protocol/index.js';
import { verifyFactInLog, type LogEvidence } from '../../../src/protocol/verify-log.js';
import { OPERATIONS } from '../../../src/api/ops/index.js';
import { bundleCidOf } from '../../../src/primitives/tokens/bundles.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { bearerFor } from '../../support/scopes.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../../store/support/pg-env.js';
import { vec, type Reply } from './reads/helpers.js';

const alice = makeAttester('scopes-isolation-alice');
const mallory = makeAttester('scopes-isolation-mallory');
const SCOPE = { org_id: 'tenant-alice-org', user_id: 'u-7-secret' };
const EMPTY_SCOPE = { org_id: 'tenant-nobody-org' };
const SECRET = [0.61803, 0.14142, -17.25]; // values only the scope holds
const NEVER = 'a'.repeat(52); // a well-formed fact_cid never stored

/**
 * Fields that differ between two answers to the same question: ids, clocks, signatures, and the
 * size of the log, which is public (a scoped entry is in it as a leaf hash, by design).
 */
const VOLATILE = new Set(['request_id', 'served_at', 'signature', 'latency_ms', 'elapsed_ms', 'cost', 'tree_head', 'log', 'as_of', 'log_size', 'log_entries_read']);
function view(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(view);
  if (x === null || typeof x !== 'object') return x;
  return Object.fromEntries(
    Object.entries(x)
      .filter(([k]) => !VOLATILE.has(k))
      .map(([k, v]) => [k, view(v)]),
  );
}

function isolationSuite(driver: 'sqlite' | 'postgres') {
  describe(`scope isolation over every route (${driver})`, { skip: driver === 'postgres' ? pgSkip : false }, () => {
    const schema = randomSchema();
    let t: TestApp;
    let base: string;
    // X: a public cell the scope also writes; Y: a cell only the scope writes; V1/V2: vectors.
    const X = P.cellOf(-41.2865, 174.7762);
    const Y = P.cellOf(-41.29, 174.78);
    const V1 = P.cellOf(-41.3, 174.7);
    const V2 = P.cellOf(-41.31, 174.71);
    const bbox = [174.7, -41.32, 174.79, -41.28];
    const q = vec(3);
    let publicCid = '';
    let scopedCids: string[] = [];
    let scopedLogIndex = -1;
    let publicLogIndex = -1;

    const send = async (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<Reply & { text: string }> => {
      const r = await t.app.inject({ method, url, payload: payload as Record<string, unknown> | undefined, headers });
      let body: any = null;
      try {
        body = r.json();
      } catch {
        body = r.body;
      }
      return { status: r.statusCode, body, text: r.body };
    };
    const post = (url: string, payload: unknown, headers?: Record<string, string>) => send('POST', url, payload, headers);
    const get = (url: string, headers?: Record<string, string>) => send('GET', url, undefined, headers);

    /** The first corpus.state tick of the event stream. */
    const streamTick = () =>
      new Promise<Reply & { text: string }>((resolve, reject) => {
        const { port } = new URL(base);
        const req = request({ host: '127.0.0.1', port, path: '/v1/stream?interval_s=300' }, (res) => {
          let buf = '';
          res.on('data', (c) => {
            buf += c;
            const m = /event: corpus\.state\ndata: (.*)\n\n/.exec(buf);
            if (m) {
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(m[1]), text: m[1] });
              req.destroy();
            }
          });
        });
        req.on('error', (e) => ((e as { code?: string }).code === 'ECONNRESET' ? undefined : reject(e)));
        req.end();
      });

    /** Every public question with a fact or a count in its answer, asked anonymously. */
    const probes: Record<string, () => Promise<Reply & { text: string }>> = {
      recall_x: () => post('/v1/recall', { cell: X }),
      recall_y: () => post('/v1/recall', { cell: Y }),
      recall_bands: () => post('/v1/recall', { cell: X, bands: ['indices.ndvi', 'weather.temperature_2m'] }),
      recall_many: () => post('/v1/recall_many', { cells: [X, Y] }),
      recall_polygon: () => post('/v1/recall_polygon', { cells: [X, Y] }),
      fetch_cell: () => post('/v1/fetch', { cell: X, band: 'indices.ndvi', tslot: 680 }),
      cells_x: () => get(`/v1/cells/${X}`),
      cells_y: () => get(`/v1/cells/${Y}`),
      query_region: () => post('/v1/query_region', { bbox, bands: ['indices.ndvi'], agg: 'mean' }),
      query_region_cells: () => post('/v1/query_region', { geometry: `cells:${X},${Y}`, bands: ['indices.ndvi', 'weather.temperature_2m'] }),
      trajectory: () => post('/v1/trajectory', { cell: X, band: 'indices.ndvi', window: [0, 2_000_000_000] }),
      diff: () => post('/v1/diff', { cell: X, band: 'indices.ndvi', tslot_a: 680, tslot_b: 681 }),
      compare: () => post('/v1/compare', { a: X, b: Y, family: 'indices' }),
      compare_bands: () => post('/v1/compare_bands', { cell: X, a: 'indices.ndvi', b: 'weather.temperature_2m' }),
      verify_x: () => post('/v1/verify', { cell: X, claim: { band: 'weather.temperature_2m', op: 'exists', value: null, tslot: 20_000 } }),
      verify_y: () => post('/v1/verify', { cell: Y, claim: { band: 'indices.ndvi', op: 'exists', value: null, tslot: 680 } }),
      find_similar: () => post('/v1/find_similar', { key: `inline:[${q.join(',')}]`, band: 'geotessera', k: 10 }),
      find_similar_cell: () => post('/v1/find_similar', { key: V1, band: 'geotessera', k: 10 }),
      embedding_centroid: () => post('/v1/embedding_centroid', { bbox }),
      embedding_centroid_cells: () => post('/v1/embedding_centroid', { cells: [V1, V2] }),
      region_similarity: () => post('/v1/region_similarity', { a: { cells: [V1] }, b: { cells: [V2] } }),
      embedding_diversity: () => post('/v1/embedding_diversity', { cells: [V1, V2] }),
      neighborhood_consistency: () => post('/v1/neighborhood_consistency', { cell64: V2 }),
      corpus_state_stats: () => get('/v1/corpus_state_stats'),
      stream: streamTick,
      coverage_map: () => get('/v1/coverage_map.svg'),
      coverage_matrix: () => get('/v1/coverage_matrix'),
      contributors: () => get('/v1/contributors'),
    };
    const answers = async () => Object.fromEntries(await Promise.all(Object.entries(probes).map(async ([k, f]) => [k, await f()] as const)));
    let beforeAnswers: Record<string, Reply & { text: string }>;

    before(async () => {
      const pg = driver === 'postgres' ? { databaseUrl: pgUrl(), databaseSchema: schema } : {};
      t = await build({ attesterKeys: [alice.publicKey, mallory.publicKey], ...pg }, {}, { materializers: [] });
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      // Public facts, written by the same key that will own the scope.
      const pub = await post(
        '/v1/attest',
        alice.batch(
          [
            { kind: 'primary', cell: X, band: 'indices.ndvi', tslot: 680, value: 0.3, unit: 'unitless' },
            { kind: 'primary', cell: X, band: 'indices.ndvi', tslot: 681, value: 0.35, unit: 'unitless' },
            { kind: 'primary', cell: V1, band: 'geotessera', tslot: 55, value: vec(4), unit: 'unitless' },
          ],
          t.service.manifests,
        ),
      );
      assert.equal(pub.status, 200, pub.text);
      publicCid = pub.body.fact_cids[0];
      publicLogIndex = pub.body.log_index;
      beforeAnswers = await answers();
      for (const [k, r] of Object.entries(beforeAnswers)) assert.ok(r.status < 500, `${k}: ${r.text}`);
      const scoped = await post(
        '/v1/attest',
        alice.batch(
          [
            { kind: 'primary', cell: X, band: 'indices.ndvi', tslot: 680, value: SECRET[0], unit: 'unitless', scope: SCOPE },
            { kind: 'primary', cell: X, band: 'weather.temperature_2m', tslot: 20_000, value: SECRET[2], unit: 'degC', scope: SCOPE },
            { kind: 'primary', cell: Y, band: 'indices.ndvi', tslot: 680, value: SECRET[1], unit: 'unitless', scope: SCOPE },
            { kind: 'primary', cell: V2, band: 'geotessera', tslot: 55, value: q, unit: 'unitless', scope: SCOPE },
          ],
          t.service.manifests,
        ),
      );
      assert.equal(scoped.status, 200, scoped.text);
      scopedCids = scoped.body.fact_cids;
      scopedLogIndex = scoped.body.log_index;
    });
    after(async () => {
      await t?.close();
      if (driver === 'postgres') await dropSchema(schema);
    });

    it('every public route answers exactly as before the scope was written', async () => {
      const now = await answers();
      for (const k of Object.keys(probes)) {
        assert.equal(now[k].status, beforeAnswers[k].status, `${k}: ${now[k].text}`);
        assert.deepEqual(view(now[k].body), view(beforeAnswers[k].body), k);
      }
      // Non-vacuous: the public fact is there to be seen, and the scope does hold facts.
      assert.deepEqual(now.fetch_cell.body.fact.fact_cid, publicCid);
      assert.equal((await t.service.store.latest({ cell: Y, scope: SCOPE })).length, 1);
    });

    it('no public answer names the scope tuple, its values or its fact_cids', async () => {
      const now = await answers();
      const texts = Object.entries(now).map(([k, r]) => [k, r.text] as const);
      for (const i of [scopedLogIndex, publicLogIndex]) texts.push([`log entry ${i}`, (await get(`/v1/log/entries/${i}`)).text]);
      texts.push(['verify page', (await get(`/verify/${scopedCids[0]}`)).text.replaceAll(scopedCids[0], '')]);
      for (const [k, text] of texts) {
        for (const secret of ['tenant-alice-org', 'u-7-secret', ...SECRET.map(String), ...scopedCids]) assert.ok(!text.includes(secret), `${k} mentions ${secret}`);
      }
    });

    it('reads by cid, token and bundle answer a scoped fact exactly as a cid never stored', async () => {
      const same = async (ask: (cid: string) => Promise<Reply & { text: string }>) => {
        const [scoped, never] = [await ask(scopedCids[0]), await ask(NEVER)];
        assert.equal(scoped.status, 404, scoped.text);
        assert.equal(scoped.body.code, 'cid_not_found');
        assert.equal(scoped.text.replaceAll(scopedCids[0], NEVER), never.text);
      };
      await same((cid) => post('/v1/fetch', { cid }));
      await same((cid) => post('/v1/memory_token', { fact_cid: cid }));
      await same((cid) => post('/v1/memory_token/resolve', { token: `svc:fact:${X}:${cid}` }));
      await same((cid) => post('/v1/memory_bundle', { fact_cids: [publicCid, cid] }));
      // A bundle written before scopes were private (its file made by hand) lists the scoped fact as missing.
      const legacy = async (cid: string) => {
        const def = { fact_cids: [publicCid, cid].sort() };
        const id = bundleCidOf(def);
        mkdirSync(join(t.dataDir, 'bundles'), { recursive: true });
        writeFileSync(join(t.dataDir, 'bundles', `${id}.json`), JSON.stringify({ v: 1, bundle_cid: id, ...def, created_at: '2026-01-01T00:00:00Z' }));
        return get(`/v1/memory_bundle/svc:bundle:${id}`);
      };
      const old = await legacy(scopedCids[0]);
      assert.equal(old.status, 200, old.text);
      assert.deepEqual(
        old.body.facts.map((f: any) => f.fact_cid),
        [publicCid],
      );
      assert.deepEqual(old.body.missing, [scopedCids[0]]);
      assert.deepEqual(old.body.receipt.fact_cids, [publicCid]);
      // The owner's bearer reads its fact by cid; another key's bearer does not.
      const own = await post('/v1/fetch', { cid: scopedCids[0] }, { authorization: await bearerFor(t, alice, SCOPE) });
      assert.equal(own.status, 200, own.text);
      assert.equal(own.body.fact.value, SECRET[0]);
      assert.deepEqual(own.body.receipt.scope, SCOPE, 'the receipt binds the scope it was read under');
      assert.ok(P.verifyReceipt(own.body.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid);
      const other = await post('/v1/fetch', { cid: scopedCids[0] }, { authorization: await bearerFor(t, mallory, { org_id: 'mallory-own' }) });
      assert.equal(other.status, 404);
    });

    it("the log publishes a scoped entry's leaf hash and batch header only; the scope's bearer gets the whole entry", async () => {
      const anon = await get(`/v1/log/entries/${scopedLogIndex}`);
      assert.equal(anon.status, 200);
      assert.equal(anon.body.private, true);
      assert.equal(anon.body.cbor_hex, undefined);
      assert.deepEqual(Object.keys(anon.body.entry).sort(), ['accepted_at', 'attester', 'batch_root', 'fact_count', 'registry_cid', 'schema_cid', 'signature', 'type', 'v']);
      assert.equal(anon.body.entry.attester, alice.publicKey);
      assert.equal(anon.body.entry.fact_count, 4);
      // What a witness checks: the leaf hash is the one the inclusion proof covers.
      const incl = await get(`/v1/log/inclusion?index=${scopedLogIndex}`);
      assert.equal(incl.body.leaf_hash, anon.body.leaf_hash);
      assert.ok(
        P.verifyInclusion(
          scopedLogIndex,
          incl.body.tree_size,
          P.b32decode(anon.body.leaf_hash, 32),
          incl.body.path.map((p: string) => P.b32decode(p, 32)),
          P.b32decode(incl.body.root, 32),
        ),
      );
      const whole = await get(`/v1/log/entries/${scopedLogIndex}`, { authorization: await bearerFor(t, alice, SCOPE) });
      assert.equal(P.b32encode(P.leafHash(P.fromHex(whole.body.cbor_hex))), anon.body.leaf_hash);
      assert.equal(whole.body.entry.facts.length, 4);
      const otherScope = await get(`/v1/log/entries/${scopedLogIndex}`, { authorization: await bearerFor(t, alice, { org_id: 'tenant-alice-org' }) });
      assert.equal(otherScope.body.cbor_hex, undefined, 'a bearer of a neighbouring scope does not open it');
      assert.equal(typeof (await get(`/v1/log/entries/${publicLogIndex}`)).body.cbor_hex, 'string', 'public entries are served whole');
    });

    it('svc verify --log evidence places a public fact, and fails on a scoped one (its entry is private)', async () => {
      const sth = (await get('/v1/log/sth')).body;
      const evidence = async (i: number, headers?: Record<string, string>): Promise<LogEvidence> => {
        // As src/cli-verify.ts gathers it.
        const e = (await get(`/v1/log/entries/${i}`, headers)).body;
        const p = (await get(`/v1/log/inclusion?index=${i}&tree_size=${sth.tree_size}`)).body;
        return { sth, entries: { [i]: { cbor_hex: e.cbor_hex } }, inclusions: { [i]: { tree_size: p.tree_size, path: p.path } } };
      };
      const pub = await post('/v1/fetch', { cid: publicCid });
      const placedPublic = verifyFactInLog({ fact_cid: publicCid, batch_root: pub.body.receipt.merkle_proof.root, attester: alice.publicKey }, publicLogIndex, await evidence(publicLogIndex));
      assert.deepEqual(placedPublic.errors, []);
      const own = await post('/v1/fetch', { cid: scopedCids[0] }, { authorization: await bearerFor(t, alice, SCOPE) });
      const fact = { fact_cid: scopedCids[0], batch_root: own.body.receipt.merkle_proof.root, attester: alice.publicKey };
      const anonymous = verifyFactInLog(fact, scopedLogIndex, await evidence(scopedLogIndex));
      assert.equal(anonymous.ok, false, 'no bytes, no placement');
      const withBearer = verifyFactInLog(fact, scopedLogIndex, await evidence(scopedLogIndex, { authorization: await bearerFor(t, alice, SCOPE) }));
      assert.deepEqual(withBearer.errors, []);
    });

    const eudrPlot = { plot_id: 'p1', geometry_geojson: { type: 'Point', coordinates: [174.7762, -41.2865] }, country_of_production: 'NZL', commodity_hs: '440399', quantity_kg: 1 };
    // Every operation taking a scope, with a request that is valid but for the credential.
    const scopedReads: Record<string, (scope: object) => [string, object]> = {
      recall: (scope) => ['/v1/recall', { cell: X, scope }],
      recall_many: (scope) => ['/v1/recall_many', { cells: [X, Y], scope }],
      recall_polygon: (scope) => ['/v1/recall_polygon', { cells: [X, Y], scope }],
      query_region: (scope) => ['/v1/query_region', { bbox, bands: ['indices.ndvi'], scope }],
      fetch: (scope) => ['/v1/fetch', { cell: X, band: 'indices.ndvi', tslot: 680, scope }],
      trajectory: (scope) => ['/v1/trajectory', { cell: X, band: 'indices.ndvi', window: [0, 2_000_000_000], scope }],
      diff: (scope) => ['/v1/diff', { cell: X, band: 'indices.ndvi', tslot_a: 680, tslot_b: 681, scope }],
      compare: (scope) => ['/v1/compare', { a: X, b: Y, scope }],
      compare_bands: (scope) => ['/v1/compare_bands', { cell: X, a: 'indices.ndvi', b: 'weather.temperature_2m', scope }],
      verify: (scope) => ['/v1/verify', { cell: Y, claim: { band: 'indices.ndvi', op: 'exists', value: null, tslot: 680 }, scope }],
      state: (scope) => ['/v1/state', { cell: V2, scope }],
      state_multi: (scope) => ['/v1/state_multi', { cell: V2, scope }],
      state_diff: (scope) => ['/v1/state_diff', { cell: V2, tslot_a: 54, tslot_b: 55, scope }],
      embedding_centroid: (scope) => ['/v1/embedding_centroid', { cells: [V1, V2], scope }],
      region_similarity: (scope) => ['/v1/region_similarity', { a: { cells: [V1] }, b: { cells: [V2] }, scope }],
      embedding_diversity: (scope) => ['/v1/embedding_diversity', { cells: [V1, V2], scope }],
      neighborhood_consistency: (scope) => ['/v1/neighborhood_consistency', { cell64: V2, scope }],
      memory_search: (scope) => ['/v1/memory/search', { query: 'secret pump', scope }],
      edges_recall: (scope) => ['/v1/edges/recall', { record: NEVER, scope }],
      entity: (scope) => ['/v1/entity', { kind: 'field', name: 'north field', geometry: { cell: X }, scope }],
      entity_resolve: (scope) => ['/v1/entity/resolve', { phrase: 'north field', scope }],
      entity_recall: (scope) => ['/v1/entity/recall', { entity: 'a'.repeat(26), scope }],
      memory_contradictions: (scope) => ['/v1/memory_contradictions', { cell: X, scope }],
      temporal_route: (scope) => ['/v1/temporal_route', { cell: X, bands: ['indices.ndvi'], scope }],
      explain: (scope) => ['/v1/explain', { fact_cids: [NEVER], scope }],
      ask: (scope) => ['/v1/ask', { q: 'how green is it here', cell: X, keep: 'scope', scope }],
      eudr_dds: (scope) => ['/v1/eudr_dds', { plots: [eudrPlot], max_cells_per_plot: 2, scope }],
      eudr_dds_job_start: (scope) => ['/v1/eudr_dds/jobs', { plots: [eudrPlot], max_cells_per_plot: 2, scope }],
    };

    it('lists every operation that takes a scope', () => {
      const taking = OPERATIONS.filter((o) => !['scope_bearer', 'memory_bearer'].includes(o.name) && 'scope' in ((o.input as { properties?: object }).properties ?? {})).map((o) => o.name);
      assert.deepEqual(Object.keys(scopedReads).sort(), taking.sort());
    });

    it('every read naming the scope without a bearer is refused 401, the same answer for an empty scope', async () => {
      for (const [name, make] of Object.entries(scopedReads)) {
        const [url, populated] = make(SCOPE);
        const [, empty] = make(EMPTY_SCOPE);
        const a = await post(url, populated);
        const b = await post(url, empty);
        assert.equal(a.status, 401, `${name}: ${a.text}`);
        assert.equal(a.body.code, 'unauthorized');
        assert.deepEqual(a.body, b.body, `${name}: an empty scope and a populated one get the same refusal`);
      }
    });

    it("a bearer of another scope or key is refused 403; the owner's bearer reads the scope through every operation", async () => {
      const aliceBearer = await bearerFor(t, alice, SCOPE);
      const malloryBearer = await bearerFor(t, mallory, { org_id: 'mallory-own' });
      for (const [name, make] of Object.entries(scopedReads)) {
        const [url, body] = make(SCOPE);
        const wrong = await post(url, body, { authorization: malloryBearer });
        assert.equal(wrong.status, 403, `${name}: ${wrong.text}`);
        assert.equal(wrong.body.code, 'unauthorized');
        const own = await post(url, body, { authorization: aliceBearer });
        assert.ok(own.status !== 401 && own.status !== 403, `${name}: ${own.text}`);
      }
      const r = await post('/v1/recall', { cell: X, bands: ['indices.ndvi', 'weather.temperature_2m'], scope: SCOPE }, { authorization: aliceBearer });
      assert.deepEqual(r.body.facts.map((f: any) => f.value).sort(), [SECRET[0], SECRET[2]].sort());
      assert.deepEqual(r.body.receipt.scope, SCOPE);
      const walk = await post('/v1/query_region', { bbox, bands: ['indices.ndvi'], scope: SCOPE }, { authorization: aliceBearer });
      assert.deepEqual([...walk.body.cells_with_data].sort(), [X, Y].sort());
      // Mallory cannot even obtain a bearer for it: the scope is alice's by first claim.
      const grab = await post('/v1/scope_bearer', (await import('../../support/scopes.js')).bearerRequest(t, mallory, SCOPE));
      assert.equal(grab.status, 403, grab.text);
    });

    /** One tools/call over MCP (Streamable HTTP) with the given HTTP headers, as a REST-like reply. */
    const mcp = async (path: string, args: object, headers: Record<string, string> = {}): Promise<Reply & { text: string; isError: boolean }> => {
      const op = OPERATIONS.find((o) => o.path === path)!;
      const r = await fetch(`${base}/mcp/full`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: `svc_${op.name}`, arguments: args } }),
      });
      const result = (await r.json()).result;
      const body = result.structuredContent;
      const isError = result.isError === true;
      return { status: isError ? body.http_status : 200, body, text: JSON.stringify(body), isError };
    };
    const overMcp = () => Object.entries(scopedReads).filter(([, make]) => OPERATIONS.find((o) => o.path === make(SCOPE)[0])!.mcp !== false);

    it('MCP: every scoped read is a tool, and without a bearer it is refused 401, the same answer for an empty scope', async () => {
      assert.equal(overMcp().length, Object.keys(scopedReads).length, 'every operation taking a scope is an MCP tool');
      for (const [name, make] of overMcp()) {
        const [url, populated] = make(SCOPE);
        const [, empty] = make(EMPTY_SCOPE);
        const a = await mcp(url, populated);
        const b = await mcp(url, empty);
        assert.equal(a.isError, true, `${name}: ${a.text}`);
        assert.equal(a.status, 401, `${name}: ${a.text}`);
        assert.equal(a.body.code, 'unauthorized');
        assert.deepEqual(a.body, b.body, `${name}: an empty scope and a populated one get the same refusal`);
      }
    });

    it("MCP: the transport's Authorization header carries the bearer; another scope's bearer is refused 403", async () => {
      const aliceBearer = await bearerFor(t, alice, SCOPE);
      const malloryBearer = await bearerFor(t, mallory, { org_id: 'mallory-own' });
      for (const [name, make] of overMcp()) {
        const [url, body] = make(SCOPE);
        const wrong = await mcp(url, body, { authorization: malloryBearer });
        assert.equal(wrong.status, 403, `${name}: ${wrong.text}`);
        assert.equal(wrong.body.code, 'unauthorized');
        const own = await mcp(url, body, { authorization: aliceBearer });
        assert.ok(own.status !== 401 && own.status !== 403, `${name}: ${own.text}`);
      }
      const r = await mcp('/v1/recall', { cell: X, bands: ['indices.ndvi', 'weather.temperature_2m'], scope: SCOPE }, { authorization: aliceBearer });
      assert.equal(r.isError, false, r.text);
      assert.deepEqual(r.body.facts.map((f: any) => f.value).sort(), [SECRET[0], SECRET[2]].sort());
      assert.deepEqual(r.body.receipt.scope, SCOPE);
      // A bearer does not widen a read that names no scope: it sees public facts only.
      const open = await mcp('/v1/recall', { cell: X, bands: ['indices.ndvi'] }, { authorization: aliceBearer });
      assert.deepEqual(
        open.body.facts.map((f: any) => f.value),
        [0.35],
      );
      // A malformed header is refused as over REST, not ignored.
      const junk = await mcp('/v1/recall', { cell: X, scope: SCOPE }, { authorization: 'Bearer not-a-bearer' });
      assert.equal(junk.status, 401);
    });

    it('MCP: public tools answer the same before and after, and never name the scope', async () => {
      const probesMcp: Array<[string, object]> = [
        ['/v1/recall', { cell: X }],
        ['/v1/recall', { cell: Y }],
        ['/v1/recall_many', { cells: [X, Y] }],
        ['/v1/fetch', { cell: X, band: 'indices.ndvi', tslot: 680 }],
        ['/v1/query_region', { bbox, bands: ['indices.ndvi'], agg: 'mean' }],
        ['/v1/find_similar', { key: `inline:[${q.join(',')}]`, band: 'geotessera', k: 10 }],
        ['/v1/fetch', { cid: scopedCids[0] }],
      ];
      for (const [url, args] of probesMcp) {
        const r = await mcp(url, args);
        for (const secret of ['tenant-alice-org', 'u-7-secret', ...SECRET.map(String), ...scopedCids.slice(1)])
          assert.ok(!r.text.includes(secret), `${url} ${JSON.stringify(args)} mentions ${secret}`);
      }
      const byCid = await mcp('/v1/fetch', { cid: scopedCids[0] });
      assert.equal(byCid.body.code, 'cid_not_found');
    });
  });
}

isolationSuite('sqlite');
isolationSuite('postgres');
