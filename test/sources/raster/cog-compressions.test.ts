/**
 * COG compressions beyond the original four (docs/cog.md): ZSTD read with known pixel values
 * from real COGs that `gdal_translate` makes here, internal masks applied, and the compressions
 * no registry provider serves (LERC, JPEG, WebP, LZMA) refused as a `format` error naming the
 * compression, before any block is fetched, which a connector turns into
 * source_format_mismatch.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CogReader } from '../../../src/sources/cog/reader.js';
import { compressionName, zstdContentSize, zstdDecode, prepareDecoder } from '../../../src/sources/cog/decode.js';
import { UpstreamError } from '../../../src/sources/http.js';
import { worldCoverConnector } from '../../../src/sources/worldcover.js';
import { startRasterUpstreams, type RasterUpstreams } from '../fixtures/raster-upstreams.js';
import { geoPixel, worldCover } from '../fixtures/raster-scenes.js';
import { gdalAvailable, gdalTranslate, type RasterSpec } from '../fixtures/raster-tiff.js';
import { depsFor, requestAt } from './harness.js';

const GDAL_SKIP = !gdalAvailable() && process.env.SVC_TEST_REQUIRE_SERVICES !== '1' ? 'gdal_translate (Debian gdal-bin) is not installed: these COGs are made with it' : false;

let up: RasterUpstreams;
const url = (p: string) => `${up.origin}${p}`;
const fresh = () => new CogReader(depsFor(up).client);
const isFormat = (e: unknown): e is UpstreamError => e instanceof UpstreamError && e.kind === 'format';

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
  values: (c, r) => (c < 10 ? -9999 : ((c * 3 + r) % 50) * 0.25 + 0.1),
};
const i16south: RasterSpec = { width: 300, height: 200, type: 'i16', epsg: 32733, origin: [400000, 9000000], pixel: [20, 20], values: (c, r) => ((c * 37 + r * 91) % 60000) - 30000 };
const u8geo: RasterSpec = { width: 300, height: 300, type: 'u8', epsg: 4326, origin: [15, 48], pixel: [0.01, 0.01], values: (c, r) => (c + r) % 251 };

/** The `side` × `side` window whose top-left pixel is (col, row). */
function pixelWindow(col: number, row: number, side: number) {
  return { col0: col, row0: row, width: side, height: side };
}

before(async () => {
  up = await startRasterUpstreams(['tiles']);
});
after(async () => up.close());
beforeEach(() => up.reset());

