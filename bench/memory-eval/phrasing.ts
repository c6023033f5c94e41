/**
 * The surface text of the turns that are not evidence: echoes of an event by the other speaker,
 * mentions of a concept about somebody else, second-hop news and chit-chat. All of it reuses the
 * words questions and evidence use ("finally", "last weekend", "friend", "new", month names), so
 * a lexical ranker meets realistic near-misses. Pure; randomness comes from the caller's `Rng`.
 */
import type { SecondHopKind } from './corpus.js';
import { type Person, render } from './lexicon.js';

export interface Rng {
  next(): number;
  /** Uniform integer in [lo, hi], both included. */
  int(lo: number, hi: number): number;
  pick<T>(xs: readonly T[]): T;
  chance(p: number): boolean;
  /** Shuffles in place and returns the array. */
  shuffle<T>(xs: T[]): T[];
}

export function rng(next: () => number): Rng {
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  return {
    next,
    int,
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    chance: (p) => next() < p,
    shuffle(xs) {
      for (let i = xs.length - 1; i > 0; i--) {
        const j = int(0, i);
        [xs[i], xs[j]] = [xs[j], xs[i]];
      }
      return xs;
    },
  };
}

const poss = (p: Person) => (p.gender === 'f' ? 'her' : 'his');
const subj = (p: Person) => (p.gender === 'f' ? 'she' : 'he');
const obj = (p: Person) => (p.gender === 'f' ? 'her' : 'him');
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The other speaker reacting to an event: the same words, no answer. */
export function followUpText(r: Rng, form: string, teller: string): string {
  const pastYour = render(form, 'past', 'your');
  const baseMy = render(form, 'base', 'my');
  const t = r.int(0, 5);
  if (t === 0) return `Wow, you ${pastYour}? That's amazing! I've always wanted to ${baseMy}.`;
  if (t === 1) return `No way! I can't believe you ${pastYour}. How was it?`;
  if (t === 2) return `That's so cool that you ${pastYour}! Tell me everything.`;
  if (t === 3) return `Aww, ${teller}, I'm so happy you ${pastYour}!`;
  if (t === 4) return `Hold on, you ${pastYour} and didn't tell me sooner? I want to ${baseMy} too one day.`;
  return `${teller}, that's wonderful. I'd be too nervous to ${baseMy} myself.`;
}

/** A concept told about somebody else, or wished for, or nearly done years ago. */
export function mentionText(r: Rng, form: string, friend: Person, relative: string, month: string): string {
  const t = r.int(0, 7);
  const f = friend.name;
  if (t === 0) return `My friend ${f} ${render(form, 'past', poss(friend))} back in ${month}, ${subj(friend)} still talks about it.`;
  if (t === 1) return `${f} keeps telling me I should ${render(form, 'base', 'my')}, maybe someday.`;
  if (t === 2) return `I saw a video of someone who ${render(form, 'past', 'their')}, looked fun but not for me.`;
  if (t === 3) return `Do you think you'd ever ${render(form, 'base', 'your')}? ${f} says it changed ${poss(friend)} life.`;
  if (t === 4) return `My ${relative} wants to ${render(form, 'base', 'their')} next year and won't stop talking about it.`;
  if (t === 5) return `I almost ${render(form, 'past', 'my')} once, years ago, but I chickened out.`;
  if (t === 6) return `Apparently ${f} and ${poss(friend)} partner ${render(form, 'past', 'their')} in ${month}. Good for them!`;
  return `Random thought: should we ${render(form, 'base', 'our')} together sometime? My ${relative} did it last year.`;
}

/** News about a person: `own` when the speaker met them at an event, else about somebody else. */
export function secondHopText(r: Rng, kind: SecondHopKind, p: Person, detail: string, own: boolean): string {
  const lead = own ? r.pick([`Remember ${p.name}? `, `Quick update on ${p.name}: `, '']) : r.pick(['My cousin ', 'My old roommate ', 'Somebody at work, ', 'My neighbour ']);
  const name = !own || lead === '' ? p.name : lead.endsWith('? ') ? cap(subj(p)) : subj(p);
  const body = (() => {
    if (kind === 'move') return `${name} just moved to ${detail}, I'm going to miss ${obj(p)}.`;
    if (kind === 'job') return `${name} got a job at ${detail}, so happy for ${obj(p)}!`;
    if (kind === 'baby') return `${name} just had a baby, a little one named ${detail}. So cute!`;
    return `${name} opened a little shop called ${detail} downtown, you have to visit.`;
  })();
  return lead + body;
}

