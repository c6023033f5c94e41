/** Question tokens (spec 4.5 routing): folding, contractions, chemical names, stems. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { preprocess, stem, stemsOf, tokenize } from '../../../src/primitives/ask/text.js';

const words = (q: string) => tokenize(preprocess(q)).map((t) => t.norm);

describe('stem', () => {
  it('meets the inflections of one word', () => {
    for (const group of [['flood', 'floods', 'flooding', 'flooded'], ['change', 'changes', 'changed', 'changing'], ['burn', 'burned', 'burning', 'burns'], ['crop', 'crops'], ['species']]) {
      assert.equal(new Set(group.map(stem)).size, 1, group.join(', '));
    }
  });
  it('leaves short words and non-Latin words alone', () => {
    assert.equal(stem('is'), 'is');
    assert.equal(stem('gas'), 'gas');
    assert.equal(stem('東京'), '東京');
  });
  it('does not mutate or depend on call order', () => {
    assert.deepEqual(stemsOf('Flooded fields'), stemsOf('flooded_fields'));
  });
});

describe('tokenize', () => {
  it('reads contractions as words: a negation stays a negation', () => {
    assert.deepEqual(words("Isn't Lyon flooded?"), ['is', 'not', 'lyon', 'flooded']);
    assert.deepEqual(words("What's here"), ['what', 'is', 'here']);
    assert.deepEqual(words("Lyon's air"), ['lyon', 'air']);
  });
  it('folds case and diacritics, keeps inner apostrophes of names', () => {
    assert.deepEqual(words("São Paulo, Côte d'Ivoire"), ['sao', 'paulo', 'cote', 'divoire']);
  });
  it('writes PM2.5, NO₂ and CH₄ one way', () => {
    assert.deepEqual(words('PM 2.5 and pm2,5 and NO₂ and CH4'), ['pm25', 'and', 'pm25', 'and', 'no2', 'and', 'ch4']);
  });
  it('marks scripts, capitals and the punctuation after a word', () => {
    const t = tokenize(preprocess('東京の植生は? Lyon, France'));
    assert.deepEqual(
      t.map((x) => x.script),
      ['cjk', 'latin', 'latin'],
    );
    assert.deepEqual(
      t.map((x) => x.cap),
      [false, true, true],
    );
    assert.deepEqual(
      t.map((x) => x.after),
      ['?', ',', ''],
    );
  });
  it('keeps decimal coordinates whole', () => {
    assert.deepEqual(words('at 48.8566, 2.3522'), ['at', '48.8566', '2.3522']);
  });
});
