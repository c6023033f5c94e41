/**
 * Registry entry types (bands, sources, derivation functions, algorithms, topics, hunt events),
 * the value lists their enumerated fields take, and the few constants and predicates code reads
 * off an entry. No I/O and no checks: validate.ts checks the data files, load.ts reads them.
 * ProvenanceClass is declared here, the lowest layer that needs it; the store's contract
 * imports it from here.
 */
import type { Tempo } from '../protocol/tslot.js';

/**
 * `record`: a map the responder derives and signs (an answer step of /v1/ask), stored like any
 * fact but only at an `svc:entity:` subject, so no read of a cell ever meets one.
 */
export type ValueKind = 'scalar' | 'vector' | 'categorical' | 'record';
export type ProvenanceClass = 'direct_sensor' | 'deterministic_index' | 'model_output' | 'human_curated' | 'unclassified';
export type PrivacyClass = 'public' | 'restricted';
export type ProtocolLevel = 'L0' | 'L1' | 'L2' | 'L3';
export type SourceProtocol =
  | 'open-meteo-json'
  | 'stac+cog'
  | 'cog'
  | 'soilgrids-rest'
  | 'ornl-modis-rest'
  | 'npy-tiles'
  | 'pmtiles'
  | 'nasa-power-rest'
  | 'pvgis-rest'
  | 'thredds-ncss-csv'
  | 'metno-rest'
  | 'firms-csv'
  | 'arcgis-imageserver'
  | 'stac-catalog';
export type AlgorithmKind = 'solo' | 'combined' | 'embedding';
/** Which end of the primary band is a hotspot: highest first, lowest first, largest magnitude first. */
export type HuntRank = 'desc' | 'asc' | 'abs_desc';

// The value lists: also the enumerations of the registry schemas (validate.ts). The tempos are
// those of protocol/tslot.ts, declared once there with their unit lengths.
export { TEMPOS } from '../protocol/tslot.js';
export const VALUE_KINDS: readonly ValueKind[] = ['scalar', 'vector', 'categorical', 'record'];
export const PROVENANCE_CLASSES: readonly ProvenanceClass[] = ['direct_sensor', 'deterministic_index', 'model_output', 'human_curated', 'unclassified'];
/**
 * `public`: open data, any writer. `restricted`: facts that locate a person or device, which an
 * operator-listed key may not write at full cell resolution (docs/writes.md, "Per fact":
 * privacy_refused).
 */
export const PRIVACY_CLASSES: readonly PrivacyClass[] = ['public', 'restricted'];
/** L0/L1 reads, L2 writes by operator and device keys, L3 writes by the responder key alone. */
export const PROTOCOL_LEVELS: readonly ProtocolLevel[] = ['L0', 'L1', 'L2', 'L3'];
export const SOURCE_PROTOCOLS: readonly SourceProtocol[] = [
  'open-meteo-json',
  'stac+cog',
  'cog',
  'soilgrids-rest',
  'ornl-modis-rest',
  'npy-tiles',
  'pmtiles',
  'nasa-power-rest',
  'pvgis-rest',
  'thredds-ncss-csv',
  'metno-rest',
  'firms-csv',
  'arcgis-imageserver',
  'stac-catalog',
];
export const ALGORITHM_KINDS: readonly AlgorithmKind[] = ['solo', 'combined', 'embedding'];
export const HUNT_RANKS: readonly HuntRank[] = ['desc', 'asc', 'abs_desc'];
/** Questions are classified into one of 26 declared topics (docs/ask.md, "Routing"; docs/reads.md, "Registries"). */
export const TOPIC_COUNT = 26;
/** Derivation function of facts written through /v1/attest: such a band has no materializer. */
export const ATTESTED_FUNCTION = 'attested@1';
/**
 * Source of an attest-only band whose values come from the attester itself (a device, a person),
 * not from an upstream service: it has no entry in sources.json, because there is nothing to fetch.
 */
export const ATTESTER_SOURCE = 'attester';
/**
 * Bands that count as a radar or optical satellite input (the 10 m rule, docs/reads.md,
 * "Registries"): Sentinel-1/2
 * readings and indices, plus the two 10 m products computed from Sentinel-1/2 time series.
 */
const SATELLITE_BAND_PREFIXES = ['s1.', 's2.', 'indices.', 'geotessera', 'landcover.esa_worldcover_'];

export interface BandEntry {
  readonly key: string;
  readonly title: string;
  readonly unit: string;
  readonly tempo: Tempo;
  /** Native revisit or cadence in seconds; 0 for static bands. */
  readonly cadence_s: number;
  readonly value_kind: ValueKind;
  /** Vector bands only. */
  readonly dim?: number;
  /** Categorical bands only: class id (decimal text) to label. */
  readonly classes?: Readonly<Record<string, string>>;
  /**
   * Physically possible values [min, max] (null: unbounded on that side); for a vector band, of
   * each component. A value outside is refused on write (docs/writes.md); absent: no bound.
   */
  readonly value_range?: readonly [number | null, number | null];
  /**
   * Scalar bands only: the largest absolute difference (in the band's unit) at which two signed
   * values of one (cell, band, tslot) still agree (memory_contradictions, attester reputation;
   * docs/memory-insight.md). Absent: AGREEMENT_RELATIVE_DEFAULT of the larger magnitude.
   */
  readonly agreement_tolerance?: number;
  readonly privacy_class: PrivacyClass;
  readonly provenance_class: ProvenanceClass;
  /** Key in sources.json, or ATTESTER_SOURCE for an attest-only band. */
  readonly source: string;
  /** Key in functions.json. */
  readonly function: string;
  readonly history_from_unix: number | null;
  /** null = ongoing. */
  readonly history_to_unix: number | null;
  readonly description: string;
  readonly absence_rule: string;
  readonly min_level: ProtocolLevel;
}

