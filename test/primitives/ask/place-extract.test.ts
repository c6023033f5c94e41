/** Place words in a question (spec 4.5): coordinates, cells, names in any script, qualifiers. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadRegistry } from '../../../src/registry/registry.js';
import { understand } from '../../../src/primitives/ask/understand.js';

const reg = loadRegistry();
const NOW = new Date('2026-11-21T12:00:00Z');
const place = (q: string) => understand(reg, q, NOW).extraction;

describe('extractPlace', () => {
  it('reads coordinates in decimal, hemisphere and lat/lon forms', () => {
    const cases: Array<[string, number, number]> = [
      ['NDVI at 48.8566, 2.3522', 48.8566, 2.3522],
      ['rain at -33.87 151.21 today', -33.87, 151.21],
      ['flood at 23.81N 90.41E', 23.81, 90.41],
      ['snow at 46.5S 70.2W?', -46.5, -70.2],
      ['soil at lat 41.5 lon -93.6', 41.5, -93.6],
    ];
    for (const [q, lat, lng] of cases) {
      const p = place(q).place;
      assert.equal(p?.kind, 'point', q);
      assert.deepEqual(p?.kind === 'point' ? [p.lat, p.lng] : null, [lat, lng], q);
    }
  });
  it('reads a cell64 and a cell token', () => {
    assert.deepEqual(place('What is at defi.zb608.zb120.zdc13?').place?.kind, 'cell');
    const p = place('landcover at svc:cell:defi.zb595.zea78.zd3a3 please').place;
    assert.equal(p?.kind === 'cell' ? p.cell : null, 'defi.zb595.zea78.zd3a3');
  });
  it('takes the longest name and the "X, Country" form', () => {
    const a = place('Is there snow in Salt Lake City?').place;
    assert.equal(a?.kind === 'name' ? a.match?.selected.label : null, 'Salt Lake City, Utah, US');
    const b = place('Is Paris, Texas hot today?').place;
    assert.equal(b?.kind === 'name' ? b.match?.selected.label : null, 'Paris, Texas, US');
  });
  it('finds names in other scripts, inside CJK runs too', () => {
    for (const [q, label] of [
      ['How green is 東京?', 'Tokyo'],
      ['How polluted is Москва?', 'Moscow'],
      ['heat in القاهرة', 'Cairo'],
      ['標高 in 서울', 'Seoul'],
      ['東京の大気汚染は？', 'Tokyo'],
    ]) {
      const p = place(q).place;
      assert.ok(p?.kind === 'name' && p.match?.selected.label.startsWith(label), `${q}: ${JSON.stringify(p)}`);
    }
  });
  it('keeps an ambiguous name ambiguous, and narrows it by another place word of the question', () => {
    const a = place('soil carbon in Springfield').place;
    assert.equal(a?.kind === 'name' ? a.match?.high : null, false);
    const b = place('How warm is it in the Springfield in Illinois?').place;
    assert.equal(b?.kind === 'name' ? b.match?.selected.label : null, 'Springfield, Illinois, US');
  });
  it('does not take a month, a topic word or a function word for a place', () => {
    assert.equal(place('Is it icy in March?').place, undefined);
    assert.equal(place('Is the forest green?').place, undefined);
    assert.equal(place('What is the NDVI?').place, undefined);
    assert.equal(place('How are you?').place, undefined);
  });
  it('reports a capitalised name no offline table knows, for the network tiers', () => {
    const e = place('Is Lake Taihu eutrophic?');
    assert.equal(e.place, undefined);
    assert.equal(e.unknown, 'Lake Taihu');
  });
  it('masks the place words from routing', () => {
    const u = understand(reg, 'Is there snow in Salt Lake City?', NOW);
    assert.equal(u.routing.topic, 'snow_ice');
    assert.ok(!u.routing.matched_keywords.some((m) => /salt|lake/i.test(m.matched)));
  });
});
