/**
 * ISRIC SoilGrids 2.0 REST API → `soil.*_0_30cm` (static, 250 m):
 * `GET <base>/properties/query?lon&lat&property=…&depth=0-5cm&depth=5-15cm&depth=15-30cm&value=mean`
 * where <base> is the source's configured URL (its default already ends in `/soilgrids/v2.0`).
 *
 * Value: the depth-weighted mean over 0–30 cm, each layer weighted by its thickness from the
 * answer's own `range` (5, 10, 15 cm), divided by the layer's `unit_measure.d_factor` (mapped
 * integer units → conventional units, e.g. g/kg → % for clay). Any null depth (water, ice,
 * urban mask, outside coverage) → signed absence `outside_coverage`: a partial profile is not a
 * 0–30 cm mean.
 *
 * One call per cell asks for all six properties (the API takes repeated `property=`), so the
 * soil bands of one cell share it.
 */
import type { MaterializeOutcome, Materializer, MaterializeRequest, ConnectorDeps } from './contract.js';
import { arrayAt, coord, failureOutcome, FormatMismatch, measurementAt, objectAt, refOf, roundTo, SingleFlight, stringAt } from './json-helpers.js';

const SOURCE = 'soilgrids';
const VERSION = 'soilgrids-v2.0';
const DEPTHS = ['0-5cm', '5-15cm', '15-30cm'] as const;

/** Band → SoilGrids property and the target unit labels that match the band's unit. */
export const SOIL_PROPERTIES: Readonly<Record<string, { property: string; targets: readonly string[] }>> = {
  'soil.soc_0_30cm': { property: 'soc', targets: ['g/kg'] },
  'soil.phh2o_0_30cm': { property: 'phh2o', targets: ['ph'] },
  'soil.clay_0_30cm': { property: 'clay', targets: ['%'] },
  'soil.sand_0_30cm': { property: 'sand', targets: ['%'] },
  'soil.bdod_0_30cm': { property: 'bdod', targets: ['kg/dm³', 'kg/dm3'] },
  'soil.nitrogen_0_30cm': { property: 'nitrogen', targets: ['g/kg'] },
};
const PROPERTY_QUERY = [...new Set(Object.values(SOIL_PROPERTIES).map((p) => p.property))]
  .sort()
  .map((p) => `property=${p}`)
  .join('&');
const DEPTH_QUERY = DEPTHS.map((d) => `depth=${d}`).join('&');

/** The 0–30 cm outcome of one band from a parsed query answer. */
function soilOutcome(req: MaterializeRequest, data: unknown, url: string): MaterializeOutcome {
  const spec = SOIL_PROPERTIES[req.band.key];
  const provenance = { source: SOURCE, ref: refOf(url), version: VERSION };
  const fn = req.band.function;
  const props = objectAt(objectAt(data, 'body').properties, 'properties');
  const layers = arrayAt(props.layers, 'properties.layers');
  const layer = layers.map((l, i) => objectAt(l, `properties.layers[${i}]`)).find((l) => l.name === spec.property);
  if (!layer) throw new FormatMismatch(`properties.layers has no ${spec.property} layer`);
  const at = `layers.${spec.property}`;
  const um = objectAt(layer.unit_measure, `${at}.unit_measure`);
  const dFactor = measurementAt(um.d_factor, `${at}.unit_measure.d_factor`);
  if (dFactor === null || dFactor <= 0) throw new FormatMismatch(`${at}.unit_measure.d_factor must be a positive number`);
  const target = stringAt(um.target_units, `${at}.unit_measure.target_units`);
  if (!spec.targets.includes(target.replace(/\s+/g, '').toLowerCase())) {
    throw new FormatMismatch(`${at}.unit_measure.target_units is ${JSON.stringify(target)}, expected ${spec.targets[0]} for ${req.band.unit}`);
  }
  const depths = arrayAt(layer.depths, `${at}.depths`).map((d, i) => objectAt(d, `${at}.depths[${i}]`));
  let sum = 0;
  let thickness = 0;
  const means: Array<number | null> = [];
  for (const label of DEPTHS) {
    const d = depths.find((x) => x.label === label);
    if (!d) throw new FormatMismatch(`${at}.depths has no ${label}`);
    const range = objectAt(d.range, `${at}.${label}.range`);
    const top = measurementAt(range.top_depth, `${at}.${label}.range.top_depth`);
    const bottom = measurementAt(range.bottom_depth, `${at}.${label}.range.bottom_depth`);
    if (top === null || bottom === null || bottom <= top) throw new FormatMismatch(`${at}.${label}.range is not a depth interval`);
    if (range.unit_depth !== undefined && range.unit_depth !== 'cm') throw new FormatMismatch(`${at}.${label}.range.unit_depth is not cm`);
    const mean = measurementAt(objectAt(d.values, `${at}.${label}.values`).mean, `${at}.${label}.values.mean`);
    means.push(mean);
    if (mean !== null) sum += mean * (bottom - top);
    thickness += bottom - top;
  }
  if (thickness !== 30) throw new FormatMismatch(`${at}: the three layers span ${thickness} cm, not 0-30 cm`);
  if (means.some((m) => m === null)) {
    return {
      status: 'absence',
      reason: 'outside_coverage',
      provenance,
      fn,
      tslot: 0,
      detail: `SoilGrids has no ${spec.property} prediction at every 0-30 cm depth here (water, ice, urban mask or outside coverage)`,
    };
  }
  return {
    status: 'value',
    value: roundTo(sum / thickness / dFactor, 3),
    unit: req.band.unit,
    provenance,
    fn,
    args: { property: spec.property, depths: [...DEPTHS], means, d_factor: dFactor, target_units: target },
    tslot: 0,
  };
}

/** Factory of the SoilGrids connector. */
export function soilgrids(deps: ConnectorDeps): Materializer {
  const base = deps.baseUrl(SOURCE);
  const flights = new SingleFlight<{ data: unknown; url: string }>();
  return {
    key: SOURCE,
    bands: Object.keys(SOIL_PROPERTIES),
    history: false,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const url = `${base}/properties/query?lon=${coord(req.center.lng)}&lat=${coord(req.center.lat)}&${PROPERTY_QUERY}&${DEPTH_QUERY}&value=mean`;
      try {
        const got = await flights.run(url, req.signal, async (signal) => ({ data: (await deps.client.json(url, { deadline: req.deadline, signal })).data, url }));
        return soilOutcome(req, got.data, got.url);
      } catch (e) {
        return failureOutcome(SOURCE, e);
      }
    },
  };
}
