/** Freezing shared data graphs (served facts, prepared answers, receipt templates, the registry). */

/**
 * Freeze a graph of plain data, depth first; returns it. Typed arrays are left as they are (they
 * cannot be frozen while they hold elements), and already-frozen objects are not walked again.
 */
export function deepFreeze<T>(x: T): T {
  if (x !== null && typeof x === 'object' && !ArrayBuffer.isView(x) && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const v of Object.values(x as object)) deepFreeze(v);
  }
  return x;
}
