/**
 * Derivation functions this responder recomputes (docs/writes.md, "Derivations"): a derivative
 * naming one of these keys in `derivation.fn` is accepted only when its value equals the function
 * of its stored parents' values, in the order the derivative lists them. Every other registered
 * function is accepted as signed (its parents still resolve here and share the derivative's cell).
 * Keys are entries of registry/data/functions.json.
 */

export interface DeriveFunction {
  /** Parents the function takes (inclusive bounds). */
  arity: { min: number; max: number };
  /** The value over the parents' scalar values, in the derivative's parent order. */
  compute(values: readonly number[]): number;
}

export const DERIVE_FUNCTIONS: ReadonlyMap<string, DeriveFunction> = new Map<string, DeriveFunction>([
  // The first parent minus the second (conventionally newer minus older).
  ['nd.delta@1', { arity: { min: 2, max: 2 }, compute: (v) => v[0] - v[1] }],
  // Arithmetic mean, summed in parent order.
  [
    'mean@1',
    {
      arity: { min: 2, max: 64 },
      compute: (v) => {
        let sum = 0;
        for (const x of v) sum += x;
        return sum / v.length;
      },
    },
  ],
]);

/**
 * Bands whose values this responder recomputes, and the one function each accepts. A derivative
 * in one of them naming any other function (say attested@1) would skip the recomputation and
 * still read as a checked result.
 */
export const RECOMPUTED_BANDS: ReadonlyMap<string, string> = new Map([
  ['derived.delta', 'nd.delta@1'],
  ['derived.mean', 'mean@1'],
]);

/**
 * The function a derivative in `band` may name, or why not (docs/writes.md, "Derivations"): a
 * recomputed band accepts only its function; any other derived.* band any registered function;
 * a band a source or materializer produces only the function that produces it (its registry
 * `function`), so a derivative cannot pass for a reading of that band under another recipe.
 */
export function derivativeFunctionRefusal(band: { key: string; function?: string }, fn: string): { allowed: string[]; reason: string } | null {
  const only = RECOMPUTED_BANDS.get(band.key);
  if (only !== undefined) {
    return fn === only ? null : { allowed: [only], reason: `${band.key} holds ${only} results only: its value is recomputed from the parents here, and another function would skip that check` };
  }
  if (band.key.startsWith('derived.')) return null;
  return fn === band.function
    ? null
    : {
        allowed: band.function ? [band.function] : [],
        reason: `${band.key} is produced by ${band.function ?? 'no registered function'}; a derivative there names that function (other derived values go to a derived.* band)`,
      };
}

/** Relative tolerance of a recomputation: |got − expected| ≤ 1e-9 · max(1, |expected|). */
export const RECOMPUTE_TOLERANCE = 1e-9;

export function withinTolerance(expected: number, got: number): boolean {
  return Math.abs(got - expected) <= RECOMPUTE_TOLERANCE * Math.max(1, Math.abs(expected));
}
