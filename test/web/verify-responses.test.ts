import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { artifacts, browserSkip, launchChromium } from '../support/browser.js';
import { editsOf, fixtureApp, savedResponses } from '../support/tamper.js';
import type { TestApp } from '../support/app.js';

const skip = browserSkip;

let t: TestApp;
let base: string;
let browser: any;
let saved: Record<string, unknown>;
before(async () => {
  if (skip) return;
  ({ t } = await fixtureApp());
  saved = await savedResponses(t);
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

/** Paste each document into the page, press Verify, read the verdict: all inside the browser. */
async function verdicts(page: any, docs: unknown[]): Promise<string[]> {
  return page.evaluate(
    (texts: string[]) =>
      texts.map((text) => {
        (document.getElementById('receipt') as HTMLTextAreaElement).value = text;
        (document.getElementById('verify') as HTMLButtonElement).click();
        return document.getElementById('verdict')?.textContent ?? '';
      }),
    docs.map((d) => JSON.stringify(d)),
  );
}

describe('GET /verify with whole responses, in headless Chromium', { skip }, () => {
  it('accepts every untouched saved response and rejects every single edit', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/verify`);
    await page.waitForFunction(() => (document.getElementById('pubkey') as HTMLInputElement).value.length === 52);
    const names = Object.keys(saved);
    const good = await verdicts(
      page,
      names.map((n) => saved[n]),
    );
    names.forEach((n, i) => assert.equal(good[i], 'VALID', `${n} was not VALID in the page`));
    const edits = names.flatMap((n) => editsOf(n, saved[n]));
    const bad = await verdicts(
      page,
      edits.map((e) => e.doc),
    );
    edits.forEach((e, i) => assert.equal(bad[i], 'INVALID', `${e.primitive}: ${e.what} was accepted by the page`));
    assert.ok(edits.length > 150);
    await page.close();
  });

  it('shows a row per fact, with who signed it, and marks the changed one', async () => {
    const doc = structuredClone(saved.recall) as { facts: { band: string; value: number; fact_cid: string }[] };
    const target = doc.facts.find((f) => f.band === 'weather.temperature_2m')!;
    target.value = 99;
    const page = await browser.newPage();
    await page.goto(`${base}/verify`);
    await page.waitForFunction(() => (document.getElementById('pubkey') as HTMLInputElement).value.length === 52);
    await page.fill('#receipt', JSON.stringify(doc, null, 1));
    await page.click('#verify');
    assert.equal(await page.textContent('#verdict'), 'INVALID');
    const rows = await page.$$eval('#facts tr[data-fact]', (trs: HTMLElement[]) => trs.map((tr) => ({ cid: tr.dataset.fact, cls: tr.className, text: tr.textContent })));
    assert.equal(rows.length, 2);
    const bad = rows.find((r: { cid: string }) => r.cid === target.fact_cid)!;
    assert.equal(bad.cls, 'bad');
    assert.match(bad.text, /cid_mismatch/);
    const good = rows.find((r: { cid: string }) => r.cid !== target.fact_cid)!;
    assert.equal(good.cls, 'ok');
    assert.match(good.text, /responder/);
    await page.screenshot({ path: `${artifacts}verify-response-invalid.png`, fullPage: true });
    await page.close();
  });

  it('an ask answer edited from 8000 to 12 metres is INVALID in the page, its answer row naming answer_mismatch', async () => {
    const doc = structuredClone(saved.ask) as { answer: string };
    doc.answer = doc.answer.replace('8000 metres', '12 metres');
    const page = await browser.newPage();
    await page.goto(`${base}/verify`);
    await page.waitForFunction(() => (document.getElementById('pubkey') as HTMLInputElement).value.length === 52);
    const [good] = await verdicts(page, [saved.ask]);
    assert.equal(good, 'VALID');
    assert.equal(await page.$eval('#checks tr[data-check-kind="answer"]', (tr: HTMLElement) => tr.className), 'ok');
    await page.fill('#receipt', JSON.stringify(doc, null, 1));
    await page.click('#verify');
    assert.equal(await page.textContent('#verdict'), 'INVALID');
    const row = await page.$eval('#checks tr[data-check-kind="answer"]', (tr: HTMLElement) => ({ cls: tr.className, text: tr.textContent }));
    assert.equal(row.cls, 'bad');
    assert.match(row.text, /answer_mismatch: .*Elevation 12 metres.* where the facts give .*Elevation 8000 metres/);
    // The facts themselves are untouched: every fact row stays ok.
    assert.ok((await page.$$eval('#facts tr[data-fact]', (trs: HTMLElement[]) => trs.map((tr) => tr.className))).every((c: string) => c === 'ok'));
    await page.screenshot({ path: `${artifacts}verify-answer-edited.png`, fullPage: true });
    await page.close();
  });

  it('/verify/<fact_cid> loads the fact and checks its body, not only its receipt', async () => {
    const cid = (saved.fetch as { fact: { fact_cid: string } }).fact.fact_cid;
    const page = await browser.newPage();
    await page.goto(`${base}/verify/${cid}`);
    await page.waitForSelector('#verdict');
    assert.equal(await page.textContent('#verdict'), 'VALID');
    assert.equal(await page.$$eval('#facts tr[data-fact]', (trs: unknown[]) => trs.length), 1);
    await page.screenshot({ path: `${artifacts}verify-response-valid.png`, fullPage: true });
    await page.close();
  });
});
