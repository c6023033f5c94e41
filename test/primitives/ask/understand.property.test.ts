/** Any text is a question the router reads without failing, the same way every time (spec 4.5). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadRegistry } from '../../../src/registry/registry.js';
import { understand } from '../../../src/primitives/ask/understand.js';

const reg = loadRegistry();
const NOW = new Date('2026-11-21T12:00:00Z');
const pieces = fc.constantFrom(
  'flood',
  'NDVI',
  'in',
  'Lyon',
  ',',
  'France',
  'since 2020',
  'places like',
  'where',
  'not',
  '東京',
  'Москва',
  '48.85, 2.35',
  'defi.zb608.zb120.zdc13',
  "isn't",
  'pm2.5',
  '?',
  'write a poem',
  'Springfield',
  '*',
  '(',
  ')',
);
const question = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 120 }),
  fc.array(pieces, { maxLength: 12 }).map((a) => a.join(' ')),
);

describe('understand', () => {
  it('reads any text without throwing, deterministically, with a consistent verdict', () => {
    fc.assert(
      fc.property(question, (q) => {
        const a = understand(reg, q, NOW);
        const b = understand(reg, q, NOW);
        assert.deepEqual(a.routing, b.routing);
        assert.equal(a.routing.out_of_scope, a.routing.intent === 'out_of_scope');
        if (a.routing.out_of_scope) assert.equal(a.routing.topic, null);
        if (a.routing.topic !== null) assert.ok(reg.topics.has(a.routing.topic));
        for (const m of a.routing.matched_keywords) assert.ok(reg.topics.has(m.topic));
      }),
      { numRuns: 400 },
    );
  });
});
