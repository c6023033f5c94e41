/**
 * /v1/elevation over water: where the Copernicus DEM band is a signed absence, the GEBCO 2024
 * topobathymetry band answers at that cell too; land answers are unchanged. Once with scripted
 * connectors (sampled mode and its stats), once over the fixture upstreams (the real connectors).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import type { LocateResp } from '../../../../src/geo/types.js';
import { placeShortcut } from '../../../../src/primitives/shortcuts/read.js';
import type { MaterializeRequest } from '../../../../src/sources/contract.js';
import { build, type TestApp } from '../../../support/app.js';
import { fakeConnector } from '../../../support/fake-connector.js';
import { GEBCO_GRID, pixelOf, startGlobalUpstreams, type GlobalUpstreams } from '../../../sources/fixtures/global-upstreams.js';
import { startJsonUpstreams, type JsonUpstreams } from '../../../sources/fixtures/json-upstreams.js';
import { get, post, verifies } from '../reads/helpers.js';

const COP = 'copdem30m.elevation_mean';
const GEBCO = 'gebco.elevation_m';

describe('/v1/elevation with scripted connectors', () => {
  let t: TestApp;
  const LAT0 = 54.1;
  const LNG0 = 7.5;
  /** 12 sample cells; the west half (index % 4 < 2) is open water for the DEM. */
  const SAMPLE = Array.from({ length: 12 }, (_, i) => P.cellOf(LAT0 + Math.floor(i / 4) * 10 * P.PITCH_LAT_DEG, LNG0 + (i % 4) * 10 * P.PITCH_LNG_DEG));
  const wet = (cell: string) => SAMPLE.includes(cell) && SAMPLE.indexOf(cell) % 4 < 2;
  const fake = fakeConnector([COP, GEBCO], {
    [COP]: (req: MaterializeRequest) =>
      wet(req.cell) || req.cell === P.cellOf(-20.3, -140.7)
        ? { status: 'absence', reason: 'outside_coverage', provenance: { source: 'fake' }, fn: 'fake@1', detail: 'open water' }
        : { status: 'value', value: 3 + SAMPLE.indexOf(req.cell), provenance: { source: 'fake' }, fn: 'fake@1' },
    [GEBCO]: (req: MaterializeRequest) => ({ status: 'value', value: -20 - SAMPLE.indexOf(req.cell), provenance: { source: 'fake' }, fn: 'fake@1' }),
  });
  const centre = P.cellOf(LAT0 + 10 * P.PITCH_LAT_DEG, LNG0 + 15 * P.PITCH_LNG_DEG);
  const locateResp: LocateResp = {
    cell64: centre,
    via: 'admin2',
    label: 'Wattküste',
    lat: P.cellCenter(centre).lat,
    lng: P.cellCenter(centre).lng,
    localized_names: {},
    neighborhood_cells: P.neighbours(centre),
    polygon_bbox: { min_lat: LAT0, min_lng: LNG0, max_lat: LAT0 + 30 * P.PITCH_LAT_DEG, max_lng: LNG0 + 40 * P.PITCH_LNG_DEG, source: 'admin2_table' },
    polygon_sample_cells: SAMPLE,
    data_at_this_cell: {},
    selected: { label: 'Wattküste', kind: 'admin2', is_high_confidence: true, reason: 'exact admin2 name', score: 0.97 },
    alternatives: [],
  };
  before(async () => {
    t = await build({}, {}, { materializers: [fake] });
  });
  after(async () => t.close());

  it('over water at a point: the DEM absence and the GEBCO value, both signed by the envelope', async () => {
    const r = await post(t, '/v1/elevation', { lat: -20.3, lng: -140.7 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.bands, [COP, GEBCO]);
    const by = Object.fromEntries(r.body.facts.map((f: any) => [f.band, f]));
    assert.equal(by[COP].kind, 'absence');
    assert.equal(by[GEBCO].kind, 'primary');
    assert.deepEqual(
      r.body.receipt.fact_cids,
      r.body.facts.map((f: any) => f.fact_cid),
    );
    assert.ok(verifies(t, r.body.receipt));
    assert.ok(
      r.body.caveats.some((c: string) => c.startsWith(`${GEBCO} answers at the cell, where ${COP} is a signed absence`)),
      JSON.stringify(r.body.caveats),
    );
  });

  it('on land: the answer is as before (no GEBCO read)', async () => {
    const calls = fake.calls.length;
    const r = await post(t, '/v1/elevation', { lat: 47.1, lng: 8.2 });
    assert.deepEqual(r.body.bands, [COP]);
    assert.deepEqual(
      r.body.facts.map((f: any) => f.band),
      [COP],
    );
    assert.equal(fake.calls.length, calls + 1);
    assert.ok(!r.body.caveats.some((c: string) => c.includes(GEBCO)));
  });

  it('sampled: GEBCO is read at the water cells only, and its stats cover those cells', async () => {
    const r = await placeShortcut(t.service, 'elevation', { place: 'Wattküste' }, { locate: async () => locateResp });
    assert.equal(r.mode, 'sampled');
    assert.deepEqual(r.bands, [COP, GEBCO]);
    const wetCells = SAMPLE.filter(wet);
    assert.deepEqual(
      r.facts
        .filter((f) => f.band === GEBCO)
        .map((f) => f.cell)
        .sort(),
      [...wetCells].sort(),
    );
    const cop = r.stats![COP] as any;
    assert.deepEqual([cop.n, cop.n_absent], [SAMPLE.length - wetCells.length, wetCells.length]);
    const g = r.stats![GEBCO] as any;
    const depths = wetCells.map((c) => -20 - SAMPLE.indexOf(c));
    assert.deepEqual([g.n, g.n_absent, g.n_missing, g.min, g.max], [wetCells.length, 0, 0, Math.min(...depths), Math.max(...depths)]);
    assert.ok(r.caveats.some((c) => c.includes(`at ${wetCells.length} of the ${SAMPLE.length} cells read`)));
  });
});

