/**
 * Checks of the registry data files: field by field per entry (every failure names the file,
 * the entry key and the field), then the references between files. Kept apart from the types
 * (types.ts) and the reading (load.ts): the checks are most of the registry's code and change
 * with the data format, not with how or where the files are read.
 */
import { TEMPO_UNIT_S } from '../protocol/tslot.js';
import {
  ALGORITHM_KINDS, ATTESTED_FUNCTION, ATTESTER_SOURCE, HUNT_RANKS, isSatelliteBand, PRIVACY_CLASSES, PROTOCOL_LEVELS, PROVENANCE_CLASSES, SOURCE_PROTOCOLS,
  TEMPOS, TOPIC_COUNT, VALUE_KINDS, type RawRegistry, type ValueKind,
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

const BAND_KEY = /^[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)*$/;
const VERSIONED_KEY = /^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*@[1-9][0-9]*$/;
const PLAIN_KEY = /^[a-z][a-z0-9_]*$/;
const CLASS_ID = /^(?:0|[1-9][0-9]*)$/;

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const show = (x: unknown): string => (x === undefined ? 'nothing' : JSON.stringify(x));

/** Typed field reads on one entry; every failure names the file, the entry key and the field. */
class Entry {
  readonly key: string;

  constructor(
    readonly file: string,
    private readonly obj: Record<string, unknown>,
    allowed: readonly string[],
    keyField = 'key',
  ) {
    const key = obj[keyField];
    if (typeof key !== 'string' || key.length === 0) throw new RegistryError(file, null, keyField, `must be a non-empty string (got ${show(key)})`);
    this.key = key;
    for (const f of Object.keys(obj)) if (!allowed.includes(f)) this.fail(f, 'unknown field');
  }

  fail(field: string | null, why: string): never {
    throw new RegistryError(this.file, this.key, field, why);
  }

  has(field: string): boolean {
    return this.obj[field] !== undefined;
  }

  raw(field: string): unknown {
    return this.obj[field];
  }

  str(field: string): string {
    const v = this.obj[field];
    if (v === undefined) this.fail(field, 'missing');
    if (typeof v !== 'string' || v.trim().length === 0) this.fail(field, `must be a non-empty string (got ${show(v)})`);
    return v;
  }

  strOrNull(field: string): string | null {
    if (!(field in this.obj)) this.fail(field, 'missing (use null for none)');
    return this.obj[field] === null ? null : this.str(field);
  }

  int(field: string, min = 0): number {
    const v = this.obj[field];
    if (v === undefined) this.fail(field, 'missing');
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) this.fail(field, `must be an integer >= ${min} (got ${show(v)})`);
    return v;
  }

  intOrNull(field: string, min = 0): number | null {
    if (!(field in this.obj)) this.fail(field, 'missing (use null for none)');
    return this.obj[field] === null ? null : this.int(field, min);
  }

  positive(field: string): number {
    const v = this.obj[field];
    if (v === undefined) this.fail(field, 'missing');
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) this.fail(field, `must be a positive number (got ${show(v)})`);
    return v;
  }

  bool(field: string): boolean {
    const v = this.obj[field];
    if (typeof v !== 'boolean') this.fail(field, v === undefined ? 'missing' : `must be a boolean (got ${show(v)})`);
    return v;
  }

  oneOf<T extends string>(field: string, values: readonly T[]): T {
    const v = this.obj[field];
    if (v === undefined) this.fail(field, 'missing');
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) this.fail(field, `must be one of ${values.join(', ')} (got ${show(v)})`);
    return v as T;
  }

  /** Array of distinct non-empty strings, at least `min` long. */
  strings(field: string, min: number): string[] {
    const v = this.obj[field];
    if (v === undefined) this.fail(field, 'missing');
    if (!Array.isArray(v)) this.fail(field, `must be an array of strings (got ${show(v)})`);
    if (v.length < min) this.fail(field, `needs at least ${min} item(s) (got ${v.length})`);
    const seen = new Set<string>();
    for (const item of v) {
      if (typeof item !== 'string' || item.trim().length === 0) this.fail(field, `items must be non-empty strings (got ${show(item)})`);
      if (seen.has(item)) this.fail(field, `duplicate item ${show(item)}`);
      seen.add(item);
    }
    return v as string[];
  }
}

