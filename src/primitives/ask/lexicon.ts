/**
 * The fixed word lists of the /v1/ask router (docs/ask.md, "Routing"): function words, negations,
 * the cue words of each intent, the signs of a question that is not about Earth observation, and
 * synonyms that fold everyday, inflected or non-English words onto topic keywords. The topic
 * keywords themselves live in the registry (topics.json); this file holds only what is not specific
 * to one topic.
 */

/** Words that never name a place or a topic on their own. */
export const STOP_WORDS: ReadonlySet<string> = new Set(`
a an the of in on at to for from by with about over under near around across into onto inside outside within
and or but if then than so as is are was were be been being am do does did done doing have has had having
it its this that these those there here what which who whom whose when where why how whats wheres hows
i me my mine we us our you your yours he she they them their his her
can could would should will shall may might must not no nor any some all each every both either neither
much many more most less least few several lot lots very too also just only even still yet already
please tell show give get got let know want need like look see find say said
currently current now today right moment recently recent latest last past next this
up down out off again once ever never always often sometimes
one two three four five six seven eight nine ten
`.split(/\s+/).filter(Boolean));

/** A negation within a few words before a keyword ("not flooded", "no rain") is recorded, not dropped. */
export const NEGATIONS: ReadonlySet<string> = new Set(['not', 'no', 'never', 'without', 'nor', 'none', 'nothing', 'neither', 'lack', 'lacking', 'absence', 'free', 'non']);

/** Words that ask where something is across an area: with a hunt event they make a hunt. */
export const HUNT_CUES: ReadonlySet<string> = new Set([
  'where', 'find', 'hunt', 'hotspot', 'hotspots', 'locate', 'search', 'detect', 'spot', 'map', 'mapping',
  'list', 'scan', 'identify', 'pinpoint', 'worst', 'which', 'track', 'monitor',
]);
/** After "which": the area words that make "which areas …" a hunt cue. */
export const AREA_WORDS: ReadonlySet<string> = new Set(['area', 'areas', 'part', 'parts', 'place', 'places', 'region', 'regions', 'field', 'fields', 'district', 'districts', 'zone', 'zones', 'neighbourhood', 'neighbourhoods', 'neighborhood', 'neighborhoods', 'cells', 'spots', 'sites', 'locations']);

/** Phrases (folded words) that ask about this responder's own data: the coverage surfaces answer them. */
export const CORPUS_PATTERNS: readonly string[] = [
  'do you have * data', 'do you have * facts', 'do you have * coverage', 'have you got * data', 'you have data',
  'your data', 'your coverage', 'your corpus', 'your facts', 'your database', 'your archive',
  'how fresh', 'how up to date', 'how recent is * data', 'how old is * data', 'data availability', 'data coverage',
  'what data', 'which data', 'which bands', 'what bands', 'how many facts', 'how many cells', 'how many bands',
  'coverage map', 'coverage matrix', 'corpus', 'what do you know', 'what can you tell', 'where * data',
];

/** "places like X", "similar to X": the similar-places intent. */
export const SIMILAR_PATTERNS: readonly string[] = [
  'places * like', 'place * like', 'areas * like', 'area * like', 'regions * like', 'region * like', 'somewhere like', 'anywhere like',
  'other * like', 'similar to', 'similar places', 'similar areas', 'similar regions', 'that look* like', 'which look* like', 'resemble', 'resembles', 'resembling',
  'lookalike', 'look alike', 'most alike', 'same kind of place', 'find similar', 'where else', 'else * like',
];

/** "what changed since Y": the what-changed intent. */
export const CHANGE_PATTERNS: readonly string[] = [
  'what * changed', 'how * changed', 'has * changed', 'have * changed', 'what * change', 'changes since', 'change since', 'changed since',
  'before and after', 'what * different', 'how different', 'what is new', 'evolved', 'how * evolve*', 'how did * * change', 'has * * changed',
  'anything * built', 'been built', 'newly built', 'new construction', 'has * grown', 'did * grow', 'how much * grown',
];

/**
 * Signs of a question that is not about Earth observation. `always`: out of scope whatever else
 * the question says ("write a poem about the rain"); `unless_strong`: out of scope unless the
 * Earth-observation evidence is strong ("price of land near a flooded river" stays out, "NDVI of
 * the stock exchange's park" would not).
 */
