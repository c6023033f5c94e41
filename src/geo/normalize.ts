/**
 * Text normalisation for place matching (docs/locate.md, "The cascade"): case-, diacritic- and
 * punctuation-insensitive keys, class words ("river", "lake", …) and a bounded edit distance for
 * the fuzzy fallback.
 */

/** Letters that NFKD does not decompose but people type without their stroke or ligature. */
const FOLD: Record<string, string> = { ß: 'ss', æ: 'ae', ø: 'o', đ: 'd', ł: 'l', ı: 'i', œ: 'oe', þ: 'th', ð: 'd', ħ: 'h' };
const FOLD_RE = /[ßæøđłıœþðħ]/g;
// Latin/Greek/Cyrillic combining diacritics, Hebrew points and Arabic harakat: dropped. Other
// marks (Devanagari vowel signs, Thai, …) carry the spelling and are kept.
const DIACRITICS_RE = /[\u0300-\u036f\u0591-\u05c7\u064b-\u065f\u0670]/g;
const APOSTROPHES_RE = /['’‘`´ʻʼ‛]/g;
// Punctuation and spaces (a short explicit list is much cheaper than \p{…} classes on 27k names).
const SEPARATORS_RE = /[\s!-&(-/:-@[-^_{-~\u00a0-\u00bf\u2010-\u2027\u3000-\u3003\u300c-\u300f\uff08\uff09\uff0c]+/g;

/** Matching key of a name: lower case, no diacritics or apostrophes, punctuation as single spaces. */
export function normalizeName(s: string): string {
  // Fast paths for plain ASCII (most GeoNames names): native lower-casing, no Unicode tables.
  const lower = s.toLowerCase();
  if (CLEAN_RE.test(lower)) return lower;
  if (ASCII_RE.test(lower))
    return lower
      .replace(/['`]/g, '')
      .replace(/[^a-z0-9]+/g, ' ')
      .trim();
  return normalizeUnicode(s);
}
const CLEAN_RE = /^[a-z0-9]+(?: [a-z0-9]+)*$/;
const ASCII_RE = /^[\x00-\x7f]*$/;

function normalizeUnicode(s: string): string {
  return s
    .normalize('NFKD')
    .toLowerCase()
    .replace(DIACRITICS_RE, '')
    .replace(FOLD_RE, (c) => FOLD[c])
    .replace(APOSTROPHES_RE, '')
    .replace(SEPARATORS_RE, ' ')
    .trim();
}

/** A feature class a query can ask for, with the table kinds that satisfy it. */
export interface FeatureClass {
  label: string;
  words: readonly string[];
  kinds: readonly string[];
}

export const FEATURE_CLASSES: readonly FeatureClass[] = [
  { label: 'national park', words: ['national park', 'nationalpark', 'parque nacional', 'parc national'], kinds: ['national_park', 'park'] },
  { label: 'river', words: ['river', 'rio', 'fleuve', 'fluss'], kinds: ['river', 'estuary', 'delta'] },
  { label: 'lake', words: ['lake', 'lac', 'lago', 'loch', 'lough', 'lakes'], kinds: ['lake', 'salt_flat'] },
  { label: 'mountains', words: ['mountains', 'mountain', 'mount', 'mt', 'mts', 'range', 'peak', 'volcano'], kinds: ['mountain_range', 'peak', 'volcano', 'highlands', 'plateau'] },
  { label: 'desert', words: ['desert', 'desierto'], kinds: ['desert', 'salt_flat'] },
  { label: 'sea', words: ['sea', 'ocean', 'gulf', 'bay', 'strait', 'channel'], kinds: ['sea', 'ocean', 'gulf', 'bay', 'strait', 'estuary', 'canal'] },
  { label: 'island', words: ['island', 'islands', 'isle', 'isla', 'ile', 'archipelago', 'atoll'], kinds: ['island', 'archipelago', 'artificial_island'] },
  { label: 'forest', words: ['forest', 'rainforest', 'woods', 'jungle'], kinds: ['forest', 'national_park'] },
];

const STOP_WORDS = new Set(['the', 'of', 'de', 'del', 'la', 'le']);

/** The class a normalized query asks for (first class word found as whole tokens), if any. */
export function detectClass(norm: string): FeatureClass | undefined {
  const padded = ` ${norm} `;
  for (const c of FEATURE_CLASSES) for (const w of c.words) if (padded.includes(` ${w} `)) return c;
  return undefined;
}

/** The query without its class words and stop words ("river thames" → "thames"). */
export function stripClassWords(norm: string, cls: FeatureClass): string {
  let t = ` ${norm} `;
  for (const w of cls.words) t = t.split(` ${w} `).join(' ');
  return t
    .split(' ')
    .filter((w) => w && !STOP_WORDS.has(w))
    .join(' ');
}

/** True when the candidate's own name carries one of the class words (so "Mount Vernon" is no mismatch). */
export function nameHasClassWord(normName: string, cls: FeatureClass): boolean {
  const padded = ` ${normName} `;
  return cls.words.some((w) => padded.includes(` ${w} `));
}

/** Spelling variants tried when the exact key misses: saint/st, leading "the", "city of", "mt". */
export function variants(norm: string): string[] {
  const out = new Set<string>();
  const add = (s: string) => {
    if (s && s !== norm) out.add(s);
  };
  add(norm.replace(/^the /, ''));
  add(norm.replace(/^city of /, ''));
  add(norm.replace(/ city$/, ''));
  add(norm.replace(/^st /, 'saint '));
  add(norm.replace(/^saint /, 'st '));
  add(norm.replace(/^sankt /, 'saint '));
  add(norm.replace(/^mt /, 'mount '));
  add(norm.replace(/^mount /, 'mt '));
  add(norm.replace(/ /g, ''));
  return [...out];
}

/** Optimal-string-alignment distance, or `max + 1` as soon as it must exceed `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const n = b.length;
  let prev2 = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = cur[0];
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2] + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[n];
}

const SCRIPTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/[\u3040-\u30ff]/, 'ja'],
  [/[\uac00-\ud7af\u1100-\u11ff]/, 'ko'],
  [/[\u4e00-\u9fff]/, 'zh'],
  [/[\u0400-\u04ff]/, 'ru'],
  [/[\u0600-\u06ff]/, 'ar'],
  [/[\u0590-\u05ff]/, 'he'],
  [/[\u0370-\u03ff]/, 'el'],
  [/[\u0900-\u097f]/, 'hi'],
  [/[\u0980-\u09ff]/, 'bn'],
  [/[\u0b80-\u0bff]/, 'ta'],
  [/[\u0c00-\u0c7f]/, 'te'],
  [/[\u0c80-\u0cff]/, 'kn'],
  [/[\u0d00-\u0d7f]/, 'ml'],
  [/[\u0d80-\u0dff]/, 'si'],
  [/[\u0e00-\u0e7f]/, 'th'],
  [/[\u0e80-\u0eff]/, 'lo'],
  [/[\u0f00-\u0fff]/, 'bo'],
  [/[\u1000-\u109f]/, 'my'],
  [/[\u1780-\u17ff]/, 'km'],
  [/[\u10a0-\u10ff]/, 'ka'],
  [/[\u0530-\u058f]/, 'hy'],
  [/[\u1200-\u137f]/, 'am'],
];

/** A language tag for a non-Latin name by its script (country refines ar→fa, ru→uk, hi→ne); undefined for Latin. */
export function scriptLanguage(name: string, country?: string): string | undefined {
  for (const [re, lang] of SCRIPTS) {
    if (!re.test(name)) continue;
    if (lang === 'ar' && (country === 'IR' || country === 'AF')) return 'fa';
    if (lang === 'ru' && country === 'UA') return 'uk';
    if (lang === 'ru' && country === 'MN') return 'mn';
    if (lang === 'ru' && country === 'KZ') return 'kk';
    if (lang === 'hi' && country === 'NP') return 'ne';
    return lang;
  }
  return undefined;
}
