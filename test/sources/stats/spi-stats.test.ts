import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fitGamma, gammaCdf, inverseNormalCdf, lnGamma, mixedCdf, spiOf, SPI_CLIP } from '../../../src/sources/stats/spi-stats.js';

const close = (a: number, b: number, tol: number, what = '') => assert.ok(Math.abs(a - b) <= tol, `${what} ${a} vs ${b} (tol ${tol})`);

describe('spi statistics', () => {
  it('inverse normal CDF at known points', () => {
    close(inverseNormalCdf(0.5), 0, 1e-12, 'Φ⁻¹(0.5)');
    close(inverseNormalCdf(0.975), 1.959963985, 1e-8, 'Φ⁻¹(0.975)');
    close(inverseNormalCdf(0.025), -1.959963985, 1e-8, 'Φ⁻¹(0.025)');
    close(inverseNormalCdf(0.8413447461), 1, 1e-8, 'Φ⁻¹(Φ(1))');
    close(inverseNormalCdf(0.001), -3.090232306, 1e-8, 'Φ⁻¹(0.001), lower tail');
    assert.equal(inverseNormalCdf(0), -Infinity);
    assert.throws(() => inverseNormalCdf(1.2));
  });

  it('lnGamma and the gamma CDF agree with closed forms', () => {
    close(lnGamma(5), Math.log(24), 1e-12, 'lnΓ(5)');
    close(lnGamma(0.5), Math.log(Math.sqrt(Math.PI)), 1e-12, 'lnΓ(0.5)');
    // shape 1 is the exponential: G(x) = 1 − exp(−x/β)
    for (const x of [0.1, 1, 2.5, 10]) close(gammaCdf(x, 1, 2), 1 - Math.exp(-x / 2), 1e-12, `exp CDF at ${x}`);
    // shape 2: G(x) = 1 − (1 + x/β) exp(−x/β) (both series and continued fraction branches)
    for (const x of [0.5, 3, 20]) close(gammaCdf(x, 2, 1), 1 - (1 + x) * Math.exp(-x), 1e-12, `Erlang-2 CDF at ${x}`);
    // chi-square with 4 d.o.f. (gamma 2, scale 2): 95th percentile 9.487729
    close(gammaCdf(9.487729, 2, 2), 0.95, 1e-6, 'χ²₄ 0.95');
    assert.equal(gammaCdf(0, 3, 1), 0);
  });

  it("Thom's fit, zero share, and SPI of the median ≈ 0, dry window strongly negative", () => {
    // 30 deterministic baseline totals 180…441 mm (spread of 3-month sums) plus two zero years
    const totals = Array.from({ length: 30 }, (_, i) => 180 + ((i * 7) % 30) * 9);
    const fit = fitGamma(totals)!;
    const mean = totals.reduce((s, x) => s + x, 0) / totals.length;
    const A = Math.log(mean) - totals.reduce((s, x) => s + Math.log(x), 0) / totals.length;
    close(fit.alpha, (1 + Math.sqrt(1 + (4 * A) / 3)) / (4 * A), 1e-12, 'alpha');
    close(fit.alpha * fit.beta, mean, 1e-9, 'mean = αβ');
    assert.equal(fit.q, 0);
    const sorted = [...totals].sort((a, b) => a - b);
    const median = (sorted[14] + sorted[15]) / 2;
    close(spiOf(median, fit), 0, 0.15, 'SPI of the median total');
    assert.ok(spiOf(60, fit) < -2, 'a third of the driest total is extreme drought');
    assert.equal(spiOf(0, fit), -SPI_CLIP, 'a zero total against a baseline without zeros is clipped');
    assert.ok(spiOf(900, fit) > 2);

    const withZeros = fitGamma([0, 0, ...totals.slice(2)])!;
    close(withZeros.q, 2 / 30, 1e-12, 'q');
    close(mixedCdf(0, withZeros), 2 / 30, 1e-12, 'H(0) = q');
    assert.equal(fitGamma([0, 0, 5]), null, 'fewer than two non-zero totals');
    assert.equal(fitGamma([7, 7, 7]), null, 'all equal: A = 0');
  });
});