export const OFF_TOPIC: { always: ReadonlySet<string>; unless_strong: ReadonlySet<string>; phrases: readonly string[] } = {
  always: new Set([
    'poem', 'poems', 'poetry', 'haiku', 'sonnet', 'limerick', 'song', 'songs', 'lyrics', 'joke', 'jokes', 'story', 'stories', 'essay', 'novel',
    'mayor', 'president', 'minister', 'governor', 'senator', 'king', 'queen', 'celebrity', 'actor', 'actress', 'singer', 'election', 'elections', 'vote',
    'recipe', 'recipes', 'cook', 'cooking', 'restaurant', 'restaurants', 'hotel', 'hotels', 'flight', 'flights', 'airline', 'ticket', 'tickets',
    'translate', 'translation', 'password', 'javascript', 'python', 'code', 'homework', 'football', 'soccer', 'basketball', 'tennis', 'match',
    'sql', 'typescript', 'html', 'css', 'regex', 'compiler', 'stacktrace',
    'movie', 'movies', 'film', 'films', 'book', 'books', 'museum', 'museums', 'nightlife', 'bar', 'bars', 'pizza', 'wine', 'beer',
  ]),
  unless_strong: new Set([
    'capital', 'history', 'historical', 'language', 'languages', 'currency', 'price', 'prices', 'cost', 'rent', 'stock',
    'stocks', 'salary', 'tax', 'taxes', 'visa', 'crime', 'safe', 'safety', 'timezone', 'founded', 'famous', 'tourist', 'tourists', 'visit', 'train',
    'bus', 'airport', 'plane', 'distance', 'far', 'drive', 'route', 'directions', 'phone', 'university', 'school', 'team', 'score', 'buy', 'sell',
    // Hazards no band here measures: a question about them is refused rather than answered from flood data.
    'earthquake', 'earthquakes', 'seismic', 'volcano', 'volcanoes', 'volcanic', 'eruption', 'eruptions',
  ]),
  phrases: ['who is', 'who was', 'who won', 'write a', 'write me', 'tell me a', 'what time is it', 'time zone', 'how do i get', 'how to get', 'meaning of life', 'how are you'],
};

/**
 * Arithmetic is never an Earth-observation question, whatever words surround it: two numbers
 * joined by one of these words ("17 times 23", "144 divided by 12", "15 percent of 240"), or by
 * an operator sign; or a number after "convert" (units: "convert 30 degrees Celsius to Fahrenheit").
 */
export const ARITHMETIC_WORDS: ReadonlySet<string> = new Set(['times', 'plus', 'minus', 'divided', 'multiplied', 'over', 'percent', 'modulo', 'squared', 'cubed', 'power']);
/** Words that may stand between the numbers and the arithmetic word ("2 to the power 8", "144 divided by 12"). */
export const ARITHMETIC_FILLERS: ReadonlySet<string> = new Set(['by', 'of', 'to', 'the', 'percent']);
/** Verbs that make a question with a number arithmetic ("calculate" and "compute" are not: "compute NDVI at 48.85, 2.35"). */
export const ARITHMETIC_VERBS: ReadonlySet<string> = new Set(['convert', 'solve', 'simplify']);

/**
 * Composite questions (docs/ask.md, "Composite questions"): a frame of words that asks about
 * several topics at once — the health risk of a place, its climate as a whole, the natural hazards
 * of a home, its solar potential. A frame adds evidence (a pattern's weight) to the best-scoring of
 * its topics, or to its first topic when the question has no topic word but names a place; the
 * others become next steps. When several frames match, the first in this order applies. A frame
 * never routes a question that names neither a topic word nor a place, and never overrides an
 * `always` off-topic sign or arithmetic.
 */
