import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 as zlibCrc32, inflateSync } from 'node:zlib';
import * as P from '../../../src/protocol/index.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { build, type TestApp } from '../../support/app.js';
import { startRasterUpstreams, type RasterUpstreams } from '../../sources/fixtures/raster-upstreams.js';
import { s2Dn, s2PointAt, S2_ITEMS, S2_POINTS, utmPixel } from '../../sources/fixtures/raster-scenes.js';

let up: RasterUpstreams;
let t: TestApp;
/** Inside the fixture's tslot 692 (2026-11-03 to 2026-12-03), whatever the machine's clock says. */
const NOW = new Date('2026-11-22T12:00:00Z');
const ITEM_B = S2_ITEMS[1];
const cellAt = (p: { lat: number; lng: number }) => P.cellOf(p.lat, p.lng);
const png = (cell: string) => t.app.inject({ method: 'GET', url: `/v1/cells/${cell}/scene.png` });

/** The display stretch, written out from its definition: reflectance 0..0.3 linear, gamma 1/2.2, clamped. */
const stretch = (refl: number) => Math.round(255 * Math.min(1, Math.max(0, refl / 0.3)) ** (1 / 2.2));
/** Reflectance of item B (baseline 05.11, offset not applied upstream: DN × 0.0001 − 0.1). */
const reflB = (asset: string, col: number, row: number) => s2Dn(1, asset, col, row) * 0.0001 - 0.1;

/** Decodes an 8-bit RGB PNG: chunk CRCs checked, IDAT inflated, scanline filters undone. */
function decodePng(bytes: Buffer): { width: number; height: number; colourType: number; rgb: (x: number, y: number) => [number, number, number] } {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  const chunks: Array<{ type: string; data: Buffer }> = [];
  for (let p = 8; p < bytes.length; ) {
    const len = bytes.readUInt32BE(p);
    const type = bytes.toString('latin1', p + 4, p + 8);
    const data = bytes.subarray(p + 8, p + 8 + len);
    assert.equal(bytes.readUInt32BE(p + 8 + len), zlibCrc32(bytes.subarray(p + 4, p + 8 + len)), `${type} CRC`);
    chunks.push({ type, data });
    p += 12 + len;
  }
  assert.deepEqual([chunks[0].type, chunks.at(-1)!.type], ['IHDR', 'IEND']);
  const ihdr = chunks[0].data;
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  assert.deepEqual([...ihdr.subarray(8)], [8, 2, 0, 0, 0], 'bit depth 8, colour type 2, no interlace');
  const raw = inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
  const stride = width * 3;
  assert.equal(raw.length, height * (stride + 1));
  const out = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x];
      const left = x >= 3 ? out[y * stride + x - 3] : 0;
      const upper = y > 0 ? out[(y - 1) * stride + x] : 0;
      const ul = x >= 3 && y > 0 ? out[(y - 1) * stride + x - 3] : 0;
      const pa = Math.abs(upper - ul);
      const pb = Math.abs(left - ul);
      const pc = Math.abs(left + upper - 2 * ul);
      const paeth = pa <= pb && pa <= pc ? left : pb <= pc ? upper : ul;
      const pred = [0, left, upper, (left + upper) >> 1, paeth][f];
      assert.ok(pred !== undefined, `filter ${f}`);
      out[y * stride + x] = (v + pred) & 0xff;
    }
  }
  return { width, height, colourType: ihdr[9], rgb: (x, y) => [out[y * stride + x * 3], out[y * stride + x * 3 + 1], out[y * stride + x * 3 + 2]] };
}

before(async () => {
  up = await startRasterUpstreams(['s2']);
  t = await build({ upstreams: up.upstreams, materializerTimeoutSecs: 2 }, {}, { now: () => NOW });
});
after(async () => {
  await t.close();
  await up.close();
});

