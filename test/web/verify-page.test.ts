import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { artifacts, browserSkip, launchChromium } from '../support/browser.js';
import { build, type TestApp } from '../support/app.js';

const skip = browserSkip;

let t: TestApp;
let base: string;
let browser: any;
before(async () => {
  if (skip) return;
  t = await build();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

async function verifyIn(page: any, receiptJson: string): Promise<string> {
  await page.goto(`${base}/verify`);
  await page.waitForFunction(() => (document.getElementById('pubkey') as HTMLInputElement).value.length === 52);
  await page.fill('#receipt', receiptJson);
  await page.click('#verify');
  await page.waitForSelector('#verdict');
  return page.textContent('#verdict');
}

describe('GET /verify in headless Chromium', { skip }, () => {
  it('shows VALID for a served receipt, verified in the browser', async () => {
    const receipt = (await t.app.inject({ method: 'GET', url: '/v1/corpus_state_stats' })).json().receipt;
    const page = await browser.newPage();
    const verdict = await verifyIn(page, JSON.stringify(receipt));
    assert.equal(verdict, 'VALID');
    assert.match(await page.textContent('tr[data-check="signature (Ed25519, strict)"]'), /✓/);
    await page.screenshot({ path: `${artifacts}verify-valid.png`, fullPage: true });
    await page.close();
  });

  it('shows INVALID and the failing check when one byte changed', async () => {
    const receipt = (await t.app.inject({ method: 'GET', url: '/v1/corpus_state_stats' })).json().receipt;
    receipt.request_id = receipt.request_id.slice(0, -1) + (receipt.request_id.endsWith('0') ? '1' : '0');
    const page = await browser.newPage();
    const verdict = await verifyIn(page, JSON.stringify(receipt));
    assert.equal(verdict, 'INVALID');
    assert.match(await page.textContent('tr[data-check="signature (Ed25519, strict)"]'), /✗/);
    await page.screenshot({ path: `${artifacts}verify-invalid.png`, fullPage: true });
    await page.close();
  });

  it('does not trust the server: a receipt signed by another key fails against the pinned key', async () => {
    const receipt = (await t.app.inject({ method: 'GET', url: '/v1/corpus_state_stats' })).json().receipt;
    const page = await browser.newPage();
    await page.goto(`${base}/verify`);
    await page.waitForFunction(() => (document.getElementById('pubkey') as HTMLInputElement).value.length === 52);
    await page.fill('#pubkey', 'a'.repeat(52));
    await page.fill('#receipt', JSON.stringify(receipt));
    await page.click('#verify');
    assert.equal(await page.textContent('#verdict'), 'INVALID');
    assert.match(await page.textContent('tr[data-check="key"]'), /✗/);
    await page.close();
  });
});