/** Checks that a file holds an array of entries with unique keys in ascending order. */
function entries(file: string, raw: unknown, allowed: readonly string[], check: (e: Entry) => void): Entry[] {
  if (!Array.isArray(raw)) throw new RegistryError(file, null, null, `must be a JSON array (got ${typeof raw})`);
  const out: Entry[] = [];
  raw.forEach((item, i) => {
    if (!isObject(item)) throw new RegistryError(file, `#${i}`, null, `entries must be objects (got ${show(item)})`);
    const e = new Entry(file, item, allowed);
    if (out.some((o) => o.key === e.key)) e.fail('key', 'duplicate key');
    const prev = out[out.length - 1];
    if (prev !== undefined && prev.key > e.key) e.fail('key', `keys must be sorted: "${e.key}" comes before "${prev.key}"`);
    check(e);
    out.push(e);
  });
  return out;
}

const BAND_FIELDS = ['key', 'title', 'unit', 'tempo', 'cadence_s', 'value_kind', 'dim', 'classes', 'value_range', 'agreement_tolerance', 'privacy_class', 'provenance_class',
  'source', 'function', 'history_from_unix', 'history_to_unix', 'description', 'absence_rule', 'min_level'];

/** `agreement_tolerance`: scalar bands only, a finite number > 0 (absolute, in the band's unit). */
function checkAgreementTolerance(e: Entry, kind: ValueKind): void {
  if (!e.has('agreement_tolerance')) return;
  if (kind !== 'scalar') e.fail('agreement_tolerance', `only scalar bands have one (a ${kind} band agrees by ${kind === 'vector' ? 'cosine' : 'equality'})`);
  e.positive('agreement_tolerance');
}

/** `value_range`: [min, max] of finite numbers or null (open side), not both null, min <= max. */
function checkValueRange(e: Entry, kind: ValueKind): void {
  if (!e.has('value_range')) return;
  if (kind === 'categorical') e.fail('value_range', 'a categorical band is bounded by its classes, not a range');
  if (kind === 'record') e.fail('value_range', 'a record band holds maps, not numbers');
  const r = e.raw('value_range');
  const bound = (x: unknown) => x === null || (typeof x === 'number' && Number.isFinite(x));
  if (!Array.isArray(r) || r.length !== 2 || !r.every(bound)) e.fail('value_range', `must be [min, max] of numbers or null (got ${show(r)})`);
  const [lo, hi] = r as [number | null, number | null];
  if (lo === null && hi === null) e.fail('value_range', 'bounds neither side: leave it out instead');
  if (lo !== null && hi !== null && lo > hi) e.fail('value_range', `min ${lo} is above max ${hi}`);
}

