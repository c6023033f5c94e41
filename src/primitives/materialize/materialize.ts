/**
 * Lazy materialization (docs/reads.md, "Materialization on a miss"): on a miss, ask the band's
 * connector, mint what it returns through the write path, and report a note. Identical in-flight
 * requests (cell, band, tslot, scope) share one upstream call and one minted fact; a bounded pool
 * caps upstream fan-out.
 */
import { cellCenter } from '../../protocol/cell64.js';
import type { Scope } from '../../protocol/receipt.js';
import type { BandEntry } from '../../registry/registry.js';
import type { MaterializeOutcome } from '../../sources/contract.js';
import { scopeKey } from '../../store/entry.js';
import { mintedBody, mintFacts, mintRefusal } from '../write/attest.js';
import type { ServiceContext } from '../context/context.js';
import { BoundedCache } from '../../lib/cache.js';
import { Pool } from '../../lib/pool.js';

import { skippedNote, type MaterializeNote, type MaterializeResult } from '../context/materialize-note.js';

/**
 * Collects the bodies minted during one turn of the event loop and writes them as ONE batch:
 * the bands of one recall (fetched in parallel) become one log entry and one fsync.
 */
class MintQueue {
  private pending: Array<{ body: Record<string, unknown>; resolve: (cid: string) => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;

  mint(ctx: ServiceContext, body: Record<string, unknown>): Promise<string> {
    return new Promise((resolve, reject) => {
      this.pending.push({ body, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush(ctx));
      }
    });
  }

  private async flush(ctx: ServiceContext): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    this.scheduled = false;
    // One batch per scope: a batch writes one scope or none, so that a scoped recall minting
    // beside a public one never makes the public facts' log entry private (scopes/write.ts).
    const byScope = new Map<string, typeof pending>();
    for (const p of pending) {
      const k = scopeKey(p.body.scope as Scope | undefined);
      const group = byScope.get(k);
      if (group) group.push(p);
      else byScope.set(k, [p]);
    }
    await Promise.all(
      [...byScope.values()].map(async (batch) => {
        try {
          const res = await mintFacts(
            ctx,
            batch.map((b) => b.body),
            'materialize',
          );
          batch.forEach((b, i) => b.resolve(res.fact_cids[i]));
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }),
    );
  }
}

/** Materialization with coalescing and a bounded pool; one per responder. */
export class Materializations {
  private inflight = new Map<string, Promise<MaterializeResult>>();
  private pool: Pool;
  private mints = new MintQueue();
  /** Recent failures per key: a failing upstream is not asked again for every read. */
  private failures = new BoundedCache<string, { until: number; note: MaterializeNote }>('materialize_failures', { max: 10_000 });
  /** Upstream calls actually started (tests and benchmarks read it). */
  upstreamCalls = 0;

  /** `failureBackoffMs`: how long a timeout or upstream error stands before the next attempt. */
  constructor(
    poolSize = 32,
    private readonly failureBackoffMs = 15_000,
  ) {
    this.pool = new Pool(poolSize);
  }

