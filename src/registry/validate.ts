/**
 * Checks of the registry data files. The shape of each entry is declared once, as a TypeBox
 * schema per entry kind (its fields, their types, the value lists of types.ts, key patterns),
 * and checked by one compiled Ajv validator per schema; the first failure becomes a
 * RegistryError naming the file, the entry key and the field. What a schema does not say well
 * stays code: keys unique and sorted within a file, the rules between fields of one entry, the
 * topic count and the references between files. Kept apart from the types (types.ts) and the
 * reading (load.ts): the checks change with the data format, not with how the files are read.
 */
import { type Static, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { TEMPO_UNIT_S } from '../protocol/tslot.js';
import {
  ALGORITHM_KINDS,
  ATTESTED_FUNCTION,
  ATTESTER_SOURCE,
  HUNT_RANKS,
  isSatelliteBand,
  PRIVACY_CLASSES,
  PROTOCOL_LEVELS,
  PROVENANCE_CLASSES,
  SOURCE_PROTOCOLS,
  TEMPOS,
  TOPIC_COUNT,
  VALUE_KINDS,
  type AlgorithmEntry,
  type BandEntry,
  type FunctionEntry,
  type HuntEvent,
  type RawRegistry,
  type SourceEntry,
  type TopicEntry,
} from './types.js';

/** A defect in the registry data; the message names the file, the entry key and the field. */
export class RegistryError extends Error {
  constructor(
    readonly file: string,
    readonly entryKey: string | null,
    readonly field: string | null,
    readonly why: string,
  ) {
    const where = [file, entryKey === null ? null : `entry "${entryKey}"`, field === null ? null : `field "${field}"`];
    super(`registry ${where.filter((x) => x !== null).join(': ')}: ${why}`);
    this.name = 'RegistryError';
  }
}

/** The data file of each part of the registry (under ./data). */
export const FILES = {
  bands: 'bands.json',
  sources: 'sources.json',
  functions: 'functions.json',
  algorithms: 'algorithms.json',
  topics: 'topics.json',
  hunt_events: 'hunt_events.json',
} as const;

// ---------------------------------------------------------------------------------------------
// The schemas. `errorMessage` (ignored by Ajv) is the reason a failure of that schema gives.

const BAND_KEY = '^[a-z][a-z0-9_]*(?:\\.[A-Za-z0-9_]+)*$';
const VERSIONED_KEY = '^[a-z][a-z0-9_]*(?:\\.[a-z0-9_]+)*@[1-9][0-9]*$';
const PLAIN_KEY = '^[a-z][a-z0-9_]*$';
const CLASS_ID = '^(?:0|[1-9][0-9]*)$';
const PLAIN = 'lower-case letters, digits and underscores';

/** A string with something besides white space. */
const Text = Type.String({ minLength: 1, pattern: '\\S', errorMessage: 'must be a non-empty string' });
const Key = (pattern: string, what: string) => Type.String({ pattern, errorMessage: `must be ${what}` });
/** Distinct texts, at least `minItems` of them. */
const Texts = (minItems: number) => Type.Array(Text, { minItems, uniqueItems: true });
const Int = (minimum: number) => Type.Integer({ minimum, maximum: Number.MAX_SAFE_INTEGER, errorMessage: `must be an integer >= ${minimum}` });
/** JSON has no NaN or Infinity, so a number is finite. */
const Positive = Type.Number({ exclusiveMinimum: 0, errorMessage: 'must be a positive number' });
const OneOf = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values], errorMessage: `must be one of ${values.join(', ')}` });
const Nullable = <S extends TSchema>(schema: S) => Type.Union([schema, Type.Null()]);
const Entry = <P extends TProperties>(fields: P) => Type.Object(fields, { additionalProperties: false });

