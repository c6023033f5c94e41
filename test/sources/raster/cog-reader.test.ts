import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import proj4 from 'proj4';
import { CogReader } from '../../../src/sources/cog/reader.js';
import { lzwDecode, packBitsDecode } from '../../../src/sources/cog/decode.js';
import { projectPoint } from '../../../src/sources/cog/georef.js';
import { UpstreamError } from '../../../src/sources/http.js';
import { startRasterUpstreams, type RasterUpstreams } from '../fixtures/raster-upstreams.js';
import { gdalAvailable, gdalTranslate, writeGeoTiff, type RasterSpec } from '../fixtures/raster-tiff.js';
import { depsFor } from './harness.js';

let up: RasterUpstreams;
let url: (path: string) => string;
const fresh = (o: ConstructorParameters<typeof CogReader>[1] = {}) => new CogReader(depsFor(up).client, o);

const u16utm: RasterSpec = {
  width: 600,
  height: 500,
  type: 'u16',
  epsg: 32633,
  origin: [497437, 4985513],
  pixel: [10, 10],
  nodata: 0,
  values: (c, r) => (r === 7 && c === 9 ? 0 : 1000 + ((c * 7 + r * 13) % 4000)),
};
const f32geo: RasterSpec = {
  width: 300,
  height: 200,
  type: 'f32',
  epsg: 4326,
  origin: [0, 50],
  pixel: [0.05, 0.05],
  nodata: -9999,
  values: (c, r) => (c < 10 ? -9999 : ((c * 3 + r) % 50) * 0.25),
};
const i16south: RasterSpec = { width: 300, height: 200, type: 'i16', epsg: 32733, origin: [400000, 9000000], pixel: [20, 20], values: (c, r) => ((c * 37 + r * 91) % 60000) - 30000 };
const u8geo: RasterSpec = { width: 300, height: 300, type: 'u8', epsg: 4326, origin: [15, 48], pixel: [0.01, 0.01], values: (c, r) => (c + r) % 251 };

/** Every layout the reader must handle, by path, with the spec it encodes. */
function variants(): Array<{ name: string; spec: RasterSpec; bytes: () => Uint8Array }> {
  const v: Array<{ name: string; spec: RasterSpec; bytes: () => Uint8Array }> = [];
  for (const spec of [u16utm, f32geo, i16south, u8geo]) {
    const tag = `${spec.type}-${spec.epsg}`;
    const pred = spec.type === 'f32' ? 1 : 2;
    v.push({ name: `writer tiled DEFLATE predictor ${pred} LE ${tag}`, spec, bytes: () => writeGeoTiff(spec, { block: 256, compression: 8, predictor: pred }) });
    v.push({ name: `writer tiled uncompressed BE ${tag}`, spec, bytes: () => writeGeoTiff(spec, { block: 128, littleEndian: false }) });
    v.push({ name: `writer strips DEFLATE BE ${tag}`, spec, bytes: () => writeGeoTiff(spec, { block: 0, rowsPerStrip: 9, compression: 8, littleEndian: false }) });
    if (gdalAvailable()) {
      v.push({
        name: `gdal COG DEFLATE ${spec.type === 'f32' ? 'FLOATING_POINT' : 'STANDARD'} predictor ${tag}`,
        spec,
        bytes: () => gdalTranslate(spec, ['-of', 'COG', '-co', 'BLOCKSIZE=256', '-co', 'COMPRESS=DEFLATE', '-co', 'PREDICTOR=YES']),
      });
      v.push({ name: `gdal GTiff LZW strips ${tag}`, spec, bytes: () => gdalTranslate(spec, ['-of', 'GTiff', '-co', 'COMPRESS=LZW']) });
      v.push({ name: `gdal BigTIFF COG LZW ${tag}`, spec, bytes: () => gdalTranslate(spec, ['-of', 'COG', '-co', 'BIGTIFF=YES', '-co', 'COMPRESS=LZW', '-co', 'BLOCKSIZE=128']) });
      v.push({ name: `gdal GTiff PackBits tiled ${tag}`, spec, bytes: () => gdalTranslate(spec, ['-of', 'GTiff', '-co', 'COMPRESS=PACKBITS', '-co', 'TILED=YES']) });
    }
  }
  return v;
}

/** (lat, lng) of the centre of pixel (col, row) of a north-up spec. */
function centreOf(spec: RasterSpec, col: number, row: number): { lat: number; lng: number } {
  const x = spec.origin[0] + (col + 0.5) * spec.pixel[0];
  const y = spec.origin[1] - (row + 0.5) * spec.pixel[1];
  if (spec.epsg === 4326) return { lat: y, lng: x };
  const south = spec.epsg > 32700;
  const [lng, lat] = proj4('EPSG:4326', `+proj=utm +zone=${spec.epsg % 100}${south ? ' +south' : ''} +datum=WGS84 +units=m +no_defs`).inverse([x, y]);
  return { lat, lng };
}

