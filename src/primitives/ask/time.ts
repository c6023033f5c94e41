/**
 * Time expressions in a question (docs/ask.md, "Routing": "today", "last week", "in 2021", "since
 * 2020" → tslot or window, stated in the answer). Every expression becomes a UTC window
 * [start_unix, end_unix]; `reaches_now` says whether the window includes the present, which decides
 * between reading the current slot and reading stored history. Calendar arithmetic is UTC
 * throughout, and the answer says so.
 */

export interface TimeWindow {
  /** The words of the question, as written. */
  expression: string;
  kind: 'now' | 'day' | 'month' | 'year' | 'window';
  start_unix: number;
  end_unix: number;
  /** The window in words, e.g. "2021-01-01 to 2021-12-31 (UTC)". */
  label: string;
  /** The window reaches into today (UTC): the current slot of each band answers it. */
  reaches_now: boolean;
  /** Character span in the (preprocessed) question, for masking. */
  span: [number, number];
}

const DAY = 86_400;
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH_ABBR = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH_RE = `(${MONTHS.join('|')}|${MONTH_ABBR.filter((m) => m !== 'mar' && m !== 'may').join('|')}|sept)`;
const UNIT_S: Record<string, number> = { day: DAY, week: 7 * DAY, month: 30 * DAY, year: 365 * DAY };

const utc = (y: number, m = 0, d = 1) => Date.UTC(y, m, d) / 1000;
const iso = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);

function monthIndex(word: string): number {
  const w = word.toLowerCase();
  const i = MONTHS.indexOf(w);
  if (i >= 0) return i;
  return MONTH_ABBR.indexOf(w === 'sept' ? 'sep' : w);
}

function make(expression: string, kind: TimeWindow['kind'], start: number, end: number, nowS: number, span: [number, number], label?: string): TimeWindow {
  const e = Math.min(end, nowS);
  return {
    expression,
    kind,
    start_unix: Math.max(0, Math.floor(start)),
    end_unix: Math.floor(e),
    label: label ?? (iso(start) === iso(e) ? `${iso(start)} (UTC)` : `${iso(start)} to ${iso(e)} (UTC)`),
    reaches_now: e >= Math.floor(nowS / DAY) * DAY,
    span,
  };
}

type Rule = { re: RegExp; build: (m: RegExpExecArray, nowS: number, now: Date) => [TimeWindow['kind'], number, number, string?] | undefined };

const yearOk = (y: number, now: Date) => y >= 1950 && y <= now.getUTCFullYear();