function checkBand(e: Entry): void {
  if (!BAND_KEY.test(e.key)) e.fail('key', 'must be a namespaced band key such as indices.ndvi');
  e.str('title');
  e.str('unit');
  const tempo = e.oneOf('tempo', TEMPOS);
  const cadence = e.int('cadence_s');
  if (tempo === 'static' && cadence !== 0) e.fail('cadence_s', 'must be 0 for a static band');
  // A band is never served finer than its cadence, so the cadence must fit in one tslot unit.
  if (tempo !== 'static' && (cadence === 0 || cadence > TEMPO_UNIT_S[tempo])) {
    e.fail('cadence_s', `must be in 1..${TEMPO_UNIT_S[tempo]} for a ${tempo} band (got ${cadence})`);
  }
  const kind = e.oneOf('value_kind', VALUE_KINDS);
  if (kind === 'vector') {
    if (!e.has('dim')) e.fail('dim', 'missing: a vector band declares its dimension');
    e.int('dim', 1);
  } else if (e.has('dim')) e.fail('dim', 'only vector bands have a dimension');
  if (kind === 'categorical') {
    const classes = e.raw('classes');
    if (classes === undefined) e.fail('classes', 'missing: a categorical band declares its classes');
    if (!isObject(classes) || Object.keys(classes).length === 0) e.fail('classes', 'must be a non-empty object of class id to label');
    for (const [id, label] of Object.entries(classes)) {
      if (!CLASS_ID.test(id)) e.fail('classes', `class id ${show(id)} must be a non-negative integer in decimal`);
      if (typeof label !== 'string' || label.trim().length === 0) e.fail('classes', `label of class ${id} must be a non-empty string`);
    }
  } else if (e.has('classes')) e.fail('classes', 'only categorical bands have classes');
  checkValueRange(e, kind);
  checkAgreementTolerance(e, kind);
  e.oneOf('privacy_class', PRIVACY_CLASSES);
  e.oneOf('provenance_class', PROVENANCE_CLASSES);
  e.str('source');
  e.str('function');
  const from = e.intOrNull('history_from_unix');
  const to = e.intOrNull('history_to_unix');
  if (from !== null && to !== null && to < from) e.fail('history_to_unix', `must not precede history_from_unix (${to} < ${from})`);
  e.str('description');
  e.str('absence_rule');
  e.oneOf('min_level', PROTOCOL_LEVELS);
}

const SOURCE_FIELDS = ['key', 'name', 'provider', 'protocol', 'default_url', 'env', 'license', 'attribution', 'history'];

function checkSource(e: Entry): void {
  if (!PLAIN_KEY.test(e.key)) e.fail('key', 'must be lower-case letters, digits and underscores');
  e.str('name');
  e.str('provider');
  e.oneOf('protocol', SOURCE_PROTOCOLS);
  const url = e.str('default_url');
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    e.fail('default_url', `is not a URL (got ${show(url)})`);
  }
  if (parsed.protocol !== 'https:') e.fail('default_url', 'must be an https URL');
  const wanted = `SVC_UPSTREAM_${e.key.toUpperCase()}_URL`;
  if (e.str('env') !== wanted) e.fail('env', `must be ${wanted} (got ${show(e.raw('env'))})`);
  e.str('license');
  e.str('attribution');
  e.str('history');
}

const FUNCTION_FIELDS = ['key', 'description', 'inputs', 'output'];

function checkFunction(e: Entry): void {
  if (!VERSIONED_KEY.test(e.key)) e.fail('key', 'must be a versioned key such as normalized_difference@1');
  e.str('description');
  e.strings('inputs', 1);
  e.str('output');
}

const ALGORITHM_FIELDS = ['key', 'kind', 'bands', 'formula', 'output', 'citation', 'topic', 'event', 'resolution_m', 'variance_sources'];

function checkAlgorithm(e: Entry): void {
  if (!VERSIONED_KEY.test(e.key)) e.fail('key', 'must be a versioned key such as ndvi@1');
  e.oneOf('kind', ALGORITHM_KINDS);
  e.strings('bands', 1);
  e.str('formula');
  e.str('output');
  e.str('citation');
  e.str('topic');
  e.strOrNull('event');
  e.positive('resolution_m');
  e.strings('variance_sources', 1);
}

const TOPIC_FIELDS = ['key', 'title', 'description', 'keywords', 'phrases', 'bands', 'algorithms'];

function checkTopic(e: Entry): void {
  if (!PLAIN_KEY.test(e.key)) e.fail('key', 'must be lower-case letters, digits and underscores');
  e.str('title');
  if (e.has('description')) e.str('description');
  for (const k of e.strings('keywords', 5)) {
    if (k !== k.toLowerCase() || k !== k.trim()) e.fail('keywords', `must be lower case without outer spaces (got ${show(k)})`);
  }
  // Optional (older registries have none): the ask router reads them when present.
  if (e.has('phrases')) {
    for (const p of e.strings('phrases', 0)) {
      if (p !== p.toLowerCase() || p !== p.trim()) e.fail('phrases', `must be lower case without outer spaces (got ${show(p)})`);
    }
  }
  e.strings('bands', 1);
  e.strings('algorithms', 0);
}