describe('/v1/elevation over the fixture upstreams', () => {
  let t: TestApp;
  let json: JsonUpstreams;
  let glob: GlobalUpstreams;
  before(async () => {
    json = await startJsonUpstreams();
    glob = await startGlobalUpstreams();
    t = await build({ upstreams: { ...json.upstreams, GEBCO: glob.upstreams.GEBCO! }, materializerTimeoutSecs: 3 });
  });
  after(async () => {
    await t.close();
    await json.close();
    await glob.close();
  });

  it('the open sea: Open-Meteo answers 0 (no land value), GEBCO the depth of the sea floor', async () => {
    json.data.elevation = () => 0;
    const r = await get(t.app, '/v1/elevation?lat=-20.3&lon=-140.7');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const by = Object.fromEntries(r.body.facts.map((f: any) => [f.band, f]));
    assert.equal(by[COP].kind, 'absence');
    assert.equal(by[COP].absence_reason, 'outside_coverage');
    const c = P.cellCenter(P.cellOf(-20.3, -140.7));
    const [col, row] = pixelOf(GEBCO_GRID, c.lat, c.lng);
    assert.equal(by[GEBCO].value, GEBCO_GRID.values(col, row));
    assert.ok(by[GEBCO].value < 0);
    assert.equal(by[GEBCO].provenance, 'gebco');
    assert.ok(verifies(t, r.body.receipt));
  });

  it('land: the Copernicus DEM value alone, GEBCO not asked', async () => {
    json.data.elevation = () => 412.5;
    glob.reset();
    const r = await post(t, '/v1/elevation', { lat: 46.5, lng: 8.1 });
    assert.deepEqual(
      r.body.facts.map((f: any) => [f.band, f.value]),
      [[COP, 412.5]],
    );
    assert.equal(glob.requests.length, 0);
  });
});