export interface CompositeFrame {
  key: string;
  /** Cue patterns (the syntax of topic phrases: `*` a gap of up to two words, `word*` any ending). */
  cues: readonly string[];
  /** The topics the frame asks about, the default first. */
  topics: readonly string[];
  /**
   * The telling bands of each topic, first first: a composite answer reads three of the routed
   * topic and two of each other (composite.ts); a topic not listed reads its first scalar bands.
   */
  reads?: Readonly<Record<string, readonly string[]>>;
}
export const COMPOSITE_FRAMES: readonly CompositeFrame[] = [
  {
    key: 'health',
    cues: ['health', 'healthy', 'unhealthy', 'health risk*', 'asthma*', 'lung*', 'respiratory', 'heatstroke', 'heat stroke', 'allerg*', 'elderly', 'vulnerable'],
    topics: ['air_quality', 'urban_heat', 'weather'],
    reads: {
      air_quality: ['air.pm2_5', 'air.nitrogen_dioxide', 'air.ozone'],
      urban_heat: ['lst.day_8day', 'lst.night_8day', 'indices.ndvi'],
      weather: ['weather.temperature_2m', 'weather.relative_humidity_2m', 'weather.wind_speed_10m'],
    },
  },
  {
    key: 'climate',
    cues: ['climate', 'climat*', 'climate change', 'climate-wise', 'climate wise', 'climate refuge', 'climate haven', 'global warming', 'planet warm*', 'warming planet', 'coming decades', 'future climate', 'too hot to live', 'liveable', 'livable', 'habitable', 'by 2050', 'in 2050', 'by 2100'],
    topics: ['drought', 'urban_heat', 'precipitation', 'flood'],
    reads: {
      drought: ['climate.koppen_geiger_1991_2020', 'climate.normal_tmax_annual', 'precip.spi_3m'],
      urban_heat: ['lst.day_8day', 'lst.night_8day', 'builtup.wsf2019_fraction_1km'],
      precipitation: ['climate.normal_precip_annual', 'precip.spi_3m', 'precip.chirps_daily_mm'],
      flood: ['river.discharge_max_1991_2020', 'water.gsw_occurrence', 'copdem30m.elevation_mean'],
    },
  },
  {
    key: 'hazard',
    cues: [
      'climate risk*', 'climate change risk*', 'natural hazard*', 'hazard*', 'natural disaster*', 'disaster*', 'natural risk*', 'risk*', 'risky',
      'exposed to', 'exposure', 'insur*', 'underwrit*', 'safe place * buy', 'safe * buy', 'buy* * flat', 'buy* * house', 'buy* * home', 'buy* * apartment',
      'buy* * property', 'buy* * land', 'buy* * chalet', 'buy* * cottage', 'home buyer*', 'homebuyer*', 'safe investment', 'property', 'properties',
    ],
    topics: ['flood', 'coastal', 'landslide', 'fire', 'urban_heat', 'snow_ice', 'terrain'],
    reads: {
      flood: ['water.gsw_occurrence', 'river.discharge_max_1991_2020', 'copdem30m.elevation_mean'],
      coastal: ['copdem30m.elevation_mean', 'marine.wave_height', 'water.gsw_occurrence'],
      landslide: ['s1.vv_change_db', 'copdem30m.elevation_mean', 'precip.chirps_daily_mm'],
      fire: ['fire.active_count_10km', 'fire.nearest_km', 'indices.ndvi'],
      urban_heat: ['lst.day_8day', 'builtup.wsf2019_fraction_1km', 'lst.night_8day'],
      snow_ice: ['indices.ndsi', 'copdem30m.elevation_mean', 'lst.day_8day'],
      terrain: ['copdem30m.elevation_mean', 'gebco.elevation_m'],
    },
  },
  {
    key: 'solar',
    cues: ['solar', 'rooftop*', 'photovoltaic*', 'pv', 'solar panel*'],
    topics: ['weather', 'terrain'],
    reads: { weather: ['solar.ghi_annual_mean', 'solar.pv_yield_kwh_per_kwp', 'weather.cloud_cover'], terrain: ['copdem30m.elevation_mean'] },
  },
];

/**
 * Everyday, inflected and non-English words folded onto a registry keyword before matching
 * (the keyword then carries the topic). Non-Latin entries are matched inside runs of CJK text.
 */
