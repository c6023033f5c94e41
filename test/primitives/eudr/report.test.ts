/**
 * The printable report of a due-diligence statement: what it says, that caller text is escaped
 * everywhere, that it links nowhere, and how it renders in headless Chromium (screenshot and a
 * one-page A4 PDF kept under test-artifacts/).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { renderStatementHtml, reportFileName } from '../../../src/primitives/eudr/report.js';
import type { DdsStatement, PlotAssessment, PlotVerdict } from '../../../src/primitives/eudr/types.js';
import type { Receipt } from '../../../src/protocol/receipt.js';
import { artifacts, browserSkip, launchChromium } from '../../support/browser.js';

const KEY = 'k'.repeat(52);
const DISCLAIMER =
  'This statement assesses deforestation after the cut-off date only. It does not assess whether the commodities were produced in accordance with the relevant legislation of the country of production (Article 3(b)); the operator must collect and assess that information separately.';
const EVIL = `<script>alert(1)</script>&"'`;
const EVIL_ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;';
const VERDICTS: PlotVerdict[] = ['deforestation_free', 'deforestation_detected', 'no_forest_at_baseline', 'insufficient_data'];

const cid = (c: string, i: number) => (c + i.toString(36)).padEnd(52, c).slice(0, 52);

type Kind = 'free' | 'detected' | 'point';

/** One plot near Soubré (Côte d'Ivoire); plots of a large statement sit on a grid. */
function makePlot(i: number, kind: Kind, plotId = `CI-SOU-${String(i + 1).padStart(4, '0')}`): PlotAssessment {
  const x = -6.6 + (i % 40) * 0.006;
  const y = 5.8 + Math.floor(i / 40) * 0.006;
  const d = 0.004;
  const polygon = {
    type: 'Polygon' as const,
    coordinates: [
      [
        [x, y],
        [x + d, y],
        [x + d, y + d * 0.8],
        [x + d * 0.4, y + d],
        [x, y],
      ],
    ],
    source: 'polygon' as const,
  };
  const point = { type: 'Point' as const, coordinates: [x + d / 2, y + d / 2], source: 'point' as const };
  const verdict: PlotVerdict = kind === 'free' ? 'deforestation_free' : kind === 'detected' ? 'deforestation_detected' : 'no_forest_at_baseline';
  const lossCells =
    kind === 'detected'
      ? [
          { cell: `cell-${i}-a`, lat: y + d * 0.3, lng: x + d * 0.3, loss_year: 2022, fact_cid: cid('l', i) },
          { cell: `cell-${i}-b`, lat: y + d * 0.5, lng: x + d * 0.7, loss_year: 2023, fact_cid: cid('m', i) },
        ]
      : [];
  const reasons: Record<Kind, string> = {
    free: 'Forest at the cut-off on 11 of 12 cells with a baseline value (0.92 × 3.52 ha = 3.23 ha ≥ 0.5 ha); no loss after 2020-12-31 on any forest cell.',
    detected: 'Forest at the cut-off on 10 of 12 cells (2.93 ha); loss after 2020-12-31 on 2 of 10 forest cells (2022, 2023) = 0.59 ha.',
    point: 'The point plot has no forest at the cut-off on its cell (JRC GFC2020 value 0).',
  };
  return {
    plot_id: plotId,
    country_of_production: 'CIV',
    commodity_hs: '180100',
    commodity: 'cocoa',
    is_cattle: false,
    quantity_kg: 12500 + i,
    commodity_name: i % 2 === 0 ? 'Cocoa beans, whole, raw' : undefined,
    geometry: kind === 'point' ? point : polygon,
    area_ha: kind === 'point' ? null : 3.5234,
    cells_requested: kind === 'point' ? 1 : 12,
    cells_sampled: kind === 'point' ? 1 : 12,
    cells_with_baseline: kind === 'point' ? 1 : 12,
    forest_fraction: kind === 'point' ? 0 : 0.9167,
    forest_area_ha: kind === 'point' ? null : 3.2298,
    mmu_ha: 0.5,
    loss_cells: lossCells,
    loss_fraction: kind === 'detected' ? 0.2 : kind === 'free' ? 0 : null,
    loss_area_ha: kind === 'detected' ? 0.586 : kind === 'free' ? 0 : null,
    verdict,
    reason: reasons[kind],
    fact_cids: [cid('f', i), cid('g', i)],
    ...(kind === 'detected'
      ? {
          visual_evidence: {
            verdict: 'visual_deforestation_suspected' as const,
            cells: [`cell-${i}-a`],
            ndvi_timeline: [{ year: 2020, ndvi: 0.81, cells_with_value: 1 }],
            ndvi_drop: 0.31,
            ndvi_drop_threshold: 0.15,
            vv_change_db: -2.4,
            vv_drop_threshold_db: -1.5,
            scene_urls: { [`cell-${i}-a`]: 'https://example.invalid/scene.png' },
            reason: 'NDVI fell by 0.31 since 2020.',
          },
        }
      : {}),
  };
}

