/**
 * The Overture Maps connector against a 127.0.0.1 stand-in: Overture's STAC release catalogue and
 * real PMTiles v3 archives per theme built from a known layout (fixtures/overture-scene.ts).
 * Exact counts, footprint fraction and road length in the 1 km window; a real 0 where nothing is;
 * release discovery (latest, cache, last known on failure, an older release when the newest lacks
 * a theme); typed failures; only the configured hosts contacted; bounded range requests.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config.js';
import { cellCenter } from '../../src/protocol/cell64.js';
import { currentTslot } from '../../src/protocol/tslot.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { materializerRegistry, type ConnectorDeps, type MaterializeOutcome, type MaterializeRequest } from '../../src/sources/contract.js';
import { UpstreamClient } from '../../src/sources/http.js';
import { allowedUpstreams, buildMaterializers, sourceBaseUrl } from '../../src/sources/index.js';
import { catalogueUrl, OVERTURE_BANDS, overtureConnector, type OvertureConnector } from '../../src/sources/overture.js';
import { parseCatalogue, RELEASE_TTL_MS, RETRY_HOLD_MS } from '../../src/sources/overture-release.js';
import { clipLine, clipRing } from '../../src/sources/pmtiles/geometry.js';
import { absence, failure, value } from './global/harness.js';
import { BUILDING_FEATURES, CELL, EMPTY_CELL, EXPECTED, FOOTPRINT_M2, NEIGHBOUR_CELL, PLACE_FEATURES, RELEASES, releaseArchives, WINDOW_M2 } from './fixtures/overture-scene.js';
import { rootCatalogue, startOvertureUpstreams, themeArchive, type OvertureUpstreams } from './fixtures/overture-upstreams.js';

const registry = loadRegistry();
const [LATEST, OLDER] = RELEASES;
let up: OvertureUpstreams;
let outside: Server;
let outsideUrl: string;
let outsideHits = 0;

function deps(o: { tiles?: string; stac?: string; allowed?: string[] } = {}): ConnectorDeps {
  const config = loadConfig(
    { SVC_LOG_LEVEL: 'silent', SVC_UPSTREAM_OVERTURE_URL: o.tiles ?? up.tilesBase, SVC_UPSTREAM_OVERTURE_STAC_URL: o.stac ?? up.stacBase },
    { dataDir: '/tmp/svc-overture-unused' },
  );
  const client = new UpstreamClient({ userAgent: 'svc-test', timeoutMs: 3000, allowedBaseUrls: o.allowed ?? [up.origin], retries: 0, backoffMs: 10 });
  return { config, registry, client, baseUrl: (k) => sourceBaseUrl(config, registry, k) };
}

function request(band: string, cell = CELL, tslot?: number): MaterializeRequest {
  const entry = registry.bands.get(band)!;
  return { cell, band: entry, tslot: tslot ?? currentTslot(entry.tempo), center: cellCenter(cell), signal: new AbortController().signal, deadline: Date.now() + 5000 };
}

const read = (c: OvertureConnector, band: string, cell = CELL): Promise<MaterializeOutcome> => c.materialize(request(band, cell));

before(async () => {
  up = await startOvertureUpstreams(new Map([...releaseArchives(LATEST, { leafSize: 2 }), ...releaseArchives(OLDER)]), RELEASES);
  outside = createServer((_req, res) => {
    outsideHits++;
    res.writeHead(200);
    res.end('{}');
  });
  await new Promise<void>((r) => outside.listen(0, '127.0.0.1', () => r()));
  outsideUrl = `http://127.0.0.1:${(outside.address() as AddressInfo).port}`;
});
after(async () => {
  await up.close();
  await new Promise((r) => outside.close(r));
});

describe('wiring', () => {
  it('the registry defaults are the Overture tiles bucket and the STAC catalogue; the variables override both, and the allow-list follows', () => {
    const plain = loadConfig({ SVC_LOG_LEVEL: 'silent' }, { dataDir: '/tmp/svc-overture-unused' });
    assert.equal(sourceBaseUrl(plain, registry, 'overture'), 'https://overturemaps-extras-us-west-2.s3.us-west-2.amazonaws.com/tiles');
    assert.equal(catalogueUrl(sourceBaseUrl(plain, registry, 'overture_stac')), 'https://stac.overturemaps.org/catalog.json');
    assert.equal(catalogueUrl('http://mirror.example/stac/root.json'), 'http://mirror.example/stac/root.json');
    const d = deps();
    assert.equal(d.baseUrl('overture'), up.tilesBase);
    assert.deepEqual(
      allowedUpstreams(d.config, registry).filter((u) => u.startsWith(up.origin)),
      [up.tilesBase, up.stacBase],
    );
    const wired = materializerRegistry(buildMaterializers(plain, registry).materializers);
    for (const band of Object.keys(OVERTURE_BANDS)) {
      assert.equal(wired.forBand(band)?.key, 'overture', band);
      const b = registry.bands.get(band)!;
      assert.match(b.key, /_1km$/);
      assert.match(b.description, /1 km x 1 km window/);
    }
    const src = registry.sources.get('overture')!;
    assert.match(src.license, /ODbL-1\.0/);
    assert.match(src.license, /CDLA-Permissive-2\.0/);
    assert.match(src.attribution, /OpenStreetMap contributors, Overture Maps Foundation/);
  });

  it('reads the catalogue as Overture writes it: latest, else the flagged child, else the newest child', () => {
    assert.deepEqual(parseCatalogue(rootCatalogue(['2026-03-18.0', '2026-02-18.0'])), { latest: '2026-03-18.0', all: ['2026-03-18.0', '2026-02-18.0'] });
    const flagged = rootCatalogue(['2026-02-18.0', '2026-03-18.0'], { latestField: false });
    assert.equal(parseCatalogue(flagged).latest, '2026-02-18.0', 'the child flagged latest');
    assert.deepEqual(parseCatalogue(rootCatalogue(['2026-02-18.0', '2026-03-18.0', '2024-04-16-beta.0'], { latestField: false, flagChild: false })), {
      latest: '2026-03-18.0',
      all: ['2026-03-18.0', '2026-02-18.0', '2024-04-16-beta.0'],
    });
    const absolute = { ...rootCatalogue([]), links: [{ rel: 'child', href: 'https://stac.overturemaps.org/2026-03-18.0/catalog.json' }] };
    assert.equal(parseCatalogue(absolute).latest, '2026-03-18.0');
    assert.throws(() => parseCatalogue(rootCatalogue([])), /names no release/);
    assert.throws(() => parseCatalogue({ type: 'FeatureCollection', features: [] }), /not "Catalog"/);
    assert.throws(() => parseCatalogue({ ...rootCatalogue(['2026-03-18.0']), latest: '../../etc' }), /not a release id/);
  });
});

describe('values over the 1 km window', () => {
  it('counts buildings by centroid, joining one cut by a tile edge and completing one that goes on beyond the window tiles', async () => {
    const c = overtureConnector(deps());
    const v = value(await read(c, 'overture.building_count_1km'));
    assert.equal(v.value, EXPECTED.buildings);
    assert.deepEqual(v.provenance, { source: 'overture', ref: `${LATEST}/buildings.pmtiles`, version: LATEST, captured_at: '2026-03-18T00:00:00Z' });
    assert.equal(v.fn, 'mvt_window_count@1');
    assert.deepEqual(v.args, { window_m: 1000, zoom: 14, release: LATEST, tiles: 2, extra_tiles: 1 });
  });

  it('footprint fraction: the geodesic area of the footprints inside the window over the window', async () => {
    const c = overtureConnector(deps());
    const v = value(await read(c, 'overture.building_footprint_fraction_1km'));
    assert.equal(v.value, EXPECTED.footprint_fraction);
    assert.ok(Math.abs((v.args!.footprint_m2 as number) - FOOTPRINT_M2) < 0.5, `${v.args!.footprint_m2} vs ${FOOTPRINT_M2}`);
    assert.ok(Math.abs((v.args!.window_m2 as number) - WINDOW_M2) < 0.5);
    assert.equal(v.unit, 'fraction');
  });

  it('places: the points in the window, one near a tile edge counted once', async () => {
    const c = overtureConnector(deps());
    const v = value(await read(c, 'overture.place_count_1km'));
    assert.equal(v.value, EXPECTED.places);
    assert.equal(v.provenance.ref, `${LATEST}/places.pmtiles`);
  });

  it('roads: segments of subtype road clipped to the window (rail left out), geodesic km', async () => {
    const c = overtureConnector(deps());
    const v = value(await read(c, 'overture.road_length_km_1km'));
    assert.ok(Math.abs((v.value as number) - EXPECTED.road_km) <= 0.002, `${v.value} vs ${EXPECTED.road_km}`);
    assert.equal(v.unit, 'km');
    assert.equal(v.fn, 'mvt_window_line_length@1');
  });

  it('reads each archive at the maximum zoom its header declares', async () => {
    up.archives.set(`${LATEST}/places`, themeArchive('places', PLACE_FEATURES, { zoom: 15 }));
    try {
      const v = value(await read(overtureConnector(deps()), 'overture.place_count_1km'));
      assert.equal(v.value, EXPECTED.places);
      assert.equal(v.args!.zoom, 15);
    } finally {
      up.archives.set(`${LATEST}/places`, releaseArchives(LATEST).get(`${LATEST}/places`)!);
    }
  });

  it('a window with no feature is a real 0 (the archives cover the globe), not an absence', async () => {
    const c = overtureConnector(deps());
    for (const band of Object.keys(OVERTURE_BANDS)) assert.equal(value(await read(c, band, EMPTY_CELL)).value, 0, band);
  });

  it('beyond the Web Mercator tiles is an outside_coverage absence', async () => {
    const c = overtureConnector(deps());
    const req = request('overture.building_count_1km');
    const polar = await c.materialize({ ...req, cell: 'polar', center: { lat: 86.2, lng: 10 } });
    assert.match(absence(polar, 'outside_coverage').detail ?? '', /Web Mercator/);
  });

  it('a past slot is not served (Overture keeps only recent releases), and nothing is fetched for it', async () => {
    const c = overtureConnector(deps());
    up.reset();
    const o = await c.materialize(request('overture.place_count_1km', CELL, currentTslot('slow') - 1));
    assert.equal(o.status, 'error');
    assert.equal(up.requests.length, 0);
  });
});

describe('requests', () => {
  it('range requests are bounded: header, leaf directories and coalesced tile runs once; a second band or a neighbouring cell costs none', async () => {
    const c = overtureConnector(deps());
    up.reset();
    value(await read(c, 'overture.building_count_1km'));
    const first = up.rangeRequests();
    assert.ok(first.length >= 2 && first.length <= 6, JSON.stringify(first));
    assert.ok(first.every((r) => r.path === `/tiles/${LATEST}/buildings.pmtiles`));
    assert.equal(up.requests.filter((r) => r.path === '/stac/catalog.json').length, 1);
    up.reset();
    value(await read(c, 'overture.building_footprint_fraction_1km'));
    value(await read(c, 'overture.building_count_1km', NEIGHBOUR_CELL));
    assert.equal(up.requests.length, 0, JSON.stringify(up.requests));
    value(await read(c, 'overture.place_count_1km'));
    assert.ok(up.rangeRequests().length <= 5);
  });

  it('concurrent reads of one cold window share one read of each tile', async () => {
    const c = overtureConnector(deps());
    up.reset();
    const rs = await Promise.all([...Array(6)].map((_, i) => read(c, i % 2 ? 'overture.building_count_1km' : 'overture.building_footprint_fraction_1km')));
    for (const r of rs) value(r);
    const ranges = up.rangeRequests().map((r) => r.range);
    assert.equal(new Set(ranges).size, ranges.length, `a range asked twice: ${ranges.join(' ')}`);
  });

  it('contacts only the configured hosts: the catalogue links to other hosts are not followed, and a redirect elsewhere is refused', async () => {
    outsideHits = 0;
    const c = overtureConnector(deps());
    up.reset();
    value(await read(c, 'overture.place_count_1km'));
    assert.ok(up.requests.every((r) => r.host === new URL(up.origin).host));
    up.redirectArchivesTo = `${outsideUrl}/tiles/${LATEST}/places.pmtiles`;
    try {
      failure(await read(overtureConnector(deps()), 'overture.place_count_1km'), 'source_fetch_failed', /egress|allow-list/);
    } finally {
      up.redirectArchivesTo = undefined;
    }
    assert.equal(outsideHits, 0);
  });
});

describe('failures are typed and never signed', () => {
  it('an unreachable archive is source_fetch_failed; an HTTP error too', async () => {
    const dead = 'http://127.0.0.1:9/tiles';
    failure(await read(overtureConnector(deps({ tiles: dead, allowed: [up.origin, dead] })), 'overture.building_count_1km'), 'source_fetch_failed', /^source_fetch_failed: overture: /);
    up.force.set(`/tiles/${LATEST}/transportation.pmtiles`, { status: 500, body: 'InternalError' });
    try {
      failure(await read(overtureConnector(deps()), 'overture.road_length_km_1km'), 'source_fetch_failed', /HTTP 500/);
    } finally {
      up.force.clear();
    }
  });

  it('bytes that are not a PMTiles archive are source_format_mismatch', async () => {
    up.archives.set(`${LATEST}/places`, new TextEncoder().encode('<html>not an archive</html>'.padEnd(20_000, ' ')));
    try {
      failure(await read(overtureConnector(deps()), 'overture.place_count_1km'), 'source_format_mismatch', /PMTiles/);
    } finally {
      up.archives.set(`${LATEST}/places`, releaseArchives(LATEST).get(`${LATEST}/places`)!);
    }
  });

  it('an unreachable catalogue with no release known yet is source_fetch_failed of overture_stac, and no archive is asked', async () => {
    up.force.set('/stac/catalog.json', { status: 503, body: 'SlowDown' });
    up.reset();
    try {
      failure(await read(overtureConnector(deps()), 'overture.building_count_1km'), 'source_fetch_failed', /^source_fetch_failed: overture_stac: /);
      assert.equal(up.rangeRequests().length, 0);
    } finally {
      up.force.clear();
    }
  });

  it('a catalogue that is not the catalogue is source_format_mismatch of overture_stac', async () => {
    up.force.set('/stac/catalog.json', { status: 200, body: JSON.stringify({ type: 'Catalog', id: 'x', links: [{ rel: 'child', href: './latest/catalog.json' }] }) });
    try {
      failure(await read(overtureConnector(deps()), 'overture.building_count_1km'), 'source_format_mismatch', /overture_stac: .*names no release/);
    } finally {
      up.force.clear();
    }
  });
});

describe('release discovery', () => {
  it('keeps the discovered release, falls back to the last known one while the catalogue fails, and asks again after a hold', async () => {
    let t = Date.now();
    const c = overtureConnector(deps(), { now: () => t });
    const present = () => request('overture.place_count_1km', CELL, currentTslot('slow'));
    assert.equal(value(await c.materialize(present())).provenance.version, LATEST);
    assert.equal(c.discovery.fetches, 1);
    t += RELEASE_TTL_MS - 1000;
    value(await c.materialize(request('overture.road_length_km_1km')));
    assert.equal(c.discovery.fetches, 1, 'still fresh');
    up.force.set('/stac/catalog.json', { status: 503 });
    try {
      t += 2000;
      const v = value(await c.materialize(request('overture.building_count_1km')));
      assert.equal(v.provenance.version, LATEST, 'the last known release');
      assert.equal(c.discovery.fetches, 2);
      t += RETRY_HOLD_MS - 1000;
      value(await c.materialize(request('overture.building_count_1km', EMPTY_CELL)));
      assert.equal(c.discovery.fetches, 2, 'held: not asked again');
      t += 2000;
      value(await c.materialize(request('overture.place_count_1km', EMPTY_CELL)));
      assert.equal(c.discovery.fetches, 3, 'asked again after the hold');
    } finally {
      up.force.clear();
    }
  });

  it('follows a newly published release, and reads the one before while the newest lacks a theme', async () => {
    const NEW = '2026-04-15.0';
    let t = Date.now();
    const c = overtureConnector(deps(), { now: () => t });
    assert.equal(value(await read(c, 'overture.building_count_1km')).provenance.version, LATEST);
    // The new release: buildings without b1, no places archive yet.
    up.catalogue = rootCatalogue([NEW, ...RELEASES]);
    up.archives.set(
      `${NEW}/buildings`,
      themeArchive(
        'buildings',
        BUILDING_FEATURES.filter((f) => f.properties.id !== '08b1f9b1'),
      ),
    );
    try {
      t += RELEASE_TTL_MS + 1;
      const b = value(await read(c, 'overture.building_count_1km', NEIGHBOUR_CELL));
      assert.equal(b.provenance.version, NEW);
      assert.equal(b.value, EXPECTED.buildings - 1);
      up.reset();
      const p = value(await read(c, 'overture.place_count_1km'));
      assert.equal(p.provenance.version, LATEST, 'places come from the release before');
      assert.equal(p.value, EXPECTED.places);
      assert.equal(up.requests.filter((r) => r.path === `/tiles/${NEW}/places.pmtiles`).length, 1);
      value(await read(c, 'overture.place_count_1km', EMPTY_CELL));
      assert.equal(up.requests.filter((r) => r.path === `/tiles/${NEW}/places.pmtiles`).length, 1, 'the missing archive is not asked again');
    } finally {
      up.catalogue = rootCatalogue(RELEASES);
      up.archives.delete(`${NEW}/buildings`);
    }
  });
});

describe('window geometry', () => {
  const R = { x0: 0, y0: 0, x1: 10, y1: 10 };
  it('clips rings to the window keeping their signed area, and lines to the runs inside', () => {
    const ring: Array<[number, number]> = [
      [-5, 2],
      [5, 2],
      [5, 8],
      [-5, 8],
      [-5, 2],
    ];
    assert.deepEqual(clipRing(ring, R), [
      [0, 2],
      [5, 2],
      [5, 8],
      [0, 8],
      [0, 2],
    ]);
    assert.deepEqual(
      clipRing(
        ring.map(([x, y]) => [x - 20, y] as [number, number]),
        R,
      ),
      [],
    );
    assert.deepEqual(
      clipLine(
        [
          [-5, 5],
          [5, 5],
          [15, 5],
        ],
        R,
      ),
      [
        [
          [0, 5],
          [5, 5],
          [10, 5],
        ],
      ],
    );
    assert.deepEqual(
      clipLine(
        [
          [2, -5],
          [2, 5],
          [20, 5],
          [20, 8],
          [8, 8],
        ],
        R,
      ),
      [
        [
          [2, 0],
          [2, 5],
          [10, 5],
        ],
        [
          [10, 8],
          [8, 8],
        ],
      ],
    );
  });
});
