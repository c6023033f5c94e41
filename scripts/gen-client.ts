/**
 * Generates packages/client/src/operations.gen.ts from the operation table (OPERATIONS in
 * src/api/ops/index.ts): per operation its name, method and path, whether its answer carries a
 * receipt, and TypeScript types for its input and output, emitted as text from the operations'
 * JSON Schemas (TypeBox schemas are plain JSON Schema objects). The client imports nothing of
 * the server: only this text, so it stays browser-safe. Large object types that recur (receipts,
 * fact_meta entries, facts) are emitted once as named types.
 *
 * Run: node --import tsx scripts/gen-client.ts [--check]   (npm run gen:client)
 * --check exits 1 when the file on disk differs (test/architecture/client-operations.test.ts
 * checks the same in the test suite).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Operation } from '../src/api/operations.js';
import { OPERATIONS } from '../src/api/ops/index.js';

export const GENERATED = fileURLToPath(new URL('../packages/client/src/operations.gen.ts', import.meta.url));

type Schema = Record<string, unknown>;

/** Members of the client class: an operation of the same name would shadow them. */
const RESERVED = new Set([
  'call',
  'callVerified',
  'verifyAnswer',
  'url',
  'bearer',
  'attest',
  'scopeBearer',
  'withBearer',
  'writeRecords',
  'writeNotes',
  'writeEdges',
  'writeAliases',
  'responder',
  'manifests',
  'constructor',
]);
/** An object type recurring at least this often, and at least this long as JSON, is named. */
const HOIST_MIN_COUNT = 2;
const HOIST_MIN_CHARS = 240;

const isObj = (x: unknown): x is Schema => typeof x === 'object' && x !== null && !Array.isArray(x);
const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('') || 'T';
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const propName = (k: string) => (IDENT.test(k) ? k : JSON.stringify(k));

function isObjectSchema(s: Schema): boolean {
  return s.type === 'object' && !('anyOf' in s);
}

