/**
 * Seeded synthetic multi-session conversations for evaluating note-search recall (pure and
 * deterministic: the same seed and options give the same corpus, byte for byte).
 *
 * A conversation is two speakers talking over 20 to 30 sessions spread across February to
 * November 2023, 15 to 25 turns a session. About 40 life events are told, each in one first-person
 * evidence turn ("I finally pitched a tent by the lake last weekend ..."), often followed by the
 * other speaker echoing the words without adding anything. Around them: chit-chat built from
 * common words, the same concepts mentioned about friends, relatives and strangers in other
 * months, and second-hop news about people met at an event ("Sam moved to Denver").
 *
 * Questions name the speaker in the third person and use a different paraphrase of the concept
 * than the evidence turn about half the time; see `questions.ts` for the types.
 *
 * The held-out split is fixed here, before any tuning: its seed, its size, and the held-out
 * portion of the lexicon (lexicon.ts), which dev conversations never use.
 */
import { createHash } from 'node:crypto';
import { seededRandom } from '../harness.js';
import {
  BABY_NAMES,
  CITIES,
  COMPANIES,
  COMPANIONS,
  CONCEPTS,
  type Concept,
  type LexiconPortion,
  MONTHS,
  OTHERS,
  PLACES,
  type Person,
  REASONS,
  RELATIVES,
  SHOPS,
  SPEAKERS,
  WHEN,
  formsFor,
  render,
} from './lexicon.js';
import { fillerText, followUpText, mentionText, type Rng, rng, secondHopText } from './phrasing.js';
import { buildQuestions, type Question } from './questions.js';

export type { Question, QuestionType } from './questions.js';

export type TurnKind = 'evidence' | 'follow_up' | 'second_hop' | 'mention' | 'filler';

export interface Turn {
  id: string;
  conversation: string;
  /** `<conversation>-sNN` */
  session: string;
  speaker: string;
  text: string;
  /** ISO date-time, UTC, second precision. */
  observed_at: string;
  /** What the generator put here (diagnostics only; never sent to the service). */
  kind: TurnKind;
}

export interface Session {
  id: string;
  started_at: string;
}

/** A life event as the generator planned it (questions.ts reads these). */
export interface LifeEvent {
  speaker: 0 | 1;
  concept: Concept;
  form: string;
  session: number;
  slot: number;
  turn: string;
  month: number;
  second?: { person: Person; kind: SecondHopKind; turn: string };
}

export type SecondHopKind = 'move' | 'job' | 'baby' | 'shop';

export interface Conversation {
  id: string;
  seed: number;
  lexicon: LexiconPortion;
  speakers: [Person, Person];
  sessions: Session[];
  turns: Turn[];
  questions: Question[];
}

export interface CorpusOptions {
  conversations: number;
  lexicon: LexiconPortion;
  /** Conversation ids are `<prefix><index>`; default `c`. */
  prefix?: string;
}

export interface SplitSpec extends CorpusOptions {
  seed: number;
}

/** The dev split: tune against these. */
export const DEV_SPLIT: SplitSpec = { seed: 20_230_101, conversations: 6, lexicon: 'dev', prefix: 'c' };
/** The held-out split: other seeds and the held-out lexicon portion. Fixed; never tuned against. */
export const HELD_OUT_SPLIT: SplitSpec = { seed: 91_730_417, conversations: 4, lexicon: 'held_out', prefix: 'h' };

export const splitCorpus = (s: SplitSpec): Conversation[] => generateCorpus(s.seed, s);

/** Conversations from `seed`; conversation i has a seed of its own derived from both. */
export function generateCorpus(seed: number, opts: CorpusOptions): Conversation[] {
  const prefix = opts.prefix ?? 'c';
  return Array.from({ length: opts.conversations }, (_, i) => generateConversation(`${prefix}${i}`, conversationSeed(seed, i), opts.lexicon));
}

export function conversationSeed(seed: number, i: number): number {
  let h = Math.imul(seed ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b);
  h ^= h >>> 13;
  return Math.imul(h, 0xc2b2ae35) | 0;
}

/** A stable hash of conversations (turns and questions), for pinning a corpus. */
export function corpusHash(convs: readonly Conversation[]): string {
  return createHash('sha256').update(JSON.stringify(convs)).digest('hex');
}

// ---- layout ---------------------------------------------------------------------------------

const YEAR_START = Date.UTC(2023, 1, 1); // 1 February 2023
const SPAN_DAYS = 302; // to the end of November
const DAY_MS = 86_400_000;
const pad2 = (n: number) => String(n).padStart(2, '0');
const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

interface Slot {
  kind: TurnKind;
  text: string;
  /** Concept mentioned, if any (for the time-window distractor check). */
  concept?: string;
}

