/**
 * The network half of the cascade against loopback fixture servers: persistent cache, Nominatim
 * spacing, negative caching, fallbacks and the error codes; plus the request parser. The
 * store's geocache drivers are tested on both drivers in test/store/documents.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocator, Spacer, cacheKey } from '../../src/geo/locator.js';
import { memoryGeoCache } from '../../src/geo/geocache.js';
import { SqliteGeoCache } from '../../src/store/sqlite/geocache.js';
import { UpstreamClient } from '../../src/sources/http.js';
import { parseLocateRequest } from '../../src/primitives/locate/locate.js';
import { SvcError } from '../../src/protocol/errors.js';
import { closedPortUrl, startFakeGeocoders, type FakeGeocoders } from './fake-geocoders.js';

let fake: FakeGeocoders;
let dir: string;
before(async () => {
  fake = await startFakeGeocoders();
  dir = mkdtempSync(join(tmpdir(), 'svc-geo-'));
});
after(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const client = (bases: string[]) => new UpstreamClient({ userAgent: 'svc-test/1', timeoutMs: 2000, allowedBaseUrls: bases, retries: 0 });

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    assert.ok(e instanceof SvcError, String(e));
    return e.code;
  }
}

describe('createLocator (network tiers)', () => {
  it('persists photon answers in geocache.sqlite: a new locator on the same directory answers from cache', async () => {
    const caches: SqliteGeoCache[] = [];
    const mk = () => {
      caches.push(new SqliteGeoCache(dir));
      return createLocator({
        http: client([fake.photonUrl, fake.nominatimUrl]),
        photonBase: fake.photonUrl,
        nominatimBase: fake.nominatimUrl,
        cache: caches.at(-1)!,
        timeoutMs: 2000,
        nominatimIntervalMs: 10,
      });
    };
    const a = mk();
    const r1 = await a.resolveName('Oymyakon');
    assert.equal(r1.via, 'photon');
    assert.equal(r1.division?.country, 'RU');
    caches[0].close();
    assert.ok(existsSync(join(dir, 'geocache.sqlite')));
    const calls = fake.calls.photon.length;
    const b = mk();
    const r2 = await b.resolveName('  oymyakon ');
    assert.equal(r2.via, 'cache');
    assert.match(r2.selected.reason, /^cached photon answer/);
    assert.deepEqual([r2.lat, r2.lng], [r1.lat, r1.lng]);
    assert.equal(fake.calls.photon.length, calls);
    caches[1].close();
  });

  it('keeps that nobody knows a name (no second upstream round)', async () => {
    const l = createLocator({
      http: client([fake.photonUrl, fake.nominatimUrl]),
      photonBase: fake.photonUrl,
      nominatimBase: fake.nominatimUrl,
      cache: memoryGeoCache(),
      timeoutMs: 2000,
      nominatimIntervalMs: 10,
    });
    assert.equal(await code(l.resolveName('Zzqxvwplonk')), 'no_geocoder_match');
    const calls = fake.calls.photon.length + fake.calls.nominatim.length;
    assert.equal(await code(l.resolveName('zzqxvwplonk')), 'no_geocoder_match');
    assert.equal(fake.calls.photon.length + fake.calls.nominatim.length, calls);
  });

  it('spaces Nominatim requests by the configured interval', async () => {
    const l = createLocator({ http: client([fake.nominatimUrl]), nominatimBase: fake.nominatimUrl, cache: memoryGeoCache(), timeoutMs: 5000, nominatimIntervalMs: 250 });
    const start = fake.calls.nominatim.length;
    await Promise.all(['Utqiagvik', 'Kinderdijk', 'Qqvvxxa'].map((q) => l.resolveName(q).catch(() => undefined)));
    const at = fake.calls.nominatim.slice(start).map((c) => c.at);
    assert.equal(at.length, 3);
    for (let i = 1; i < at.length; i++) assert.ok(at[i] - at[i - 1] >= 240, `gap ${at[i] - at[i - 1]} ms`);
  });

  it('prefers a network answer over a fuzzy guess, but falls back to the guess when the network is down', async () => {
    const up = createLocator({ http: client([fake.photonUrl]), photonBase: fake.photonUrl, cache: memoryGeoCache(), timeoutMs: 2000 });
    // "Hintertux" is one edit away from nothing offline; the network knows it.
    assert.equal((await up.resolveName('Hintertux')).via, 'photon');
    const dead = await closedPortUrl();
    const down = createLocator({ http: client([dead]), photonBase: dead, cache: memoryGeoCache(), timeoutMs: 2000 });
    const r = await down.resolveName('Pariss');
    assert.equal(r.via, 'embedded');
    assert.equal(r.selected.is_high_confidence, false);
    assert.match(r.selected.reason, /fuzzy match.*network geocoders unreachable/);
    assert.equal(await code(down.resolveName('Hintertux')), 'source_fetch_failed');
  });

  it('one tier down and the other empty is still no_geocoder_match, with the failure in details', async () => {
    const dead = await closedPortUrl();
    const l = createLocator({ http: client([dead, fake.nominatimUrl]), photonBase: dead, nominatimBase: fake.nominatimUrl, cache: memoryGeoCache(), timeoutMs: 2000, nominatimIntervalMs: 10 });
    try {
      await l.resolveName('Xxqqzzyy');
      assert.fail('expected no_geocoder_match');
    } catch (e) {
      assert.equal((e as SvcError).code, 'no_geocoder_match');
      assert.ok((e as SvcError).details.partial_failures);
      assert.equal((e as SvcError).details.retryable, true);
    }
    // The failed tier might know the name: the miss is not kept, so the next call asks again.
    const calls = fake.calls.nominatim.length;
    assert.equal(await code(l.resolveName('Xxqqzzyy')), 'no_geocoder_match');
    assert.equal(fake.calls.nominatim.length, calls + 1);
  });

  it('with no network tier enabled, an offline miss is place_not_found: nobody else was asked', async () => {
    const l = createLocator({ cache: memoryGeoCache(), timeoutMs: 2000 });
    assert.equal(l.networkEnabled, false);
    try {
      await l.resolveName('Xxqqzzyy');
      assert.fail('expected place_not_found');
    } catch (e) {
      assert.equal((e as SvcError).code, 'place_not_found');
      assert.equal((e as SvcError).details.network, 'disabled');
    }
    assert.equal((await l.resolveName('Kyoto')).via, 'embedded');
  });

  it('a miss the network answered recently stays no_geocoder_match after the network is switched off', async () => {
    const cache = memoryGeoCache();
    const up = createLocator({ http: client([fake.photonUrl]), photonBase: fake.photonUrl, cache, timeoutMs: 2000 });
    assert.equal(await code(up.resolveName('Qqzzyyxxw')), 'no_geocoder_match');
    const off = createLocator({ cache, timeoutMs: 2000 });
    assert.equal(await code(off.resolveName('qqzzyyxxw')), 'no_geocoder_match');
  });

  it('offline tiers answer without touching the network', async () => {
    const l = createLocator({ http: client([fake.photonUrl]), photonBase: fake.photonUrl, cache: memoryGeoCache(), timeoutMs: 2000 });
    const calls = fake.calls.photon.length;
    assert.equal((await l.resolveName('Kyoto')).via, 'embedded');
    assert.equal(fake.calls.photon.length, calls);
  });

  it('cache keys ignore case, spacing and diacritics per comma part', () => {
    assert.equal(cacheKey(' Zürich ,  CH '), 'zurich,ch');
  });
});

describe('Spacer', () => {
  it('starts each call at least minMs after the previous one ended, in order', async () => {
    const s = new Spacer(50);
    const spans: Array<[number, number]> = [];
    const slow = async (ms: number) => {
      const start = Date.now();
      await new Promise((r) => setTimeout(r, ms));
      spans.push([start, Date.now()]);
    };
    await Promise.all([30, 0, 10].map((ms) => s.run(() => slow(ms))));
    assert.equal(spans.length, 3);
    for (let i = 1; i < spans.length; i++) assert.ok(spans[i][0] - spans[i - 1][1] >= 50, JSON.stringify(spans));
  });

  it('a failing call still spaces the next one and does not block the queue', async () => {
    const s = new Spacer(40);
    const failed = s.run(async () => {
      throw new Error('upstream down');
    });
    const t0 = Date.now();
    const next = s.run(async () => Date.now());
    await assert.rejects(failed, /upstream down/);
    assert.ok((await next) - t0 >= 35);
  });
});

describe('parseLocateRequest', () => {
  const bad: Array<[unknown, string]> = [
    [null, 'body'],
    [{}, 'place'],
    [{ place: 'a', name: 'b' }, 'place'],
    [{ lat: 1 }, 'lng'],
    [{ lng: 1 }, 'lat'],
    [{ lat: Number.NaN, lng: 0 }, 'lat'],
    [{ lat: 0, lng: Infinity }, 'lng'],
    [{ lat: -90.5, lng: 0 }, 'lat'],
    [{ q: '   ' }, 'q'],
    [{ query: 7 }, 'query'],
  ];
  for (const [input, field] of bad) {
    it(`refuses ${JSON.stringify(input)} naming ${field}`, () => {
      assert.throws(
        () => parseLocateRequest(input),
        (e: SvcError) => e.code === 'invalid_argument' && e.message.startsWith(field),
      );
    });
  }
  it('accepts each alias and coordinate pairs at the limits', () => {
    for (const f of ['place', 'q', 'query', 'name']) assert.deepEqual(parseLocateRequest({ [f]: ' Oslo ' }), { kind: 'name', text: 'Oslo' });
    assert.deepEqual(parseLocateRequest({ lat: -90, lng: 180 }), { kind: 'point', lat: -90, lng: 180 });
  });
});