const HUNT_FIELDS = ['event', 'algorithm', 'aliases', 'slow', 'rank'];

function checkHuntEvents(raw: unknown): { events: Entry[]; nyi: Map<string, string> } {
  const file = FILES.hunt_events;
  if (!isObject(raw)) throw new RegistryError(file, null, null, 'must be a JSON object with events and not_yet_implemented');
  for (const f of Object.keys(raw)) if (f !== 'events' && f !== 'not_yet_implemented') throw new RegistryError(file, null, f, 'unknown field');
  if (!Array.isArray(raw.events)) throw new RegistryError(file, null, 'events', 'must be an array');
  const names = new Map<string, string>();
  const claim = (e: Entry, field: string, name: string): void => {
    if (!PLAIN_KEY.test(name)) e.fail(field, `${show(name)} must be lower-case letters, digits and underscores`);
    const owner = names.get(name);
    if (owner !== undefined) e.fail(field, `${show(name)} is already used by event "${owner}"`);
    names.set(name, e.key);
  };
  const events = raw.events.map((item: unknown, i: number) => {
    if (!isObject(item)) throw new RegistryError(file, `#${i}`, null, `events must be objects (got ${show(item)})`);
    const e = new Entry(file, item, HUNT_FIELDS, 'event');
    claim(e, 'event', e.key);
    for (const alias of e.strings('aliases', 0)) claim(e, 'aliases', alias);
    e.bool('slow');
    const algorithm = e.strOrNull('algorithm');
    if (!('rank' in item)) e.fail('rank', 'missing (null only for an event without an algorithm)');
    if (algorithm === null && item.rank !== null) e.fail('rank', 'must be null for an event without an algorithm');
    if (algorithm !== null) e.oneOf('rank', HUNT_RANKS);
    return e;
  });
  const nyiRaw = raw.not_yet_implemented;
  if (!isObject(nyiRaw)) throw new RegistryError(file, null, 'not_yet_implemented', 'must be an object of event to workaround text');
  const nyi = new Map<string, string>();
  for (const [event, text] of Object.entries(nyiRaw)) {
    const e = events.find((x) => x.key === event);
    if (e === undefined) throw new RegistryError(file, event, 'not_yet_implemented', 'names no declared event');
    if (e.raw('algorithm') !== null) e.fail('not_yet_implemented', 'the event has an algorithm');
    if (typeof text !== 'string' || text.trim().length === 0) {
      throw new RegistryError(file, event, 'not_yet_implemented', 'workaround must be a non-empty string');
    }
    nyi.set(event, text);
  }
  for (const e of events) if (e.raw('algorithm') === null && !nyi.has(e.key)) e.fail('algorithm', 'null, but not_yet_implemented has no workaround for it');
  return { events, nyi };
}

