import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { ARCHIVE_LAG_DAYS, spiEra5, spiWindows, WINDOW_DAYS } from '../../../src/sources/spi.js';
import { fixtureDeps, requestFor } from '../fixtures/json-deps.js';
import { PATHS, startJsonUpstreams, type JsonUpstreams } from '../fixtures/json-upstreams.js';

let fx: JsonUpstreams;
before(async () => {
  fx = await startJsonUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

const DAY_MS = 86_400_000;
const dayNum = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / DAY_MS;
const tslot = currentTslot('medium') - 3; // a complete past slot

/**
 * Synthetic ERA5: inside the same-calendar window of baseline year Y it rains rate(Y) mm every
 * day, rate spread evenly over 2.0…4.9 mm (the 30 years permuted); inside the slot's own window
 * it rains `target` mm; elsewhere 1 mm. Days before `from` are unpublished (null).
 */
function synthetic(target: number, from = '1900-01-01') {
  const w = spiWindows(tslot, 'medium', Math.floor(Date.now() / DAY_MS) - ARCHIVE_LAG_DAYS);
  fx.data.daily = (day, v) => {
    if (v !== 'precipitation_sum') return undefined;
    if (day < from) return null;
    const d = dayNum(day);
    if (d >= w.target.start && d <= w.target.end) return target;
    const b = w.baseline.find((x) => d >= x.start && d <= x.end);
    return b ? 2 + ((b.year * 7) % 30) / 10 : 1;
  };
  return w;
}
const rates = Array.from({ length: 30 }, (_, i) => 2 + (((1991 + i) * 7) % 30) / 10).sort((a, b) => a - b);
const medianRate = (rates[14] + rates[15]) / 2;

describe('spiEra5 (precip.spi_3m from the ERA5 archive)', () => {
  it('a normal window gives SPI near 0, from one archive request with recomputable args', async () => {
    const w = synthetic(medianRate);
    const c = spiEra5(fixtureDeps(fx));
    const out = await c.materialize(requestFor(cellOf(48.1, 11.6), 'precip.spi_3m', { tslot }));
    assert.equal(out.status, 'value', JSON.stringify(out));
    assert.equal(fx.count(PATHS.archive), 1);
    const q = fx.requests[0].query;
    assert.equal(q.get('daily'), 'precipitation_sum');
    assert.equal(q.get('timezone'), 'UTC');
    assert.equal(q.get('start_date'), new Date(Math.min(w.baseline[0].start, w.target.start) * DAY_MS).toISOString().slice(0, 10));
    if (out.status !== 'value') return;
    assert.ok(Math.abs(out.value as number) < 0.15, `SPI ${out.value}`);
    assert.equal(out.fn, 'spi_gamma@1');
    assert.equal(out.provenance.source, 'open_meteo_archive');
    assert.equal(out.tslot, tslot);
    const a = out.args as Record<string, unknown>;
    assert.equal(a.window_days, WINDOW_DAYS);
    assert.equal(a.n_years, 30);
    assert.equal(a.q, 0);
    assert.equal(a.window_end, new Date(w.target.end * DAY_MS).toISOString().slice(0, 10));
    assert.ok(Math.abs((a.total_mm as number) - medianRate * 90) < 1e-6);
    for (const k of ['alpha', 'beta', 'baseline_from', 'baseline_to']) assert.ok(a[k] !== undefined, k);
    assert.ok(Math.abs((a.alpha as number) * (a.beta as number) - 90 * (rates.reduce((s, r) => s + r, 0) / 30)) < 1e-3, 'mean = αβ');
  });

  it('a dry window gives SPI < −1.5', async () => {
    synthetic(0.5);
    const out = await spiEra5(fixtureDeps(fx)).materialize(requestFor(cellOf(10, 10), 'precip.spi_3m', { tslot }));
    assert.ok(out.status === 'value' && (out.value as number) < -1.5, JSON.stringify(out));
  });

  it('fewer than 20 baseline years with data is a typed absence', async () => {
    synthetic(medianRate, '2005-01-01');
    const out = await spiEra5(fixtureDeps(fx)).materialize(requestFor(cellOf(11, 10), 'precip.spi_3m', { tslot }));
    assert.equal(out.status, 'absence', JSON.stringify(out));
    assert.ok(out.status === 'absence' && out.reason === 'unavailable_capability' && /baseline years/.test(out.detail ?? ''));
  });

  it('unpublished days in the slot window are a retryable error, not an absence', async () => {
    const w = synthetic(medianRate);
    const inner = fx.data.daily;
    fx.data.daily = (day, v) => (dayNum(day) === w.target.end ? null : inner(day, v));
    const out = await spiEra5(fixtureDeps(fx)).materialize(requestFor(cellOf(12, 10), 'precip.spi_3m', { tslot }));
    assert.ok(out.status === 'error' && /not yet published/.test(out.reason), JSON.stringify(out));
  });

  it('an upstream 500 is an error outcome (skipped, retryable) and a slow upstream a timeout', async () => {
    synthetic(medianRate);
    fx.behave(PATHS.archive, { status: 500 });
    const out = await spiEra5(fixtureDeps(fx, { retries: 0 })).materialize(requestFor(cellOf(13, 10), 'precip.spi_3m', { tslot }));
    assert.ok(out.status === 'error' && /HTTP 500/.test(out.reason) && !out.format_mismatch, JSON.stringify(out));
    fx.reset();
    synthetic(medianRate);
    fx.behave(PATHS.archive, { delayMs: 1500 });
    const slow = await spiEra5(fixtureDeps(fx, { retries: 0, timeoutSecs: 0.3 })).materialize(requestFor(cellOf(14, 10), 'precip.spi_3m', { tslot }));
    assert.equal(slow.status, 'timeout', JSON.stringify(slow));
  });
});