const BandSchema = Entry({
  key: Key(BAND_KEY, 'a namespaced band key such as indices.ndvi'),
  title: Text,
  unit: Text,
  description: Text,
  absence_rule: Text,
  tempo: OneOf(TEMPOS),
  cadence_s: Int(0),
  value_kind: OneOf(VALUE_KINDS),
  dim: Type.Optional(Int(1)),
  classes: Type.Optional(
    Type.Record(Type.String({ pattern: CLASS_ID }), Text, {
      minProperties: 1,
      additionalProperties: false,
      errorMessage: 'must map class ids (non-negative integers in decimal) to labels',
    }),
  ),
  value_range: Type.Optional(Type.Tuple([Nullable(Type.Number()), Nullable(Type.Number())], { errorMessage: 'must be [min, max] of numbers or null' })),
  agreement_tolerance: Type.Optional(Positive),
  privacy_class: OneOf(PRIVACY_CLASSES),
  provenance_class: OneOf(PROVENANCE_CLASSES),
  min_level: OneOf(PROTOCOL_LEVELS),
  source: Text,
  function: Text,
  history_from_unix: Nullable(Int(0)),
  history_to_unix: Nullable(Int(0)),
});

const SourceSchema = Entry({
  key: Key(PLAIN_KEY, PLAIN),
  name: Text,
  provider: Text,
  protocol: OneOf(SOURCE_PROTOCOLS),
  default_url: Text,
  env: Text,
  license: Text,
  attribution: Text,
  history: Text,
});

const FunctionSchema = Entry({
  key: Key(VERSIONED_KEY, 'a versioned key such as normalized_difference@1'),
  description: Text,
  inputs: Texts(1),
  output: Text,
});

const AlgorithmSchema = Entry({
  key: Key(VERSIONED_KEY, 'a versioned key such as ndvi@1'),
  kind: OneOf(ALGORITHM_KINDS),
  bands: Texts(1),
  formula: Text,
  output: Text,
  citation: Text,
  topic: Text,
  event: Nullable(Text),
  resolution_m: Positive,
  variance_sources: Texts(1),
});

const TopicSchema = Entry({
  key: Key(PLAIN_KEY, PLAIN),
  title: Text,
  description: Type.Optional(Text),
  keywords: Texts(5),
  // Optional (older registries have none): the ask router reads them when present.
  phrases: Type.Optional(Texts(0)),
  bands: Texts(1),
  algorithms: Texts(0),
});

const HuntEventSchema = Entry({
  event: Key(PLAIN_KEY, PLAIN),
  algorithm: Nullable(Text),
  aliases: Type.Array(Key(PLAIN_KEY, PLAIN), { uniqueItems: true }),
  slow: Type.Boolean(),
  rank: Nullable(OneOf(HUNT_RANKS)),
});

/** hunt_events.json as a whole; each event is then checked against `HuntEventSchema`. */
const HuntFileSchema = Type.Object(
  {
    events: Type.Array(Type.Unknown()),
    not_yet_implemented: Type.Record(Type.String(), Text, { errorMessage: 'must map events to workaround text' }),
  },
  { additionalProperties: false, errorMessage: 'must be an object with events and not_yet_implemented' },
);

// ---------------------------------------------------------------------------------------------
// Running a schema, and its first failure as a RegistryError.

// verbose: each error carries the failing schema (its errorMessage) and value (the "got").
const ajv = new Ajv({ allErrors: false, strict: false, verbose: true });
const compiled = new Map<TSchema, ValidateFunction>();

type Fail = (field: string | null, why: string) => never;
const failer =
  (file: string, key: string | null): Fail =>
  (field, why) => {
    throw new RegistryError(file, key, field, why);
  };
const show = (x: unknown): string => (x === undefined ? 'nothing' : JSON.stringify(x));
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const allowsNull = (schema: unknown): boolean => Array.isArray(schema) && schema.some((s) => (s as TSchema).type === 'null');
const A_TYPE: Record<string, string> = { string: 'a string', integer: 'an integer', number: 'a number', boolean: 'a boolean', array: 'an array', object: 'an object' };