before(async () => {
  up = await startRasterUpstreams(['tiles']);
  url = (p) => `${up.origin}${p}`;
  for (const f of ['gdal-lzw-strips-u8.tif', 'gdal-cog-deflate-fp-f32.tif', 'gdal-bigtiff-cog-lzw-pred2-u16.tif']) {
    up.files.set(`/committed/${f}`, new Uint8Array(readFileSync(new URL(`../fixtures/files/${f}`, import.meta.url))));
  }
  up.files.set('/bad/not-a-tiff.tif', new TextEncoder().encode('<html>this is an error page, not a GeoTIFF</html>'));
});
after(async () => up.close());

describe('CogReader', () => {
  describe('when reading known pixels', () => {
    for (const [i, v] of variants().entries()) {
      it(`${v.name}: 40 pixels match the spec`, async () => {
        up.files.set(`/variants/${i}.tif`, v.bytes());
        const reader = fresh();
        for (let k = 0; k < 40; k++) {
          const col = (k * 97 + 13) % v.spec.width;
          const row = (k * 53 + 7) % v.spec.height;
          const { lat, lng } = centreOf(v.spec, col, row);
          const r = await reader.readPoint(url(`/variants/${i}.tif`), lat, lng);
          const want = Math.fround(v.spec.values(col, row));
          if (want === v.spec.nodata) assert.deepEqual([r.kind, 'raw' in r && r.raw], ['nodata', want], `${v.name} #${k} (${col},${row})`);
          else assert.deepEqual(r, { kind: 'value', value: want, col, row, epsg: v.spec.epsg }, `${v.name} #${k} (${col},${row})`);
        }
      });
    }

    const committed: Array<[string, (c: number, r: number) => number, RasterSpec['origin'], number, number]> = [
      ['gdal-lzw-strips-u8.tif', (c, r) => (c + 2 * r) % 101, [10, 50], 0.1, 4326],
      ['gdal-cog-deflate-fp-f32.tif', (c, r) => (c < 4 ? -9999 : ((c * 3 + r) % 50) * 0.25), [0, 50], 0.05, 4326],
      ['gdal-bigtiff-cog-lzw-pred2-u16.tif', (c, r) => 1001 + ((c * 7 + r * 13) % 4000), [497437, 4985513], 10, 32633],
    ];
    for (const [file, f, origin, px, epsg] of committed) {
      it(`committed GDAL file ${file}: every 7th pixel matches`, async () => {
        const reader = fresh();
        const spec = { origin, pixel: [px, px], epsg } as RasterSpec;
        const n = epsg === 32633 ? 96 : file.includes('f32') ? 64 : 100;
        for (let row = 0; row < n; row += 7) {
          for (let col = 3; col < n; col += 7) {
            const { lat, lng } = centreOf(spec, col, row);
            const r = await reader.readPoint(url(`/committed/${file}`), lat, lng);
            const want = f(col, row);
            if (want === -9999) assert.equal(r.kind, 'nodata', `${file} (${col},${row})`);
            else assert.deepEqual(r, { kind: 'value', value: want, col, row, epsg }, `${file} (${col},${row})`);
          }
        }
      });
    }
  });

  describe('when looking up the pixel of a point', () => {
    it('projects WGS 84 to UTM with proj4 (45°N 15°E is 500000 m E, 4982950.4 m N in zone 33N)', () => {
      const [x, y] = projectPoint(32633, 45, 15);
      assert.equal(Math.round(x * 10) / 10, 500000);
      assert.equal(Math.round(y * 10) / 10, 4982950.4);
      const [xs, ys] = projectPoint(32733, -10, 15);
      assert.equal(Math.round(xs), 500000);
      assert.equal(Math.round(ys), 8894588);
    });

    it('uses the catalogue CRS (STAC proj:epsg) only when the file declares none', async () => {
      up.files.set('/look/nokeys.tif', writeGeoTiff(u16utm, { block: 256, noGeoKeys: true }));
      const { lat, lng } = centreOf(u16utm, 300, 200);
      const reader = fresh();
      assert.deepEqual(await reader.readPoint(url('/look/nokeys.tif'), lat, lng, { epsgHint: 32633 }), { kind: 'value', value: u16utm.values(300, 200), col: 300, row: 200, epsg: 32633 });
      await assert.rejects(fresh().readPoint(url('/look/nokeys.tif'), lat, lng), (e: unknown) => e instanceof UpstreamError && e.kind === 'format' && /no CRS/.test(e.message));
    });

    it('answers outside for a point beyond the raster, nodata for the GDAL_NODATA value', async () => {
      up.files.set('/look/u16.tif', writeGeoTiff(u16utm, { block: 256, compression: 8, predictor: 2 }));
      const reader = fresh();
      assert.deepEqual(await reader.readPoint(url('/look/u16.tif'), 46, 15), { kind: 'outside', epsg: 32633 });
      const { lat, lng } = centreOf(u16utm, 9, 7);
      assert.deepEqual(await reader.readPoint(url('/look/u16.tif'), lat, lng), { kind: 'nodata', raw: 0, col: 9, row: 7, epsg: 32633 });
      const extra = await reader.readPoint(url('/look/u16.tif'), ...(Object.values(centreOf(u16utm, 1, 1)) as [number, number]), { nodata: [1000 + 7 + 13] });
      assert.equal(extra.kind, 'nodata', 'caller-declared nodata values count too');
    });

    it('answers missing for a 404 when allowed, and throws an http UpstreamError otherwise', async () => {
      const reader = fresh();
      assert.deepEqual(await reader.readPoint(url('/look/none.tif'), 45, 15, { missingOk: true }), { kind: 'missing' });
      await assert.rejects(reader.readPoint(url('/look/none.tif'), 45, 15), (e: unknown) => e instanceof UpstreamError && e.kind === 'http' && e.status === 404);
    });
  });

  describe('when caching headers and blocks', () => {
    it('a cold read is one 16 KB head request plus one block request; a second point in the same block makes none', async () => {
      up.files.set('/cache/a.tif', writeGeoTiff(u8geo, { block: 128, compression: 8, predictor: 2 }));
      const reader = fresh();
      up.reset();
      const first = await reader.readPoint(url('/cache/a.tif'), 47.995, 15.005);
      assert.equal(first.kind, 'value');
      assert.deepEqual(
        up.requests.map((r) => r.range),
        ['bytes=0-16383', up.requests[1].range],
      );
      assert.equal(up.count('/cache/a.tif'), 2);
      await reader.readPoint(url('/cache/a.tif'), 47.985, 15.015);
      assert.equal(up.count('/cache/a.tif'), 2, 'same block: no request');
      await reader.readPoint(url('/cache/a.tif'), 46.5, 16.5);
      assert.equal(up.count('/cache/a.tif'), 3, 'another block of a cached header: only the block request');
      assert.deepEqual(reader.stats, { headerHits: 2, headerFetches: 1, blockHits: 1, blockFetches: 2 });
    });

    it('identical reads in flight share one header and one block request', async () => {
      up.files.set('/cache/b.tif', writeGeoTiff(u8geo, { block: 128, compression: 8 }));
      const reader = fresh();
      up.reset();
      const rs = await Promise.all([1, 2, 3, 4, 5].map(() => reader.readPoint(url('/cache/b.tif'), 47.5, 15.5)));
      assert.equal(new Set(rs.map((r) => JSON.stringify(r))).size, 1);
      assert.equal(up.count('/cache/b.tif'), 2);
    });

    it('a cache key shares the header across URLs that differ by a credential; blocks use the newest URL', async () => {
      up.files.set('/cache/signed.tif', writeGeoTiff(u8geo, { block: 128, compression: 8 }));
      const reader = fresh();
      up.reset();
      await reader.readPoint(url('/cache/signed.tif?sig=old'), 47.995, 15.005, { cacheKey: 'signed' });
      await reader.readPoint(url('/cache/signed.tif?sig=new'), 46.5, 16.5, { cacheKey: 'signed' });
      assert.deepEqual(
        up.requests.map((r) => r.query),
        ['?sig=old', '?sig=old', '?sig=new'],
      );
    });

    it('the header cache is a bounded LRU', async () => {
      up.files.set('/cache/c1.tif', writeGeoTiff(u8geo, { block: 128 }));
      up.files.set('/cache/c2.tif', writeGeoTiff(u8geo, { block: 128 }));
      const reader = fresh({ headerEntries: 1 });
      up.reset();
      await reader.readPoint(url('/cache/c1.tif'), 47.5, 15.5);
      await reader.readPoint(url('/cache/c2.tif'), 47.5, 15.5);
      await reader.readPoint(url('/cache/c1.tif'), 47.5, 15.5);
      assert.equal(up.count('/cache/c1.tif'), 3, 'c1: header, block, then the header again (evicted by c2; its block stayed cached)');
    });

    it('a COG whose block arrays do not fit the first read range-reads only the entries it needs', async () => {
      // 129 × 128 tiles of 16² pixels: 66 KB of offsets, more than a header tag is decoded whole.
      const spec: RasterSpec = { width: 2064, height: 2048, type: 'u8', epsg: 4326, origin: [0, 20], pixel: [0.001, 0.001], values: (c, r) => (c * 3 + r * 5) % 256 };
      up.files.set('/cache/many-tiles.tif', writeGeoTiff(spec, { block: 16, compression: 8 }));
      const reader = fresh();
      up.reset();
      const { lat, lng } = centreOf(spec, 2000, 1500);
      assert.deepEqual(await reader.readPoint(url('/cache/many-tiles.tif'), lat, lng), { kind: 'value', value: (2000 * 3 + 1500 * 5) % 256, col: 2000, row: 1500, epsg: 4326 });
      assert.equal(up.count('/cache/many-tiles.tif'), 4, 'head, offset entry, byte-count entry, block');
      assert.ok(
        up.requests.every((r) => r.range && /^bytes=\d+-\d+$/.test(r.range)),
        'never the whole file',
      );
    });
  });

  describe('when the bytes are wrong', () => {
    const isFormat = (e: unknown) => e instanceof UpstreamError && e.kind === 'format';

    it('a file that is not a TIFF is a format error', async () => {
      await assert.rejects(fresh().readPoint(url('/bad/not-a-tiff.tif'), 45, 15), (e: unknown) => isFormat(e) && /not a TIFF/.test((e as Error).message));
    });

    it('a garbled block is a format error, not a value', async () => {
      up.files.set('/bad/garbled.tif', writeGeoTiff(u8geo, { block: 128, compression: 8 }));
      up.switches = { corrupt: { prefix: '/bad/garbled.tif', mode: 'blocks' } };
      try {
        await assert.rejects(fresh().readPoint(url('/bad/garbled.tif'), 47.5, 15.5), isFormat);
      } finally {
        up.reset();
      }
    });

    it('a truncated block is a format error', async () => {
      up.files.set('/bad/short.tif', writeGeoTiff(u8geo, { block: 128, compression: 8 }));
      up.switches = { truncate: { prefix: '/bad/short.tif' } };
      try {
        await assert.rejects(fresh().readPoint(url('/bad/short.tif'), 47.5, 15.5), (e: unknown) => isFormat(e) && /truncated/.test((e as Error).message));
      } finally {
        up.reset();
      }
    });

    it('a GeoTIFF in an unsupported CRS is a format error', async () => {
      up.files.set('/bad/lambert.tif', writeGeoTiff({ ...u8geo, epsg: 3035 }, { block: 128 }));
      await assert.rejects(fresh().readPoint(url('/bad/lambert.tif'), 47.5, 15.5), (e: unknown) => isFormat(e) && /EPSG:3035/.test((e as Error).message));
    });
  });

  describe('decoders', () => {
    it('PackBits: the TIFF 6.0 section 9 example', () => {
      const input = Uint8Array.from([0xfe, 0xaa, 0x02, 0x80, 0x00, 0x2a, 0xfd, 0xaa, 0x03, 0x80, 0x00, 0x2a, 0x22, 0xf7, 0xaa]);
      const want = [0xaa, 0xaa, 0xaa, 0x80, 0x00, 0x2a, 0xaa, 0xaa, 0xaa, 0xaa, 0x80, 0x00, 0x2a, 0x22, ...new Array(10).fill(0xaa)];
      assert.deepEqual([...packBitsDecode(input, want.length)], want);
    });

    it('LZW: a hand-made stream with Clear, a KwKwK code and EOI', () => {
      // 9-bit codes: Clear, 'A', 'B', 258 ('AB'), 260 (KwKwK: 'ABA'), EOI.
      const codes = [256, 65, 66, 258, 260, 257];
      let bits = '';
      for (const c of codes) bits += c.toString(2).padStart(9, '0');
      bits = bits.padEnd(Math.ceil(bits.length / 8) * 8, '0');
      const input = Uint8Array.from(bits.match(/.{8}/g)!.map((b) => parseInt(b, 2)));
      assert.equal(new TextDecoder().decode(lzwDecode(input, 100)), 'ABABABA');
    });

    it('LZW: a corrupt code is a format error', () => {
      const input = Uint8Array.from([0x80, 0x7f, 0xff, 0xff, 0xff]);
      assert.throws(
        () => lzwDecode(input, 100),
        (e: unknown) => e instanceof UpstreamError && e.kind === 'format',
      );
    });
  });
});
