/**
 * A one-step-ahead autoregressive forecast with fixed coefficients: ŷ(t+1) = a₁·y(t) + a₂·y(t−1)
 * + a₃·y(t−2). The coefficients are set, not fitted, so the forecast is reproducible from the
 * three inputs alone; it is a persistence-weighted smoother, not a learned model.
 */

/** Weights of y(t), y(t−1), y(t−2), in that order; they sum to 1 so a constant series stays constant. */
export const AR_COEFFICIENTS = [0.6, 0.3, 0.1] as const;

/**
 * Forecast from a series ordered oldest first; uses its last three values. Undefined when fewer
 * than three are given: an answer from two values would be made up.
 */
export function arPredict(series: readonly number[], coefficients: readonly number[] = AR_COEFFICIENTS): number | undefined {
  const k = coefficients.length;
  if (series.length < k) return undefined;
  let y = 0;
  for (let i = 0; i < k; i++) y += coefficients[i] * series[series.length - 1 - i];
  return y;
}
