/** Shared set-up of the raster connector tests: connector deps over the fixture server, requests at cell centres. */
import { cellCenter, cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { loadConfig } from '../../../src/config.js';
import { loadRegistry } from '../../../src/registry/registry.js';
import assert from 'node:assert/strict';
import type { ConnectorDeps, MaterializeOutcome, MaterializeRequest } from '../../../src/sources/contract.js';
import { UpstreamClient } from '../../../src/sources/http.js';
import type { RasterUpstreams } from '../fixtures/raster-upstreams.js';

export const registry = loadRegistry();

/** Deps whose client may contact only the fixture server (not its `outside` twin). */
export function depsFor(up: RasterUpstreams, o: { timeoutMs?: number; retries?: number } = {}): ConnectorDeps {
  const client = new UpstreamClient({ userAgent: 'svc-test', timeoutMs: o.timeoutMs ?? 3000, allowedBaseUrls: Object.values(up.bases), retries: o.retries ?? 1, backoffMs: 20 });
  return { config: loadConfig({ SVC_LOG_LEVEL: 'silent' }, { dataDir: '/tmp/svc-raster-unused' }), registry, client, baseUrl: (k) => up.bases[k] };
}

/** A request for `band` at the cell holding (lat, lng), fetched at the cell centre. */
export function requestAt(band: string, lat: number, lng: number, tslot?: number, budgetMs = 5000): MaterializeRequest {
  const entry = registry.bands.get(band);
  if (!entry) throw new Error(`band ${band} is not registered`);
  const cell = cellOf(lat, lng);
  return {
    cell,
    band: entry,
    tslot: tslot ?? currentTslot(entry.tempo),
    center: cellCenter(cell),
    signal: new AbortController().signal,
    deadline: Date.now() + budgetMs,
  };
}

/** The outcome, asserted to be a value (the failing outcome is shown whole). */
export function value(o: MaterializeOutcome): Extract<MaterializeOutcome, { status: 'value' }> {
  assert.equal(o.status, 'value', JSON.stringify(o));
  return o as Extract<MaterializeOutcome, { status: 'value' }>;
}
