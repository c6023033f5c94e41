/**
 * The concept lexicon of the synthetic conversations (corpus.ts): life events a speaker can tell,
 * each a concept with 3 to 5 surface paraphrases written as base-form verb phrases ("go camping",
 * "pitch a tent by the lake"). `~` marks a possessive that is rendered per speaker ("my", "her",
 * "your", ...).
 *
 * Half of the concepts are split: their paraphrases are divided into a dev portion and a disjoint
 * held-out portion. Dev conversations only ever use the dev portion; held-out conversations only
 * the held-out portion. The other concepts share one list between both splits. Tuning against dev
 * conversations therefore cannot learn the held-out phrasings of split concepts.
 */

export type Category = 'activity' | 'social' | 'purchase' | 'pet' | 'job' | 'hobby' | 'family' | 'health' | 'home';
export type LexiconPortion = 'dev' | 'held_out';

export interface Concept {
  id: string;
  category: Category;
  /** The forms dev conversations use (for an unsplit concept: the forms both splits use). */
  dev: string[];
  /** The held-out forms of a split concept, never used by dev conversations; empty when unsplit. */
  held: string[];
}

// id | category | forms (dev-only when a fourth field is present) | held-out forms
const RAW = `
camping|activity|go camping; pitch a tent by the lake; sleep under the stars|spend a night in the backcountry; camp out in the woods
hiking|activity|go hiking; hike up a mountain trail; trek through the hills; take a long walk in the mountains
marathon|activity|run a marathon; finish a 26 mile race; complete ~ first marathon|cross the finish line of a long road race; race 42 kilometers
museum|activity|visit a museum; tour an art gallery; see an exhibition of old paintings; wander around a history museum
concert|activity|go to a concert; see a band play live; catch a live music show|attend a gig; watch ~ favourite singer perform on stage
beach|activity|go to the beach; spend the day by the ocean; swim in the sea; lie on the sand all afternoon
road_trip|activity|take a road trip; drive across the country; go on a long drive with the windows down|hit the open highway; cruise down the coast in a rented car
shelter|activity|volunteer at an animal shelter; help out at the dog rescue; spend weekends caring for shelter animals; do volunteer work with rescued pets
kayaking|activity|go kayaking; paddle down the river; take a canoe out on the water|row across a quiet lake; go paddleboarding
skiing|activity|go skiing; hit the slopes; ski down a mountain; spend a weekend on the ski hill
cooking_class|activity|take a cooking class; learn to cook with a chef; attend a culinary workshop|sign up for a baking course; study knife skills in a kitchen school
festival|activity|go to a music festival; spend three days at an outdoor festival; dance at a summer fest
fishing|activity|go fishing; cast a line off the pier; spend a morning fishing on the lake|catch a trout; sit by the river with a rod
theater|activity|see a play; watch a musical at the theater; go to a stage show; see a broadway production
zoo|activity|visit the zoo; see the animals at the zoo; spend a day at the wildlife park|go on a safari tour; feed the giraffes
picnic|activity|have a picnic in the park; eat lunch on a blanket in the grass; eat a packed lunch outdoors
climbing|activity|go rock climbing; climb at the bouldering gym; scale an indoor climbing wall|try bouldering outdoors; clip into ropes on a cliff face
bike_ride|activity|go on a bike ride; cycle along the coast; ride ~ bike to the next town
stargazing|activity|go stargazing; watch a meteor shower; look at the night sky through a telescope|spot constellations far from the city lights; see the milky way
theme_park|activity|go to an amusement park; ride roller coasters; spend the day at a theme park; scream on the big rides
support_group|social|join a support group; go to an LGBTQ group meeting; sit in a peer circle|attend a sharing circle; meet with others facing the same struggles
book_club|social|join a book club; meet up with a reading group; discuss novels with a literature circle
choir|social|join a choir; sing with a community chorus; start singing in a vocal ensemble|sing in a glee club; take part in group singing rehearsals
therapy|social|start therapy; see a counselor; talk to a therapist every week; begin counseling sessions
church|social|join a church group; go to a faith community gathering; attend a bible study|visit a prayer meeting; join a congregation
running_club|social|join a running club; run with a jogging group; meet a crew of runners at dawn
mentoring|social|become a mentor; mentor a teenager; coach a young student|guide a kid through a mentorship program; volunteer as a youth mentor
pride|social|march in a pride parade; go to a pride event; walk with the rainbow flags downtown
game_night|social|host a game night; play board games with neighbours; organise a card game evening|run a trivia night; throw a party with board games
dance_class|social|take a dance class; learn salsa; go to a ballroom lesson; practice swing dancing
car|purchase|buy a new car; get a new set of wheels; pick up a used sedan|drive home a new hatchback; purchase a vehicle
bike|purchase|buy a bike; get a new bicycle; pick up a road bike from the shop; order an electric bike
house|purchase|buy a house; close on a home; get the keys to ~ own place|become a homeowner; sign the mortgage papers
phone|purchase|get a new phone; upgrade ~ smartphone; buy the latest mobile
guitar|purchase|buy a guitar; get an acoustic guitar; pick up a secondhand six string|order a classical guitar online; bring home an electric guitar and amp
laptop|purchase|buy a new laptop; get a new computer; replace ~ old notebook computer
camera|purchase|buy a camera; get a new camera lens; invest in a mirrorless camera|pick up a vintage film camera; upgrade ~ photography gear
couch|purchase|buy a new couch; get a comfy sofa; order a sectional for the living room
artwork|purchase|buy a painting; get some art for ~ walls; pick up a print from a local artist|commission a portrait; purchase a canvas from a gallery
shoes|purchase|buy running shoes; get new sneakers; pick up a pair of trainers
tickets|purchase|buy concert tickets; get tickets for a show; book seats for a performance|score front row passes; snag tickets for an event
plants|purchase|buy houseplants; get a bunch of potted plants; fill ~ apartment with greenery
puppy|pet|adopt a puppy; get a dog; bring home a rescue pup|welcome a little pooch into ~ family; take in a stray dog
kitten|pet|adopt a kitten; get a cat; bring home a tabby from the shelter
aquarium|pet|set up a fish tank; get an aquarium; buy some goldfish|start keeping tropical fish; build a coral reef tank
bird|pet|get a parrot; adopt a pet bird; bring home a little parakeet
small_pet|pet|adopt a rabbit; get a pet bunny; bring home a lop eared rabbit|take in a guinea pig; bring home a hamster
pet_training|pet|take ~ dog to obedience school; train ~ pup to sit; sign up for puppy training classes
new_job|job|start a new job; get hired at a new company; begin a new position|accept an offer from another employer; land a new role
promotion|job|get a promotion; get promoted at work; move up to a senior role
quit|job|quit ~ job; hand in ~ notice; leave ~ old company|resign from ~ position; walk away from ~ career
business|job|start ~ own business; launch a small company; open a shop
layoff|job|get laid off; lose ~ job; get let go from work|be made redundant; get cut in a round of layoffs
internship|job|start an internship; work as an intern; get a summer internship
conference|job|speak at a conference; give a talk at a convention; present ~ work on stage|deliver a keynote; address a room full of professionals
degree|job|finish ~ degree; graduate from college; get ~ diploma; complete ~ masters program
painting|hobby|take up painting; start painting; learn to paint with watercolors|pick up a paintbrush; try acrylics on canvas
pottery|hobby|take a pottery class; make bowls on a wheel; try ceramics
knitting|hobby|learn to knit; start knitting scarves; pick up crochet|make a sweater with yarn; try needlework
gardening|hobby|start a vegetable garden; plant tomatoes in the backyard; grow ~ own herbs
photography|hobby|take up photography; start shooting photos; learn to use manual camera settings|capture street scenes; practise portrait shots
writing|hobby|start writing a novel; work on a short story; begin a memoir
piano|hobby|learn to play piano; take piano lessons; practice the keyboard every night|study classical keys; play ~ first recital
yoga|hobby|start doing yoga; go to yoga classes; practice stretching on a mat
baking|hobby|bake sourdough bread; make a cake from scratch; try baking pastries|whip up cinnamon rolls; knead dough for the first time
chess|hobby|learn to play chess; join a chess tournament; play chess online
birding|hobby|go birdwatching; look for birds with binoculars; log rare birds in a notebook|spot a heron at the marsh; keep a birding journal
woodworking|hobby|build a bookshelf; try woodworking; make furniture in the garage
parents|family|visit ~ parents; see ~ mom and dad; go home to ~ folks|spend time at ~ childhood home; drop in on ~ mother and father
wedding|family|go to a wedding; attend ~ cousin's wedding; give a toast at a wedding
kids_event|family|take the kids to a school play; watch ~ son's recital; cheer at ~ daughter's soccer game|attend a parent teacher meeting; go to the kids' science fair
reunion|family|go to a family reunion; see all ~ relatives at once; host a big family get together
anniversary|family|celebrate ~ anniversary; mark ten years of marriage; go out for an anniversary dinner|renew ~ wedding vows; toast to another year together
grandma|family|visit ~ grandma; spend the afternoon with ~ grandmother; take ~ nana out for lunch
engagement|family|get engaged; say yes to a proposal; pick out a ring with ~ partner|agree to get married; plan ~ wedding after the proposal
baby_shower|family|throw a baby shower; host a gender reveal party; celebrate a new baby on the way
adoption|family|research adoption agencies; look into adopting a child; start the adoption process
ankle|health|sprain ~ ankle; twist ~ ankle; hurt ~ foot badly|roll ~ ankle on the stairs; injure ~ leg
flu|health|get the flu; catch a bad cold; come down with a fever
surgery|health|have surgery; go under the knife; get an operation|spend a night in the hospital after a procedure; recover from a surgical procedure
diet|health|start eating healthier; cut out sugar; go vegetarian; change ~ diet
meditation|health|start meditating; practice mindfulness; sit in silent meditation|use a breathing app; attend a silent retreat
gym|health|join a gym; start lifting weights; get a personal trainer
sleep|health|fix ~ sleep schedule; start going to bed early; beat ~ insomnia|get eight hours of rest; stop staying up late
dentist|health|go to the dentist; get a tooth pulled; have a root canal
moving|home|move into a new apartment; relocate to a bigger place; settle into a new flat|change homes; unpack boxes in a new home
renovation|home|renovate the kitchen; redo the bathroom; fix up the house
roommate|home|get a roommate; find someone to share the rent; move in with a friend|take in a lodger; sublet the spare room
redecorate|home|repaint the living room; paint the walls a new colour; redecorate the bedroom
declutter|home|declutter the whole house; donate old clothes; clean out the garage|do a big spring cleaning; give away half ~ stuff
`;

