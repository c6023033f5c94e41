/**
 * Sentinel-2 L2A reflectance from Earth Search DNs: DN × scale + offset from the asset's
 * `raster:bands`, with the processing-baseline 04.00 offset resolved per item. Shared by
 * point reads (sentinel2.ts) and true-colour windows (sentinel2-rgb.ts).
 */
import type { StacItem } from './stac-search.js';

/** How the DN of an asset becomes reflectance, and why. */
export interface ReflectanceRule {
  scale: number;
  offset: number;
  rule: string;
}

/**
 * Scale and offset for an asset. Since processing baseline 04.00 (25 January 2022) the L2A DNs
 * carry BOA_ADD_OFFSET = −1000. Earth Search v1 marks items whose COGs it already corrected
 * with `earthsearch:boa_offset_applied: true`; their `raster:bands` offset (−0.1) must then
 * not be applied again (Element84/earth-search#9: the flag is the truth). Without the flag, a
 * baseline ≥ 04.00 item gets the offset (as declared, else −1000 × scale); an older baseline
 * has none; an item without a baseline uses raster:bands as declared.
 */
export function reflectanceOf(item: StacItem, assetKey: string): ReflectanceRule {
  const rb = item.assets[assetKey]?.['raster:bands']?.[0];
  const scale = typeof rb?.scale === 'number' && rb.scale > 0 ? rb.scale : 0.0001;
  const declared = typeof rb?.offset === 'number' ? rb.offset : 0;
  const p = item.properties;
  const applied = p['earthsearch:boa_offset_applied'] ?? p['sentinel:boa_offset_applied'];
  const baselineText = p['s2:processing_baseline'] ?? p['sentinel:processing_baseline'];
  const baseline = typeof baselineText === 'string' || typeof baselineText === 'number' ? Number(baselineText) : NaN;
  if (applied === true) return { scale, offset: 0, rule: 'boa_offset_applied: DNs already corrected' };
  if (baseline >= 4) return { scale, offset: declared !== 0 ? declared : -1000 * scale, rule: `baseline ${baselineText} >= 04.00: BOA_ADD_OFFSET -1000 applied` };
  if (Number.isFinite(baseline)) return { scale, offset: 0, rule: `baseline ${baselineText} < 04.00: no offset` };
  return { scale, offset: declared, rule: 'no processing baseline: raster:bands as declared' };
}
