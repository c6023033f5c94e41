/**
 * The Fields of The World connector against a real PMTiles v3 archive on 127.0.0.1: it contacts
 * only the configured host, walks leaf directories, reads neighbouring tiles in one range, reads
 * a replaced archive again, and reports wrong bytes as a format failure, never as fields.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { PMTiles, type Source } from 'pmtiles';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { loadConfig } from '../../src/config.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { FTW_SOURCE, ftwConnector, tilesCovering, type FieldBoundaryConnector, type FieldRead } from '../../src/sources/ftw.js';
import { UpstreamClient } from '../../src/sources/http.js';
import { allowedUpstreams, sourceBaseUrl } from '../../src/sources/index.js';
import { buildArchive, FIXTURE_ZOOM, startFtwServer, type FixtureField, type FtwServer } from './fixtures/ftw-pmtiles.js';

const L = 'field-2025-01-01 00:00:00';
const rect = (w: number, s: number, e: number, n: number): Array<[number, number]> => [
  [w, s],
  [e, s],
  [e, n],
  [w, n],
  [w, s],
];
// Twelve small fields on a row near 45° N, 5° E, 0.012° apart (a z15 tile is 0.011° wide): a
// dozen tiles, so leaf directories of four entries make three or four leaves.
const FIELDS: FixtureField[] = Array.from({ length: 12 }, (_, i) => ({ layer: L, rings: [rect(5 + i * 0.012, 45, 5 + i * 0.012 + 0.001, 45.001)], properties: { id: `f${i}`, confidence: 50 + i } }));
const BOX = { min_lat: 44.999, min_lng: 4.999, max_lat: 45.002, max_lng: 5.14 };

let srv: FtwServer;
let outside: Server;
let outsideUrl: string;
let outsideHits = 0;

function connector(url: string, allowed: string[] = [url]): FieldBoundaryConnector {
  const client = new UpstreamClient({ userAgent: 'test', timeoutMs: 3000, allowedBaseUrls: allowed, retries: 0 });
  return ftwConnector({ config: loadConfig({}), registry: loadRegistry(), client, baseUrl: () => url }) as FieldBoundaryConnector;
}
const read = (c: FieldBoundaryConnector, box = BOX): Promise<FieldRead> => c.readFields({ box, deadline: Date.now() + 5000, maxTiles: 200 });

before(async () => {
  srv = await startFtwServer(buildArchive(FIELDS, { leafSize: 4 }));
  outside = createServer((_req, res) => {
    outsideHits++;
    res.writeHead(200);
    res.end('x');
  });
  await new Promise<void>((r) => outside.listen(0, '127.0.0.1', () => r()));
  outsideUrl = `http://127.0.0.1:${(outside.address() as AddressInfo).port}/global.pmtiles`;
});
after(async () => {
  await srv.close();
  await new Promise((r) => outside.close(r));
});

describe('the fixture archive', () => {
  it('is read by the pmtiles package itself: header, leaf directories, tiles and metadata', async () => {
    const bytes = buildArchive(FIELDS, { leafSize: 4 });
    const source: Source = { getKey: () => 'fixture', getBytes: async (offset, length) => ({ data: bytes.slice(offset, offset + length).buffer }) };
    const pm = new PMTiles(source, undefined, async (buf, compression) => (compression === 2 ? new Uint8Array(gunzipSync(new Uint8Array(buf))).buffer : buf));
    const h = await pm.getHeader();
    assert.equal(h.specVersion, 3);
    assert.equal(h.maxZoom, FIXTURE_ZOOM);
    assert.equal(h.tileType, 1);
    assert.equal(h.clustered, true);
    const tiles = tilesCovering(BOX, FIXTURE_ZOOM);
    let found = 0;
    for (const t of tiles) {
      const r = await pm.getZxy(t.z, t.x, t.y);
      if (!r) continue;
      const vt = new VectorTile(new PbfReader(new Uint8Array(r.data)));
      assert.ok(vt.layers[L].length > 0);
      found++;
    }
    assert.ok(found >= 12, `${found} tiles`);
    assert.ok(h.leafDirectoryLength !== undefined && h.leafDirectoryLength > 0, 'the root points at leaf directories');
    const meta = (await pm.getMetadata()) as { vector_layers: Array<{ id: string }> };
    assert.deepEqual(
      meta.vector_layers.map((l) => l.id),
      [L],
    );
  });
});

describe('ftw connector', () => {
  it('is wired from the registry: the default archive on data.source.coop, SVC_UPSTREAM_FTW_URL overrides it and the allow-list follows', () => {
    const reg = loadRegistry();
    assert.equal(sourceBaseUrl(loadConfig({}), reg, FTW_SOURCE), 'https://data.source.coop/ftw/global-data/predictions/vectors/alpha/global.pmtiles');
    assert.ok(allowedUpstreams(loadConfig({}), reg).includes('https://data.source.coop/ftw/global-data/predictions/vectors/alpha/global.pmtiles'));
    const over = loadConfig({ SVC_UPSTREAM_FTW_URL: srv.url });
    assert.equal(sourceBaseUrl(over, reg, FTW_SOURCE), srv.url);
    // Other sources live on data.source.coop too (GEBCO): only the FTW archive leaves the list.
    assert.ok(!allowedUpstreams(over, reg).some((u) => u.includes('source.coop/ftw/')));
  });

  it('reads the polygons through leaf directories, with neighbouring tiles in one range', async () => {
    srv.requests.length = 0;
    const c = connector(srv.url);
    const r = await read(c);
    assert.equal(r.status, 'ok');
    if (r.status !== 'ok') return;
    assert.equal(r.archive.zoom, FIXTURE_ZOOM);
    assert.deepEqual(r.layers, [L]);
    assert.deepEqual([...new Set(r.pieces.map((p) => p.id))].sort(), FIELDS.map((f) => String(f.properties.id)).sort());
    const ranges = srv.requests.map((q) => q.range);
    assert.equal(ranges[0], 'bytes=0-16383', 'header and root directory first');
    const tileReads = r.stats.requests - 1 - Math.ceil(r.tiles.present / 4);
    assert.ok(tileReads <= 2, `tile ranges: ${ranges.join(' ')}`);
    assert.equal(r.stats.requests, srv.requests.length);
    assert.ok(r.stats.bytes < srv.archive.length + 16384);
    // A second read of the same box costs nothing; a box over half of it reads no new byte.
    srv.requests.length = 0;
    const again = await read(c, { ...BOX, max_lng: 5.05 });
    assert.equal(again.status, 'ok');
    assert.equal(srv.requests.length, 0);
  });

  it('concurrent reads of the same cold box ask the archive for each tile once', async () => {
    const c = connector(srv.url);
    srv.requests.length = 0;
    srv.delayMs = 30;
    try {
      const rs = await Promise.all(Array.from({ length: 8 }, () => read(c)));
      const counts = rs.map((r) => (r.status === 'ok' ? r.pieces.length : -1));
      assert.ok(
        counts.every((n) => n > 0 && n === counts[0]),
        String(counts),
      );
      const eight = srv.requests.length;
      const once = await read(connector(srv.url));
      assert.equal(once.status, 'ok');
      if (once.status === 'ok') assert.equal(eight, once.stats.requests, `${eight} range requests for 8 concurrent reads, ${once.stats.requests} for one`);
    } finally {
      srv.delayMs = 0;
    }
  });

  it('contacts only the configured host: a redirect elsewhere is refused and nothing reaches the other host', async () => {
    srv.redirectTo = outsideUrl;
    try {
      const r = await read(connector(srv.url));
      assert.equal(r.status, 'error');
      if (r.status === 'error') assert.match(r.reason, /egress|allow-list/);
      assert.equal(outsideHits, 0);
      assert.ok(srv.requests.every((q) => q.host === new URL(srv.url).host));
    } finally {
      srv.redirectTo = undefined;
    }
    // A connector whose allow-list lacks its own archive host sends nothing at all.
    const before = srv.requests.length;
    const refused = await read(connector(srv.url, ['https://data.source.coop']));
    assert.equal(refused.status, 'error');
    assert.equal(srv.requests.length, before);
  });

  it('reads a replaced archive again (new ETag) instead of mixing the two', async () => {
    const c = connector(srv.url);
    const first = await read(c, { ...BOX, max_lng: 5.03 });
    assert.equal(first.status, 'ok');
    if (first.status === 'ok') assert.ok(first.archive.version.includes('v1'));
    const moved = FIELDS.map((f) => ({ ...f, properties: { ...f.properties, id: `${f.properties.id}-v2` } }));
    srv.setArchive(buildArchive(moved, { leafSize: 4 }));
    try {
      // Another box (tiles not cached yet): the first range of the new file carries its new ETag.
      const r = await read(c, { min_lat: 44.999, min_lng: 5.06, max_lat: 45.002, max_lng: 5.14 });
      assert.equal(r.status, 'ok');
      if (r.status === 'ok') {
        assert.ok(r.pieces.length > 0);
        assert.ok(r.archive.version.includes('v2'), r.archive.version);
        assert.ok(
          r.pieces.every((p) => p.id?.endsWith('-v2')),
          'only polygons of the new archive',
        );
      }
    } finally {
      srv.setArchive(buildArchive(FIELDS, { leafSize: 4 }));
    }
  });

  it('wrong bytes are a format failure, never fields; too many tiles are refused before reading', async () => {
    const bad = await startFtwServer(new TextEncoder().encode('not a pmtiles archive at all, just text'));
    try {
      const r = await read(connector(bad.url));
      assert.equal(r.status, 'error');
      if (r.status === 'error') assert.equal(r.format_mismatch, true);
    } finally {
      await bad.close();
    }
    const many = await connector(srv.url).readFields({ box: BOX, deadline: Date.now() + 5000, maxTiles: 2 });
    assert.equal(many.status, 'too_many_tiles');
  });

  it('an unreachable archive is an upstream failure, and a slow one a timeout', async () => {
    const down = await read(connector('http://127.0.0.1:9/global.pmtiles'));
    assert.equal(down.status, 'error');
    srv.delayMs = 400;
    try {
      const c = connector(srv.url);
      const slow = await c.readFields({ box: { min_lat: 10, min_lng: 10, max_lat: 10.001, max_lng: 10.001 }, deadline: Date.now() + 150, maxTiles: 10 });
      assert.equal(slow.status, 'timeout');
    } finally {
      srv.delayMs = 0;
    }
  });

  it('covers a box with the tiles of its zoom, an edge on a tile edge reaching no further', () => {
    const z = 15;
    const n = 2 ** z;
    const lng = (x: number) => (x / n) * 360 - 180;
    const tiles = tilesCovering({ min_lat: 45, max_lat: 45.0001, min_lng: lng(17000), max_lng: lng(17002) }, z);
    assert.deepEqual([...new Set(tiles.map((t) => t.x))], [17000, 17001]);
  });
});
