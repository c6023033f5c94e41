/**
 * What materializing one (cell, band, tslot) reports (the note a response carries, and the fact
 * when one was minted). Apart from materialize.ts so that the service context can name the
 * materializer's shape without depending on the write path it drives.
 */
import type { Scope } from '../../protocol/receipt.js';
import type { BandEntry } from '../../registry/registry.js';
import type { StoredFact } from '../../store/contract.js';

export type ReasonClass = 'timeout' | 'upstream_error' | 'unknown_band' | 'no_materializer';

/** MaterializeNote (docs/reads.md, "Materialization on a miss"). */
export interface MaterializeNote {
  band: string;
  cell: string;
  status: 'materialized' | 'skipped';
  ok: boolean;
  fact_cid: string | null;
  latency_ms: number;
  reason: string;
  reason_class: ReasonClass | null;
  retryable: boolean;
  absence: boolean;
}

export interface MaterializeResult {
  note: MaterializeNote;
  fact?: StoredFact;
  /** Upstream capture time of the value (for cost.source_freshness_s). */
  captured_at?: string;
  source_version?: [string, string];
}

export function skippedNote(cell: string, band: string, reasonClass: ReasonClass, reason: string, latencyMs = 0): MaterializeNote {
  return {
    band,
    cell,
    status: 'skipped',
    ok: false,
    fact_cid: null,
    latency_ms: Math.round(latencyMs),
    reason,
    reason_class: reasonClass,
    retryable: reasonClass === 'timeout' || reasonClass === 'upstream_error',
    absence: false,
  };
}

/** What the service context holds to materialize (Materializations in materialize.ts). */
export interface MaterializationRunner<Ctx> {
  materialize(ctx: Ctx, cell: string, band: BandEntry, tslot: number, scope: Scope | undefined, deadline: number): Promise<MaterializeResult>;
  /** Upstream calls actually started (tests and benchmarks read it). */
  readonly upstreamCalls: number;
}
