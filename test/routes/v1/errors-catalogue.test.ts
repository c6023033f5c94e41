/**
 * Every code of GET /v1/errors is raised over HTTP at least once, with its catalogued status,
 * its code and the svc.error.v1 envelope (spec part 7). A code that no request can raise on this
 * responder is listed in UNREACHABLE with the reason, which docs/errors.md repeats. A code added
 * to the catalogue without a trigger or a listed reason fails this file, and so does a code that
 * docs/errors.md does not describe with the same status and MCP code.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CATALOGUE } from '../../../src/protocol/errors.js';
import { diskFaults, enospc } from '../../../src/store/disk-full.js';
import * as P from '../../../src/protocol/index.js';
import type { Materializer } from '../../../src/sources/contract.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester, sampleFact, type TestAttester } from '../../support/attester.js';
import { startFakeGeocoders, type FakeGeocoders } from '../../geo/fake-geocoders.js';
import { startRasterUpstreams, type RasterUpstreams } from '../../sources/fixtures/raster-upstreams.js';
import { s2PointAt } from '../../sources/fixtures/raster-scenes.js';

/**
 * Codes no HTTP request can make this responder raise, and why. Each reason is also the
 * "when" of the code in docs/errors.md, so a client reading either learns the same thing.
 */
const UNREACHABLE: Record<string, string> = {
  source_scheme_unknown: 'no request names a source scheme: sources are fixed by the registry at start, so nothing raises it',
  geocoder_transport_down: 'geocoder transport failures are reported as source_fetch_failed (502), as spec 4.3 prescribes',
  cache_error: 'hot-cache faults (Redis down or slow, undecodable entries) degrade to a cache miss and the read goes to the store; see the dead-Redis check below',
  not_yet_implemented: 'raised only by a build whose shortcuts lack the locate primitive; entity tokens now answer cid_not_found',
};

/** Reads and writes as a client sees them. */
interface Reply {
  status: number;
  body: any;
  headers: Record<string, unknown>;
}

/** One way to make the responder answer a code; `status` only where the spec names another. */
interface Trigger {
  what: string;
  run: () => Promise<Reply>;
  status?: number;
  check?: (r: Reply) => void;
}

// Inside the Sentinel-2 fixture's scenes (see test/routes/v1/scene.test.ts), whatever the clock says.
const NOW = new Date('2026-11-22T12:00:00Z');

let main: TestApp; // operator and revoked keys, fake geocoders, raster fixtures
let tight: TestApp; // 1 s gateway timeout and the smallest body cap
let limited: TestApp; // a one-request bucket
let quota: TestApp; // one fact per attester per day
let broken: TestApp; // a connector that breaks its contract; network geocoders off (test default)
let disk: TestApp; // the embedded store, whose log has the disk-fault seam
let geo: FakeGeocoders;
let up: RasterUpstreams;
let catalogue: Map<string, { http_status: number; mcp_error_code: number | null }>;
const op = makeAttester('errors-catalogue-operator');
const stranger = makeAttester('errors-catalogue-stranger');
const revoked = makeAttester('errors-catalogue-revoked');
const cell = P.cellOf(45.4642, 9.19);
let factCid: string;

/** A connector that answers a value without provenance: a bug the responder trips over. */
const contractBreaker: Materializer = {
  key: 'contract-breaker',
  bands: ['weather.temperature_2m'],
  history: false,
  async materialize() {
    return { status: 'value', value: 1 } as never;
  },
};

before(async () => {
  geo = await startFakeGeocoders();
  up = await startRasterUpstreams(['s2']);
  const geocoders = { SVC_UPSTREAM_PHOTON_URL: geo.photonUrl, SVC_UPSTREAM_NOMINATIM_URL: geo.nominatimUrl };
  main = await build({ upstreams: up.upstreams, materializerTimeoutSecs: 2, attesterKeys: [op.publicKey, revoked.publicKey], revokedKeys: [revoked.publicKey] }, geocoders, { now: () => NOW });
  tight = await build({ upstreams: up.upstreams, materializerTimeoutSecs: 2, timeoutSecs: 1, bodyLimitBytes: 1024 }, {}, { now: () => NOW });
  limited = await build({ rateLimitRps: 0.001, rateLimitBurst: 1 });
  quota = await build({ attesterKeys: [op.publicKey] }, { SVC_ATTESTER_DAILY_FACTS: '1' });
  broken = await build({}, {}, { materializers: [contractBreaker] });
  // The disk seam is the embedded log's: storage_full is raised on SQLite whatever the run's driver.
  disk = await build({ attesterKeys: [op.publicKey] }, {}, { now: () => NOW, driver: 'sqlite' });
  const r = await post(main, '/v1/attest', op.batch([sampleFact({ cell })], main.service.manifests));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  factCid = r.body.fact_cids[0];
  const doc = (await get(main, '/v1/errors')).body;
  catalogue = new Map(doc.codes.map((c: any) => [c.code, c]));
});
after(async () => {
  for (const a of [main, tight, limited, quota, broken, disk]) await a?.close();
  await up?.close();
  await geo?.close();
});

