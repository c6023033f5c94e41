/**
 * Questions over one generated conversation, each with the ids of the turns that answer it.
 *
 * - `single`: "Where did Caroline join a support group?": one evidence turn, where the speaker says
 *   "I ..."; about half the time the question uses another paraphrase of the concept.
 * - `temporal`: "When did Melanie go camping?": the evidence turn (its date is the answer).
 * - `time_window`: "What did Caroline buy in May 2023?": every event of that speaker and category
 *   in that month; the same concepts are mentioned in other months too.
 * - `multi_hop`: "Where did the friend Caroline met after she joined a support group move to?":
 *   the event where the person was met and the later turn with the news. A hit needs either;
 *   `all@k` needs both.
 * - `speaker`: "What did Melanie say about the time she went camping?" where both speakers went
 *   camping: only the name tells the two evidence turns apart, and neither turn holds it.
 */
import type { LifeEvent, Turn } from './corpus.js';
import { type Category, type LexiconPortion, MONTHS, type Person, formsFor, render } from './lexicon.js';
import type { Rng } from './phrasing.js';

export type QuestionType = 'single' | 'temporal' | 'time_window' | 'multi_hop' | 'speaker';
export const QUESTION_TYPES: readonly QuestionType[] = ['single', 'temporal', 'time_window', 'multi_hop', 'speaker'];

export interface Question {
  id: string;
  conversation: string;
  type: QuestionType;
  question: string;
  /** Turn ids that answer it; a hit is any of them in the top k. */
  evidence: string[];
  /** The speaker the question is about. */
  speaker: string;
  /** The concept asked about (null for a time window, which asks about a category). */
  concept: string | null;
  category: Category;
  /** Whether the question words the concept differently from the evidence (null when not applicable). */
  paraphrased: boolean | null;
  /** For time_window: the window the question names (ISO, inclusive). */
  window?: { from: string; to: string };
}

export interface QuestionContext {
  id: string;
  portion: LexiconPortion;
  speakers: [Person, Person];
  events: LifeEvent[];
  /** Months (0-based) in which each concept is mentioned in any turn. */
  conceptMonths: Map<string, Set<number>>;
  turns: Turn[];
}

type Wh = 'where' | 'who' | 'why';
const WH_BY_CATEGORY: Record<Category, Wh[]> = {
  activity: ['where', 'who', 'why'],
  social: ['where', 'why'],
  purchase: ['where', 'why'],
  pet: ['where', 'why'],
  job: ['where', 'why'],
  hobby: ['why', 'where', 'who'],
  family: ['where', 'who', 'why'],
  health: ['where', 'why'],
  home: ['why', 'who'],
};

const WINDOW_TEMPLATES: Record<Category, string> = {
  activity: 'What did {N} do for fun in {M} 2023?',
  social: 'What group or community activity did {N} get involved in during {M} 2023?',
  purchase: 'What did {N} buy in {M} 2023?',
  pet: 'What animal news did {N} have in {M} 2023?',
  job: "What happened in {N}'s career in {M} 2023?",
  hobby: 'What hobby did {N} work on in {M} 2023?',
  family: 'What family event did {N} have in {M} 2023?',
  health: 'What health issue did {N} deal with in {M} 2023?',
  home: "What changed at {N}'s home in {M} 2023?",
};

const poss = (p: Person) => (p.gender === 'f' ? 'her' : 'his');
const subj = (p: Person) => (p.gender === 'f' ? 'she' : 'he');