// A prototype-free map: question words such as "constructor" must not find Object.prototype members.
export const SYNONYMS: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, {
  hotter: 'hot', warmer: 'warm', colder: 'cold', wetter: 'wettest', rainstorm: 'storm', thunderstorm: 'storm', sunshine: 'sunny',
  temp: 'temperature', temps: 'temperature', veg: 'vegetation', greenspace: 'greenery', leaves: 'leaf', wooded: 'forest', deforest: 'deforestation',
  algal: 'algae', phytoplankton: 'chlorophyll', muddy: 'murky', smoke: 'haze', smoky: 'haze', smoggy: 'smog', mountainous: 'mountain',
  elev: 'elevation', precip: 'precipitation', glaciated: 'glacier', inundate: 'inundation', flooding: 'flood', snowing: 'snow', snowed: 'snow',
  burnscar: 'burn scar', wildfire: 'wildfire', bushfire: 'bushfire', salinised: 'salinisation', salinized: 'salinization', emitter: 'super emitter',
  // French, Spanish, Portuguese, German, Italian (folded: no accents)
  inondation: 'flood', inondations: 'flood', inonde: 'flooded', inondee: 'flooded', secheresse: 'drought', foret: 'forest', forets: 'forest',
  neige: 'snow', glace: 'ice', pluie: 'rain', meteo: 'weather', incendie: 'fire', incendies: 'fire', feu: 'fire', eau: 'water', glacier: 'glacier',
  inundacion: 'flood', inundaciones: 'flood', sequia: 'drought', bosque: 'forest', bosques: 'forest', incendio: 'fire', incendios: 'fire',
  lluvia: 'rain', nieve: 'snow', contaminacion: 'pollution', clima: 'weather', temperatura: 'temperature', agua: 'water', suelo: 'soil',
  elevacion: 'elevation', vegetacao: 'vegetation', enchente: 'flood', enchentes: 'flood', seca: 'drought', floresta: 'forest', desmatamento: 'deforestation',
  queimada: 'fire', queimadas: 'fire', chuva: 'rain', poluicao: 'pollution', solo: 'soil', uberschwemmung: 'flood', ueberschwemmung: 'flood',
  hochwasser: 'flood', durre: 'drought', wald: 'forest', waldbrand: 'wildfire', regen: 'rain', schnee: 'snow', boden: 'soil',
  luftqualitat: 'air quality', luftverschmutzung: 'air pollution', hohe: 'elevation', alluvione: 'flood', siccita: 'drought', foresta: 'forest', neve: 'snow',
  inquinamento: 'pollution', pioggia: 'rain', deforestacion: 'deforestation', vegetacion: 'vegetation',
  // Russian
  наводнение: 'flood', засуха: 'drought', лес: 'forest', пожар: 'fire', снег: 'snow', погода: 'weather', температура: 'temperature',
  растительность: 'vegetation', загрязнение: 'pollution', почва: 'soil', высота: 'elevation', дождь: 'rain', ледник: 'glacier',
  // Japanese and Chinese (matched as substrings of a CJK run)
  洪水: 'flood', 浸水: 'flood', 冠水: 'flood', 干ばつ: 'drought', 干旱: 'drought', 森林: 'forest', 森林破壊: 'deforestation', 森林砍伐: 'deforestation',
  山火事: 'wildfire', 火災: 'fire', 火灾: 'fire', 降水: 'precipitation', 降雨: 'rainfall', 雨量: 'rainfall', 積雪: 'snow', 雪: 'snow', 氷河: 'glacier',
  冰川: 'glacier', 植生: 'vegetation', 植被: 'vegetation', 緑: 'green', 大気汚染: 'air pollution', 空気: 'air quality', 空气质量: 'air quality',
  大气污染: 'air pollution', 気温: 'temperature', 气温: 'temperature', 天気: 'weather', 天气: 'weather', 標高: 'elevation', 海拔: 'elevation',
  土壌: 'soil', 土壤: 'soil', 水質: 'water quality', 水质: 'water quality', 地滑り: 'landslide', 土砂崩れ: 'landslide', 滑坡: 'landslide',
  メタン: 'methane', 甲烷: 'methane', 塩害: 'salinity', 盐碱: 'salinity', 土地被覆: 'land cover', 衛星画像: 'satellite image', 卫星图像: 'satellite image',
});

/** Everyday words a topic lists as a single keyword: they weigh less than specific terms (x0.7). */
export const GENERIC_WORDS: ReadonlySet<string> = new Set([
  'field', 'fields', 'change', 'changes', 'changed', 'changing', 'difference', 'water', 'green', 'hot', 'cold', 'warm', 'dry', 'flat', 'plant', 'plants',
  'tree', 'trees', 'image', 'images', 'photo', 'picture', 'scene', 'heat', 'depth', 'plot', 'plots', 'height', 'leaf', 'grass', 'storm', 'storms',
  'sand', 'texture', 'cloud', 'clouds', 'sediment', 'shore', 'stream', 'regulation', 'commodity', 'emission', 'emissions', 'thermal', 'spectral',
  'trend', 'trends', 'peak', 'valley', 'hill', 'hills', 'degrees', 'freeze', 'frost', 'breeze', 'scar', 'leak',
]);

/** Common words a single typo away from a keyword ("blood" ≠ "flood", "plane" ≠ "plant"): never typo-corrected. */
export const NOT_TYPOS: ReadonlySet<string> = new Set(`
blood plane planes place places plate there these those where which whose while could would should about other after three think thing
things house horse hours water month months years world words sound round found ground great green greet cloud could clout price prize
trees treat tread bread break bring brine shine shire spine stone store storm start stars heart heard hearts sheet sleet steel wheel
latest lowest oldest finest truest raise raised rains ranks rated river rover power tower lower mower cover coves moves loves lives
leave least lease cease seize sense tense dense rinse since wince mince prince space spice slice slide slope scope score shore short
shirt smart smoke stoke spoke woke broke awake aware beware where were there their north south earth birth worth forth fourth
turned turning turns planet planets
`.split(/\s+/).filter(Boolean));