/** One line of JSDoc from a description (never closing the comment early). */
function doc(text: unknown, indent: string): string {
  if (typeof text !== 'string' || text.trim() === '') return '';
  const clean = text
    .replace(/\*\//g, '*\\/')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  return `${indent}/** ${clean} */\n`;
}

class Emitter {
  /** JSON of an object schema → how often it occurs and the name hint of its first occurrence. */
  private counts = new Map<string, { n: number; hint: string }>();
  /** Hoisted JSON → type name. */
  private names = new Map<string, string>();
  private taken = new Set<string>();
  /** Named types in the order they were first emitted. */
  readonly declarations: string[] = [];
  private declared = new Set<string>();

  reserve(name: string): void {
    this.taken.add(name);
  }

  /**
   * Whether types are emitted for a request (a property with a default may be left out: the
   * responder fills it in) or for an answer (it is always there).
   */
  mode: 'input' | 'output' = 'output';

  private key(s: Schema): string {
    return `${this.mode}:${JSON.stringify(s)}`;
  }

  /** First pass: count the object schemas under `s`. */
  count(s: unknown, hint: string): void {
    if (Array.isArray(s)) return s.forEach((x) => this.count(x, hint));
    if (!isObj(s)) return;
    if (isObjectSchema(s)) {
      const key = this.key(s);
      const c = this.counts.get(key);
      if (c) c.n++;
      else this.counts.set(key, { n: 1, hint });
    }
    if (isObj(s.properties)) for (const [k, v] of Object.entries(s.properties)) this.count(v, k);
    if (isObj(s.patternProperties)) for (const v of Object.values(s.patternProperties)) this.count(v, `${hint}Entry`);
    if (isObj(s.additionalProperties)) this.count(s.additionalProperties, `${hint}Entry`);
    if (s.items !== undefined) this.count(s.items, `${hint}Item`);
    if (Array.isArray(s.anyOf)) this.count(s.anyOf, hint);
  }

  private hoisted(s: Schema): string | undefined {
    if (!isObjectSchema(s)) return undefined;
    const key = this.key(s);
    const c = this.counts.get(key);
    if (!c || c.n < HOIST_MIN_COUNT || key.length < HOIST_MIN_CHARS) return undefined;
    let name = this.names.get(key);
    if (name === undefined) {
      const base = pascal(c.hint);
      name = base;
      for (let i = 2; this.taken.has(name); i++) name = `${base}${i}`;
      this.taken.add(name);
      this.names.set(key, name);
    }
    if (!this.declared.has(name)) {
      this.declared.add(name);
      const body = this.objectType(s, '');
      this.declarations.push(`${doc(s.description, '')}export type ${name} = ${body};\n`);
    }
    return name;
  }

  /** The TypeScript type of `s`, its lines indented by `indent`. */
  type(s: unknown, indent: string): string {
    if (!isObj(s)) return 'unknown';
    const named = this.hoisted(s);
    if (named) return named;
    if (Array.isArray(s.anyOf)) return union(s.anyOf.map((x) => this.type(x, indent)));
    if ('const' in s) return JSON.stringify(s.const);
    if (Array.isArray(s.enum)) return union(s.enum.map((x) => JSON.stringify(x)));
    const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];
    if (types.length === 0) return 'unknown';
    return union(types.map((t) => this.single(t, s, indent)));
  }

  private single(t: string, s: Schema, indent: string): string {
    switch (t) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array': {
        const item = s.items === undefined ? 'unknown' : this.type(s.items, indent);
        return /^[\w.]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
      }
      case 'object':
        return this.objectType(s, indent);
      default:
        return 'unknown';
    }
  }

  private objectType(s: Schema, indent: string): string {
    const props = isObj(s.properties) ? Object.entries(s.properties) : [];
    const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
    const pattern = isObj(s.patternProperties) ? Object.values(s.patternProperties)[0] : undefined;
    const extra = s.additionalProperties;
    if (props.length === 0) {
      if (pattern !== undefined) return `{ [key: string]: ${this.type(pattern, indent)} }`;
      if (isObj(extra)) return `{ [key: string]: ${this.type(extra, indent)} }`;
      return extra === false ? 'Record<string, never>' : '{ [key: string]: unknown }';
    }
    const inner = `${indent}  `;
    const optional = (k: string, v: unknown) => !required.has(k) || (this.mode === 'input' && isObj(v) && 'default' in v);
    const lines = props.map(([k, v]) => `${doc(isObj(v) ? v.description : undefined, inner)}${inner}${propName(k)}${optional(k, v) ? '?' : ''}: ${this.type(v, inner)};\n`);
    // Declared properties keep their types; anything else the schema admits is unknown.
    if (extra !== false || pattern !== undefined) lines.push(`${inner}[key: string]: unknown;\n`);
    return `{\n${lines.join('')}${indent}}`;
  }
}

function union(parts: string[]): string {
  const seen = [...new Set(parts)];
  if (seen.includes('unknown')) return 'unknown';
  return seen.join(' | ');
}

/** Whether an answer carries a receipt: at the top of every shape, somewhere, or nowhere. */
export function signedness(output: Schema): 'required' | 'optional' | 'none' {
  const branches = Array.isArray(output.anyOf) ? (output.anyOf as Schema[]) : [output];
  const top = branches.map((b) => ({
    has: isObj(b.properties) && 'receipt' in b.properties,
    req: Array.isArray(b.required) && (b.required as string[]).includes('receipt'),
  }));
  if (top.every((b) => b.req)) return 'required';
  return JSON.stringify(output).includes('"receipt"') ? 'optional' : 'none';
}

/** Whether a request may be empty: every required property has a default. */
function allOptional(input: Schema): boolean {
  const props = isObj(input.properties) ? input.properties : {};
  return !Array.isArray(input.required) || input.required.every((k) => isObj(props[k]) && 'default' in props[k]);
}

