/**
 * The REST reply serializer: the bytes of `JSON.stringify(value)`, with the JSON of frozen
 * objects (served facts with their receipts, shared by every response that returns them)
 * encoded once per object instead of on every read. A warm recall's body is mostly such
 * facts, so this removes most of its serialization cost, and the body is assembled as bytes
 * from cached pieces rather than as one more large string per response. A frozen object is
 * taken to be deeply immutable: only freeze whole graphs (facts-view deep-freezes what it shares).
 */

const fragments = new WeakMap<object, Buffer>();

/**
 * The walk looks for frozen objects in the top-level object's values and in arrays down to
 * this depth (`facts`, `merged_facts`, lists of responses); everything else goes to JSON.stringify.
 */
const MAX_ARRAY_DEPTH = 3;

/** Collects text, and cached byte fragments between runs of text. */
class Sink {
  parts: Buffer[] = [];
  text = '';

  bytes(b: Buffer): void {
    if (this.text.length > 0) {
      this.parts.push(Buffer.from(this.text, 'utf8'));
      this.text = '';
    }
    this.parts.push(b);
  }

  done(): Buffer {
    if (this.text.length > 0 || this.parts.length === 0) this.parts.push(Buffer.from(this.text, 'utf8'));
    return this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
  }
}

function skipped(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

function walk(value: unknown, depth: number, out: Sink): void {
  if (value === null || typeof value !== 'object') {
    out.text += JSON.stringify(value);
    return;
  }
  if (Object.isFrozen(value)) {
    let b = fragments.get(value);
    if (b === undefined) {
      b = Buffer.from(JSON.stringify(value), 'utf8');
      fragments.set(value, b);
    }
    out.bytes(b);
    return;
  }
  if (Array.isArray(value)) {
    if (depth >= MAX_ARRAY_DEPTH) {
      out.text += JSON.stringify(value);
      return;
    }
    out.text += '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.text += ',';
      const v = value[i];
      if (skipped(v)) out.text += 'null';
      else walk(v, depth + 1, out);
    }
    out.text += ']';
    return;
  }
  // Below the top level, native JSON.stringify of a fresh object (a receipt, say) beats walking it.
  if (depth > 0 || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    out.text += JSON.stringify(value);
    return;
  }
  out.text += '{';
  let first = true;
  for (const k of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[k];
    if (skipped(v)) continue;
    out.text += (first ? '' : ',') + JSON.stringify(k) + ':';
    walk(v, depth + 1, out);
    first = false;
  }
  out.text += '}';
}

/** The UTF-8 bytes of `JSON.stringify(value)` for JSON-shaped data (`value` must serialize to something). */
export function toJsonBytes(value: unknown): Buffer {
  const out = new Sink();
  walk(value, 0, out);
  return out.done();
}

/** Exactly `JSON.stringify(value)` for JSON-shaped data (plain objects, arrays, scalars, toJSON). */
export function toJson(value: unknown): string {
  if (skipped(value)) return JSON.stringify(value);
  return toJsonBytes(value).toString('utf8');
}
