/**
 * JSON text kept beside frozen objects, so a serializer can write it instead of encoding the
 * object again: served facts are shared by every read that returns them, and re-issued receipts
 * are assembled as text and object together. Only frozen objects take text, so it cannot go
 * stale; the text must be exactly `JSON.stringify(value)`.
 */
const texts = new WeakMap<object, string>();

/** Keep `text` as the JSON of the frozen `value`; returns `value`. */
export function attachJson<T extends object>(value: T, text: string): T {
  if (!Object.isFrozen(value)) throw new TypeError('attachJson: only a frozen object can keep its JSON text');
  texts.set(value, text);
  return value;
}

/** The JSON text kept for `value`, if any. */
export function attachedJson(value: object): string | undefined {
  return texts.get(value);
}
