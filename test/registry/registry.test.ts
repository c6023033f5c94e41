/** Registries (spec 2.3, 2.5, 4.5, 4.6, 4.9, 4.10, 4.12): the data files and their validator. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { contentId } from '../../src/protocol/cid.js';
import { RegistryError, TOPIC_COUNT, hasMaterializer, isSatelliteBand, loadRegistry, resolveHuntEvent, validateRegistry, type RawRegistry } from '../../src/registry/registry.js';

const registry = loadRegistry();

/** Every band the brief and the spec name explicitly. */
const REQUIRED_BANDS = [
  'copdem30m.elevation_mean',
  'weather.temperature_2m',
  'weather.precipitation',
  'weather.wind_speed_10m',
  'weather.relative_humidity_2m',
  'weather.cloud_cover',
  'air.pm2_5',
  'air.nitrogen_dioxide',
  'air.ozone',
  's2.B02',
  's2.B03',
  's2.B04',
  's2.B08',
  's2.B11',
  's2.B12',
  'indices.ndvi',
  'indices.ndwi',
  'indices.mndwi',
  'indices.evi',
  'indices.nbr',
  'indices.ndmi',
  'indices.savi',
  'indices.ndbi',
  'indices.bsi',
  'indices.ndci',
  'indices.salinity_si',
  'indices.turbidity_red',
  'indices.dnbr',
  's1.vv_db',
  's1.vh_db',
  'landcover.esa_worldcover_2021',
  'water.gsw_recurrence',
  'water.gsw_occurrence',
  'soil.soc_0_30cm',
  'soil.phh2o_0_30cm',
  'soil.clay_0_30cm',
  'soil.sand_0_30cm',
  'soil.bdod_0_30cm',
  'soil.nitrogen_0_30cm',
  'forest.treecover2000',
  'forest.lossyear',
  'forest.gain',
  'forest.jrc_gfc2020',
  'lst.day_8day',
  'lst.night_8day',
  'precip.chirps_daily_mm',
  'precip.spi_3m',
  'geotessera',
  'geotessera.bin128',
];

/** Spec 4.10: event → algorithm key, and the case-insensitive aliases of each event. */
const HUNT_TABLE: Record<string, { algorithm: string | null; aliases: string[] }> = {
  algal_bloom: { algorithm: 'algal_bloom_chlorophyll_ndci@1', aliases: ['bloom', 'algae_bloom', 'chlorophyll_bloom'] },
  deforestation: { algorithm: 'deforestation_alert_ndvi_drop@1', aliases: ['forest_loss', 'tree_loss'] },
  flood_extent: { algorithm: 'flood_extent_sar_threshold@1', aliases: ['flood', 'inundation', 'flooded_fields'] },
  wildfire: { algorithm: 'wildfire_burn_intensity_dnbr_finetune@1', aliases: ['fire', 'bushfire', 'burn_severity'] },
  urban_heat_island: { algorithm: 'urban_heat_island_lst_canopy@1', aliases: ['uhi', 'heat_island', 'heat'] },
  methane_plume: { algorithm: 'methane_plume_swir_anomaly@1', aliases: ['methane', 'ghg_leak', 'super_emitter'] },
  landslide: { algorithm: 'landslide_post_event_sar_dnn@1', aliases: ['mudslide', 'debris_flow', 'slope_failure'] },
  drought: { algorithm: 'spi_meteorological_drought@1', aliases: ['dry_spell', 'rainfall_deficit'] },
  soil_salinity: { algorithm: 'soil_salinity_index@1', aliases: ['salinity'] },
  crop_stress: { algorithm: 'crop_stress_score@1', aliases: ['crop_damage', 'stressed_crops'] },
  water_turbidity: { algorithm: 'water_turbidity_red_band@1', aliases: ['turbidity', 'sediment_plume'] },
  oil_slick: { algorithm: null, aliases: ['oil_spill'] },
};