describe('GET /v1/cells/:cell64/scene.png', () => {
  it("a 256 x 256 RGB PNG of the cell's clear scene: the stretch of the fixture reflectances, centred on the cell pixel", async () => {
    const cell = cellAt(S2_POINTS.west);
    const r = await png(cell);
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.headers['content-type'], 'image/png');
    assert.equal(r.headers['cache-control'], 'public, max-age=3600');
    assert.equal(r.headers['x-scene-id'], ITEM_B.id);
    assert.equal(r.headers['x-scene-datetime'], '2026-11-10T10:03:15Z');
    assert.equal(r.headers['x-scene-cloud-cover'], '8.5');
    assert.equal(r.headers['x-scene-epsg'], '32633');
    const img = decodePng(r.rawPayload);
    assert.deepEqual([img.width, img.height, img.colourType], [256, 256, 2]);
    const c = P.cellCenter(cell);
    const [col, row] = utmPixel(c.lat, c.lng, 10);
    for (const [x, y] of [
      [128, 128],
      [0, 0],
      [255, 0],
      [0, 255],
      [255, 255],
      [37, 190],
    ]) {
      const want = ['red', 'green', 'blue'].map((a) => stretch(reflB(a, col - 128 + x, row - 128 + y)));
      assert.deepEqual(img.rgb(x, y), want, `pixel ${x},${y}`);
    }
  });

  it('a repeat for the same cell and scene is served from the thumbnail cache: no upstream request, same bytes', async () => {
    const cell = cellAt(S2_POINTS.west);
    const first = await png(cell);
    up.reset();
    const again = await png(cell);
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.rawPayload, first.rawPayload);
    assert.equal(up.requests.length, 0);
  });

  it('concurrent requests for a picture not yet drawn share one rendering', async () => {
    const cell = cellAt(s2PointAt(200, 200));
    const s2 = t.service.materializers.list().find((m) => m.key === 'earth_search_s2') as any;
    const original = s2.sceneRgb;
    let renders = 0;
    s2.sceneRgb = (...args: unknown[]) => {
      renders++;
      return original(...args);
    };
    try {
      const replies = await Promise.all([png(cell), png(cell), png(cell)]);
      assert.deepEqual(
        replies.map((r) => r.statusCode),
        [200, 200, 200],
      );
      assert.deepEqual(replies[1].rawPayload, replies[0].rawPayload);
      assert.equal(renders, 1);
    } finally {
      s2.sceneRgb = original;
    }
  });

  it('over the image edge the pixels without data are black, the others still data', async () => {
    const p = s2PointAt(20, 300);
    const cell = cellAt(p);
    const r = await png(cell);
    assert.equal(r.statusCode, 200, r.body);
    const img = decodePng(r.rawPayload);
    const c = P.cellCenter(cell);
    const [col, row] = utmPixel(c.lat, c.lng, 10);
    const edge = 128 - col; // window column of image column 0
    assert.deepEqual(img.rgb(edge - 1, 128), [0, 0, 0]);
    assert.deepEqual(
      img.rgb(edge, 128),
      ['red', 'green', 'blue'].map((a) => stretch(reflB(a, 0, row))),
    );
  });

  it('a cell no scene covers: 404 cid_not_found, reason outside_coverage with the detail', async () => {
    const r = await png(cellAt(S2_POINTS.ocean));
    assert.equal(r.statusCode, 404);
    const body = r.json();
    assert.equal(body.code, 'cid_not_found');
    assert.equal(body.schema, 'svc.error.v1');
    assert.equal(body.details.reason, 'outside_coverage');
    assert.match(body.details.detail, /no Sentinel-2 L2A scene covers the cell/);
  });

  it('a cell clouded in every scene: 404 cid_not_found, reason no_clear_scene', async () => {
    const r = await png(cellAt(S2_POINTS.southeast));
    assert.equal(r.statusCode, 404);
    assert.equal(r.json().details.reason, 'no_clear_scene');
    assert.match(r.json().details.detail, /cloud\/shadow\/no data per SCL/);
  });

  it('a malformed cell: 422 invalid_cell', async () => {
    const r = await png('defi.nope');
    assert.equal(r.statusCode, 422);
    assert.equal(r.json().code, 'invalid_cell');
    assert.equal(r.json().details.field, 'cell64');
  });

  it('the upstream failing: 502 source_fetch_failed, and nothing cached', async () => {
    const cell = cellAt(s2PointAt(60, 300));
    up.switches = { fail: { status: 500 } };
    const r = await png(cell);
    up.reset();
    assert.equal(r.statusCode, 502);
    assert.equal(r.json().code, 'source_fetch_failed');
    assert.equal((await png(cell)).statusCode, 200);
  });
});

