/**
 * Registries (docs/reads.md, "Registries"): bands, sources, derivation functions, algorithms,
 * topics and hunt events. JSON data under ./data, validated once at start, with manifest CIDs.
 *
 * The public face of the registry: entry types and constants (types.ts), the checks of the
 * data files (validate.ts) and their reading (load.ts) live in their own modules; importers use
 * this one.
 */
export {
  AGREEMENT_RELATIVE_DEFAULT,
  ALGORITHM_KINDS,
  ATTESTED_FUNCTION,
  ATTESTER_SOURCE,
  hasMaterializer,
  HUNT_RANKS,
  isSatelliteBand,
  PRIVACY_CLASSES,
  PROTOCOL_LEVELS,
  PROVENANCE_CLASSES,
  SOURCE_PROTOCOLS,
  TEMPOS,
  TOPIC_COUNT,
  VALUE_KINDS,
} from './types.js';
export type {
  AlgorithmEntry,
  AlgorithmKind,
  BandEntry,
  FunctionEntry,
  HuntEvent,
  HuntRank,
  ManifestTexts,
  PrivacyClass,
  ProtocolLevel,
  ProvenanceClass,
  RawRegistry,
  Registry,
  SourceEntry,
  SourceProtocol,
  TopicEntry,
  ValueKind,
} from './types.js';
export { RegistryError } from './validate.js';
export { loadRegistry, resolveHuntEvent, validateRegistry } from './load.js';
