/**
 * What the raster primitives read upstream: the wired Sentinel-2 connector's area reader, and the
 * typed error for an upstream failure (a timeout, wrong bytes or a transport failure is never an
 * absence, and nothing is signed for it).
 */
import { SvcError } from '../../protocol/errors.js';
import type { Materializer } from '../../sources/contract.js';
import { UpstreamError } from '../../sources/http.js';
import { S2_ASSETS, S2_SOURCE, type Sentinel2Connector } from '../../sources/sentinel2.js';
import type { Sentinel2Raster } from '../../sources/sentinel2-raster.js';
import type { ServiceContext } from '../context/context.js';

export { S2_ASSETS, S2_SOURCE };

/** The area reader of the wired Sentinel-2 connector; a typed error when none is wired. */
export function sentinel2RasterOf(ctx: ServiceContext): Sentinel2Raster {
  const m = ctx.materializers.list().find((x: Materializer) => x.key === S2_SOURCE) as Partial<Sentinel2Connector> | undefined;
  if (!m?.raster) {
    throw new SvcError('cid_not_found', `no Sentinel-2 connector (${S2_SOURCE}) is wired on this responder, so it makes no rasters (see /v1/materializers)`, { reason: 'no_connector' });
  }
  return m.raster;
}

/** The typed error for an upstream failure while `what` ran. */
export function upstreamFailure(e: unknown, what: string, details: Record<string, unknown> = {}): unknown {
  if (e instanceof SvcError) return e;
  if (e instanceof UpstreamError) {
    const d = { ...details, detail: e.message, kind: e.kind };
    if (e.kind === 'timeout') return new SvcError('compute_timeout', `${what}: ${e.message}`, d);
    if (e.kind === 'format') return new SvcError('source_format_mismatch', `${what}: ${e.message}`, d);
    return new SvcError('source_fetch_failed', `${what}: ${e.message}`, d);
  }
  if (e instanceof Error && e.name === 'AbortError') return new SvcError('compute_timeout', `${what}: the request deadline passed`, details);
  return e;
}

/** Fails once the request's deadline has passed (before signing or storing anything more). */
export function checkDeadline(deadline: number, what: string): void {
  if (Date.now() >= deadline) throw new SvcError('compute_timeout', `${what}: the request deadline passed before the raster was ready`, {});
}
