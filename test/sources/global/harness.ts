/** Shared set-up of the global-layer connector tests: deps over the fixture server, requests at cell centres. */
import assert from 'node:assert/strict';
import { loadConfig } from '../../../src/config.js';
import { cellCenter, cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { loadRegistry } from '../../../src/registry/registry.js';
import type { ConnectorDeps, MaterializeOutcome, MaterializeRequest } from '../../../src/sources/contract.js';
import { UpstreamClient } from '../../../src/sources/http.js';
import { sourceBaseUrl } from '../../../src/sources/index.js';
import type { GlobalUpstreams } from '../fixtures/global-upstreams.js';

export const registry = loadRegistry();

/**
 * Deps whose configuration points every global-layer source at the fixture (as the operator's
 * SVC_UPSTREAM_<KEY>_URL would) and whose client may contact only `allowed` (the fixture).
 */
export function depsFor(up: GlobalUpstreams, o: { timeoutMs?: number; retries?: number; allowed?: string[]; env?: Record<string, string> } = {}): ConnectorDeps {
  const env: Record<string, string> = { SVC_LOG_LEVEL: 'silent', ...o.env };
  for (const [k, v] of Object.entries(up.upstreams)) env[`SVC_UPSTREAM_${k}_URL`] ??= v;
  for (const [k, v] of Object.entries(env)) if (v === '') delete env[k];
  const config = loadConfig(env, { dataDir: '/tmp/svc-global-unused' });
  const client = new UpstreamClient({ userAgent: 'svc-test', timeoutMs: o.timeoutMs ?? 3000, allowedBaseUrls: o.allowed ?? [up.origin], retries: o.retries ?? 1, backoffMs: 20 });
  return { config, registry, client, baseUrl: (k) => sourceBaseUrl(config, registry, k) };
}

/** A request for `band` at the cell holding (lat, lng), fetched at the cell centre. */
export function requestAt(band: string, lat: number, lng: number, tslot?: number, budgetMs = 5000): MaterializeRequest {
  const entry = registry.bands.get(band);
  if (!entry) throw new Error(`band ${band} is not registered`);
  const cell = cellOf(lat, lng);
  return { cell, band: entry, tslot: tslot ?? currentTslot(entry.tempo), center: cellCenter(cell), signal: new AbortController().signal, deadline: Date.now() + budgetMs };
}

/** The outcome, asserted to be a value. */
export function value(o: MaterializeOutcome): Extract<MaterializeOutcome, { status: 'value' }> {
  assert.equal(o.status, 'value', JSON.stringify(o));
  return o as Extract<MaterializeOutcome, { status: 'value' }>;
}

/** The outcome, asserted to be an absence with `reason`. */
export function absence(o: MaterializeOutcome, reason: string): Extract<MaterializeOutcome, { status: 'absence' }> {
  assert.deepEqual([o.status, (o as { reason?: string }).reason], ['absence', reason], JSON.stringify(o));
  return o as Extract<MaterializeOutcome, { status: 'absence' }>;
}

/** The outcome, asserted to be a typed failure (`source_fetch_failed` or `source_format_mismatch`). */
export function failure(o: MaterializeOutcome, kind: 'source_fetch_failed' | 'source_format_mismatch', detail?: RegExp): void {
  assert.equal(o.status, 'error', JSON.stringify(o));
  const reason = (o as { reason: string }).reason;
  assert.ok(reason.startsWith(`${kind}: `), reason);
  assert.equal(Boolean((o as { format_mismatch?: boolean }).format_mismatch), kind === 'source_format_mismatch', reason);
  if (detail) assert.match(reason, detail);
}