const split = (s: string | undefined): string[] =>
  (s ?? '')
    .split(';')
    .map((x) => x.trim())
    .filter((x) => x.length > 0);

/** Every concept, in a fixed order. */
export const CONCEPTS: readonly Concept[] = RAW.trim()
  .split('\n')
  .map((line) => {
    const [id, category, dev, held] = line.split('|');
    return { id, category: category as Category, dev: split(dev), held: split(held) };
  });

export const CONCEPT_BY_ID: ReadonlyMap<string, Concept> = new Map(CONCEPTS.map((c) => [c.id, c]));

/** Whether a concept's paraphrases are divided between the splits. */
export const isSplit = (c: Concept): boolean => c.held.length > 0;

/** The forms a conversation of `portion` may use for `c`. */
export function formsFor(c: Concept, portion: LexiconPortion): string[] {
  return portion === 'held_out' && isSplit(c) ? c.held : c.dev;
}

/** Every form of every concept, both portions (what the stand-in encoder knows). */
export function allForms(): Array<{ concept: string; form: string }> {
  return CONCEPTS.flatMap((c) => [...c.dev, ...c.held].map((form) => ({ concept: c.id, form })));
}

// ---- morphology -----------------------------------------------------------------------------

const IRREGULAR: Record<string, string> = {
  be: 'was',
  beat: 'beat',
  become: 'became',
  begin: 'began',
  bring: 'brought',
  build: 'built',
  buy: 'bought',
  cast: 'cast',
  catch: 'caught',
  clip: 'clipped',
  come: 'came',
  cut: 'cut',
  do: 'did',
  drive: 'drove',
  drop: 'dropped',
  eat: 'ate',
  feed: 'fed',
  find: 'found',
  get: 'got',
  give: 'gave',
  go: 'went',
  grow: 'grew',
  have: 'had',
  hit: 'hit',
  hurt: 'hurt',
  keep: 'kept',
  leave: 'left',
  lie: 'lay',
  log: 'logged',
  lose: 'lost',
  make: 'made',
  meet: 'met',
  plan: 'planned',
  quit: 'quit',
  redo: 'redid',
  ride: 'rode',
  run: 'ran',
  say: 'said',
  see: 'saw',
  set: 'set',
  sing: 'sang',
  sit: 'sat',
  ski: 'skied',
  sleep: 'slept',
  snag: 'snagged',
  speak: 'spoke',
  spend: 'spent',
  spot: 'spotted',
  stop: 'stopped',
  sublet: 'sublet',
  swim: 'swam',
  take: 'took',
  throw: 'threw',
  trek: 'trekked',
  whip: 'whipped',
};