export function renderClientOperations(ops: readonly Operation[] = OPERATIONS): string {
  const e = new Emitter();
  const roots = ops.map((op) => {
    if (RESERVED.has(op.name)) throw new Error(`operation ${op.name}: the name is a member of SvcClient; rename one of them`);
    if (!IDENT.test(op.name)) throw new Error(`operation ${op.name}: not an identifier`);
    const base = pascal(op.name);
    const names = { input: `${base}Input`, output: `${base}Output` };
    e.reserve(names.input);
    e.reserve(names.output);
    return { op, names };
  });
  for (const { op, names } of roots) {
    // A root schema other operations share is named after its first operation's request or answer.
    e.mode = 'input';
    e.count(op.input, names.input.replace(/Input$/, 'Request'));
    e.mode = 'output';
    e.count(op.output, names.output.replace(/Output$/, 'Answer'));
  }
  const perOp: string[] = [];
  for (const { op, names } of roots) {
    e.mode = 'input';
    const input = e.type(op.input, '');
    e.mode = 'output';
    const output = e.type(op.output, '');
    const about = [op.summary, op.description].filter(Boolean).join(' — ');
    perOp.push(`/** Input of ${op.name} (${op.method} ${op.path}${op.method === 'GET' ? ', as query parameters' : ''}). */\nexport type ${names.input} = ${input};\n`);
    perOp.push(`${doc(`Output of ${op.name}: ${about}`, '')}export type ${names.output} = ${output};\n`);
  }
  const table = roots.map(({ op }) => `  ${op.name}: { method: '${op.method}', path: '${op.path}', signed: '${signedness(op.output as Schema)}' },\n`).join('');
  const types = roots.map(({ op, names }) => `  ${op.name}: { input: ${names.input}; output: ${names.output} };\n`).join('');
  const methods = roots
    .map(({ op, names }) => {
      const param = allOptional(op.input as Schema) ? `input: ${names.input} = {}` : `input: ${names.input}`;
      return `${doc(`${op.method} ${op.path}: ${op.summary}`, '  ')}  ${op.name}(${param}, options?: CallOptions): Promise<${names.output}> {\n    return this.call('${op.name}', input, options);\n  }\n`;
    })
    .join('\n');
  return `/**
 * GENERATED by scripts/gen-client.ts from the operation table (src/api/ops/index.ts): do not
 * edit. Run \`npm run gen:client\` after changing an operation; the test suite fails while this
 * file is stale (test/architecture/client-operations.test.ts).
 */
import type { CallOptions } from './types.js';

/** Where an operation is served and whether its answer carries a receipt. */
export interface OperationInfo {
  method: 'GET' | 'POST';
  path: string;
  /** required: every answer carries a top-level receipt; optional: some do (or nested ones); none: never signed. */
  signed: 'required' | 'optional' | 'none';
}

export const OPERATION_TABLE = {
${table}} as const satisfies Record<string, OperationInfo>;

${e.declarations.join('\n')}
${perOp.join('\n')}
/** Input and output type of every operation, by name. */
export interface OperationTypes {
${types}}

export type OperationName = keyof OperationTypes;
export type OperationInput<N extends OperationName> = OperationTypes[N]['input'];
export type OperationOutput<N extends OperationName> = OperationTypes[N]['output'];

/** One typed method per operation, named as the operation (the MCP tool suffix); all go through \`call\`. */
export abstract class SvcOperations {
  abstract call<N extends OperationName>(name: N, input: OperationInput<N>, options?: CallOptions): Promise<OperationOutput<N>>;

${methods}}
`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const text = renderClientOperations();
  let current = '';
  try {
    current = readFileSync(GENERATED, 'utf8');
  } catch {
    // not generated yet
  }
  if (process.argv.includes('--check')) {
    if (current !== text) {
      process.stderr.write('packages/client/src/operations.gen.ts is stale: run `npm run gen:client`\n');
      process.exit(1);
    }
    process.stdout.write('packages/client/src/operations.gen.ts is up to date\n');
  } else if (current === text) {
    process.stdout.write('packages/client/src/operations.gen.ts: already up to date\n');
  } else {
    writeFileSync(GENERATED, text);
    process.stdout.write(`packages/client/src/operations.gen.ts: written (${OPERATIONS.length} operations, ${text.length} characters)\n`);
  }
}