/** Checks `data` against `schema` (compiled on first use); the first failure goes to `fail`. */
function conform(schema: TSchema, data: unknown, fail: Fail): void {
  let validate = compiled.get(schema);
  if (validate === undefined) compiled.set(schema, (validate = ajv.compile(schema)));
  if (validate(data)) return;
  const errors = validate.errors ?? [];
  const e = errors[0]!;
  const [field = null, ...below] = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  // A missing or unknown field of the object itself is named as the field.
  const named: string | undefined = field === null ? (e.params.missingProperty ?? e.params.additionalProperty) : undefined;
  if (named !== undefined) {
    if (e.keyword !== 'required') fail(named, 'unknown field');
    fail(named, allowsNull(e.parentSchema?.properties?.[named]?.anyOf) ? 'missing (use null for none)' : 'missing');
  }
  // A failed `Nullable(x)` reports x's failure first, then the union's.
  const orNull = errors.some((u) => u.keyword === 'anyOf' && u.instancePath === e.instancePath && allowsNull(u.schema)) ? ' or null' : '';
  // Below the field: `#i` for an item of an array, `"k"` for a key of an object.
  let node = field === null ? data : (data as Record<string, unknown>)[field];
  const where = below.map((s) => {
    const step = Array.isArray(node) ? `#${s}` : show(s);
    node = (node as Record<string, unknown>)[s];
    return `${step}: `;
  });
  fail(field, `${where.join('')}${reason(e, orNull)}`);
}

/** The reason of one failure: the schema's `errorMessage` where it has one. */
function reason(e: ErrorObject, orNull: string): string {
  const { keyword, params, data } = e;
  const custom = (e.parentSchema as { errorMessage?: string } | undefined)?.errorMessage;
  if (keyword === 'required') return `missing ${show(params.missingProperty)}`;
  if (keyword === 'additionalProperties') return `${custom ?? 'unknown field'} (got key ${show(params.additionalProperty)})`;
  if (keyword === 'uniqueItems') return `duplicate item ${show((data as unknown[])[params.j as number])}`;
  if (keyword === 'minItems' && custom === undefined) return `needs at least ${params.limit} item(s) (got ${(data as unknown[]).length})`;
  const what = custom ?? (keyword === 'type' ? `must be ${A_TYPE[params.type as string] ?? params.type}` : e.message);
  return `${what}${orNull} (got ${show(data)})`;
}

// ---------------------------------------------------------------------------------------------
// The entries of a file, and the rules between the fields of one entry.

/**
 * The entries of one file, each checked against `schema` and then by `rules`; the keys (field
 * `keyField`) unique and, unless `sorted` is false, ascending.
 */
function entries<S extends TSchema>(file: string, raw: unknown, schema: S, rules: (entry: Static<S>, fail: Fail) => void, keyField = 'key', sorted = true): Static<S>[] {
  if (!Array.isArray(raw)) throw new RegistryError(file, null, null, `must be a JSON array (got ${typeof raw})`);
  const keys: string[] = [];
  return raw.map((item: unknown, i) => {
    const named = isObject(item) ? item[keyField] : undefined;
    const key = typeof named === 'string' && named !== '' ? named : `#${i}`;
    const fail: Fail = failer(file, key);
    conform(schema, item, fail);
    if (keys.includes(key)) fail(keyField, 'duplicate key');
    const prev = keys[keys.length - 1];
    if (sorted && prev !== undefined && prev > key) fail(keyField, `keys must be sorted: "${key}" comes before "${prev}"`);
    keys.push(key);
    rules(item as Static<S>, fail);
    return item as Static<S>;
  });
}

function bandRules(b: BandEntry, fail: Fail): void {
  const { tempo, cadence_s: cadence, value_kind: kind, value_range: range } = b;
  if (tempo === 'static' && cadence !== 0) fail('cadence_s', 'must be 0 for a static band');
  // A band is never served finer than its cadence, so the cadence must fit in one tslot unit.
  if (tempo !== 'static' && (cadence === 0 || cadence > TEMPO_UNIT_S[tempo])) {
    fail('cadence_s', `must be in 1..${TEMPO_UNIT_S[tempo]} for a ${tempo} band (got ${cadence})`);
  }
  if (kind === 'vector' && b.dim === undefined) fail('dim', 'missing: a vector band declares its dimension');
  if (kind !== 'vector' && b.dim !== undefined) fail('dim', 'only vector bands have a dimension');
  if (kind === 'categorical' && b.classes === undefined) fail('classes', 'missing: a categorical band declares its classes');
  if (kind !== 'categorical' && b.classes !== undefined) fail('classes', 'only categorical bands have classes');
  if (range !== undefined) {
    if (kind === 'categorical') fail('value_range', 'a categorical band is bounded by its classes, not a range');
    if (kind === 'record') fail('value_range', 'a record band holds maps, not numbers');
    const [lo, hi] = range;
    if (lo === null && hi === null) fail('value_range', 'bounds neither side: leave it out instead');
    if (lo !== null && hi !== null && lo > hi) fail('value_range', `min ${lo} is above max ${hi}`);
  }
  // Absolute, in the band's unit; other kinds agree by cosine (vector) or equality.
  if (b.agreement_tolerance !== undefined && kind !== 'scalar') {
    fail('agreement_tolerance', `only scalar bands have one (a ${kind} band agrees by ${kind === 'vector' ? 'cosine' : 'equality'})`);
  }
  const { history_from_unix: from, history_to_unix: to } = b;
  if (from !== null && to !== null && to < from) fail('history_to_unix', `must not precede history_from_unix (${to} < ${from})`);
}