/** The simple past of a verb. */
export function pastOf(verb: string): string {
  const irregular = IRREGULAR[verb];
  if (irregular) return irregular;
  if (verb.endsWith('e')) return `${verb}d`;
  if (/[^aeiou]y$/.test(verb)) return `${verb.slice(0, -1)}ied`;
  return `${verb}ed`;
}

export type Tense = 'base' | 'past';

/** A form rendered: the first word in `tense`, every `~` as the possessive `poss`. */
export function render(form: string, tense: Tense, poss: string): string {
  const withPoss = form.replace(/~/g, poss);
  if (tense === 'base') return withPoss;
  const space = withPoss.indexOf(' ');
  const verb = space < 0 ? withPoss : withPoss.slice(0, space);
  return pastOf(verb) + (space < 0 ? '' : withPoss.slice(space));
}

/** Possessives a form may be rendered with. */
export const POSSESSIVES = ['my', 'your', 'her', 'his', 'their', 'our'] as const;

// ---- pools ----------------------------------------------------------------------------------

export interface Person {
  name: string;
  gender: 'f' | 'm';
}

const people = (s: string, gender: 'f' | 'm'): Person[] => s.split(' ').map((name) => ({ name, gender }));

/** Speaker first names. */
export const SPEAKERS: readonly Person[] = [
  ...people('Caroline Melanie Joanna Nisha Priya Audrey Maria Tamsin Yuki Deborah Evelyn Rosa Hannah Leila Gina', 'f'),
  ...people('Jon John Calvin Dave Andrew James Tim Marcus Oliver Rahul Tomas Victor Kenji', 'm'),
];

