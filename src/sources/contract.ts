/**
 * Materializer contract: what an upstream connector answers for one (cell, band, tslot).
 * Connectors never sign or write; the recall core mints what they return through the write
 * path. A timeout or an upstream error is NOT an absence: nothing is signed for it.
 */
import type { Config } from '../config.js';
import type { LatLng } from '../protocol/cell64.js';
import type { BandEntry, Registry } from '../registry/registry.js';
import type { UpstreamClient } from './http.js';

export type AbsenceReason = 'unavailable_capability' | 'outside_coverage' | 'archetype_seed_unavailable' | 'gpu_unavailable' | 'upstream_error' | 'upstream_timeout';

export interface MaterializeRequest {
  cell: string;
  band: BandEntry;
  /** The tslot asked for, counted in the band's tempo. */
  tslot: number;
  /** The cell centre: every responder asks upstream the same question for the same cell. */
  center: LatLng;
  /** Aborted when the request's budget ends. */
  signal: AbortSignal;
  /** Absolute deadline (ms since epoch). */
  deadline: number;
}

/** Where a value came from (recorded in the fact's derivation and the receipt's source_versions). */
export interface Provenance {
  source: string;
  /** Upstream request id, scene id or tile name. */
  ref?: string;
  /** Upstream capture / valid time (ISO). */
  captured_at?: string;
  /** Upstream product version (goes into source_versions). */
  version?: string;
}

export type MaterializeOutcome =
  | { status: 'value'; value: number | number[] | null; unit?: string; provenance: Provenance; fn: string; args?: Record<string, unknown>; tslot?: number; confidence?: number }
  | { status: 'absence'; reason: AbsenceReason; provenance: Provenance; fn: string; detail?: string; tslot?: number }
  | { status: 'timeout'; reason: string }
  | { status: 'error'; reason: string; format_mismatch?: boolean };

export interface Materializer {
  /** Connector key (a source key of the registry). */
  readonly key: string;
  /** Band keys this connector can fetch. */
  readonly bands: readonly string[];
  /** True when it can fetch past tslots (history), not only the present. */
  readonly history: boolean;
  materialize(req: MaterializeRequest): Promise<MaterializeOutcome>;
}

/** Band → connector lookup. */
export interface MaterializerRegistry {
  forBand(band: string): Materializer | undefined;
  list(): readonly Materializer[];
}

/** A registry over a fixed list (later entries do not override earlier ones). */
export function materializerRegistry(list: readonly Materializer[]): MaterializerRegistry {
  const byBand = new Map<string, Materializer>();
  for (const m of list) for (const b of m.bands) if (!byBand.has(b)) byBand.set(b, m);
  return { forBand: (b) => byBand.get(b), list: () => list };
}

/** Everything a connector factory receives. */
export interface ConnectorDeps {
  config: Config;
  registry: Registry;
  client: UpstreamClient;
  baseUrl(sourceKey: string): string;
}

/**
 * Builds one connector. Declared here, beside the materializer contract, so connector files
 * depend only on the contract and never on the module that lists them all.
 */
export type ConnectorFactory = (deps: ConnectorDeps) => Materializer;