interface Layout {
  sessions: Array<{ start: number; month: number; slots: Array<Slot | null> }>;
}

/** Speaker of slot i of session s: they alternate, and the sessions alternate who opens. */
const speakerAt = (s: number, i: number): 0 | 1 => ((s + i) % 2) as 0 | 1;

function freeSlot(r: Rng, lay: Layout, speaker: 0 | 1, opts: { sessions?: number[]; needNext?: boolean }): [number, number] | null {
  const pool = opts.sessions ?? lay.sessions.map((_, i) => i);
  if (pool.length === 0) return null;
  const order = r.shuffle([...pool]);
  for (const s of order) {
    const slots = lay.sessions[s].slots;
    const free: number[] = [];
    for (let i = 0; i < slots.length; i++) {
      if (slots[i] !== null || speakerAt(s, i) !== speaker) continue;
      if (opts.needNext && (i + 1 >= slots.length || slots[i + 1] !== null)) continue;
      free.push(i);
    }
    if (free.length > 0) return [s, r.pick(free)];
  }
  return null;
}

const EVIDENCE_TEMPLATES = [
  'Guess what? I finally {past} {when}! {Comp} came with me and we ended up at {place}. I did it because {reason}.',
  'So {when} I {past} at {place}. {Comp} was there too. Honestly, {reason}, so it felt right.',
  'Big news: I {past}! It happened {when} at {place}, and {comp} joined me. {Reason}.',
  'I {past} {when}, over at {place} with {comp}. {Reason}, you know?',
  "Not sure if I told you, but I {past} {when}. It was at {place} and {comp} tagged along. I'd been wanting to because {reason}.",
  'Okay so I {past} {when}. {Comp} and I went to {place} for it. Why? {Reason}.',
];

const MET_TEMPLATES = [' I met {P} there, {s} is really sweet.', " That's where I met {P}, we clicked right away.", ' Oh and I met someone there, {P}, {s} was so kind to me.'];

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const subj = (p: Person) => (p.gender === 'f' ? 'she' : 'he');

function fillTemplate(t: string, vars: Record<string, string>): string {
  return t.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = vars[k.toLowerCase()];
    if (v === undefined) throw new Error(`template variable ${k}`);
    return k.charAt(0) === k.charAt(0).toUpperCase() ? cap(v) : v;
  });
}