function sourceRules(s: SourceEntry, fail: Fail): void {
  if (!URL.canParse(s.default_url)) fail('default_url', `is not a URL (got ${show(s.default_url)})`);
  if (new URL(s.default_url).protocol !== 'https:') fail('default_url', 'must be an https URL');
  const wanted = `SVC_UPSTREAM_${s.key.toUpperCase()}_URL`;
  if (s.env !== wanted) fail('env', `must be ${wanted} (got ${show(s.env)})`);
}

function algorithmRules(a: AlgorithmEntry, fail: Fail): void {
  const outside = a.variance_sources.find((k) => !a.bands.includes(k));
  if (outside !== undefined) fail('variance_sources', `"${outside}" is not one of the algorithm's bands`);
  if (a.resolution_m <= 10 && !a.variance_sources.some(isSatelliteBand)) {
    fail('variance_sources', 'a resolution of 10 m or finer needs a radar or optical satellite band among the variance sources');
  }
}

function topicRules(t: TopicEntry, fail: Fail): void {
  for (const field of ['keywords', 'phrases'] as const) {
    const bad = t[field]?.find((w) => w !== w.toLowerCase() || w !== w.trim());
    if (bad !== undefined) fail(field, `must be lower case without outer spaces (got ${show(bad)})`);
  }
}

function checkHuntEvents(raw: unknown): HuntEvent[] {
  const file = FILES.hunt_events;
  conform(HuntFileSchema, raw, failer(file, null));
  const { events: list, not_yet_implemented: nyi } = raw as Static<typeof HuntFileSchema>;
  const names = new Map<string, string>(); // every event name and alias to its event
  const events: HuntEvent[] = entries(
    file,
    list,
    HuntEventSchema,
    (e, fail) => {
      const claim = (field: string, name: string): void => {
        const owner = names.get(name);
        if (owner !== undefined) fail(field, `${show(name)} is already used by event "${owner}"`);
        names.set(name, e.event);
      };
      claim('event', e.event);
      for (const alias of e.aliases) claim('aliases', alias);
      if (e.algorithm === null && e.rank !== null) fail('rank', 'must be null for an event without an algorithm');
      if (e.algorithm !== null && e.rank === null) fail('rank', `must be one of ${HUNT_RANKS.join(', ')} for an event with an algorithm (got null)`);
    },
    'event',
    false,
  );
  for (const event of Object.keys(nyi)) {
    const e = events.find((x) => x.event === event);
    if (e === undefined) throw new RegistryError(file, event, 'not_yet_implemented', 'names no declared event');
    if (e.algorithm !== null) throw new RegistryError(file, event, 'not_yet_implemented', 'the event has an algorithm');
  }
  const todo = events.find((e) => e.algorithm === null && !Object.hasOwn(nyi, e.event));
  if (todo !== undefined) throw new RegistryError(file, todo.event, 'algorithm', 'null, but not_yet_implemented has no workaround for it');
  return events;
}

// ---------------------------------------------------------------------------------------------
// References between the files.

interface Checked {
  bands: BandEntry[];
  sources: SourceEntry[];
  functions: FunctionEntry[];
  algorithms: AlgorithmEntry[];
  topics: TopicEntry[];
  events: HuntEvent[];
}