async function send(app: TestApp, method: 'GET' | 'POST', url: string, payload?: unknown, headers?: Record<string, string>): Promise<Reply> {
  const r = await app.app.inject({ method, url, payload: payload as any, headers });
  let body: any;
  try {
    body = r.json();
  } catch {
    body = r.body;
  }
  return { status: r.statusCode, body, headers: r.headers };
}
const get = (app: TestApp, url: string) => send(app, 'GET', url);
const post = (app: TestApp, url: string, payload: unknown) => send(app, 'POST', url, payload);
const attest = (app: TestApp, payload: unknown) => post(app, '/v1/attest', payload);
const batch = (a: TestAttester, facts: Record<string, unknown>[], app = main) => a.batch(facts, app.service.manifests) as Record<string, any>;
/** A scene thumbnail of a cell no earlier request asked for (the connector caches scene choices). */
let sceneCol = 100;
function freshScene(app: TestApp): Promise<Reply> {
  sceneCol += 7;
  const p = s2PointAt(sceneCol, 200);
  return get(app, `/v1/cells/${P.cellOf(p.lat, p.lng)}/scene.png`);
}

interface BandInfo {
  key: string;
  min_level: string;
  privacy_class: string;
  value_kind: string;
  unit: string;
  tempo: string;
  dim?: number;
}

/** The first band of /v1/bands that `pick` accepts (the test fails when there is none). */
async function bandWhere(what: string, pick: (b: BandInfo) => boolean): Promise<BandInfo> {
  const b = ((await get(main, '/v1/bands')).body.bands as BandInfo[]).find(pick);
  assert.ok(b, `no band in /v1/bands has ${what}`);
  return b;
}

/** A well-formed fact of band `b` (its unit, a value of its kind, a tslot on its grid), as an operator would send it. */
function factOf(b: BandInfo): Record<string, unknown> {
  const value = b.value_kind === 'vector' ? new Array(b.dim ?? 128).fill(0) : 1;
  return sampleFact({ band: b.key, unit: b.unit, value, ...(b.tempo === 'static' ? { tslot: 0 } : {}) });
}

