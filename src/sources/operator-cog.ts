/**
 * Bands read from a single COG that the operator hosts, because no keyless, range-readable
 * public copy of the product exists (the VIIRS annual night-lights composite, the Köppen-Geiger
 * map). The registry's default URL for such a source is a documented placeholder on the
 * reserved `.invalid` domain; until `SVC_UPSTREAM_<KEY>_URL` names the operator's file, the
 * connector serves no band, so /v1/materializers reports the band as not wired and a read says
 * `no_materializer`. Nothing is signed for an unconfigured source: a signed absence of a static
 * band would stand for ever, even after the operator configured the file.
 */
import type { ConnectorDeps, Materializer } from './contract.js';
import { pointSampleConnector, type PointSampleSpec } from './cog/point-connector.js';

/** Whether the operator configured the source's URL (SVC_UPSTREAM_<KEY>_URL, not `off`). */
export function operatorConfigured(deps: ConnectorDeps, sourceKey: string): boolean {
  const env = deps.registry.sources.get(sourceKey)?.env;
  if (!env) return false;
  const url = deps.config.upstreams[env.replace(/^SVC_UPSTREAM_/, '').replace(/_URL$/, '')];
  return url !== undefined && url !== 'off';
}

/** What an operator-hosted point band declares (the file is the source URL itself). */
export type OperatorCogSpec = Omit<PointSampleSpec, 'locate' | 'missing'> & {
  /** captured_at of every value (the product's reference time), when one is known. */
  capturedAt?: string;
};

/** A point-sample connector over the operator's COG, or one serving no band when unconfigured. */
export function operatorCogConnector(deps: ConnectorDeps, spec: OperatorCogSpec): Materializer {
  if (!operatorConfigured(deps, spec.key)) {
    return {
      key: spec.key,
      bands: [],
      history: false,
      materialize: async () => ({ status: 'error', reason: `${spec.key}: no file configured (set ${deps.registry.sources.get(spec.key)?.env})` }),
    };
  }
  return pointSampleConnector(deps, {
    ...spec,
    locate(_req, base) {
      return { url: base, ref: base.slice(base.lastIndexOf('/') + 1), ...(spec.capturedAt ? { captured_at: spec.capturedAt } : {}) };
    },
    // The operator's single file missing is a broken configuration, not an ocean.
    missing: { skip: `the operator-hosted file of ${spec.key} is not at its configured URL` },
  });
}