const TOPIC_KEYS = [
  'agriculture',
  'air_quality',
  'biodiversity',
  'change_detection',
  'coastal',
  'drought',
  'eudr',
  'fire',
  'flood',
  'forest',
  'land_cover',
  'landslide',
  'methane',
  'optical',
  'precipitation',
  'radar',
  'salinity',
  'similarity',
  'snow_ice',
  'soil',
  'terrain',
  'urban_heat',
  'vegetation',
  'water',
  'water_quality',
  'weather',
];

const dataFile = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../src/registry/data/${name}`, import.meta.url), 'utf8'));

describe('loadRegistry', () => {
  it('returns the same frozen registry on every call', () => {
    assert.equal(loadRegistry(), registry);
    assert.ok(Object.isFrozen(registry.bandList[0]));
    assert.throws(() => (registry.bandList as unknown as unknown[]).push({}), TypeError);
  });

  it(`declares exactly ${TOPIC_COUNT} topics with the pinned keys`, () => {
    assert.equal(TOPIC_COUNT, 26);
    assert.deepEqual(
      registry.topicList.map((t) => t.key),
      TOPIC_KEYS,
    );
  });

  it('holds every band the spec names', () => {
    for (const key of REQUIRED_BANDS) assert.ok(registry.bands.has(key), `band ${key} missing`);
  });

  it('declares the default bands as the spec describes them (part 3)', () => {
    const dem = registry.bands.get('copdem30m.elevation_mean')!;
    assert.deepEqual([dem.tempo, dem.unit, dem.source], ['static', 'm_msl', 'open_meteo']);
    const t2m = registry.bands.get('weather.temperature_2m')!;
    assert.deepEqual([t2m.tempo, t2m.unit, t2m.source], ['fast', 'degC', 'open_meteo']);
  });

  it('gives vector bands a dimension and categorical bands their classes', () => {
    assert.equal(registry.bands.get('geotessera')!.dim, 128);
    assert.equal(registry.bands.get('geotessera.bin128')!.dim, 128);
    const wc = registry.bands.get('landcover.esa_worldcover_2021')!;
    assert.deepEqual(
      Object.keys(wc.classes!)
        .map(Number)
        .sort((a, b) => a - b),
      [10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 100],
    );
    assert.equal(wc.classes!['95'], 'Mangroves');
  });

  it('serves the three air bands in ug/m3 from CAMS (part 4.6)', () => {
    for (const key of ['air.pm2_5', 'air.nitrogen_dioxide', 'air.ozone']) {
      const b = registry.bands.get(key)!;
      assert.deepEqual([b.unit, b.provenance_class, b.source], ['ug_m3', 'model_output', 'open_meteo_air'], key);
    }
  });

  it('overrides the Open-Meteo family through the exact environment variables', () => {
    const pairs = ['open_meteo', 'open_meteo_air', 'open_meteo_archive'].map((k) => [registry.sources.get(k)!.env, registry.sources.get(k)!.default_url]);
    assert.deepEqual(pairs, [
      ['SVC_UPSTREAM_OPEN_METEO_URL', 'https://api.open-meteo.com'],
      ['SVC_UPSTREAM_OPEN_METEO_AIR_URL', 'https://air-quality-api.open-meteo.com'],
      ['SVC_UPSTREAM_OPEN_METEO_ARCHIVE_URL', 'https://archive-api.open-meteo.com'],
    ]);
  });

  it('pins each manifest to the CID of the file array', () => {
    for (const name of ['bands', 'sources', 'functions', 'algorithms', 'topics'] as const) {
      const cid = registry.manifests[name];
      assert.equal(cid.length, 52, name);
      assert.equal(cid, contentId(dataFile(`${name}.json`)), name);
    }
  });

  it('keeps every algorithm of 10 m or finer tied to a satellite variance source (part 2.5)', () => {
    for (const a of registry.algorithmList) {
      if (a.resolution_m <= 10) assert.ok(a.variance_sources.some(isSatelliteBand), a.key);
    }
  });
});

describe('hunt algorithms (spec 4.10)', () => {
  for (const [event, row] of Object.entries(HUNT_TABLE)) {
    it(`maps ${event} to ${row.algorithm ?? 'no algorithm'}`, () => {
      const ev = registry.huntEvents.get(event);
      assert.ok(ev, `event ${event} missing`);
      assert.equal(ev.algorithm, row.algorithm);
      assert.deepEqual([...ev.aliases].sort(), [...row.aliases].sort());
      if (row.algorithm === null) return;
      const a = registry.algorithms.get(row.algorithm);
      assert.ok(a, `algorithm ${row.algorithm} missing`);
      assert.ok(['solo', 'combined', 'embedding'].includes(a.kind));
      assert.ok(a.bands.length >= 1);
      for (const field of ['formula', 'output', 'citation'] as const) assert.ok(a[field].length > 10, `${a.key} ${field}`);
      assert.equal(a.event, event);
    });

    if (row.algorithm !== null) {
      it(`ranks ${event} on a scalar primary band that an upstream can materialize`, () => {
        const a = registry.algorithms.get(row.algorithm!)!;
        const primary = registry.bands.get(a.bands[0]!)!;
        assert.equal(primary.value_kind, 'scalar');
        assert.ok(hasMaterializer(primary), `${primary.key} has no materializer`);
        assert.ok(registry.sources.has(primary.source), `${primary.key} source ${primary.source}`);
      });
    }
  }

  it('declares no hunt event beyond the spec table', () => {
    assert.deepEqual(registry.huntEventList.map((e) => e.event).sort(), Object.keys(HUNT_TABLE).sort());
    const withEvent = registry.algorithmList
      .filter((a) => a.event !== null)
      .map((a) => a.key)
      .sort();
    assert.deepEqual(
      withEvent,
      Object.values(HUNT_TABLE)
        .flatMap((r) => (r.algorithm ? [r.algorithm] : []))
        .sort(),
    );
  });

  it('samples 8 cells for the slow primary bands (land-surface temperature, SPI)', () => {
    assert.equal(registry.huntEvents.get('urban_heat_island')!.slow, true);
    assert.equal(registry.huntEvents.get('drought')!.slow, true);
    assert.equal(registry.huntEvents.get('algal_bloom')!.slow, false);
  });
});

describe('resolveHuntEvent', () => {
  for (const [event, row] of Object.entries(HUNT_TABLE)) {
    for (const name of [event, ...row.aliases]) {
      it(`resolves ${name} and ${name.toUpperCase()} to ${event}`, () => {
        assert.equal(resolveHuntEvent(name)?.event, event);
        assert.equal(resolveHuntEvent(name.toUpperCase())?.event, event);
      });
    }
  }

  it('treats spaces and hyphens as underscores', () => {
    assert.equal(resolveHuntEvent(' Heat Island ')?.event, 'urban_heat_island');
    assert.equal(resolveHuntEvent('debris-flow')?.event, 'landslide');
  });

  it('returns undefined for an unknown event', () => {
    assert.equal(resolveHuntEvent('volcano'), undefined);
  });

  it('offers a radar-darkening workaround for oil_slick', () => {
    assert.match(registry.notYetImplemented.get('oil_slick')!, /radar darkening/);
  });
});

// ---------------------------------------------------------------------------------------------
// Wrong-registry table: a small valid registry, then one defect at a time.

type Json = Record<string, unknown>;
interface Fixture {
  bands: Json[];
  sources: Json[];
  functions: Json[];
  algorithms: Json[];
  topics: Json[];
  hunt_events: { events: Json[]; not_yet_implemented: Json };
}

function band(key: string, extra: Json = {}): Json {
  return {
    key,
    title: 'Demo',
    unit: 'unitless',
    tempo: 'medium',
    cadence_s: 432000,
    value_kind: 'scalar',
    privacy_class: 'public',
    provenance_class: 'deterministic_index',
    source: 'demo',
    function: 'point_sample@1',
    history_from_unix: 0,
    history_to_unix: null,
    description: 'A demo band.',
    absence_rule: 'Never.',
    min_level: 'L0',
    ...extra,
  };
}

function fixture(): Fixture {
  const topics: Json[] = Array.from({ length: 26 }, (_, i) => ({
    key: `t${String(i).padStart(2, '0')}`,
    title: `Topic ${i}`,
    keywords: ['one', 'two', 'three', 'four', 'five'],
    bands: ['s2.demo'],
    algorithms: i === 0 ? ['demo_hunt@1'] : [],
  }));
  return {
    bands: [
      band('demo.class', { value_kind: 'categorical', unit: 'class', classes: { 0: 'no', 1: 'yes' } }),
      band('demo.emb', { value_kind: 'vector', dim: 4, tempo: 'slow', cadence_s: 31536000 }),
      band('s2.demo'),
    ],
    sources: [
      {
        key: 'demo',
        name: 'Demo',
        provider: 'Nobody',
        protocol: 'cog',
        default_url: 'https://example.org/demo',
        env: 'SVC_UPSTREAM_DEMO_URL',
        license: 'CC0',
        attribution: 'none',
        history: 'none',
      },
    ],
    functions: [
      { key: 'attested@1', description: 'As attested.', inputs: ['body'], output: 'value' },
      { key: 'point_sample@1', description: 'Pixel read.', inputs: ['tile'], output: 'value' },
    ],
    algorithms: [
      {
        key: 'demo_hunt@1',
        kind: 'solo',
        bands: ['s2.demo'],
        formula: 'x',
        output: 'x',
        citation: 'x',
        topic: 't00',
        event: 'demo_event',
        resolution_m: 10,
        variance_sources: ['s2.demo'],
      },
    ],
    topics,
    hunt_events: {
      events: [
        { event: 'demo_event', algorithm: 'demo_hunt@1', aliases: ['demo_alias'], slow: false, rank: 'desc' },
        { event: 'demo_todo', algorithm: null, aliases: [], slow: false, rank: null },
      ],
      not_yet_implemented: { demo_todo: 'Not yet.' },
    },
  };
}

const asRaw = (f: Fixture): RawRegistry => f as unknown as RawRegistry;

/** `why`, when given, must match the reason (the message after file, entry and field). */
interface Defect {
  name: string;
  file: string;
  entry: string | null;
  field: string | null;
  mutate: (f: Fixture) => void;
  why?: RegExp;
}

const DEFECTS: Defect[] = [
  {
    name: 'band without a unit',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'unit',
    mutate: (f) => {
      delete f.bands[2]!.unit;
    },
  },
  {
    name: 'band with an unknown tempo',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'tempo',
    mutate: (f) => {
      f.bands[2]!.tempo = 'hourly';
    },
  },
  {
    name: 'band with a wrong provenance class',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'provenance_class',
    mutate: (f) => {
      f.bands[2]!.provenance_class = 'satellite';
    },
  },
  {
    name: 'band with a wrong level',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'min_level',
    mutate: (f) => {
      f.bands[2]!.min_level = 'L9';
    },
  },
  {
    name: 'band with an unknown field',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'colour',
    mutate: (f) => {
      f.bands[2]!.colour = 'red';
    },
  },
  {
    name: 'duplicate band key',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'key',
    mutate: (f) => {
      f.bands.push(band('s2.demo'));
    },
  },
  {
    name: 'unsorted band keys',
    file: 'bands.json',
    entry: 'demo.emb',
    field: 'key',
    mutate: (f) => {
      f.bands.reverse();
    },
  },
  {
    name: 'band naming a missing source',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'source',
    mutate: (f) => {
      f.bands[2]!.source = 'nowhere';
    },
  },
  {
    name: 'band naming a missing function',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'function',
    mutate: (f) => {
      f.bands[2]!.function = 'magic@1';
    },
  },
  {
    name: 'vector band without dim',
    file: 'bands.json',
    entry: 'demo.emb',
    field: 'dim',
    mutate: (f) => {
      delete f.bands[1]!.dim;
    },
  },
  {
    name: 'scalar band with dim',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'dim',
    mutate: (f) => {
      f.bands[2]!.dim = 3;
    },
  },
  {
    name: 'categorical band without classes',
    file: 'bands.json',
    entry: 'demo.class',
    field: 'classes',
    mutate: (f) => {
      delete f.bands[0]!.classes;
    },
  },
  {
    name: 'class id that is not an integer',
    file: 'bands.json',
    entry: 'demo.class',
    field: 'classes',
    mutate: (f) => {
      f.bands[0]!.classes = { x: 'no' };
    },
  },
  {
    name: 'static band with a cadence',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'cadence_s',
    mutate: (f) => {
      f.bands[2]!.tempo = 'static';
    },
  },
  {
    name: 'cadence longer than a fast tslot',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'cadence_s',
    mutate: (f) => {
      f.bands[2]!.tempo = 'fast';
    },
  },
  {
    name: 'history ending before it starts',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'history_to_unix',
    mutate: (f) => {
      f.bands[2]!.history_from_unix = 100;
      f.bands[2]!.history_to_unix = 50;
    },
  },
  {
    name: 'source with a foreign env name',
    file: 'sources.json',
    entry: 'demo',
    field: 'env',
    mutate: (f) => {
      f.sources[0]!.env = 'DEMO_URL';
    },
  },
  {
    name: 'source over plain http',
    file: 'sources.json',
    entry: 'demo',
    field: 'default_url',
    mutate: (f) => {
      f.sources[0]!.default_url = 'http://example.org';
    },
  },
  {
    name: 'source with an unknown protocol',
    file: 'sources.json',
    entry: 'demo',
    field: 'protocol',
    mutate: (f) => {
      f.sources[0]!.protocol = 'ftp';
    },
  },
  {
    name: 'function key without a version',
    file: 'functions.json',
    entry: 'point_sample',
    field: 'key',
    mutate: (f) => {
      f.functions[1]!.key = 'point_sample';
    },
  },
  {
    name: 'function without inputs',
    file: 'functions.json',
    entry: 'point_sample@1',
    field: 'inputs',
    mutate: (f) => {
      f.functions[1]!.inputs = [];
    },
  },
  {
    name: 'algorithm without a formula',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'formula',
    mutate: (f) => {
      delete f.algorithms[0]!.formula;
    },
  },
  {
    name: 'algorithm with an unknown kind',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'kind',
    mutate: (f) => {
      f.algorithms[0]!.kind = 'ensemble';
    },
  },
  {
    name: 'algorithm naming a missing band',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'bands',
    mutate: (f) => {
      f.algorithms[0]!.bands = ['s2.demo', 'nope.band'];
    },
  },
  {
    name: 'algorithm naming a missing topic',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'topic',
    mutate: (f) => {
      f.algorithms[0]!.topic = 'nope';
    },
  },
  {
    name: 'algorithm its topic does not list',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'topic',
    mutate: (f) => {
      f.algorithms[0]!.topic = 't01';
    },
  },
  {
    name: '10 m algorithm without a satellite variance source',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'variance_sources',
    mutate: (f) => {
      f.algorithms[0]!.bands = ['s2.demo', 'demo.class'];
      f.algorithms[0]!.variance_sources = ['demo.class'];
    },
  },
  {
    name: 'variance source outside the inputs',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'variance_sources',
    mutate: (f) => {
      f.algorithms[0]!.variance_sources = ['demo.class'];
    },
  },
  {
    name: 'embedding algorithm without a vector band',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'bands',
    mutate: (f) => {
      f.algorithms[0]!.kind = 'embedding';
    },
  },
  {
    name: 'hunt ranking on a band with no materializer',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'bands',
    mutate: (f) => {
      f.bands[2]!.function = 'attested@1';
    },
  },
  {
    name: 'hunt ranking on a vector band',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'bands',
    mutate: (f) => {
      f.algorithms[0]!.bands = ['demo.emb', 's2.demo'];
    },
  },
  {
    name: 'algorithm naming a missing event',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'event',
    mutate: (f) => {
      f.algorithms[0]!.event = 'volcano';
    },
  },
  {
    name: 'topics count of 25',
    file: 'topics.json',
    entry: null,
    field: null,
    mutate: (f) => {
      f.topics.pop();
    },
  },
  {
    name: 'upper-case keyword',
    file: 'topics.json',
    entry: 't03',
    field: 'keywords',
    mutate: (f) => {
      f.topics[3]!.keywords = ['One', 'two', 'three', 'four', 'five'];
    },
  },
  {
    name: 'topic with four keywords',
    file: 'topics.json',
    entry: 't03',
    field: 'keywords',
    mutate: (f) => {
      f.topics[3]!.keywords = ['one', 'two', 'three', 'four'];
    },
  },
  {
    name: 'topic naming a missing algorithm',
    file: 'topics.json',
    entry: 't03',
    field: 'algorithms',
    mutate: (f) => {
      f.topics[3]!.algorithms = ['ghost@1'];
    },
  },
  {
    name: 'topic naming a missing band',
    file: 'topics.json',
    entry: 't03',
    field: 'bands',
    mutate: (f) => {
      f.topics[3]!.bands = ['ghost.band'];
    },
  },
  {
    name: 'alias claimed by two events',
    file: 'hunt_events.json',
    entry: 'demo_todo',
    field: 'aliases',
    mutate: (f) => {
      f.hunt_events.events[1]!.aliases = ['demo_alias'];
    },
  },
  {
    name: 'event without algorithm or workaround',
    file: 'hunt_events.json',
    entry: 'demo_todo',
    field: 'algorithm',
    mutate: (f) => {
      f.hunt_events.not_yet_implemented = {};
    },
  },
  {
    name: 'event naming a missing algorithm',
    file: 'hunt_events.json',
    entry: 'demo_todo',
    field: 'algorithm',
    mutate: (f) => {
      f.hunt_events.events[1]!.algorithm = 'ghost@1';
      f.hunt_events.events[1]!.rank = 'asc';
      f.hunt_events.not_yet_implemented = {};
    },
  },
  {
    name: 'event with an unknown rank',
    file: 'hunt_events.json',
    entry: 'demo_event',
    field: 'rank',
    mutate: (f) => {
      f.hunt_events.events[0]!.rank = 'up';
    },
    why: /^must be one of desc, asc, abs_desc or null \(got "up"\)$/,
  },
  // What the entry schemas say (types, patterns, item rules), down to nested values.
  {
    name: 'band with a blank title',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'title',
    mutate: (f) => {
      f.bands[2]!.title = '  ';
    },
    why: /^must be a non-empty string \(got " {2}"\)$/,
  },
  {
    name: 'band with a non-integer dim',
    file: 'bands.json',
    entry: 'demo.emb',
    field: 'dim',
    mutate: (f) => {
      f.bands[1]!.dim = 4.5;
    },
    why: /^must be an integer >= 1 \(got 4\.5\)$/,
  },
  {
    name: 'band with a dim of 0',
    file: 'bands.json',
    entry: 'demo.emb',
    field: 'dim',
    mutate: (f) => {
      f.bands[1]!.dim = 0;
    },
    why: /integer >= 1 \(got 0\)/,
  },
  {
    name: 'band with a text cadence',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'cadence_s',
    mutate: (f) => {
      f.bands[2]!.cadence_s = '432000';
    },
    why: /^must be an integer >= 0 \(got "432000"\)$/,
  },
  {
    name: 'band without history_from_unix',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'history_from_unix',
    mutate: (f) => {
      delete f.bands[2]!.history_from_unix;
    },
    why: /^missing \(use null for none\)$/,
  },
  {
    name: 'history start that is neither integer nor null',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'history_from_unix',
    mutate: (f) => {
      f.bands[2]!.history_from_unix = '2020';
    },
    why: /^must be an integer >= 0 or null \(got "2020"\)$/,
  },
  {
    name: 'class with a blank label',
    file: 'bands.json',
    entry: 'demo.class',
    field: 'classes',
    mutate: (f) => {
      f.bands[0]!.classes = { 0: 'no', 1: '' };
    },
    why: /^"1": must be a non-empty string \(got ""\)$/,
  },
  {
    name: 'class id with a leading zero',
    file: 'bands.json',
    entry: 'demo.class',
    field: 'classes',
    mutate: (f) => {
      f.bands[0]!.classes = { 0: 'no', '01': 'yes' };
    },
    why: /class ids .*\(got key "01"\)$/,
  },
  {
    name: 'categorical band with no classes listed',
    file: 'bands.json',
    entry: 'demo.class',
    field: 'classes',
    mutate: (f) => {
      f.bands[0]!.classes = {};
    },
  },
  {
    name: 'value_range of three bounds',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'value_range',
    mutate: (f) => {
      f.bands[2]!.value_range = [0, 1, 2];
    },
    why: /^must be \[min, max\] of numbers or null \(got \[0,1,2\]\)$/,
  },
  {
    name: 'value_range bound that is text',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'value_range',
    mutate: (f) => {
      f.bands[2]!.value_range = [0, 'one'];
    },
    why: /^#1: must be a number or null \(got "one"\)$/,
  },
  {
    name: 'agreement tolerance of 0',
    file: 'bands.json',
    entry: 's2.demo',
    field: 'agreement_tolerance',
    mutate: (f) => {
      f.bands[2]!.agreement_tolerance = 0;
    },
    why: /^must be a positive number \(got 0\)$/,
  },
  {
    name: 'band entry that is not an object',
    file: 'bands.json',
    entry: '#3',
    field: null,
    mutate: (f) => {
      (f.bands as unknown[]).push('s2.zzz');
    },
    why: /^must be an object \(got "s2.zzz"\)$/,
  },
  {
    name: 'source with a blank licence',
    file: 'sources.json',
    entry: 'demo',
    field: 'license',
    mutate: (f) => {
      f.sources[0]!.license = '';
    },
  },
  {
    name: 'function with a duplicate input',
    file: 'functions.json',
    entry: 'point_sample@1',
    field: 'inputs',
    mutate: (f) => {
      f.functions[1]!.inputs = ['tile', 'tile'];
    },
    why: /^duplicate item "tile"$/,
  },
  {
    name: 'algorithm with a duplicate variance source',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'variance_sources',
    mutate: (f) => {
      f.algorithms[0]!.variance_sources = ['s2.demo', 's2.demo'];
    },
    why: /^duplicate item "s2.demo"$/,
  },
  {
    name: 'algorithm with a resolution of 0',
    file: 'algorithms.json',
    entry: 'demo_hunt@1',
    field: 'resolution_m',
    mutate: (f) => {
      f.algorithms[0]!.resolution_m = 0;
    },
  },
  {
    name: 'topic with a duplicate keyword',
    file: 'topics.json',
    entry: 't03',
    field: 'keywords',
    mutate: (f) => {
      f.topics[3]!.keywords = ['one', 'two', 'three', 'four', 'four'];
    },
    why: /^duplicate item "four"$/,
  },
  {
    name: 'topic with a blank phrase',
    file: 'topics.json',
    entry: 't03',
    field: 'phrases',
    mutate: (f) => {
      f.topics[3]!.phrases = ['rain*', ' '];
    },
    why: /^#1: must be a non-empty string/,
  },
  {
    name: 'topic keywords that are not a list',
    file: 'topics.json',
    entry: 't03',
    field: 'keywords',
    mutate: (f) => {
      f.topics[3]!.keywords = 'one two';
    },
    why: /^must be an array \(got "one two"\)$/,
  },
  {
    name: 'event name not in plain form',
    file: 'hunt_events.json',
    entry: 'Demo-Todo',
    field: 'event',
    mutate: (f) => {
      f.hunt_events.events[1]!.event = 'Demo-Todo';
    },
    why: /^must be lower-case letters, digits and underscores/,
  },
  {
    name: 'alias repeated within one event',
    file: 'hunt_events.json',
    entry: 'demo_event',
    field: 'aliases',
    mutate: (f) => {
      f.hunt_events.events[0]!.aliases = ['demo_alias', 'demo_alias'];
    },
    why: /^duplicate item "demo_alias"$/,
  },
  {
    name: 'event with a text slow flag',
    file: 'hunt_events.json',
    entry: 'demo_event',
    field: 'slow',
    mutate: (f) => {
      f.hunt_events.events[0]!.slow = 'no';
    },
    why: /^must be a boolean \(got "no"\)$/,
  },
  {
    name: 'event with an unknown field',
    file: 'hunt_events.json',
    entry: 'demo_event',
    field: 'region',
    mutate: (f) => {
      f.hunt_events.events[0]!.region = 'sea';
    },
    why: /^unknown field$/,
  },
  {
    name: 'event with an algorithm and no rank',
    file: 'hunt_events.json',
    entry: 'demo_event',
    field: 'rank',
    mutate: (f) => {
      f.hunt_events.events[0]!.rank = null;
    },
  },
  {
    name: 'event without an algorithm but with a rank',
    file: 'hunt_events.json',
    entry: 'demo_todo',
    field: 'rank',
    mutate: (f) => {
      f.hunt_events.events[1]!.rank = 'desc';
    },
  },
  {
    name: 'unknown field beside the hunt events',
    file: 'hunt_events.json',
    entry: null,
    field: 'regions',
    mutate: (f) => {
      (f.hunt_events as unknown as Json).regions = [];
    },
    why: /^unknown field$/,
  },
  {
    name: 'blank workaround text',
    file: 'hunt_events.json',
    entry: null,
    field: 'not_yet_implemented',
    mutate: (f) => {
      f.hunt_events.not_yet_implemented = { demo_todo: ' ' };
    },
    why: /^"demo_todo": must be a non-empty string/,
  },
  {
    name: 'workaround for an event that has an algorithm',
    file: 'hunt_events.json',
    entry: 'demo_event',
    field: 'not_yet_implemented',
    mutate: (f) => {
      f.hunt_events.not_yet_implemented.demo_event = 'Use something else.';
    },
  },
];

describe('validateRegistry', () => {
  it('accepts the small valid fixture and leaves it unfrozen', () => {
    const f = fixture();
    const r = validateRegistry(asRaw(f));
    assert.equal(r.topicList.length, 26);
    assert.equal(resolveHuntEvent('DEMO_ALIAS', r)?.event, 'demo_event');
    assert.equal(Object.isFrozen(f.bands[0]), false);
  });

  for (const d of DEFECTS) {
    it(`refuses ${d.name} (${[d.file, d.entry, d.field].filter(Boolean).join(' ')})`, () => {
      const f = fixture();
      d.mutate(f);
      assert.throws(
        () => validateRegistry(asRaw(f)),
        (err: unknown) => {
          assert.ok(err instanceof RegistryError, String(err));
          assert.equal(err.file, d.file, err.message);
          assert.equal(err.entryKey, d.entry, err.message);
          assert.equal(err.field, d.field, err.message);
          assert.ok(err.message.includes(d.file), err.message);
          if (d.entry !== null) assert.ok(err.message.includes(`"${d.entry}"`), err.message);
          if (d.field !== null) assert.ok(err.message.includes(`"${d.field}"`), err.message);
          if (d.why !== undefined) assert.match(err.why, d.why);
          return true;
        },
      );
    });
  }

  it('names the count when the topics are not 26', () => {
    const f = fixture();
    f.topics.pop();
    assert.throws(() => validateRegistry(asRaw(f)), /exactly 26 topics \(got 25\)/);
  });
});