function generateConversation(id: string, seed: number, portion: LexiconPortion): Conversation {
  const r = rng(seededRandom(seed));
  const speakers = r.shuffle([...SPEAKERS]).slice(0, 2) as [Person, Person];
  const others = r.shuffle([...OTHERS]);
  let nextOther = 0;
  const freshPerson = (): Person => others[nextOther++ % others.length];
  const anyOther = (): Person => r.pick(others);

  // Sessions: distinct days, sorted, each at a time of day; 15 to 25 slots.
  const nSessions = r.int(20, 30);
  const days = new Set<number>();
  while (days.size < nSessions) days.add(r.int(0, SPAN_DAYS));
  const lay: Layout = {
    sessions: [...days]
      .sort((a, b) => a - b)
      .map((d) => {
        const start = YEAR_START + d * DAY_MS + r.int(8, 21) * 3_600_000 + r.int(0, 59) * 60_000;
        return { start, month: new Date(start).getUTCMonth(), slots: new Array<Slot | null>(r.int(15, 25)).fill(null) };
      }),
  };
  const sessionId = (s: number) => `${id}-s${pad2(s + 1)}`;
  const turnId = (s: number, i: number) => `${sessionId(s)}-t${pad2(i + 1)}`;

  // Events: 8 concepts both speakers live through (the speaker questions), the rest one speaker's.
  const nEvents = r.int(36, 44);
  const concepts = r.shuffle([...CONCEPTS]);
  const shared = concepts.slice(0, 8);
  const plan: Array<{ speaker: 0 | 1; concept: Concept }> = [];
  for (const c of shared) plan.push({ speaker: 0, concept: c }, { speaker: 1, concept: c });
  for (const c of concepts.slice(8, 8 + nEvents - plan.length)) plan.push({ speaker: r.int(0, 1) as 0 | 1, concept: c });

  const events: LifeEvent[] = [];
  for (const p of plan) {
    const followUp = r.chance(0.6);
    const at = freeSlot(r, lay, p.speaker, { needNext: followUp }) ?? freeSlot(r, lay, p.speaker, {});
    if (!at) continue;
    const [s, i] = at;
    const form = r.pick(formsFor(p.concept, portion));
    const e: LifeEvent = { speaker: p.speaker, concept: p.concept, form, session: s, slot: i, turn: turnId(s, i), month: lay.sessions[s].month };
    events.push(e);
    lay.sessions[s].slots[i] = { kind: 'evidence', text: '', concept: p.concept.id }; // text below, once the second hop is known
    if (followUp && i + 1 < lay.sessions[s].slots.length && lay.sessions[s].slots[i + 1] === null) {
      const text = followUpText(r, form, speakers[p.speaker].name);
      lay.sessions[s].slots[i + 1] = { kind: 'follow_up', text, concept: p.concept.id };
    }
  }

  // Second hops: someone met at an event, news about them in a later session by the same speaker.
  const hopCats = new Set(['activity', 'social', 'hobby']);
  const hopKinds: SecondHopKind[] = ['move', 'job', 'baby', 'shop'];
  for (const e of r.shuffle(events.filter((x) => hopCats.has(x.concept.category) && x.session < lay.sessions.length - 2)).slice(0, 12)) {
    const later = lay.sessions.map((_, s) => s).filter((s) => s > e.session + 1);
    const at = freeSlot(r, lay, e.speaker, { sessions: later });
    if (!at) continue;
    const person = freshPerson();
    const kind = r.pick(hopKinds);
    const detail = kind === 'move' ? r.pick(CITIES) : kind === 'job' ? r.pick(COMPANIES) : kind === 'baby' ? r.pick(BABY_NAMES) : r.pick(SHOPS);
    lay.sessions[at[0]].slots[at[1]] = { kind: 'second_hop', text: secondHopText(r, kind, person, detail, true) };
    e.second = { person, kind, turn: turnId(at[0], at[1]) };
    // The same kind of news about somebody else, by either speaker: shares the question's words.
    const decoy = freeSlot(r, lay, r.int(0, 1) as 0 | 1, {});
    if (decoy) {
      const d2 = kind === 'move' ? r.pick(CITIES) : kind === 'job' ? r.pick(COMPANIES) : kind === 'baby' ? r.pick(BABY_NAMES) : r.pick(SHOPS);
      lay.sessions[decoy[0]].slots[decoy[1]] = { kind: 'mention', text: secondHopText(r, kind, anyOther(), d2, false) };
    }
  }

  // Evidence texts.
  for (const e of events) {
    const companion = r.pick(COMPANIONS).replace('{F}', anyOther().name);
    let text = fillTemplate(r.pick(EVIDENCE_TEMPLATES), {
      past: render(e.form, 'past', 'my'),
      when: r.pick(WHEN),
      place: r.pick(PLACES),
      comp: companion,
      reason: r.pick(REASONS),
    });
    if (e.second) text += fillTemplate(r.pick(MET_TEMPLATES), { p: e.second.person.name, s: subj(e.second.person) });
    lay.sessions[e.session].slots[e.slot] = { kind: 'evidence', text, concept: e.concept.id };
  }

  // Mentions of event concepts in unrelated contexts: at least one in another month, sometimes two.
  const mention = (c: Concept, sessions?: number[]) => {
    const at = freeSlot(r, lay, r.int(0, 1) as 0 | 1, { sessions });
    if (!at) return;
    const month = MONTHS[r.int(0, 10)];
    const text = mentionText(r, r.pick(formsFor(c, portion)), anyOther(), r.pick(RELATIVES), month);
    lay.sessions[at[0]].slots[at[1]] = { kind: 'mention', text, concept: c.id };
  };
  for (const e of events) {
    mention(
      e.concept,
      lay.sessions.map((_, s) => s).filter((s) => lay.sessions[s].month !== e.month),
    );
    if (r.chance(0.4)) mention(e.concept);
  }
  for (const c of concepts.slice(8 + nEvents, 8 + nEvents + 15)) mention(c);

  // Everything else is chit-chat.
  const turns: Turn[] = [];
  const sessions: Session[] = [];
  lay.sessions.forEach((sess, s) => {
    sessions.push({ id: sessionId(s), started_at: iso(sess.start) });
    let t = sess.start;
    sess.slots.forEach((slot, i) => {
      const who = speakerAt(s, i);
      const filled = slot ?? { kind: 'filler' as const, text: fillerText(r, speakers[1 - who].name, anyOther().name) };
      turns.push({ id: turnId(s, i), conversation: id, session: sessionId(s), speaker: speakers[who].name, text: filled.text, observed_at: iso(t), kind: filled.kind });
      t += r.int(40, 200) * 1000;
    });
  });

  const conceptMonths = new Map<string, Set<number>>();
  lay.sessions.forEach((sess) => {
    for (const slot of sess.slots) {
      if (!slot?.concept) continue;
      const m = conceptMonths.get(slot.concept) ?? new Set<number>();
      m.add(sess.month);
      conceptMonths.set(slot.concept, m);
    }
  });
  const questions = buildQuestions(r, { id, portion, speakers, events, conceptMonths, turns });
  return { id, seed, lexicon: portion, speakers, sessions, turns, questions };
}