const OPENERS = ['', '', '', 'Hey! ', 'Haha ', 'Oh nice, ', 'Honestly, ', 'Yeah, ', 'Aww, ', 'Ugh, ', 'Wow, ', 'So ', 'Anyway, ', 'Hmm, '];
const CLOSERS = ['', '', '', ' How are you?', ' What about you?', ' Talk soon!', ' lol', ' Anyway, how was your week?', ' Let me know!'];
const FOODS = ['pasta', 'tacos', 'curry', 'pizza', 'ramen', 'soup', 'a stir fry', 'lasagna', 'pancakes'];
const SHOWS = ['that new baking show', 'the detective series', 'the finale', 'the documentary about octopuses', 'that dating show'];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const CITIES = ['Chicago', 'Denver', 'Lisbon', 'Austin', 'Toronto'];
const MONTHS = ['March', 'May', 'June', 'August', 'October'];
const BODIES = [
  'work has been crazy this week',
  'I finally got some sleep last night',
  'we should grab coffee soon',
  'did you watch {show} yet?',
  'the weather here has been so weird lately',
  'I made {food} for dinner and it turned out great',
  'my weekend was pretty quiet, just stayed in',
  "I've been thinking about what you said last time",
  '{F} says hi by the way',
  "I can't believe it's already {month}",
  'the kids kept me busy all day',
  "I'm trying to drink more water",
  'traffic was terrible on {day}',
  'I went to the store and forgot half the list',
  "that's so true",
  "I'm so proud of you",
  'tell me more about it',
  'how are you holding up?',
  'I totally get that',
  "let's plan something for next weekend",
  'I have a new favourite song on repeat',
  'we went out with friends last weekend, nothing special',
  'my family is visiting soon and I need to clean',
  'I just need a weekend to relax',
  'did you ever finish {show}?',
  'I love that for you',
  "it's been a long week honestly",
  'I tried a new recipe with {food}, not my best work',
  'my phone died in the middle of the day, so annoying',
  'I should really get back into a routine',
  'the new cafe near my place is so good',
  'I keep meaning to call {F}',
  "time flies, doesn't it?",
  "I've been reading a lot before bed",
  'it rained all day on {day}',
  'I think I need a vacation',
  'we ordered {food} and watched {show}',
  'that reminds me of when we were in {city}',
  'my boss was in a good mood for once',
  'sorry I took so long to reply',
  'I had the weirdest dream last night',
  'what did you get up to this week?',
  "I'm so glad we talk like this",
  'my car needs new tires again',
  'everyone at work is getting sick',
  'I saw {F} at the grocery store',
  'we finally fixed the leaky tap',
  'I spent the whole day doing laundry',
  'my group chat has been blowing up all morning',
  'I finally cleaned my desk, it only took a month',
  "I'm thinking of taking a day off on {day}",
  'the new season starts in {month}',
];

/** Chit-chat; sometimes addressed to the other speaker by name. */
export function fillerText(r: Rng, addressee: string, friend: string): string {
  const fill = (b: string) =>
    b.replace('{show}', r.pick(SHOWS)).replace('{food}', r.pick(FOODS)).replace('{day}', r.pick(DAYS)).replace('{month}', r.pick(MONTHS)).replace('{city}', r.pick(CITIES)).replace('{F}', friend);
  const opener = r.chance(0.1) ? `Hey ${addressee}! ` : r.pick(OPENERS);
  let body = fill(r.pick(BODIES));
  if (r.chance(0.35)) body += `${/[?!.]$/.test(body) ? '' : '.'} ${cap(fill(r.pick(BODIES)))}`;
  if (!/[?!.]$/.test(body)) body += r.pick(['.', '!']);
  const text = opener === '' || /[!?] $/.test(opener) ? opener + cap(body) : opener + body;
  return (text + r.pick(CLOSERS)).trim();
}
