import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SvcError } from '../../../src/protocol/errors.js';
import { ANNEX_I_HEADINGS, checkPlotCodes, commodityOfHs, isAlpha3, isCattleHs, normalizeHs } from '../../../src/primitives/eudr/annex.js';

function refusal(fn: () => unknown, field: string, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof SvcError, 'an SvcError');
    assert.equal(e.code, 'invalid_argument');
    assert.equal(e.details.field, field);
    assert.match(e.message, pattern);
    return true;
  });
}

describe('Annex I headings', () => {
  it('lists every heading once, as digits, for the seven commodities', () => {
    const prefixes = ANNEX_I_HEADINGS.map((h) => h.prefix);
    assert.equal(new Set(prefixes).size, prefixes.length);
    for (const h of ANNEX_I_HEADINGS) {
      assert.match(h.prefix, /^[0-9]{2,6}$/);
      assert.ok(h.description.length > 3);
    }
    assert.deepEqual([...new Set(ANNEX_I_HEADINGS.map((h) => h.commodity))].sort(), ['cattle', 'cocoa', 'coffee', 'oil_palm', 'rubber', 'soya', 'wood']);
    const count = (c: string) => ANNEX_I_HEADINGS.filter((h) => h.commodity === c).length;
    assert.deepEqual(['cattle', 'cocoa', 'coffee', 'oil_palm', 'rubber', 'soya', 'wood'].map(count), [11, 6, 1, 14, 12, 4, 33]);
  });
});

describe('normalizeHs and commodityOfHs', () => {
  it('strips spaces and dots', () => {
    assert.equal(normalizeHs(' 0901 11.00 '), '09011100');
    assert.equal(normalizeHs('1801.00.00'), '18010000');
  });
  it('finds the commodity of a code of 6 to 10 digits', () => {
    assert.deepEqual(commodityOfHs('180100'), { commodity: 'cocoa', heading: '1801', description: 'cocoa beans, whole or broken, raw or roasted' });
    assert.equal(commodityOfHs('0901 21')?.commodity, 'coffee');
    assert.equal(commodityOfHs('1511.10.90')?.commodity, 'oil_palm');
    assert.equal(commodityOfHs('4011100010')?.commodity, 'rubber');
    assert.equal(commodityOfHs('120190')?.commodity, 'soya');
    assert.equal(commodityOfHs('010229')?.commodity, 'cattle');
    assert.equal(commodityOfHs('440710')?.commodity, 'wood');
    assert.equal(commodityOfHs('480100')?.heading, '48');
    assert.equal(commodityOfHs('940169')?.heading, '940169');
  });
  it('takes the longest matching heading', () => {
    assert.equal(commodityOfHs('12081000')?.heading, '120810');
    assert.equal(commodityOfHs('020622')?.heading, '020622');
  });
  it('returns null for other lengths, non-digits and codes outside Annex I', () => {
    assert.equal(commodityOfHs('0901'), null);
    assert.equal(commodityOfHs('09011100000'), null);
    assert.equal(commodityOfHs('0901ab'), null);
    assert.equal(commodityOfHs('010210'), null); // live cattle of other kinds than 010221/010229
    assert.equal(commodityOfHs('120820'), null); // rape seed flour, not soya
    assert.equal(commodityOfHs('940320'), null); // metal furniture
    assert.equal(commodityOfHs('100199'), null); // wheat
  });
});

describe('isCattleHs and isAlpha3', () => {
  it('tells cattle codes by their first four digits', () => {
    assert.equal(isCattleHs('010229'), true);
    assert.equal(isCattleHs('0201 10'), true);
    assert.equal(isCattleHs('020230'), true);
    assert.equal(isCattleHs('020610'), false);
    assert.equal(isCattleHs('410120'), false);
    assert.equal(isCattleHs('180100'), false);
  });
  it('knows upper-case ISO 3166-1 alpha-3 codes only', () => {
    assert.equal(isAlpha3('CIV'), true);
    assert.equal(isAlpha3('BRA'), true);
    assert.equal(isAlpha3('IDN'), true);
    assert.equal(isAlpha3('civ'), false);
    assert.equal(isAlpha3('XXX'), false);
    assert.equal(isAlpha3('CI'), false);
    assert.equal(isAlpha3('CIVX'), false);
  });
});

describe('checkPlotCodes', () => {
  it('returns the commodity and whether it is cattle', () => {
    assert.deepEqual(checkPlotCodes({ commodity_hs: '1801 00', country_of_production: 'CIV' }, 'plots[0]'), { commodity: 'cocoa', is_cattle: false });
    assert.deepEqual(checkPlotCodes({ commodity_hs: '020130', country_of_production: 'BRA' }, 'plots[1]'), { commodity: 'cattle', is_cattle: true });
    assert.deepEqual(checkPlotCodes({ commodity_hs: '410150', country_of_production: 'PRY' }, 'plots[2]'), { commodity: 'cattle', is_cattle: false });
  });
  it('refuses a code that is not 6 to 10 digits', () => {
    refusal(
      () => checkPlotCodes({ commodity_hs: '0901', country_of_production: 'BRA' }, 'plots[3]'),
      'plots[3].commodity_hs',
      /"0901" is not a Combined Nomenclature code of 6 to 10 digits, so it is not a commodity of Annex I/,
    );
    refusal(() => checkPlotCodes({ commodity_hs: 'coffee', country_of_production: 'BRA' }, 'p'), 'p.commodity_hs', /"coffee" .*not a commodity of Annex I/);
    refusal(() => checkPlotCodes({ commodity_hs: 901 as unknown as string, country_of_production: 'BRA' }, 'p'), 'p.commodity_hs', /got number; it is not a commodity of Annex I/);
  });
  it('refuses a code outside Annex I', () => {
    refusal(() => checkPlotCodes({ commodity_hs: '100199', country_of_production: 'FRA' }, 'plots[0]'), 'plots[0].commodity_hs', /"100199" is not a commodity of Annex I/);
  });
  it('refuses a country that is not alpha-3', () => {
    refusal(() => checkPlotCodes({ commodity_hs: '090111', country_of_production: 'CI' }, 'plots[0]'), 'plots[0].country_of_production', /"CI" is not an ISO 3166-1 alpha-3 country code/);
    refusal(() => checkPlotCodes({ commodity_hs: '090111', country_of_production: 'civ' }, 'plots[0]'), 'plots[0].country_of_production', /"civ" is not an ISO 3166-1 alpha-3/);
    refusal(() => checkPlotCodes({ commodity_hs: '090111', country_of_production: 'XXX' }, 'plots[0]'), 'plots[0].country_of_production', /"XXX"/);
  });
});
