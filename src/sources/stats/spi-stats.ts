/**
 * Pure statistics of the Standardized Precipitation Index (McKee, Doesken and Kleist 1993; WMO
 * No. 1090): a two-parameter gamma fitted by maximum likelihood with Thom's (1958) approximation,
 * the regularized lower incomplete gamma function as its CDF, the mixed zero probability, and the
 * inverse standard normal CDF (Acklam's rational approximation). No I/O, no dates.
 */

/** SPI is clipped to ±SPI_CLIP (probabilities beyond ~0.001 are not resolvable from 30 years). */
export const SPI_CLIP = 3.09;

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 coefficients; relative error below 1e-14). */
export function lnGamma(x: number): number {
  if (!(x > 0)) throw new RangeError(`lnGamma: x must be > 0 (got ${x})`);
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x); // reflection
  const z = x - 1;
  let a = c[0];
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Regularized lower incomplete gamma P(a, x): series for x < a + 1, Lentz continued fraction otherwise. */
export function regLowerGamma(a: number, x: number): number {
  if (!(a > 0)) throw new RangeError(`regLowerGamma: a must be > 0 (got ${a})`);
  if (x <= 0) return 0;
  if (!Number.isFinite(x)) return 1;
  const lnPre = a * Math.log(x) - x - lnGamma(a);
  if (x < a + 1) {
    let ap = a;
    let del = 1 / a;
    let sum = del;
    for (let n = 0; n < 1000; n++) {
      ap += 1;
      del *= x / ap;
      sum += del;
      if (Math.abs(del) < Math.abs(sum) * 1e-15) break;
    }
    return Math.min(1, sum * Math.exp(lnPre));
  }
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return Math.max(0, 1 - Math.exp(lnPre) * h);
}

/** CDF of the gamma distribution with shape alpha and scale beta. */
export function gammaCdf(x: number, alpha: number, beta: number): number {
  return regLowerGamma(alpha, x / beta);
}

/**
 * Inverse of the standard normal CDF (Acklam 2003: rational approximations on a central region
 * and two tails, relative error below 1.15e-9 over (0, 1)).
 */
export function inverseNormalCdf(p: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`inverseNormalCdf: p must be in [0, 1] (got ${p})`);
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const pLow = 0.02425;
  let x: number;
  if (p < pLow) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - pLow) {
    const q = p - 0.5;
    const r = q * q;
    x = ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  return x;
}

/** A fitted SPI baseline: gamma shape/scale over the non-zero totals and the share of zeros. */
export interface GammaFit {
  alpha: number;
  beta: number;
  /** Share of zero totals in the baseline. */
  q: number;
  /** Baseline totals used (zeros included). */
  n: number;
}

/**
 * Maximum-likelihood gamma fit with Thom's approximation over the non-zero totals:
 * A = ln(mean) − mean(ln x), alpha = (1 + sqrt(1 + 4A/3)) / (4A), beta = mean / alpha;
 * q = zeros / n. Returns null when the fit is undefined (fewer than 2 non-zero totals, or all
 * non-zero totals equal so that A = 0).
 */
export function fitGamma(totals: readonly number[]): GammaFit | null {
  const n = totals.length;
  if (totals.some((x) => !Number.isFinite(x) || x < 0)) throw new RangeError('fitGamma: totals must be finite and ≥ 0');
  const pos = totals.filter((x) => x > 0);
  if (pos.length < 2) return null;
  const mean = pos.reduce((s, x) => s + x, 0) / pos.length;
  const meanLn = pos.reduce((s, x) => s + Math.log(x), 0) / pos.length;
  const A = Math.log(mean) - meanLn;
  if (!(A > 1e-12)) return null;
  const alpha = (1 + Math.sqrt(1 + (4 * A) / 3)) / (4 * A);
  return { alpha, beta: mean / alpha, q: (n - pos.length) / n, n };
}

/** Mixed cumulative probability H(x) = q + (1 − q) G(x; alpha, beta). */
export function mixedCdf(x: number, fit: GammaFit): number {
  return fit.q + (1 - fit.q) * gammaCdf(x, fit.alpha, fit.beta);
}

/** SPI of a total under a fit: Φ⁻¹(H(x)), clipped to ±SPI_CLIP. */
export function spiOf(total: number, fit: GammaFit): number {
  const z = inverseNormalCdf(mixedCdf(total, fit));
  return Math.max(-SPI_CLIP, Math.min(SPI_CLIP, z));
}
