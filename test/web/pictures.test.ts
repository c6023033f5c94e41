/**
 * The service's pictures as a person sees them: coverage_map.svg and a grid artifact's quick-look
 * PNG rendered by headless Chromium, screenshots decoded and looked at (land where land is, the
 * bins' colours, the legend, transparency), and kept under test-artifacts/.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { CLASSES, LAND } from '../../src/primitives/pictures/coverage-map.js';
import { GRID_MEDIA_TYPE } from '../../src/primitives/rasters/grid-format.js';
import { browserSkip, launchChromium } from '../support/browser.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';
import { decodePng, distinctColours, near, pixel, rgbOf, type DecodedPng } from '../support/png-decode.js';
import { artefactPath, gridFixture, NODATA_BLOCK, rasterTokenFor, seedCoverage } from '../support/pictures.js';

// Under SVC_TEST_REQUIRE_SERVICES=1 a missing Chromium fails the suite instead of skipping it.
const required = process.env.SVC_TEST_REQUIRE_SERVICES === '1';
const skip = required ? false : browserSkip;
const OCEAN = '#1d3149';
const op = makeAttester('pictures-browser');

let t: TestApp;
let base: string;
let browser: any;
let cid: string;
before(async () => {
  if (skip) return;
  if (browserSkip) throw new Error(`SVC_TEST_REQUIRE_SERVICES=1: ${browserSkip}`);
  t = await build({ attesterKeys: [op.publicKey] });
  await seedCoverage(t, op);
  cid = (await t.service.store.artifacts.put(GRID_MEDIA_TYPE, gridFixture(), rasterTokenFor(t.service.config.prefix))).cid;
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

/** A page holding one <img> in a box `width` pixels wide, loaded; with its rendered size. */
async function imagePage(src: string, width: number | null, background = '#ffffff'): Promise<{ page: any; box: { width: number; height: number; natural: [number, number] } }> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const style = width === null ? '' : `width:${width}px`;
  await page.setContent(
    `<!doctype html><body style="margin:0;background:${background}"><div style="${style}"><img id="pic" src="${src}" style="display:block;${width === null ? '' : 'width:100%'}"></div></body>`,
  );
  await page.waitForFunction(() => {
    const img = document.getElementById('pic') as HTMLImageElement;
    return img.complete && img.naturalWidth > 0;
  });
  const box = await page.evaluate(() => {
    const img = document.getElementById('pic') as HTMLImageElement;
    const r = img.getBoundingClientRect();
    return { width: r.width, height: r.height, natural: [img.naturalWidth, img.naturalHeight] };
  });
  return { page, box };
}

/** Screenshot of the image element, kept under test-artifacts/ and decoded. */
async function shoot(page: any, name: string): Promise<DecodedPng> {
  const path = artefactPath(name);
  await page.locator('#pic').screenshot({ path });
  return decodePng(readFileSync(path));
}