const TRIGGERS: Record<string, Trigger[]> = {
  invalid_cell: [{ what: 'recall of a mistyped cell64', run: () => post(main, '/v1/recall', { cell: 'defi.zb400.bafi.bab' }) }],
  invalid_resolution: [{ what: 'grid_info at a resolution not served', run: () => get(main, '/v1/grid_info?resolution=3') }],
  tslot_mismatch: [{ what: 'recall of a static band at tslot 5', run: () => post(main, '/v1/recall', { cell, bands: ['copdem30m.elevation_mean'], tslot: 5 }) }],
  band_not_in_registry: [{ what: 'recall of an unknown band', run: () => post(main, '/v1/recall', { cell, bands: ['nope.nope'] }) }],
  function_not_in_registry: [{ what: 'an unknown algorithm key', run: () => get(main, '/v1/algorithms/nope@1') }],
  cid_not_found: [
    { what: 'fetch of a fact_cid never stored', run: () => post(main, '/v1/fetch', { cid: 'a'.repeat(52) }) },
    { what: 'an entity token (no entity records here)', run: () => post(main, '/v1/memory_token/resolve', { token: `meme:${'a'.repeat(26)}` }) },
  ],
  no_geocoder_match: [{ what: 'a name both network geocoders answered without a match', run: () => post(main, '/v1/locate', { place: 'Qqqxyzzyplex' }) }],
  place_not_found: [{ what: 'a name the offline tables miss, no network geocoder enabled', run: () => post(broken, '/v1/locate', { place: 'Qqqxyzzyplex' }) }],
  invalid_argument: [{ what: 'locate with no place and no coordinates', run: () => post(main, '/v1/locate', {}) }],
  registry_cid_unknown: [
    {
      what: 'attest under a registry_cid not in force',
      run: () => attest(main, { ...batch(op, [sampleFact()]), registry_cid: 'nope' }),
    },
  ],
  schema_cid_unknown: [
    {
      what: 'attest under a schema_cid not in force',
      run: () => attest(main, { ...batch(op, [sampleFact()]), schema_cid: 'nope' }),
    },
  ],
  privacy_refused: [
    { what: 'a restricted fact at full cell resolution from an operator key', run: () => attest(main, batch(op, [sampleFact({ privacy_class: 'restricted' })])) },
    {
      what: 'a fact of a band whose privacy class is restricted, from an operator key',
      run: async () => attest(main, batch(op, [factOf(await bandWhere('privacy_class restricted', (b) => b.privacy_class === 'restricted'))])),
    },
  ],
  level_too_low: [
    {
      what: 'a fact of a band above the operator level (L2)',
      run: async () => attest(main, batch(op, [factOf(await bandWhere('a min_level above L2', (b) => Number(/^L(\d)$/.exec(b.min_level)?.[1] ?? 0) > 2))])),
    },
  ],
  attester_revoked: [{ what: 'a batch signed by a revoked key', run: () => attest(main, batch(revoked, [sampleFact()])) }],
  unauthorized: [
    { what: 'an empty signature', run: () => attest(main, { ...batch(op, [sampleFact()]), signature: '' }) },
    {
      what: 'no signature at all',
      run: () => {
        const p = batch(op, [sampleFact()]);
        delete p.signature;
        return attest(main, p);
      },
    },
    { what: 'a key the operator does not list (spec part 7 rule 5)', run: () => attest(main, batch(stranger, [sampleFact()])), status: 403 },
  ],
  claim_undecidable: [
    {
      what: 'a word compared with a scalar band',
      run: () => post(main, '/v1/verify', { cell, claim: { band: 'weather.temperature_2m', op: 'lt', value: 'warm', window: [0, 86_400] } }),
    },
  ],
  bad_signature: [
    {
      what: 'a batch signed by another key',
      run: () => attest(main, { ...batch(op, [sampleFact()]), signature: batch(stranger, [sampleFact()]).signature }),
    },
  ],
  unaddressable_subject: [{ what: 'a fact about neither a cell nor an entity', run: () => attest(main, batch(op, [sampleFact({ cell: 'somewhere nice' })])) }],
  bad_merkle_proof: [
    {
      what: 'a batch_root that the facts do not hash to',
      run: () => {
        const p = batch(op, [sampleFact()]);
        p.batch_root = p.batch_root.map((x: number, i: number) => (i === 0 ? x ^ 1 : x));
        return attest(main, p);
      },
    },
  ],
  canonical_encoding_divergence: [
    {
      what: 'attest_cbor with bytes that are not canonical CBOR',
      run: () => send(main, 'POST', '/v1/attest_cbor', Buffer.from([0xff, 0x00]), { 'content-type': 'application/cbor' }),
    },
  ],
  source_fetch_failed: [
    {
      what: 'a scene thumbnail while the imagery catalogue answers 500',
      run: async () => {
        up.switches = { fail: { status: 500 } };
        try {
          return await freshScene(main);
        } finally {
          up.reset();
        }
      },
    },
  ],
  source_format_mismatch: [
    {
      what: 'a scene thumbnail while the imagery catalogue answers HTML',
      run: async () => {
        up.switches = { corrupt: { prefix: '/earth-search', mode: 'all' } };
        try {
          return await freshScene(main);
        } finally {
          up.reset();
        }
      },
    },
  ],
  compute_timeout: [
    {
      what: 'a scene thumbnail slower than a 1 s gateway timeout',
      run: async () => {
        up.switches = { delay: { ms: 1500, prefix: '/earth-search' } };
        try {
          return await freshScene(tight);
        } finally {
          up.reset();
        }
      },
    },
  ],
  compute_quota_exceeded: [
    {
      what: 'a second fact on a day the attester may write one',
      run: async () => {
        const first = await attest(quota, batch(op, [sampleFact()], quota));
        assert.equal(first.status, 200, JSON.stringify(first.body));
        return attest(quota, batch(op, [sampleFact()], quota));
      },
      check: (r) => {
        assert.ok(Number.isInteger(r.body.details.retry_after) && r.body.details.retry_after > 0, JSON.stringify(r.body));
      },
    },
  ],
  rate_limited: [
    {
      what: 'a second request from an address whose bucket holds one',
      run: async () => {
        await get(limited, '/v1/errors');
        return get(limited, '/v1/errors');
      },
      check: (r) => {
        assert.equal(r.headers['retry-after'], '1');
        assert.equal(typeof r.body.retry_after, 'number');
      },
    },
  ],
  artifact_not_found: [
    {
      what: 'GET of an artifact never stored here',
      run: () => get(main, `/v1/artifacts/${'a'.repeat(52)}`),
      check: (r) => assert.equal(r.body.details.rebuild.path, '/v1/raster/resolve'),
    },
  ],
  storage_full: [
    {
      what: "an attest while the log cannot write for want of space (the store's test seam)",
      run: async () => {
        diskFaults.hook = (site) => {
          if (site === 'log.write') throw enospc();
        };
        try {
          return await attest(disk, batch(op, [sampleFact()]));
        } finally {
          diskFaults.hook = undefined;
        }
      },
      check: (r) => {
        assert.equal(r.headers['retry-after'], String(r.body.retry_after));
      },
    },
  ],
  internal: [
    {
      what: 'a recall through a connector that breaks its contract',
      run: () => post(broken, '/v1/recall', { cell, bands: ['weather.temperature_2m'] }),
    },
  ],
  not_found: [{ what: 'an unknown route', run: () => get(main, '/v1/nope') }],
  overloaded: [
    {
      what: 'readiness while the Redis hot cache is on a closed port',
      run: async () => {
        const dead = await build({ redisUrl: 'redis://127.0.0.1:9' });
        try {
          return await get(dead, '/ready');
        } finally {
          await dead.close();
        }
      },
    },
  ],
  payload_too_large: [{ what: 'a body above the 1 KiB cap', run: () => post(tight, '/v1/recall', { cell, bands: new Array(200).fill('copdem30m.elevation_mean') }) }],
  token_claim_mismatch: [{ what: 'a fact token naming another cell', run: () => post(main, '/v1/memory_token/resolve', { token: `svc:fact:${P.cellOf(0, 0)}:${factCid}` }) }],
};