function checkReferences(r: Checked): void {
  const byKey = <T extends { key: string }>(list: T[]): Map<string, T> => new Map(list.map((x) => [x.key, x]));
  const [bands, sources, functions, algorithms, topics] = [byKey(r.bands), byKey(r.sources), byKey(r.functions), byKey(r.algorithms), byKey(r.topics)];
  const events = new Map(r.events.map((e) => [e.event, e]));
  const nowhere = (key: string, file: string): string => `${show(key)} is not a key in ${file}`;
  for (const b of r.bands) {
    const fail: Fail = failer(FILES.bands, b.key);
    if (b.source === ATTESTER_SOURCE) {
      // Nothing upstream to fetch, so nothing but an attester can write it.
      if (b.function !== ATTESTED_FUNCTION) fail('source', `"${ATTESTER_SOURCE}" is the source of attest-only bands (function ${ATTESTED_FUNCTION})`);
    } else if (!sources.has(b.source)) fail('source', nowhere(b.source, FILES.sources));
    if (!functions.has(b.function)) fail('function', nowhere(b.function, FILES.functions));
  }
  for (const a of r.algorithms) {
    const fail: Fail = failer(FILES.algorithms, a.key);
    const band = a.bands.find((k) => !bands.has(k));
    if (band !== undefined) fail('bands', nowhere(band, FILES.bands));
    if (a.kind === 'embedding' && !a.bands.some((k) => bands.get(k)?.value_kind === 'vector')) fail('bands', 'an embedding algorithm needs a vector band');
    const topic = topics.get(a.topic);
    if (topic === undefined) fail('topic', nowhere(a.topic, FILES.topics));
    if (!topic.algorithms.includes(a.key)) fail('topic', `topic "${topic.key}" does not list this algorithm`);
    if (a.event === null) continue;
    const ev = events.get(a.event);
    if (ev === undefined) fail('event', `${show(a.event)} is not an event in ${FILES.hunt_events}`);
    if (ev.algorithm !== a.key) fail('event', `event "${ev.event}" names algorithm ${show(ev.algorithm)}`);
    // Hunting ranks on the primary band only, so it must be a scalar that a connector can mint.
    const primary = bands.get(a.bands[0]!)!;
    if (primary.value_kind !== 'scalar') fail('bands', `primary band "${primary.key}" of a hunt algorithm must be scalar`);
    if (primary.function === ATTESTED_FUNCTION) fail('bands', `primary band "${primary.key}" of a hunt algorithm has no materializer`);
  }
  for (const t of r.topics) {
    const fail: Fail = failer(FILES.topics, t.key);
    const band = t.bands.find((k) => !bands.has(k));
    if (band !== undefined) fail('bands', nowhere(band, FILES.bands));
    const algorithm = t.algorithms.find((k) => !algorithms.has(k));
    if (algorithm !== undefined) fail('algorithms', nowhere(algorithm, FILES.algorithms));
  }
  for (const e of r.events) {
    if (e.algorithm === null) continue;
    const fail: Fail = failer(FILES.hunt_events, e.event);
    const a = algorithms.get(e.algorithm);
    if (a === undefined) fail('algorithm', nowhere(e.algorithm, FILES.algorithms));
    if (a.event !== e.event) fail('algorithm', `algorithm "${a.key}" declares event ${show(a.event)}`);
  }
}

/** Checks the six parsed data files together; throws RegistryError at the first defect. */
export function checkRegistry(raw: RawRegistry): void {
  const noRules = (): void => {};
  const bands: BandEntry[] = entries(FILES.bands, raw.bands, BandSchema, bandRules);
  const sources: SourceEntry[] = entries(FILES.sources, raw.sources, SourceSchema, sourceRules);
  const functions: FunctionEntry[] = entries(FILES.functions, raw.functions, FunctionSchema, noRules);
  const algorithms: AlgorithmEntry[] = entries(FILES.algorithms, raw.algorithms, AlgorithmSchema, algorithmRules);
  const topics: TopicEntry[] = entries(FILES.topics, raw.topics, TopicSchema, topicRules);
  if (topics.length !== TOPIC_COUNT) throw new RegistryError(FILES.topics, null, null, `must declare exactly ${TOPIC_COUNT} topics (got ${topics.length})`);
  checkReferences({ bands, sources, functions, algorithms, topics, events: checkHuntEvents(raw.hunt_events) });
}
