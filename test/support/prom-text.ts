/**
 * A strict parser of the Prometheus text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/), for tests: it throws on any
 * line the format does not allow instead of guessing.
 *
 * Why not a package: `parse-prometheus-text-format` (the npm parser the brief named) installs
 * and parses counters and gauges, but folds every labelled histogram into one bucket map and
 * drops its `_sum` and `_count` (flattenMetrics keeps those only for unlabelled series), and it
 * accepts malformed lines (`garbage line here` parses as an untyped sample); no other maintained
 * parser is on the registry. So the rules are checked here:
 * - `# HELP name text` and `# TYPE name type` (counter, gauge, histogram, summary, untyped), at
 *   most one of each per family, TYPE before the family's first sample; other `#` lines are comments;
 * - samples `name{label="value",…} value [timestamp]`: names `[a-zA-Z_:][a-zA-Z0-9_:]*`, label
 *   names `[a-zA-Z_][a-zA-Z0-9_]*` (no `__` prefix), values with `\\`, `\"`, `\n` escapes only,
 *   a float (or NaN, ±Inf in any case, as Go's ParseFloat), an optional integer timestamp;
 * - a family's lines are contiguous; a histogram's samples are `<name>_bucket` (with `le`),
 *   `<name>_sum` and `<name>_count`; a counter's sample names are its family name;
 * - no series (name and label set) appears twice; the text ends with a newline.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help?: string;
  samples: Sample[];
}

export interface HistogramSeries {
  /** The series' labels, `le` excluded. */
  labels: Record<string, string>;
  /** [upper bound, cumulative count] in the order written. */
  buckets: Array<[number, number]>;
  sum: number;
  count: number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export class ExpositionError extends Error {}

function fail(lineNo: number, line: string, why: string): never {
  throw new ExpositionError(`line ${lineNo}: ${why}: ${JSON.stringify(line.slice(0, 200))}`);
}

/**
 * A float as Prometheus reads it (Go's strconv.ParseFloat): decimal or exponent notation, and
 * NaN, Inf and Infinity in any case with an optional sign (prom-client writes `Nan`).
 */
function parseValue(s: string): number | undefined {
  const special = /^([+-]?)(nan|inf|infinity)$/i.exec(s);
  if (special) return special[2].toLowerCase() === 'nan' ? Number.NaN : special[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined;
  return Number(s);
}

/** Label set `{a="x",b="y"}` starting at `line[at] === '{'`; returns the labels and the index after `}`. */
function parseLabels(line: string, at: number, lineNo: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  for (;;) {
    if (line[i] === '}') return { labels, end: i + 1 };
    const nameStart = i;
    while (i < line.length && /[a-zA-Z0-9_]/.test(line[i])) i++;
    const name = line.slice(nameStart, i);
    if (!LABEL_NAME.test(name) || name.startsWith('__')) fail(lineNo, line, `bad label name ${JSON.stringify(name)}`);
    if (line[i] !== '=' || line[i + 1] !== '"') fail(lineNo, line, `expected ="…" after label ${name}`);
    i += 2;
    let value = '';
    for (;;) {
      if (i >= line.length) fail(lineNo, line, `unterminated value of label ${name}`);
      const c = line[i];
      if (c === '"') break;
      if (c === '\\') {
        const e = line[i + 1];
        if (e === '\\') value += '\\';
        else if (e === '"') value += '"';
        else if (e === 'n') value += '\n';
        else fail(lineNo, line, `bad escape \\${e} in label ${name}`);
        i += 2;
      } else {
        value += c;
        i++;
      }
    }
    i++; // the closing quote
    if (name in labels) fail(lineNo, line, `label ${name} twice`);
    labels[name] = value;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') fail(lineNo, line, `expected , or } after label ${name}`);
  }
}

function unescapeHelp(s: string, lineNo: number, line: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '\\') {
      out += s[i];
      continue;
    }
    const e = s[++i];
    if (e === '\\') out += '\\';
    else if (e === 'n') out += '\n';
    else fail(lineNo, line, `bad escape \\${e} in HELP`);
  }
  return out;
}

/** The family a sample name belongs to, given the family currently open. */
function familyOfSample(name: string, current: Family | undefined): string {
  if (current) {
    if (name === current.name) return current.name;
    if (current.type === 'histogram' && (name === `${current.name}_bucket` || name === `${current.name}_sum` || name === `${current.name}_count`)) return current.name;
    if (current.type === 'summary' && (name === `${current.name}_sum` || name === `${current.name}_count`)) return current.name;
  }
  return name;
}