/** A plausible statement: three plots (free polygon, detected polygon with two loss cells, point), or n on a grid. */
function makeStatement(n = 3): DdsStatement {
  const kinds: Kind[] = ['free', 'detected', 'point'];
  const plots = Array.from({ length: n }, (_, i) => makePlot(i, kinds[i % 3]!));
  const byVerdict = Object.fromEntries(VERDICTS.map((v) => [v, plots.filter((p) => p.verdict === v).length])) as Record<PlotVerdict, number>;
  const factCids = plots.flatMap((p) => p.fact_cids);
  const receipt = {
    request_id: 'req-7f3a9c2e',
    served_at: '2025-03-04T10:15:30Z',
    primitive: 'svc.eudr_dds',
    cells: [],
    fact_cids: factCids,
    signature: 'x'.repeat(103),
    schema_cid: 's'.repeat(52),
    registry_cid: 'r'.repeat(52),
    responder: 'svc-test',
    responder_pubkey_b32: KEY,
    responder_key_epoch: 1,
  } as unknown as Receipt;
  return {
    schema: 'svc.eudr_dds/1',
    statement_id: 'bafyeudrstatement0123456789abcdefghijklmnopqrstuvwx',
    generated_at: '2025-03-04T10:15:30Z',
    cut_off_date: '2020-12-31',
    forest_baseline: 'jrc_gfc2020_v3',
    annex_ii: {
      operator: { name: 'Cacao Trading GmbH', address: 'Hafenstraße 1, 20457 Hamburg', eori: 'DE123456789012345' },
      products: plots.map((p) => ({ plot_id: p.plot_id, commodity_hs: p.commodity_hs, commodity: p.commodity, commodity_name: p.commodity_name ?? null, quantity_kg: p.quantity_kg, supplier: null })),
      countries_of_production: ['CIV'],
      geolocation: plots.map((p) => ({ plot_id: p.plot_id, geometry: p.geometry, area_ha: p.area_ha })),
      risk_assessment: plots.map((p) => ({ plot_id: p.plot_id, verdict: p.verdict, visual_verdict: p.visual_evidence?.verdict ?? null })),
      all_plots_deforestation_free: plots.every((p) => p.verdict === 'deforestation_free'),
    },
    plots,
    summary: { plots: n, by_verdict: byVerdict, cells_sampled: plots.reduce((a, p) => a + p.cells_sampled, 0), facts: factCids.length },
    legality_module: 'none',
    legality_disclaimer: DISCLAIMER,
    evidence: { bundle_tokens: ['svc:bundle:' + 'b'.repeat(52)], fact_count: factCids.length },
    receipt,
  };
}

const count = (html: string, re: RegExp) => (html.match(re) ?? []).length;