describe('coverage_map.svg in headless Chromium', { skip }, () => {
  it('fills a 1000-pixel box, land and water where they are, bins in their class colours, the legend drawn', async () => {
    const { page, box } = await imagePage(`${base}/v1/coverage_map.svg`, 1000);
    assert.equal(box.width, 1000);
    assert.ok(Math.abs(box.height - (1000 * 206) / 360) < 1, `height ${box.height}`);
    const shot = await shoot(page, 'coverage-map-chromium.png');
    const u = 1000 / 360; // screen pixels per degree
    const at = (lat: number, lng: number) => pixel(shot, Math.round((lng + 180) * u), Math.round((90 - lat) * u)).slice(0, 3);
    // Points off the 30° graticule lines.
    for (const [lat, lng] of [
      [25, 20],
      [-25, 133.5],
      [62, 95],
      [-10, -55],
    ])
      assert.ok(near(at(lat!, lng!), rgbOf(LAND)), `land at ${lat}, ${lng}: ${at(lat!, lng!)}`);
    for (const [lat, lng] of [
      [5, -145],
      [33, -40],
      [-27, 80],
    ])
      assert.ok(near(at(lat!, lng!), rgbOf(OCEAN)), `water at ${lat}, ${lng}: ${at(lat!, lng!)}`);
    // Bin centres: Paris holds 150 cells (100–299), Nairobi 40 (30–99), São Paulo 12 (10–29).
    const bin = (col: number, row: number) => pixel(shot, Math.round((col + 0.5) * u), Math.round((row + 0.5) * u)).slice(0, 3);
    assert.ok(near(bin(182, 41), rgbOf(CLASSES[4]!.fill)), `Paris bin ${bin(182, 41)}`);
    assert.ok(near(bin(216, 91), rgbOf(CLASSES[3]!.fill)), `Nairobi bin ${bin(216, 91)}`);
    assert.ok(near(bin(133, 113), rgbOf(CLASSES[2]!.fill)), `São Paulo bin ${bin(133, 113)}`);
    const legendTop = Math.ceil(180 * u) + 1;
    assert.ok(distinctColours(shot, 0, legendTop) > 20, 'the map is not uniform');
    assert.ok(distinctColours(shot, legendTop, shot.height) > 20, 'the legend is drawn');
    for (const c of CLASSES) {
      let found = false;
      for (let y = legendTop; y < shot.height && !found; y++) for (let x = 0; x < shot.width && !found; x++) found = near(pixel(shot, x, y).slice(0, 3), rgbOf(c.fill), 4);
      assert.ok(found, `legend swatch ${c.label}`);
    }
    await page.close();
  });

  it('scales to a narrower container and, opened on its own, fills the window with its legend readable in the DOM', async () => {
    const small = await imagePage(`${base}/v1/coverage_map.svg`, 500);
    assert.equal(small.box.width, 500);
    assert.ok(Math.abs(small.box.height - (500 * 206) / 360) < 1);
    await small.page.close();
    const page = await browser.newPage({ viewport: { width: 720, height: 412 } });
    const r = await page.goto(`${base}/v1/coverage_map.svg`);
    assert.equal(r.status(), 200);
    const dom = await page.evaluate(() => {
      const root = document.documentElement;
      const rect = root.getBoundingClientRect();
      return {
        tag: root.tagName,
        width: rect.width,
        height: rect.height,
        swatches: document.querySelectorAll('#legend .swatch').length,
        legend: Array.from(document.querySelectorAll('#legend text'), (e) => e.textContent),
        landLength: (document.getElementById('land') as unknown as SVGPathElement).getTotalLength(),
      };
    });
    assert.equal(dom.tag, 'svg');
    assert.deepEqual([dom.width, dom.height], [720, 412]);
    assert.equal(dom.swatches, 6);
    assert.ok(dom.legend.includes('Stored cells per 1° bin'));
    assert.ok(dom.legend.some((s: string) => /Natural Earth/.test(s)));
    assert.ok(dom.legend.some((s: string) => /^\d+ cells in \d+ bins$/.test(s)));
    assert.ok(dom.landLength > 1000, `coast length ${dom.landLength}`);
    await page.screenshot({ path: artefactPath('coverage-map-page.png') });
    await page.close();
  });
});

describe('a grid artifact quick-look in headless Chromium', { skip }, () => {
  it('loads as an image at its own size, no data showing the page through, the legend beneath', async () => {
    const served = decodePng((await t.app.inject({ method: 'GET', url: `/v1/artifacts/${cid}.png` })).rawPayload);
    const { page, box } = await imagePage(`${base}/v1/artifacts/${cid}.png`, null, '#ff00ff');
    assert.deepEqual(box.natural, [served.width, served.height]);
    assert.deepEqual([box.width, box.height], [served.width, served.height]);
    const shot = await shoot(page, 'quick-look-chromium.png');
    assert.deepEqual([shot.width, shot.height], [served.width, served.height]);
    const k = 512 / 64;
    assert.ok(near(pixel(shot, 2, 2).slice(0, 3), [255, 0, 255], 2), 'the no-data block shows the page behind');
    assert.ok(!near(pixel(shot, NODATA_BLOCK * k + 4, NODATA_BLOCK * k + 4).slice(0, 3), [255, 0, 255], 30), 'data is painted');
    assert.ok(distinctColours(shot, 0, 320) > 60, 'the grid is not uniform');
    assert.ok(distinctColours(shot, 320, shot.height) > 20, 'the legend strip is drawn');
    for (let y = 320; y < shot.height; y++) assert.ok(!near(pixel(shot, 0, y).slice(0, 3), [255, 0, 255], 2), 'the legend strip is opaque');
    writeFileSync(artefactPath('quick-look-served.png'), Buffer.from((await t.app.inject({ method: 'GET', url: `/v1/artifacts/${cid}.png` })).rawPayload));
    await page.close();
  });
});
