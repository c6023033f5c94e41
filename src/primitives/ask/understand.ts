/**
 * Reading a question (docs/ask.md, "Routing") without touching the store or the network: time
 * expression first (so "in March" stays a month), then the place words, then the topic routing over
 * what is left. Pure and deterministic: the same question and clock give the same reading.
 */
import type { Registry } from '../../registry/registry.js';
import { extractPlace, setTopicWords, type Extraction } from './place-extract.js';
import { route, type RouteResult } from './router.js';
import { routerIndex, type RouterIndex } from './router-index.js';
import { preprocess, tokenize, type Token } from './text.js';
import { parseTime, type TimeWindow } from './time.js';

export interface Understanding {
  /** The question after contraction folding (token offsets refer to it). */
  text: string;
  tokens: Token[];
  time?: TimeWindow;
  extraction: Extraction;
  routing: RouteResult;
}

const prepared = new WeakSet<RouterIndex>();

function index(reg: Registry): RouterIndex {
  const ix = routerIndex(reg);
  if (!prepared.has(ix)) {
    const words = new Set<string>();
    for (const s of ix.single.keys()) words.add(s);
    for (const t of ix.multi) for (const s of t.stems) if (s.length > 2) words.add(s);
    setTopicWords(words);
    prepared.add(ix);
  }
  return ix;
}

function timeMask(tokens: readonly Token[], time: TimeWindow | undefined): Set<number> {
  const out = new Set<number>();
  if (!time) return out;
  for (const t of tokens) if (t.start < time.span[1] && t.end > time.span[0]) out.add(t.i);
  return out;
}

/** Tokens, time window and topic routing only (the place words are not looked up). */
export function routeQuestion(reg: Registry, q: string, now: Date): { tokens: Token[]; time?: TimeWindow; routing: RouteResult } {
  const ix = index(reg);
  const text = preprocess(q);
  const tokens = tokenize(text);
  const time = parseTime(text, now);
  return { tokens, time, routing: route(ix, tokens, timeMask(tokens, time), [], { text }) };
}

/**
 * The full reading: time, place words (offline gazetteer) and routing with both masked.
 * `placeGiven`: the request names the place outside the question (place, cell or lat and lng).
 */
export function understand(reg: Registry, q: string, now: Date, opts: { placeGiven?: boolean } = {}): Understanding {
  const ix = index(reg);
  const text = preprocess(q);
  const tokens = tokenize(text);
  const time = parseTime(text, now);
  const blocked = timeMask(tokens, time);
  const extraction = extractPlace(text, tokens, blocked);
  const masked = new Set([...blocked, ...extraction.masked]);
  const placeNamed = opts.placeGiven === true || extraction.place !== undefined || extraction.unknown !== undefined;
  return { text, tokens, time, extraction, routing: route(ix, tokens, masked, extraction.cjk, { text, placeNamed, waterFeatures: extraction.water_features }) };
}
