/**
 * The REST reply serializer: the text of `JSON.stringify(value)`, with the JSON of frozen
 * objects (served facts with their receipts, shared by every response that returns them)
 * kept once per object instead of re-serialized on every read. A warm recall's body is mostly
 * such facts. A frozen object is taken to be deeply immutable: only freeze whole graphs
 * (facts-view deep-freezes what it shares).
 */

const fragments = new WeakMap<object, string>();

/**
 * The walk looks for frozen objects in the top-level object's values and in arrays down to
 * this depth (`facts`, `merged_facts`, lists of responses); everything else goes to JSON.stringify.
 */
const MAX_ARRAY_DEPTH = 3;

function skipped(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

function walk(value: unknown, depth: number): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Object.isFrozen(value)) {
    let text = fragments.get(value);
    if (text === undefined) {
      text = JSON.stringify(value);
      fragments.set(value, text);
    }
    return text;
  }
  if (Array.isArray(value)) {
    if (depth >= MAX_ARRAY_DEPTH) return JSON.stringify(value);
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const v = value[i];
      out += skipped(v) ? 'null' : walk(v, depth + 1);
    }
    return out + ']';
  }
  // Below the top level, native JSON.stringify of a fresh object (a receipt, say) beats walking it.
  if (depth > 0 || typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value);
  let out = '{';
  let first = true;
  for (const k of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[k];
    if (skipped(v)) continue;
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + walk(v, depth + 1);
    first = false;
  }
  return out + '}';
}

/** Exactly `JSON.stringify(value)` for JSON-shaped data (plain objects, arrays, scalars, toJSON). */
export function toJson(value: unknown): string {
  if (skipped(value)) return JSON.stringify(value);
  return walk(value, 0);
}

/**
 * A handler for a document that cannot change once the app is ready (the OpenAPI description,
 * the tool list): encoded on its first request, then sent as that text.
 */
export function jsonOnce(build: () => unknown): (req: unknown, reply: { type(contentType: string): unknown }) => Promise<string> {
  let text: string | undefined;
  return async (_req, reply) => {
    text ??= toJson(build());
    reply.type('application/json; charset=utf-8');
    return text;
  };
}