/** Parse `text`; throws ExpositionError on the first violation. Families by name. */
export function parseExposition(text: string): Map<string, Family> {
  if (text.length > 0 && !text.endsWith('\n')) throw new ExpositionError('the exposition must end with a newline');
  const families = new Map<string, Family>();
  const finished = new Set<string>();
  const seriesSeen = new Set<string>();
  let current: Family | undefined;
  const open = (name: string, lineNo: number, line: string): Family => {
    if (current?.name === name) return current;
    if (current) finished.add(current.name);
    if (finished.has(name)) fail(lineNo, line, `family ${name} is not contiguous`);
    let f = families.get(name);
    if (!f) {
      f = { name, type: 'untyped', samples: [] };
      families.set(name, f);
    }
    current = f;
    return f;
  };
  const declared = new Map<string, { help: boolean; type: boolean }>();
  const lines = text.split('\n');
  lines.pop(); // after the final newline
  lines.forEach((line, idx) => {
    const lineNo = idx + 1;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (!m) return; // a comment
      const [, kind, name, rest = ''] = m;
      if (!METRIC_NAME.test(name)) fail(lineNo, line, `bad metric name ${name}`);
      const f = open(name, lineNo, line);
      const d = declared.get(name) ?? { help: false, type: false };
      if (kind === 'HELP') {
        if (d.help) fail(lineNo, line, `second HELP for ${name}`);
        d.help = true;
        f.help = unescapeHelp(rest, lineNo, line);
      } else {
        if (d.type) fail(lineNo, line, `second TYPE for ${name}`);
        if (f.samples.length > 0) fail(lineNo, line, `TYPE of ${name} after its samples`);
        if (!TYPES.has(rest.trim() as MetricType)) fail(lineNo, line, `unknown type ${JSON.stringify(rest)}`);
        d.type = true;
        f.type = rest.trim() as MetricType;
      }
      declared.set(name, d);
      return;
    }
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!nameMatch) fail(lineNo, line, 'a sample must start with a metric name');
    const name = nameMatch[0];
    let i = name.length;
    let labels: Record<string, string> = {};
    if (line[i] === '{') ({ labels, end: i } = parseLabels(line, i, lineNo));
    if (line[i] !== ' ') fail(lineNo, line, 'expected a space before the value');
    const rest = line
      .slice(i + 1)
      .trim()
      .split(/\s+/);
    if (rest.length < 1 || rest.length > 2) fail(lineNo, line, 'expected a value and at most a timestamp');
    const value = parseValue(rest[0]);
    if (value === undefined) fail(lineNo, line, `bad value ${JSON.stringify(rest[0])}`);
    if (rest.length === 2 && !/^-?\d+$/.test(rest[1])) fail(lineNo, line, `bad timestamp ${JSON.stringify(rest[1])}`);
    const f = open(familyOfSample(name, current), lineNo, line);
    if (f.type === 'histogram') {
      if (name === `${f.name}_bucket` && labels.le === undefined) fail(lineNo, line, 'a histogram bucket needs le');
      if (name === f.name) fail(lineNo, line, 'a histogram has only _bucket, _sum and _count samples');
    }
    if (f.type === 'counter' && name !== f.name) fail(lineNo, line, `counter sample ${name} outside its family ${f.name}`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seriesSeen.has(key)) fail(lineNo, line, 'a series appears twice');
    seriesSeen.add(key);
    f.samples.push({ name, labels, value });
  });
  return families;
}

/** The series of a histogram family: buckets by label set (without `le`), with sum and count. */
export function histogramSeries(f: Family): HistogramSeries[] {
  if (f.type !== 'histogram') throw new ExpositionError(`${f.name} is a ${f.type}, not a histogram`);
  const byKey = new Map<string, HistogramSeries>();
  for (const s of f.samples) {
    const { le, ...labels } = s.labels;
    const key = JSON.stringify(Object.entries(labels).sort());
    let h = byKey.get(key);
    if (!h) {
      h = { labels, buckets: [], sum: Number.NaN, count: Number.NaN };
      byKey.set(key, h);
    }
    if (s.name === `${f.name}_bucket`) {
      const bound = parseValue(le);
      if (bound === undefined) throw new ExpositionError(`${f.name}: bad le ${JSON.stringify(le)}`);
      h.buckets.push([bound, s.value]);
    } else if (s.name === `${f.name}_sum`) h.sum = s.value;
    else if (s.name === `${f.name}_count`) h.count = s.value;
  }
  return [...byKey.values()];
}

/** The sum of the samples `name` whose labels include `labels` (0 when there is none). */
export function sampleValue(families: Map<string, Family>, family: string, name: string, labels: Record<string, string> = {}): number {
  const f = families.get(family);
  if (!f) return 0;
  let total = 0;
  for (const s of f.samples) if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) total += s.value;
  return total;
}
