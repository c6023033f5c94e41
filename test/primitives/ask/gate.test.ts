/**
 * The router's out-of-scope gate and composite frames (docs/ask.md, "Routing" and "Composite
 * questions"): arithmetic and chit-chat never reach a topic, a frame word alone does not route a
 * question without a place, a composite question routes to one topic and names the others, a
 * named river reads as "river" in phrase patterns.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadRegistry } from '../../../src/registry/registry.js';
import { arithmetic } from '../../../src/primitives/ask/router.js';
import { tokenize, preprocess } from '../../../src/primitives/ask/text.js';
import { understand } from '../../../src/primitives/ask/understand.js';

const reg = loadRegistry();
const NOW = new Date('2026-11-21T12:00:00Z');
const read = (q: string, opts?: { placeGiven?: boolean }) => understand(reg, q, NOW, opts).routing;

describe('ask router: the out-of-scope gate', () => {
  it('refuses arithmetic, even beside topic words', () => {
    for (const q of [
      'What is 17 times 23?',
      'what is 2+2',
      '144 divided by 12',
      'What is 15% of 240?',
      'Convert 30 degrees Celsius to Fahrenheit',
      'What is 12 squared?',
      'square root of 81 degrees',
      'If 3 plus 4 mm of rain fell, how much is that?',
    ]) {
      const r = read(q);
      assert.equal(r.out_of_scope, true, q);
      assert.equal(r.topic, null, q);
      assert.ok(r.off_topic, `${q}: says why`);
    }
  });

  it('does not read coordinates, dates, ranges or multiples as arithmetic', () => {
    for (const q of [
      'NDVI at 48.85, 2.35',
      'rain between 2019 - 2022 at lat 41.5 lon -93.6',
      'Is PM2.5 in Delhi 3 times the WHO level?',
      'flooding on 2023-09-10 in Derna',
      'How many times has Lyon flooded since 2000?',
    ]) {
      assert.equal(arithmetic(tokenize(preprocess(q)), preprocess(q)), undefined, q);
      assert.equal(read(q).out_of_scope, false, q);
    }
  });

  it('refuses chit-chat and trivia without topic words, with or without a place', () => {
    for (const q of ['Hi there, how are you today?', 'Thanks!', 'Who is the mayor of Lyon?', 'What is the capital of Canada?', 'Is it safe to buy bitcoin?', 'Is it healthy to eat eggs?'])
      assert.equal(read(q).out_of_scope, true, q);
  });

  it('keeps an off-topic word that belongs to a topic phrase ("carbon stock", "population")', () => {
    assert.equal(read('What is the carbon stock of the woods near Freiburg?').topic, 'forest');
    assert.equal(read('What is the population density of Dhaka?').topic, 'land_cover');
  });
});

describe('ask router: composite questions', () => {
  it('routes a hazard question about a home to flood and lists the other hazards', () => {
    const r = read('What is the climate risk for my home in Miami?');
    assert.equal(r.topic, 'flood');
    assert.equal(r.composite?.frame, 'hazard');
    assert.ok(r.composite!.topics.includes('coastal'));
    assert.ok(!r.composite!.topics.includes('flood'));
  });

  it('lets a named hazard win inside the frame', () => {
    assert.equal(read('Is it safe to buy a flat in Valencia after the floods?').topic, 'flood');
    assert.equal(read('Is it risky to buy a chalet in Grindelwald with all the landslides?').topic, 'landslide');
    assert.equal(read('Is a cottage near the cliffs in Norfolk a safe investment?').topic, 'coastal');
  });

  it('reads climate as a whole as the climate-normals topic, and "climate change" is not a what-changed question', () => {
    const r = read('Is Vancouver a good place to escape climate change?');
    assert.equal(r.intent, 'topical');
    assert.equal(r.topic, 'drought');
    assert.equal(r.composite?.frame, 'climate');
  });

  it('routes health questions to the topic of the exposure named', () => {
    assert.equal(read('Is Barcelona a healthy place to live for someone with lung problems?').topic, 'air_quality');
    assert.equal(read('Is the heat a health risk for the elderly in Seville?').topic, 'urban_heat');
  });

  it('needs a place when the frame is the only evidence: from the question or the request', () => {
    assert.equal(read('Is it a safe place to buy a house?').out_of_scope, true);
    assert.equal(read('Is it a safe place to buy a house?', { placeGiven: true }).topic, 'flood');
  });
});

describe('ask router: rivers and lakes named in the question', () => {
  it('reads a named river as "river" in phrase patterns', () => {
    assert.equal(read('How high is the Elbe at Magdeburg?').topic, 'flood');
    assert.equal(read('Is the Rhine running high at Cologne?').topic, 'flood');
    assert.equal(read('What is the turbidity of the Ganges at Varanasi?').topic, 'water_quality');
    assert.equal(read('Is the water in Lake Erie clean?').topic, 'water_quality');
  });
});