describe('GET /v1/errors: every code is raised over HTTP', () => {
  it('the served catalogue is the one this file walks', () => {
    assert.deepEqual([...catalogue.keys()].sort(), Object.keys(ERROR_CATALOGUE).sort());
  });

  it('every code has a trigger or a documented reason, and nothing else is listed', () => {
    for (const code of Object.keys(ERROR_CATALOGUE)) {
      const triggered = code in TRIGGERS;
      assert.ok(triggered !== code in UNREACHABLE, `${code}: needs exactly one of a trigger in TRIGGERS or a reason in UNREACHABLE`);
    }
    for (const code of [...Object.keys(TRIGGERS), ...Object.keys(UNREACHABLE)]) assert.ok(code in ERROR_CATALOGUE, `${code} is not in the catalogue`);
  });

  for (const [code, triggers] of Object.entries(TRIGGERS)) {
    for (const tr of triggers) {
      it(`${code}: ${tr.what}`, async () => {
        const entry = catalogue.get(code);
        assert.ok(entry, `${code} is served by /v1/errors`);
        const r = await tr.run();
        assert.equal(r.status, tr.status ?? entry.http_status, JSON.stringify(r.body).slice(0, 500));
        assert.equal(r.body.code, code, JSON.stringify(r.body).slice(0, 500));
        assert.equal(r.body.schema, 'svc.error.v1');
        assert.equal(typeof r.body.message, 'string');
        assert.equal(typeof r.body.details, 'object');
        tr.check?.(r);
      });
    }
  }
});

describe('codes this responder does not raise', () => {
  it('a Redis hot cache on a closed port degrades reads to the store instead of raising cache_error', async () => {
    const dead = await build({ redisUrl: 'redis://127.0.0.1:9' });
    try {
      for (let i = 0; i < 2; i++) {
        const r = await post(dead, '/v1/recall', { cell, bands: ['copdem30m.elevation_mean'] });
        assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
      }
    } finally {
      await dead.close();
    }
  });
});

describe('docs/errors.md', () => {
  const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  /** Table rows `| `code` | status | MCP code | …`, by code. */
  const rows = new Map<string, string[]>();
  for (const line of doc.split('\n')) {
    const m = /^\|\s*`([a-z_]+)`\s*\|(.*)\|\s*$/.exec(line);
    if (m)
      rows.set(
        m[1],
        m[2].split('|').map((s) => s.trim()),
      );
  }

  it('describes every catalogued code with its HTTP status and MCP code, and no other', () => {
    for (const [code, spec] of Object.entries(ERROR_CATALOGUE)) {
      const row = rows.get(code);
      assert.ok(row, `docs/errors.md has no row for ${code}`);
      assert.equal(row[0], String(spec.http), `${code}: HTTP status`);
      assert.equal(row[1], spec.mcp === null ? 'n/a' : String(spec.mcp), `${code}: MCP code`);
      assert.ok((row[2] ?? '').length > 20, `${code}: says when it is raised`);
    }
    assert.deepEqual(
      [...rows.keys()].filter((c) => !(c in ERROR_CATALOGUE)),
      [],
      'rows for codes not in the catalogue',
    );
  });

  it('marks the codes this responder never raises as such', () => {
    for (const code of Object.keys(UNREACHABLE)) assert.match(rows.get(code)?.[2] ?? '', /[Nn]ot raised|[Nn]ever raised/, code);
  });
});