export interface SourceEntry {
  readonly key: string;
  readonly name: string;
  readonly provider: string;
  readonly protocol: SourceProtocol;
  readonly default_url: string;
  /** Environment variable overriding default_url: SVC_UPSTREAM_<KEY>_URL. */
  readonly env: string;
  readonly license: string;
  readonly attribution: string;
  readonly history: string;
}

export interface FunctionEntry {
  readonly key: string;
  readonly description: string;
  readonly inputs: readonly string[];
  readonly output: string;
}

export interface AlgorithmEntry {
  readonly key: string;
  readonly kind: AlgorithmKind;
  /** Input bands; for a hunt algorithm the first one is the primary scalar band it ranks on. */
  readonly bands: readonly string[];
  readonly formula: string;
  readonly output: string;
  readonly citation: string;
  readonly topic: string;
  readonly event: string | null;
  readonly resolution_m: number;
  readonly variance_sources: readonly string[];
}

export interface TopicEntry {
  readonly key: string;
  readonly title: string;
  /** One sentence on what the topic covers (the /v1/ask inventory shows it). */
  readonly description?: string;
  /** Words and multi-word terms the /v1/ask router matches (lower case; stemmed at load). */
  readonly keywords: readonly string[];
  /**
   * Phrase patterns for /v1/ask: words separated by spaces, where `*` stands for a gap of up to
   * two words and a trailing `*` on a word matches any ending ("rain*" → raining, rainfall).
   */
  readonly phrases?: readonly string[];
  readonly bands: readonly string[];
  readonly algorithms: readonly string[];
}

export interface HuntEvent {
  readonly event: string;
  /** null when not yet implemented (see Registry.notYetImplemented). */
  readonly algorithm: string | null;
  readonly aliases: readonly string[];
  /** Slow primary band: sample 8 cells instead of 32 (docs/hunt.md, "How it works"). */
  readonly slow: boolean;
  readonly rank: HuntRank | null;
}

/**
 * The canonical text of each registry data file, from which its manifest CID is computed
 * (registry/manifests.ts). Not the pair of CIDs a receipt pins: that is protocol's `Manifests`.
 */
export interface ManifestTexts {
  readonly bands: string;
  readonly sources: string;
  readonly functions: string;
  readonly algorithms: string;
  readonly topics: string;
}

export interface Registry {
  readonly bands: ReadonlyMap<string, BandEntry>;
  readonly bandList: readonly BandEntry[];
  readonly sources: ReadonlyMap<string, SourceEntry>;
  readonly sourceList: readonly SourceEntry[];
  readonly functions: ReadonlyMap<string, FunctionEntry>;
  readonly functionList: readonly FunctionEntry[];
  readonly algorithms: ReadonlyMap<string, AlgorithmEntry>;
  readonly algorithmList: readonly AlgorithmEntry[];
  readonly topics: ReadonlyMap<string, TopicEntry>;
  readonly topicList: readonly TopicEntry[];
  /** By canonical event name. */
  readonly huntEvents: ReadonlyMap<string, HuntEvent>;
  readonly huntEventList: readonly HuntEvent[];
  /** Every event name and alias (lower case) to its event. */
  readonly huntEventsByName: ReadonlyMap<string, HuntEvent>;
  /** Event name to the workaround text of an event without an algorithm. */
  readonly notYetImplemented: ReadonlyMap<string, string>;
  /** CID of each registry file's parsed JSON array: contentId(array). */
  readonly manifests: ManifestTexts;
}

/** The parsed, not yet validated, content of the six data files. */
export interface RawRegistry {
  readonly bands: unknown;
  readonly sources: unknown;
  readonly functions: unknown;
  readonly algorithms: unknown;
  readonly topics: unknown;
  readonly hunt_events: unknown;
}

/**
 * Agreement of two scalar values of a band without an `agreement_tolerance`: they agree when they
 * differ by at most this fraction of the larger magnitude (so only float noise passes).
 */
export const AGREEMENT_RELATIVE_DEFAULT = 1e-6;

/** True when the band's facts are minted by a connector rather than only written through attest. */
export function hasMaterializer(band: BandEntry): boolean {
  return band.function !== ATTESTED_FUNCTION;
}

/** True for radar or optical satellite bands (the inputs that may justify a 10 m claim). */
export function isSatelliteBand(key: string): boolean {
  return SATELLITE_BAND_PREFIXES.some((p) => key === p || key.startsWith(p));
}