/** Third parties: friends, people met, relatives named in passing. Never a speaker name. */
export const OTHERS: readonly Person[] = [
  ...people('Sam Alex Jordan Riley Morgan Taylor Casey Jamie', 'f'),
  ...people('Bea Clara Ines Greta Mona Paula Sofia Tessa Vera Wendy Zoe Lina Ada Ruth', 'f'),
  ...people('Ben Carl Dmitri Emil Felix Hugo Ivan Leo Milo Nico Omar Pablo Rudy Silas Theo', 'm'),
];

export const PLACES = [
  'Lake Tahoe',
  'Yosemite',
  'the community center downtown',
  'Riverside Park',
  'a little place in Portland',
  'the county fairgrounds',
  'Maple Street',
  'the mall on Fifth Avenue',
  'Santa Cruz',
  'the old mill',
  'Boulder',
  'Cedar Point',
  'the library annex',
  'Grand Rapids',
  'a spot near Hudson Bay',
  'the east side of town',
  'Asheville',
  'the harbour',
  'Big Sur',
  'the university campus',
  'a barn outside Austin',
  'Pine Ridge',
  'the waterfront in Seattle',
  'Mount Hood',
  'the rec center on Elm Street',
];

export const WHEN = ['last weekend', 'on Saturday', 'a few days ago', 'yesterday', 'last Friday', 'this past Sunday', 'earlier this week', 'on Tuesday'];

/** Companions, `{F}` a third party's name. */
export const COMPANIONS = [
  'my sister',
  'my brother',
  'my partner',
  'my coworker {F}',
  'my neighbour {F}',
  'my best friend {F}',
  '{F} from work',
  'my roommate',
  'my cousin {F}',
  'my kids',
  'my old friend {F}',
];

export const REASONS = [
  'I needed a break from work',
  'my therapist suggested it',
  'I wanted to feel less alone',
  "I've been so stressed lately",
  "it's been on my bucket list forever",
  'I wanted to try something new',
  'my doctor told me to',
  'I promised myself I would this year',
  'a friend recommended it',
  'I wanted to be brave for once',
  'it was on sale',
  'I finally had some savings',
  'the kids begged me',
  'I wanted to meet new people',
  'I needed something just for me',
  'it felt like the right time',
];

export const CITIES = ['Denver', 'Chicago', 'Lisbon', 'Toronto', 'Austin', 'Berlin', 'Melbourne', 'Dublin', 'Phoenix', 'Vancouver', 'Atlanta', 'Oslo', 'Nashville', 'Madrid'];
export const COMPANIES = ['Acme Robotics', 'Bluebird Health', 'Northwind', 'Greenleaf Bank', 'Orbit Studios', 'Harbor Logistics', 'Lumen Labs', 'Redwood Press', 'Juniper Foods', 'Kestrel Air'];
export const SHOPS = ['Crumb and Co', 'The Book Nook', 'Second Spin Records', 'Petal Path', 'Fern and Fig', 'The Tool Shed', 'Mug Life', 'Thread Bare'];
export const BABY_NAMES = ['Lily', 'Noah', 'Ava', 'Ezra', 'Mia', 'Luca', 'Nora', 'Kai', 'Elena', 'Finn'];
export const RELATIVES = ['aunt', 'uncle', 'cousin', 'brother in law', 'sister', 'neighbour', 'coworker', 'boss'];
export const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