  /** Materialize (cell, band, tslot) under `scope`, sharing any identical request in flight. */
  materialize(ctx: ServiceContext, cell: string, band: BandEntry, tslot: number, scope: Scope | undefined, deadline: number): Promise<MaterializeResult> {
    const key = `${cell}|${band.key}|${tslot}|${scopeKey(scope)}`;
    const failed = this.failures.get(key);
    if (failed && failed.until > Date.now()) {
      ctx.metrics.materialization(ctx.materializers.forBand(band.key)?.key ?? 'none', 'backoff');
      const wait = Math.ceil((failed.until - Date.now()) / 1000);
      return Promise.resolve({ note: { ...failed.note, latency_ms: 0, reason: `${failed.note.reason} (recent failure; next attempt in ${wait} s)` } });
    }
    let p = this.inflight.get(key);
    if (!p) {
      p = this.run(ctx, cell, band, tslot, scope, deadline)
        .then((r) => {
          if (r.note.retryable && this.failureBackoffMs > 0) {
            this.failures.set(key, { until: Date.now() + this.failureBackoffMs, note: r.note });
          } else this.failures.delete(key);
          return r;
        })
        .finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  private async run(ctx: ServiceContext, cell: string, band: BandEntry, tslot: number, scope: Scope | undefined, deadline: number): Promise<MaterializeResult> {
    const connector = ctx.materializers.forBand(band.key);
    const source = connector?.key ?? 'none';
    try {
      const r = await this.attempt(ctx, cell, band, tslot, scope, deadline);
      ctx.metrics.materialization(source, r.outcome);
      return r.result;
    } catch (err) {
      ctx.metrics.materialization(source, 'failed');
      throw err;
    }
  }

  /** One materialization, with the outcome /metrics counts it under. */
  private async attempt(ctx: ServiceContext, cell: string, band: BandEntry, tslot: number, scope: Scope | undefined, deadline: number): Promise<{ result: MaterializeResult; outcome: string }> {
    const started = performance.now();
    const connector = ctx.materializers.forBand(band.key);
    if (!connector) return { outcome: 'no_materializer', result: { note: skippedNote(cell, band.key, 'no_materializer', `no connector is wired for ${band.key} (see /v1/materializers)`) } };
    // Upstream calls count only once the connector is really asked (not when no time was left).
    let called = false;
    const onCall = () => {
      called = true;
      ctx.metrics.upstreamCall(connector.key);
    };
    const outcome = await this.pool.run(() => this.fetchWithDeadline(connector.materialize.bind(connector), cell, band, tslot, deadline, onCall));
    const latency = performance.now() - started;
    if (outcome.status === 'timeout') {
      if (called) ctx.metrics.upstreamError(connector.key, 'timeout');
      return { outcome: 'timeout', result: { note: skippedNote(cell, band.key, 'timeout', outcome.reason, latency) } };
    }
    if (outcome.status === 'error') {
      if (called) ctx.metrics.upstreamError(connector.key, 'error');
      return { outcome: 'upstream_error', result: { note: skippedNote(cell, band.key, 'upstream_error', outcome.reason, latency) } };
    }

    const derivation: Record<string, unknown> = { fn: outcome.fn, sources: [outcome.provenance.ref ? `${outcome.provenance.source}:${outcome.provenance.ref}` : outcome.provenance.source] };
    if (outcome.provenance.captured_at) derivation.captured_at = outcome.provenance.captured_at;
    if (outcome.provenance.version) derivation.version = outcome.provenance.version;
    if (outcome.status === 'value' && outcome.args) derivation.args = outcome.args;
    const body = mintedBody(ctx, {
      kind: outcome.status === 'value' ? 'primary' : 'absence',
      cell,
      band: band.key,
      tslot: outcome.tslot ?? tslot,
      value: outcome.status === 'value' ? outcome.value : null,
      unit: (outcome.status === 'value' ? outcome.unit : undefined) ?? band.unit,
      provenance: outcome.provenance.source,
      derivation: derivation as { fn: string; sources: string[] },
      absence_reason: outcome.status === 'absence' ? outcome.reason : undefined,
      scope,
    });
    // A value the registry refuses (out of range, wrong shape) is not signed, and must not sink
    // the other bands minted in the same batch: it becomes a skipped note of its own.
    const refused = mintRefusal(ctx, body);
    if (refused) {
      return {
        outcome: 'refused',
        result: { note: skippedNote(cell, band.key, 'upstream_error', `the upstream value was refused by the band registry: ${refused.message}`, performance.now() - started) },
      };
    }
    const cid = await this.mints.mint(ctx, body);
    const fact = (await ctx.store.readFact(cid)).fact ?? undefined;
    const absence = outcome.status === 'absence';
    const result: MaterializeResult = {
      note: {
        band: band.key,
        cell,
        status: 'materialized',
        ok: true,
        fact_cid: cid,
        latency_ms: Math.round(performance.now() - started),
        reason: absence ? `upstream confirmed no data: ${outcome.reason}${outcome.detail ? ` (${outcome.detail})` : ''}` : `fetched from ${outcome.provenance.source}`,
        reason_class: null,
        retryable: false,
        absence,
      },
      fact,
      captured_at: outcome.provenance.captured_at,
      source_version: outcome.provenance.version ? [outcome.provenance.source, outcome.provenance.version] : undefined,
    };
    return { outcome: absence ? 'absence' : 'value', result };
  }

  private async fetchWithDeadline(
    fn: (req: Parameters<import('../../sources/contract.js').Materializer['materialize']>[0]) => Promise<MaterializeOutcome>,
    cell: string,
    band: BandEntry,
    tslot: number,
    deadline: number,
    onCall: () => void,
  ): Promise<MaterializeOutcome> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return { status: 'timeout', reason: 'no time left in the request budget' };
    const ac = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<MaterializeOutcome>((resolve) => {
      timer = setTimeout(() => {
        ac.abort();
        resolve({ status: 'timeout', reason: `upstream did not answer within ${Math.round(remaining)} ms` });
      }, remaining);
    });
    this.upstreamCalls++;
    onCall();
    try {
      return await Promise.race([
        fn({ cell, band, tslot, center: cellCenter(cell), signal: ac.signal, deadline }).catch((e: Error): MaterializeOutcome => ({ status: 'error', reason: e?.message ?? String(e) })),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}
