/**
 * Linear shallow-water wave shoaling along a depth profile. Pure numbers only: the caller walks
 * the profile and signs the answer.
 *
 * This is the steady solution of the linear long-wave equations: each cell gets the phase speed
 * c = √(g·h), and the wave height carried from the offshore end toward the coast follows Green's
 * law H₂ = H₁·(h₁/h₂)^¼ (energy flux conserved, no refraction, no friction). Where the height
 * would exceed 0.78·h the wave is depth-limited and the height is capped there (breaking).
 * Nothing is stepped in time.
 */

/** Standard gravity, m/s². */
export const G = 9.80665;
/** Breaker index γ: a wave breaks where H > γ·h (McCowan's solitary-wave limit). */
export const BREAKER_INDEX = 0.78;

export interface ShoalCell {
  depth_m: number;
  celerity_m_s: number;
  height_m: number;
  /** True where the height was capped at γ·h. */
  breaking: boolean;
}

export interface ShoalResult {
  /** Coast first, offshore end last (the order of the input depths). */
  cells: ShoalCell[];
  /** Height at the first (most coastward) cell. */
  nearshore_height_m: number;
  /** Time for the wave to cross the profile from its offshore end to its first cell. */
  travel_time_s: number;
  /** Index of the first cell, counted from the offshore end, where the wave breaks; null if it never does. */
  breaks_at: number | null;
}

/** Phase speed of a long wave in water `depthM` deep. */
export function celerity(depthM: number): number {
  return Math.sqrt(G * depthM);
}

/**
 * Shoal a wave of height `offshoreHeightM` from the last depth toward the first. `spacingM[i]`
 * is the distance between cell i and cell i+1. Travel time uses the mean slowness of each
 * segment, Δs·(1/c_i + 1/c_{i+1})/2, which is exact for a constant depth.
 */
export function shoal(depthsM: readonly number[], spacingM: readonly number[], offshoreHeightM: number): ShoalResult {
  const n = depthsM.length;
  if (n === 0) throw new RangeError('shoal: the profile is empty');
  if (spacingM.length !== n - 1) throw new RangeError('shoal: one spacing per pair of neighbouring cells');
  if (depthsM.some((h) => !(h > 0))) throw new RangeError('shoal: every depth must be positive');
  const cells = new Array<ShoalCell>(n);
  let breaksAt: number | null = null;
  let prev: { h: number; H: number } | undefined;
  for (let i = n - 1; i >= 0; i--) {
    const h = depthsM[i];
    const greens = prev ? prev.H * (prev.h / h) ** 0.25 : offshoreHeightM;
    const cap = BREAKER_INDEX * h;
    const breaking = greens > cap;
    const H = breaking ? cap : greens;
    if (breaking && breaksAt === null) breaksAt = n - 1 - i;
    cells[i] = { depth_m: h, celerity_m_s: celerity(h), height_m: H, breaking };
    prev = { h, H };
  }
  let travel = 0;
  for (let i = 0; i < n - 1; i++) travel += (spacingM[i] * (1 / cells[i].celerity_m_s + 1 / cells[i + 1].celerity_m_s)) / 2;
  return { cells, nearshore_height_m: cells[0].height_m, travel_time_s: travel, breaks_at: breaksAt };
}
