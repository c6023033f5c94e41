/**
 * The one validator of operation inputs and answers. REST bodies and MCP arguments go through
 * the same compiled function per schema, with the schema's defaults filled in, so an operation
 * sees the same input whichever adapter it came through. Query strings arrive as text, so
 * numbers and booleans there are coerced (their own instance: Ajv fixes coercion per instance).
 */
import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';

const options = { useDefaults: true, allErrors: false, strict: false } as const;
const strict = new Ajv({ ...options, coerceTypes: false });
const coercing = new Ajv({ ...options, coerceTypes: 'array' });
const answers = new Ajv({ allErrors: true, strict: false });

const compiled = new WeakMap<object, ValidateFunction>();
const compiledText = new WeakMap<object, ValidateFunction>();
const compiledAnswers = new WeakMap<object, ValidateFunction>();

function once(cache: WeakMap<object, ValidateFunction>, ajv: Ajv, schema: object): ValidateFunction {
  let v = cache.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    cache.set(schema, v);
  }
  return v;
}

/** The validator of a JSON body or of MCP tool arguments (no coercion, defaults filled in). */
export function jsonValidator(schema: object): ValidateFunction {
  return once(compiled, strict, schema);
}

/** The validator of a query string or path parameters: text coerced to the declared types. */
export function textValidator(schema: object): ValidateFunction {
  return once(compiledText, coercing, schema);
}

/**
 * Checks an answer against its declared schema (SVC_CHECK_RESPONSES=1). The answer is read as a
 * client reads it, after JSON encoding (undefined fields gone, toJSON applied). Returns the
 * first mismatches as text, or undefined when the answer conforms.
 */
export function answerMismatch(schema: TSchema, json: string): string | undefined {
  const validate = once(compiledAnswers, answers, schema);
  if (validate(JSON.parse(json))) return undefined;
  return (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`)
    .join('; ');
}