function checkReferences(
  bands: Entry[], sources: Entry[], functions: Entry[], algorithms: Entry[], topics: Entry[], events: Entry[],
): void {
  const bandMap = new Map(bands.map((b) => [b.key, b]));
  const has = (list: Entry[], key: unknown): boolean => list.some((x) => x.key === key);
  for (const b of bands) {
    if (b.raw('source') === ATTESTER_SOURCE) {
      // Nothing upstream to fetch, so nothing but an attester can write it.
      if (b.raw('function') !== ATTESTED_FUNCTION) b.fail('source', `"${ATTESTER_SOURCE}" is the source of attest-only bands (function ${ATTESTED_FUNCTION})`);
    } else if (!has(sources, b.raw('source'))) b.fail('source', `${show(b.raw('source'))} is not a key in ${FILES.sources}`);
    if (!has(functions, b.raw('function'))) b.fail('function', `${show(b.raw('function'))} is not a key in ${FILES.functions}`);
  }
  const eventMap = new Map(events.map((e) => [e.key, e]));
  for (const a of algorithms) {
    const inputs = a.raw('bands') as string[];
    for (const k of inputs) if (!bandMap.has(k)) a.fail('bands', `"${k}" is not a key in ${FILES.bands}`);
    const variance = a.raw('variance_sources') as string[];
    for (const k of variance) if (!inputs.includes(k)) a.fail('variance_sources', `"${k}" is not one of the algorithm's bands`);
    if ((a.raw('resolution_m') as number) <= 10 && !variance.some(isSatelliteBand)) {
      a.fail('variance_sources', 'a resolution of 10 m or finer needs a radar or optical satellite band among the variance sources');
    }
    if (a.raw('kind') === 'embedding' && !inputs.some((k) => bandMap.get(k)?.raw('value_kind') === 'vector')) {
      a.fail('bands', 'an embedding algorithm needs a vector band');
    }
    const topic = topics.find((t) => t.key === a.raw('topic'));
    if (topic === undefined) a.fail('topic', `${show(a.raw('topic'))} is not a key in ${FILES.topics}`);
    if (!(topic.raw('algorithms') as string[]).includes(a.key)) a.fail('topic', `topic "${topic.key}" does not list this algorithm`);
    const event = a.raw('event');
    if (event === null) continue;
    const ev = eventMap.get(event as string);
    if (ev === undefined) a.fail('event', `${show(event)} is not an event in ${FILES.hunt_events}`);
    if (ev.raw('algorithm') !== a.key) a.fail('event', `event "${ev.key}" names algorithm ${show(ev.raw('algorithm'))}`);
    // Hunting ranks on the primary band only, so it must be a scalar that a connector can mint.
    const primary = bandMap.get(inputs[0]!)!;
    if (primary.raw('value_kind') !== 'scalar') a.fail('bands', `primary band "${primary.key}" of a hunt algorithm must be scalar`);
    if (primary.raw('function') === ATTESTED_FUNCTION) a.fail('bands', `primary band "${primary.key}" of a hunt algorithm has no materializer`);
  }
  for (const t of topics) {
    for (const k of t.raw('bands') as string[]) if (!bandMap.has(k)) t.fail('bands', `"${k}" is not a key in ${FILES.bands}`);
    for (const k of t.raw('algorithms') as string[]) if (!has(algorithms, k)) t.fail('algorithms', `"${k}" is not a key in ${FILES.algorithms}`);
  }
  for (const e of events) {
    const key = e.raw('algorithm');
    if (key === null) continue;
    const a = algorithms.find((x) => x.key === key);
    if (a === undefined) e.fail('algorithm', `${show(key)} is not a key in ${FILES.algorithms}`);
    if (a.raw('event') !== e.key) e.fail('algorithm', `algorithm "${a.key}" declares event ${show(a.raw('event'))}`);
  }
}

/** Checks the six parsed data files together; throws RegistryError at the first defect. */
export function checkRegistry(raw: RawRegistry): void {
  const bands = entries(FILES.bands, raw.bands, BAND_FIELDS, checkBand);
  const sources = entries(FILES.sources, raw.sources, SOURCE_FIELDS, checkSource);
  const functions = entries(FILES.functions, raw.functions, FUNCTION_FIELDS, checkFunction);
  const algorithms = entries(FILES.algorithms, raw.algorithms, ALGORITHM_FIELDS, checkAlgorithm);
  const topics = entries(FILES.topics, raw.topics, TOPIC_FIELDS, checkTopic);
  if (topics.length !== TOPIC_COUNT) throw new RegistryError(FILES.topics, null, null, `must declare exactly ${TOPIC_COUNT} topics (got ${topics.length})`);
  const hunt = checkHuntEvents(raw.hunt_events);
  checkReferences(bands, sources, functions, algorithms, topics, hunt.events);
}