export function buildQuestions(r: Rng, ctx: QuestionContext): Question[] {
  const out: Question[] = [];
  const add = (q: Omit<Question, 'id' | 'conversation'>) => out.push({ id: `${ctx.id}-q${String(out.length + 1).padStart(3, '0')}`, conversation: ctx.id, ...q });
  /** The form a question uses: another paraphrase than the evidence's about half the time. */
  const wording = (e: LifeEvent): { form: string; paraphrased: boolean } => {
    const alt = formsFor(e.concept, ctx.portion).filter((f) => f !== e.form);
    return alt.length > 0 && r.chance(0.5) ? { form: r.pick(alt), paraphrased: true } : { form: e.form, paraphrased: false };
  };

  for (const e of ctx.events) {
    const who = ctx.speakers[e.speaker];
    const base = (form: string) => render(form, 'base', poss(who));
    for (const wh of r.shuffle([...WH_BY_CATEGORY[e.concept.category]]).slice(0, 2)) {
      const w = wording(e);
      const q = wh === 'where' ? `Where did ${who.name} ${base(w.form)}?` : wh === 'who' ? `Who did ${who.name} ${base(w.form)} with?` : `Why did ${who.name} ${base(w.form)}?`;
      add({ type: 'single', question: q, evidence: [e.turn], speaker: who.name, concept: e.concept.id, category: e.concept.category, paraphrased: w.paraphrased });
    }
    const w = wording(e);
    add({
      type: 'temporal',
      question: `When did ${who.name} ${base(w.form)}?`,
      evidence: [e.turn],
      speaker: who.name,
      concept: e.concept.id,
      category: e.concept.category,
      paraphrased: w.paraphrased,
    });
  }

  // Time windows: one speaker's events of one category in one month, when the same concepts
  // also come up outside that month.
  const groups = new Map<string, LifeEvent[]>();
  for (const e of ctx.events) {
    const k = `${e.speaker}|${e.concept.category}|${e.month}`;
    groups.set(k, [...(groups.get(k) ?? []), e]);
  }
  const eligible = [...groups.values()].filter((g) => g.some((e) => [...(ctx.conceptMonths.get(e.concept.id) ?? [])].some((m) => m !== e.month)));
  for (const g of r.shuffle(eligible).slice(0, 20)) {
    const e = g[0];
    const who = ctx.speakers[e.speaker];
    const from = new Date(Date.UTC(2023, e.month, 1));
    const to = new Date(Date.UTC(2023, e.month + 1, 1) - 1000);
    add({
      type: 'time_window',
      question: WINDOW_TEMPLATES[e.concept.category].replace('{N}', who.name).replace('{M}', MONTHS[e.month]),
      evidence: g.map((x) => x.turn),
      speaker: who.name,
      concept: null,
      category: e.concept.category,
      paraphrased: null,
      window: { from: `${from.toISOString().slice(0, 19)}Z`, to: `${to.toISOString().slice(0, 19)}Z` },
    });
  }

  for (const e of ctx.events) {
    if (!e.second) continue;
    const who = ctx.speakers[e.speaker];
    const w = wording(e);
    const did = `${subj(who)} ${render(w.form, 'past', poss(who))}`;
    const q =
      e.second.kind === 'move'
        ? `Where did the friend ${who.name} met after ${did} move to?`
        : e.second.kind === 'job'
          ? `Where does the person ${who.name} met after ${did} work now?`
          : e.second.kind === 'baby'
            ? `What did the friend ${who.name} made after ${did} name the baby?`
            : `What is the name of the shop opened by the friend ${who.name} met after ${did}?`;
    add({ type: 'multi_hop', question: q, evidence: [e.turn, e.second.turn], speaker: who.name, concept: e.concept.id, category: e.concept.category, paraphrased: w.paraphrased });
  }

  // Speaker questions: concepts both speakers lived through.
  for (const e of ctx.events) {
    if (!ctx.events.some((x) => x !== e && x.concept === e.concept && x.speaker !== e.speaker)) continue;
    const who = ctx.speakers[e.speaker];
    const w = wording(e);
    add({
      type: 'speaker',
      question: `What did ${who.name} say about the time ${subj(who)} ${render(w.form, 'past', poss(who))}?`,
      evidence: [e.turn],
      speaker: who.name,
      concept: e.concept.id,
      category: e.concept.category,
      paraphrased: w.paraphrased,
    });
  }
  const ids = new Set(ctx.turns.map((t) => t.id));
  for (const q of out) for (const ev of q.evidence) if (!ids.has(ev)) throw new Error(`question ${q.id}: evidence ${ev} is not a turn`);
  return out;
}