describe('POST /v1/cell_scene_rgb', () => {
  it('returns the same PNG bytes as base64, with the scene and the PNG URL', async () => {
    const cell = cellAt(S2_POINTS.west);
    const get = await png(cell);
    const r = await t.app.inject({ method: 'POST', url: '/v1/cell_scene_rgb', payload: { cell64: cell } });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json();
    assert.deepEqual(Buffer.from(body.png_base64, 'base64'), get.rawPayload);
    assert.deepEqual(
      { ...body, png_base64: undefined },
      {
        cell,
        width: 256,
        height: 256,
        media_type: 'image/png',
        png_base64: undefined,
        scene: { id: ITEM_B.id, datetime: '2026-11-10T10:03:15Z', cloud_cover: 8.5, epsg: 32633 },
        url: `/v1/cells/${cell}/scene.png`,
      },
    );
  });

  it('validates cell64 like the other reads', async () => {
    const missing = await t.app.inject({ method: 'POST', url: '/v1/cell_scene_rgb', payload: {} });
    assert.deepEqual([missing.statusCode, missing.json().code], [422, 'invalid_argument']);
    const bad = await t.app.inject({ method: 'POST', url: '/v1/cell_scene_rgb', payload: { cell64: 'defi.nope' } });
    assert.deepEqual([bad.statusCode, bad.json().code], [422, 'invalid_cell']);
    const two = await t.app.inject({ method: 'POST', url: '/v1/cell_scene_rgb', payload: { cell: cellAt(S2_POINTS.west), cell64: cellAt(S2_POINTS.southeast) } });
    assert.deepEqual([two.statusCode, two.json().code, two.json().details.field], [422, 'invalid_argument', 'cell64']);
  });

  it('takes the cell as `cell`, the name every other tool uses, as well as `cell64`', async () => {
    const cell = cellAt(S2_POINTS.west);
    const a = await t.app.inject({ method: 'POST', url: '/v1/cell_scene_rgb', payload: { cell } });
    const b = await t.app.inject({ method: 'POST', url: '/v1/cell_scene_rgb', payload: { cell64: cell } });
    assert.equal(a.statusCode, 200, a.body);
    assert.equal(a.json().png_base64, b.json().png_base64);
  });

  it('is an MCP tool of the full tier', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/v1/tools' });
    assert.ok(JSON.stringify(r.json()).includes('cell_scene_rgb'));
  });

  it('over MCP the picture is an image block with the same PNG bytes; the structured part names the scene', async () => {
    const cell = cellAt(S2_POINTS.west);
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const client = new Client({ name: 'svc-test', version: '0.0.1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/full`)));
    try {
      const res: any = await client.callTool({ name: 'svc_cell_scene_rgb', arguments: { cell64: cell } });
      assert.equal(res.isError, undefined, JSON.stringify(res).slice(0, 300));
      const [image, text] = res.content;
      assert.equal(image.type, 'image');
      assert.equal(image.mimeType, 'image/png');
      assert.deepEqual(Buffer.from(image.data, 'base64'), (await png(cell)).rawPayload);
      assert.equal(res.structuredContent.png_base64, undefined, 'the base64 is not sent twice');
      assert.equal(res.structuredContent.scene.id, ITEM_B.id);
      assert.deepEqual(JSON.parse(text.text), res.structuredContent);
    } finally {
      await client.close();
    }
  });
});

describe('scene thumbnails under a short gateway deadline', () => {
  let slow: TestApp;
  before(async () => {
    slow = await build({ upstreams: up.upstreams, materializerTimeoutSecs: 2, timeoutSecs: 1 }, {}, { now: () => NOW });
  });
  after(async () => slow.close());

  it('an upstream slower than the deadline: 504 compute_timeout', async () => {
    up.switches = { delay: { ms: 1500, prefix: '/earth-search' } };
    const r = await slow.app.inject({ method: 'GET', url: `/v1/cells/${cellAt(s2PointAt(300, 60))}/scene.png` });
    up.reset();
    assert.equal(r.statusCode, 504, r.body);
    assert.equal(r.json().code, 'compute_timeout');
  });
});

describe('a responder without the Sentinel-2 connector', () => {
  let bare: TestApp;
  before(async () => {
    bare = await build({}, {}, { materializers: [] });
  });
  after(async () => bare.close());

  it('answers 404 naming the missing connector', async () => {
    const r = await bare.app.inject({ method: 'GET', url: `/v1/cells/${cellAt(S2_POINTS.west)}/scene.png` });
    assert.equal(r.statusCode, 404);
    assert.equal(r.json().code, 'cid_not_found');
    assert.equal(r.json().details.reason, 'no_connector');
    assert.match(r.json().message, /no Sentinel-2 connector/);
  });
});