describe('renderStatementHtml', () => {
  it('states every verdict, the conclusion, the disclaimer verbatim, the receipt and how to verify', () => {
    const s = makeStatement();
    const html = renderStatementHtml(s, { responderKeyB32: KEY });
    assert.match(html, /^<!doctype html>/);
    assert.ok(html.includes('EU Deforestation Regulation — due-diligence statement'));
    for (const v of VERDICTS) assert.ok(html.includes(v), v);
    for (const p of s.plots) assert.ok(html.includes(p.plot_id), p.plot_id);
    assert.ok(html.includes(DISCLAIMER));
    assert.ok(html.includes(s.receipt.signature));
    assert.ok(html.includes(KEY));
    assert.ok(html.includes('all_plots_deforestation_free: false'));
    assert.ok(html.includes('Cacao Trading GmbH') && html.includes('DE123456789012345'));
    assert.ok(html.includes('/v1/verify_receipt') && html.includes('POST /v1/fetch') && html.includes('verifyResponse'));
    assert.ok(html.includes('map: equirectangular, north up'));
    assert.ok(html.includes('@page { size: A4; margin: 12mm }'));
    assert.ok(html.includes('>point<'), 'a point plot has "point" as its area');
    assert.ok(html.includes('3.52') && html.includes('12\u202f500.0'));
    assert.equal(count(html, /class="plot"/g), 3);
    assert.equal(count(html, /class="loss"/g), 2);
    assert.equal(count(html, /class="label"/g), 3);
    assert.ok(!/NaN|Infinity|undefined/.test(html));
    assert.equal(reportFileName(s), 'eudr-dds-bafyeudrstat.html');
    assert.equal(reportFileName({ ...s, statement_id: '../x y' }), 'eudr-dds-___x_y.html');
  });

  it('escapes caller text everywhere, attributes and SVG text included', () => {
    const s = makeStatement();
    s.plots[1] = { ...s.plots[1]!, plot_id: EVIL, reason: EVIL, commodity_name: EVIL, country_of_production: EVIL };
    s.annex_ii.operator = { name: EVIL, address: EVIL, eori: EVIL };
    s.annex_ii.countries_of_production = [EVIL];
    s.legality_disclaimer = EVIL;
    s.statement_id = EVIL;
    s.evidence.bundle_tokens = [EVIL];
    s.partial = { reason: EVIL, plots_done: 3, plots_total: 4, plots_missing: [EVIL] };
    const html = renderStatementHtml(s, { responderKeyB32: EVIL, statementUrl: `javascript:alert(1)//${EVIL}` });
    assert.ok(!/<script/i.test(html), 'no script element');
    assert.ok(!html.includes(EVIL));
    assert.ok(!html.includes('href="javascript'), 'a non-web address is shown, never linked');
    assert.ok(count(html, new RegExp(EVIL_ESCAPED.replace(/[&;()/]/g, '\\$&'), 'g')) >= 10);
    // Inside SVG the id is in the <title> and in the cut-down label.
    assert.ok(html.includes(`<title>${EVIL_ESCAPED}</title>`));
    assert.ok(html.includes('only 3 of 4 plots were assessed'));
  });

  it('refers to no other host, except the statement URL when given', () => {
    const s = makeStatement();
    assert.equal(count(renderStatementHtml(s, { responderKeyB32: KEY }), /https?:\/\//g), 0);
    const url = 'https://svc.example.org/v1/eudr_dds/bafyeudrstatement?x=1&y=2';
    const html = renderStatementHtml(s, { responderKeyB32: KEY, statementUrl: url });
    assert.ok(html.includes('https://svc.example.org/v1/eudr_dds/bafyeudrstatement?x=1&amp;y=2'));
    assert.equal(count(html.replaceAll('https://svc.example.org/v1/eudr_dds/bafyeudrstatement?x=1&amp;y=2', ''), /https?:\/\//g), 0);
    assert.ok(!/src=|url\(|@import/i.test(html), 'nothing is loaded');
  });

  it('draws a single point plot on a box of minimum span', () => {
    const s = makeStatement(3);
    s.plots = [s.plots[2]!];
    const html = renderStatementHtml(s, { responderKeyB32: KEY });
    const m = html.match(/<circle class="plot" cx="([\d.]+)" cy="([\d.]+)"/);
    assert.ok(m, 'one circle');
    assert.ok(Math.abs(Number(m[1]) - 85) < 0.01 && Math.abs(Number(m[2]) - 55) < 0.01, 'the point sits in the middle of the map');
    assert.ok(html.includes('lat 5.7970…5.8070'), 'a 0.01° box around the point');
    assert.ok(!/NaN|Infinity/.test(html));
    const none = renderStatementHtml({ ...s, plots: [] }, { responderKeyB32: KEY });
    assert.ok(none.includes('no plot geometry in this statement') && none.includes('No plot was assessed.'));
  });

  it('200 plots: every shape on the map, no labels, 60 rows and a line for the rest', () => {
    const html = renderStatementHtml(makeStatement(200), { responderKeyB32: KEY });
    assert.equal(count(html, /class="plot"/g), 200);
    assert.equal(count(html, /class="label"/g), 0);
    assert.equal(count(html, /<tr class="row">/g), 60);
    assert.ok(html.includes('140 more plots are in the JSON statement'));
    assert.ok(html.includes('<td class="id">CI-SOU-0060</td>') && !html.includes('<td class="id">CI-SOU-0061</td>'));
  });

  it('1 000 plots render quickly', (t) => {
    const s = makeStatement(1000);
    const t0 = performance.now();
    const html = renderStatementHtml(s, { responderKeyB32: KEY });
    const ms = performance.now() - t0;
    t.diagnostic(`1000 plots: ${ms.toFixed(1)} ms, ${(html.length / 1024).toFixed(0)} KiB`);
    assert.equal(count(html, /class="plot"/g), 1000);
  });
});

describe('the report in headless Chromium', { skip: browserSkip }, () => {
  let browser: any;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  it('shows the plots, one shape each, and prints to exactly one A4 page', async () => {
    const s = makeStatement();
    const html = renderStatementHtml(s, { responderKeyB32: KEY, statementUrl: 'https://svc.example.org/v1/eudr_dds/bafyeudrstatement' });
    writeFileSync(`${artifacts}eudr-report.html`, html);
    const page = await browser.newPage({ viewport: { width: 900, height: 1200 } });
    // Nothing may be fetched: any request fails the test.
    const requests: string[] = [];
    page.on('request', (r: any) => requests.push(r.url()));
    await page.setContent(html);
    await page.screenshot({ path: `${artifacts}eudr-report.png`, fullPage: true });
    const body: string = await page.innerText('body');
    for (const p of s.plots) assert.ok(body.includes(p.plot_id), p.plot_id);
    assert.ok(body.includes('deforestation_detected'));
    assert.equal(await page.locator('svg.map .plot').count(), 3);
    assert.equal(await page.locator('svg.map .loss').count(), 2);
    // Every shape lies inside the map, and nothing sticks out of the page sideways.
    const layout = await page.evaluate(() => {
      const map = document.querySelector('svg.map')!.getBoundingClientRect();
      const inside = Array.from(document.querySelectorAll('svg.map .plot, svg.map .loss, svg.map .label')).every((el) => {
        const r = el.getBoundingClientRect();
        return r.left >= map.left - 0.5 && r.right <= map.right + 0.5 && r.top >= map.top - 0.5 && r.bottom <= map.bottom + 0.5;
      });
      const cssPxPerMm = 96 / 25.4;
      return { inside, mapWmm: map.width / cssPxPerMm, overflow: document.documentElement.scrollWidth - window.innerWidth };
    });
    assert.ok(layout.inside, 'shapes inside the map');
    assert.ok(Math.abs(layout.mapWmm - 170) < 1, `map ${layout.mapWmm} mm wide`);
    assert.ok(layout.overflow <= 0, `page wider than the window by ${layout.overflow}px`);
    const pdf: Buffer = await page.pdf({ format: 'A4' });
    writeFileSync(`${artifacts}eudr-report.pdf`, pdf);
    assert.equal(pdf.subarray(0, 4).toString('latin1'), '%PDF');
    assert.equal(count(pdf.toString('latin1'), /\/Type\s*\/Page[^s]/g), 1);
    assert.deepEqual(
      requests.filter((u) => !u.startsWith('about:') && !u.startsWith('data:')),
      [],
    );
    await page.close();
  });

  it('a partial three-plot statement with a long address still prints on one page', async () => {
    const s = makeStatement();
    s.partial = { reason: 'the time budget of 25 s ended the work', plots_done: 3, plots_total: 5, plots_missing: ['CI-SOU-0004', 'CI-SOU-0005'] };
    s.annex_ii.operator = { name: 'Cacao Trading GmbH & Co. KG', address: 'Hafenstraße 1, Speicherstadt, Block W, 3. Obergeschoss, 20457 Hamburg, Germany', eori: 'DE123456789012345' };
    const page = await browser.newPage();
    await page.setContent(renderStatementHtml(s, { responderKeyB32: KEY }));
    assert.ok((await page.innerText('body')).includes('only 3 of 5 plots were assessed'));
    const pdf: Buffer = await page.pdf({ format: 'A4' });
    assert.equal(count(pdf.toString('latin1'), /\/Type\s*\/Page[^s]/g), 1);
    await page.close();
  });

  it('200 plots: every shape drawn, the table cut at 60 rows', async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 1200 } });
    await page.setContent(renderStatementHtml(makeStatement(200), { responderKeyB32: KEY }));
    assert.equal(await page.locator('svg.map .plot').count(), 200);
    assert.equal(await page.locator('table.plots tr.row').count(), 60);
    await page.screenshot({ path: `${artifacts}eudr-report-200.png`, fullPage: true });
    await page.close();
  });
});