const RULES: Rule[] = [
  {
    re: /\b(?:between|from)\s+(19\d\d|20\d\d)\s+(?:and|to|until|-)\s+(19\d\d|20\d\d)\b/i,
    build: (m, _n, now) => {
      const [a, b] = [Number(m[1]), Number(m[2])].sort((x, y) => x - y);
      return yearOk(a, now) ? ['window', utc(a), utc(b + 1) - 1] : undefined;
    },
  },
  {
    re: new RegExp(`\\bsince\\s+(?:${MONTH_RE}\\s+)?(19\\d\\d|20\\d\\d)\\b`, 'i'),
    build: (m, nowS, now) => {
      const y = Number(m[2]);
      if (!yearOk(y, now)) return undefined;
      return ['window', m[1] ? utc(y, monthIndex(m[1])) : utc(y), nowS];
    },
  },
  { re: /\bsince\s+(\d{4})-(\d{2})-(\d{2})\b/i, build: (m, nowS) => ['window', utc(Number(m[1]), Number(m[2]) - 1, Number(m[3])), nowS] },
  { re: /\bsince\s+(?:last|the last)\s+(week|month|year)\b/i, build: (m, nowS) => ['window', nowS - UNIT_S[m[1].toLowerCase()], nowS] },
  { re: /\bsince\s+yesterday\b/i, build: (_m, nowS) => ['window', Math.floor(nowS / DAY) * DAY - DAY, nowS] },
  {
    re: /\b(?:in\s+|over\s+|during\s+|for\s+)?(?:the\s+)?(?:last|past|previous)\s+(\d{1,3}|few|couple of)\s+(day|week|month|year)s?\b/i,
    build: (m, nowS) => {
      const n = /^\d+$/.test(m[1]) ? Number(m[1]) : m[1].toLowerCase() === 'few' ? 3 : 2;
      return ['window', nowS - n * UNIT_S[m[2].toLowerCase()], nowS];
    },
  },
  {
    re: /\b(\d{1,3}|a|one|two|three)\s+(day|week|month|year)s?\s+ago\b/i,
    build: (m, nowS) => {
      const n = ({ a: 1, one: 1, two: 2, three: 3 } as Record<string, number>)[m[1].toLowerCase()] ?? Number(m[1]);
      const day = Math.floor((nowS - n * UNIT_S[m[2].toLowerCase()]) / DAY) * DAY;
      return ['day', day, day + DAY - 1];
    },
  },
  {
    re: /\b(this|last|past)\s+(week|month|year)\b/i,
    build: (m, nowS, now) => {
      const which = m[1].toLowerCase();
      const unit = m[2].toLowerCase();
      if (unit === 'week') return ['window', nowS - 7 * DAY, nowS];
      if (unit === 'month') {
        if (which === 'this') return ['month', utc(now.getUTCFullYear(), now.getUTCMonth()), nowS];
        if (which === 'past') return ['window', nowS - 30 * DAY, nowS];
        const s = utc(now.getUTCFullYear(), now.getUTCMonth() - 1);
        return ['month', s, utc(now.getUTCFullYear(), now.getUTCMonth()) - 1];
      }
      if (which === 'this') return ['year', utc(now.getUTCFullYear()), nowS];
      if (which === 'past') return ['window', nowS - 365 * DAY, nowS];
      return ['year', utc(now.getUTCFullYear() - 1), utc(now.getUTCFullYear()) - 1];
    },
  },
  {
    re: new RegExp(`\\b(?:in|during|for|of|on)?\\s*${MONTH_RE}\\s+(19\\d\\d|20\\d\\d)\\b`, 'i'),
    build: (m, _n, now) => {
      const y = Number(m[2]);
      if (!yearOk(y, now)) return undefined;
      const mi = monthIndex(m[1]);
      return ['month', utc(y, mi), utc(y, mi + 1) - 1];
    },
  },
  {
    re: /\b(?:on\s+)?(\d{4})-(\d{2})-(\d{2})\b/i,
    build: (m) => {
      const s = utc(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
      return Number.isFinite(s) ? ['day', s, s + DAY - 1] : undefined;
    },
  },
  {
    re: new RegExp(`\\b(?:in|during|since)\\s+${MONTH_RE}\\b`, 'i'),
    build: (m, nowS, now) => {
      // A month without a year: the most recent one that has begun (or "since" it until now).
      const mi = monthIndex(m[1]);
      const y = mi <= now.getUTCMonth() ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
      if (/^since/i.test(m[0])) return ['window', utc(y, mi), nowS];
      return ['month', utc(y, mi), utc(y, mi + 1) - 1];
    },
  },
  {
    re: /\b(?:in|during|for|of|around|year)\s+(19\d\d|20\d\d)\b/i,
    build: (m, _n, now) => {
      const y = Number(m[1]);
      return yearOk(y, now) ? ['year', utc(y), utc(y + 1) - 1] : undefined;
    },
  },
  {
    re: /\byesterday\b/i,
    build: (_m, nowS) => {
      const d = Math.floor(nowS / DAY) * DAY - DAY;
      return ['day', d, d + DAY - 1];
    },
  },
  { re: /\b(?:recently|lately)\b/i, build: (_m, nowS) => ['window', nowS - 30 * DAY, nowS, undefined] },
  {
    re: /\b(?:today|tonight|this morning|this afternoon|this evening|right now|currently|at the moment|at present|presently|now)\b/i,
    build: (_m, nowS) => {
      const d = Math.floor(nowS / DAY) * DAY;
      return ['now', d, nowS, `today, ${iso(d)} (UTC)`];
    },
  },
];

/** The first time expression of the question (rules in order of specificity), if any. */
export function parseTime(text: string, now: Date): TimeWindow | undefined {
  const nowS = Math.floor(now.getTime() / 1000);
  let best: TimeWindow | undefined;
  for (const rule of RULES) {
    const m = rule.re.exec(text);
    if (!m) continue;
    const built = rule.build(m, nowS, now);
    if (!built) continue;
    const [kind, start, end, label] = built;
    const lead = m[0].match(/^\s*/)![0].length;
    best = make(m[0].trim(), kind, start, end, nowS, [m.index + lead, m.index + m[0].length], label);
    break;
  }
  return best;
}