describe('COG compressions', { skip: GDAL_SKIP }, () => {
  describe('ZSTD (50000) is read', () => {
    const cases: Array<{ name: string; spec: RasterSpec; args: string[] }> = [
      { name: 'COG ZSTD predictor 2 u16 UTM 33N', spec: u16utm, args: ['-of', 'COG', '-co', 'COMPRESS=ZSTD', '-co', 'PREDICTOR=STANDARD', '-co', 'BLOCKSIZE=256'] },
      { name: 'COG ZSTD predictor 3 f32 EPSG:4326', spec: f32geo, args: ['-of', 'COG', '-co', 'COMPRESS=ZSTD', '-co', 'PREDICTOR=FLOATING_POINT', '-co', 'BLOCKSIZE=128'] },
      { name: 'COG ZSTD no predictor i16 UTM 33S, BigTIFF', spec: i16south, args: ['-of', 'COG', '-co', 'COMPRESS=ZSTD', '-co', 'BIGTIFF=YES', '-co', 'BLOCKSIZE=128'] },
      { name: 'GTiff ZSTD strips u8 (level 22)', spec: u8geo, args: ['-of', 'GTiff', '-co', 'COMPRESS=ZSTD', '-co', 'ZSTD_LEVEL=22', '-co', 'BLOCKYSIZE=7'] },
    ];
    for (const [i, c] of cases.entries()) {
      it(`${c.name}: windows and points hold the values written`, async () => {
        up.files.set(`/zstd/${i}.tif`, gdalTranslate(c.spec, c.args));
        const reader = fresh();
        const h = await reader.header(url(`/zstd/${i}.tif`));
        assert.ok(h);
        assert.equal(h.tiff.compression, 50000);
        // A window across block edges, compared pixel by pixel with the spec.
        const w = await reader.window(h, pixelWindow(100, 60, 40), c.spec.epsg);
        for (let r = 0; r < 40; r++) {
          for (let col = 0; col < 40; col++) {
            const want = Math.fround(c.spec.values(100 + col, 60 + r));
            assert.equal(w.values[r * 40 + col], want, `${c.name} (${100 + col},${60 + r})`);
          }
        }
        for (let k = 0; k < 30; k++) {
          const col = (k * 97 + 13) % c.spec.width;
          const row = (k * 53 + 7) % c.spec.height;
          const p = await reader.pixel(h, col, row, c.spec.epsg);
          const want = Math.fround(c.spec.values(col, row));
          if (want === c.spec.nodata) assert.deepEqual([p.kind, 'raw' in p && p.raw], ['nodata', want]);
          else assert.deepEqual(p, { kind: 'value', value: want, col, row, epsg: c.spec.epsg }, `${c.name} (${col},${row})`);
        }
      });
    }

    it('a point of a ZSTD COG costs the head request and one block request', async () => {
      up.files.set('/zstd/cost.tif', gdalTranslate(u16utm, ['-of', 'COG', '-co', 'COMPRESS=ZSTD', '-co', 'BLOCKSIZE=256']));
      const reader = fresh();
      const h = await reader.header(url('/zstd/cost.tif'));
      assert.ok(h);
      assert.deepEqual(await reader.pixel(h, 300, 200, 32633), { kind: 'value', value: u16utm.values(300, 200), col: 300, row: 200, epsg: 32633 });
      assert.equal(up.count('/zstd/cost.tif'), 2);
    });

    it('a garbled ZSTD block is a format error, not a value', async () => {
      up.files.set('/zstd/garbled.tif', gdalTranslate(u8geo, ['-of', 'COG', '-co', 'COMPRESS=ZSTD', '-co', 'BLOCKSIZE=128']));
      up.switches = { corrupt: { prefix: '/zstd/garbled.tif', mode: 'blocks' } };
      await assert.rejects(fresh().readPoint(url('/zstd/garbled.tif'), 47.5, 15.5), (e: unknown) => isFormat(e) && /ZSTD/.test(e.message));
    });
  });

  describe('an internal mask (GDAL PER_DATASET, 1 bit per pixel)', () => {
    // Zero in a checkerboard of 16-pixel squares, no GDAL_NODATA: only the mask says "no data".
    const masked: RasterSpec = { ...u8geo, values: (c, r) => (((c >> 4) + (r >> 4)) % 3 === 0 ? 0 : 1 + ((c + r) % 200)) };
    for (const compress of ['DEFLATE', 'ZSTD']) {
      it(`${compress} COG with -mask: pixels the mask excludes are nodata, the rest values`, async () => {
        const path = `/mask/${compress}.tif`;
        up.files.set(path, gdalTranslate(masked, ['-of', 'COG', '-co', `COMPRESS=${compress}`, '-co', 'BLOCKSIZE=128', '-mask', '1']));
        const reader = fresh();
        const h = await reader.header(url(path));
        assert.ok(h?.tiff.mask, 'the mask IFD is found');
        assert.equal(h.tiff.nodata, undefined);
        const w = await reader.window(h, pixelWindow(90, 100, 60), 4326);
        let want = 0;
        for (let r = 0; r < 60; r++) {
          for (let c = 0; c < 60; c++) {
            const v = masked.values(90 + c, 100 + r);
            assert.equal(w.values[r * 60 + c], v);
            assert.equal(w.mask[r * 60 + c], v === 0 ? 1 : 0, `(${90 + c},${100 + r})`);
            if (v !== 0) want++;
          }
        }
        assert.equal(w.valid, want);
        up.reset();
        const cold = fresh();
        const at = await cold.header(url(path));
        assert.ok(at);
        assert.deepEqual(await cold.pixel(at, 5, 5, 4326), { kind: 'nodata', raw: 0, col: 5, row: 5, epsg: 4326 });
        assert.deepEqual(await cold.pixel(at, 20, 5, 4326), { kind: 'value', value: masked.values(20, 5), col: 20, row: 5, epsg: 4326 });
        assert.equal(up.count(path), 3, 'the head, the image block and the mask block');
      });
    }
  });

  describe('compressions no registry provider serves are refused, naming the compression', () => {
    const refused: Array<{ name: string; code: number; spec: RasterSpec; args: string[] }> = [
      { name: 'LERC', code: 34887, spec: f32geo, args: ['-of', 'COG', '-co', 'COMPRESS=LERC', '-co', 'MAX_Z_ERROR=0'] },
      { name: 'LERC_ZSTD', code: 34887, spec: f32geo, args: ['-of', 'COG', '-co', 'COMPRESS=LERC_ZSTD', '-co', 'MAX_Z_ERROR=0'] },
      { name: 'LERC_DEFLATE', code: 34887, spec: f32geo, args: ['-of', 'COG', '-co', 'COMPRESS=LERC_DEFLATE', '-co', 'MAX_Z_ERROR=0'] },
      { name: 'JPEG', code: 7, spec: u8geo, args: ['-of', 'COG', '-co', 'COMPRESS=JPEG'] },
      { name: 'WEBP', code: 50001, spec: u8geo, args: ['-of', 'COG', '-co', 'COMPRESS=WEBP', '-b', '1', '-b', '1', '-b', '1'] },
      { name: 'LZMA', code: 34925, spec: u8geo, args: ['-of', 'COG', '-co', 'COMPRESS=LZMA'] },
    ];
    for (const r of refused) {
      it(`${r.name}: a format error naming ${compressionName(r.code)}, after the header request only`, async () => {
        const path = `/refused/${r.name}.tif`;
        up.files.set(path, gdalTranslate(r.spec, r.args));
        const [x, y] = [r.spec.origin[0] + 50.5 * r.spec.pixel[0], r.spec.origin[1] - 40.5 * r.spec.pixel[1]];
        await assert.rejects(fresh().readPoint(url(path), y, x), (e: unknown) => isFormat(e) && e.message === `unsupported TIFF compression ${compressionName(r.code)}`);
        assert.equal(up.count(path), 1, 'no block is fetched for a file that cannot be decoded');
      });
    }

    it('a connector answers source_format_mismatch naming the compression, never a value', async () => {
      const path = '/worldcover/v200/2021/map/ESA_WorldCover_10m_2021_v200_N45E015_Map.tif';
      const original = up.files.get(path);
      assert.ok(original);
      up.files.set(path, gdalTranslate(worldCover, ['-of', 'COG', '-co', 'COMPRESS=JPEG']));
      try {
        const o = await worldCoverConnector(depsFor(up)).materialize(requestAt('landcover.esa_worldcover_2021', 46.5, 16.5));
        assert.equal(o.status, 'error', JSON.stringify(o));
        assert.equal((o as { format_mismatch?: boolean }).format_mismatch, true);
        assert.match((o as { reason: string }).reason, /^source_format_mismatch: ESA_WorldCover_10m_2021_v200_N45E015_Map\.tif: unsupported TIFF compression 7 \(JPEG\)$/);
      } finally {
        up.files.set(path, original);
      }
      // The original DEFLATE tile still reads (the refusal is not cached as an answer).
      const o = await worldCoverConnector(depsFor(up)).materialize(requestAt('landcover.esa_worldcover_2021', 46.5, 16.5));
      const { center } = requestAt('landcover.esa_worldcover_2021', 46.5, 16.5);
      assert.deepEqual([o.status, (o as { value?: number }).value], ['value', worldCover.values(...geoPixel(worldCover, center.lat, center.lng))]);
    });
  });
});

describe('ZSTD frame checks', () => {
  it('reads the content size a frame header declares, and refuses bytes that are not a frame', () => {
    // Magic, descriptor 0x20 (single segment, 1-byte content size), size 200.
    assert.equal(zstdContentSize(Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x20, 200])), 200);
    // Descriptor 0x60 (single segment, 2-byte size: value + 256).
    assert.equal(zstdContentSize(Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x60, 0x00, 0x01])), 512);
    // Descriptor 0x00: no content size, a window descriptor follows.
    assert.equal(zstdContentSize(Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58])), undefined);
    assert.throws(() => zstdContentSize(Uint8Array.from([0x78, 0x9c, 1, 2, 3, 4])), isFormat);
  });

  it('a frame declaring more bytes than the block holds is a format error, not a bigger buffer', async () => {
    await prepareDecoder(50000);
    assert.throws(
      () => zstdDecode(Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x60, 0x00, 0x01, 0, 0, 0]), 100),
      (e: unknown) => isFormat(e) && /declares 512 bytes/.test(e.message),
    );
    assert.throws(
      () => zstdDecode(Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x20, 50, 1, 2, 3]), 100),
      (e: unknown) => isFormat(e) && /ZSTD stream corrupt/.test(e.message),
    );
  });
});
