/**
 * The /v1/ask router against its question set (spec 4.5; issue: ≥ 250 questions, every topic,
 * every hunt alias, place forms and scripts, out of scope, typos, time, negation). Reports
 * precision and recall per topic; fails under 90 % top-1 topic accuracy or when any
 * out-of-scope question is routed to a topic.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadRegistry } from '../../../src/registry/registry.js';
import { understand } from '../../../src/primitives/ask/understand.js';
import { confusion, type Question } from './confusion.js';

const reg = loadRegistry();
const { questions } = JSON.parse(readFileSync(new URL('./questions.json', import.meta.url), 'utf8')) as { questions: Question[] };
const NOW = new Date('2026-11-21T12:00:00Z');
const results = questions.map((x) => ({ x, u: understand(reg, x.q, NOW) }));

describe('ask router: the question set', () => {
  it('has at least 250 questions covering every topic, every hunt event and alias, and each intent', () => {
    assert.ok(questions.length >= 250, `${questions.length} questions`);
    for (const t of reg.topicList)
      assert.ok(
        questions.some((x) => x.topic === t.key),
        `topic ${t.key} has a question`,
      );
    for (const e of reg.huntEventList) {
      for (const term of [e.event, ...e.aliases])
        assert.ok(
          questions.some((x) => x.tags.includes(`hunt:${term}`)),
          `hunt term ${term} has a question`,
        );
    }
    for (const i of ['topical', 'hunt', 'similar', 'change', 'corpus', 'out_of_scope']) assert.ok(questions.filter((x) => x.intent === i).length >= 5, `intent ${i}`);
    for (const tag of ['typo', 'time', 'negation', 'coords', 'comma_form', 'landmark', 'script:ja', 'script:ru', 'script:ar', 'script:ko', 'cell', 'cell_token']) {
      assert.ok(
        questions.some((x) => x.tags.includes(tag)),
        `a question tagged ${tag}`,
      );
    }
  });

  it('routes ≥ 90 % of questions to the expected top-1 topic, and reports precision and recall per topic', (t) => {
    const c = confusion(results.map(({ x, u }) => ({ expected: x.topic, got: u.routing.topic })));
    t.diagnostic(`top-1 accuracy ${(c.accuracy * 100).toFixed(1)} % over ${questions.length} questions`);
    for (const [topic, m] of Object.entries(c.per_topic)) t.diagnostic(`${topic.padEnd(17)} precision ${m.precision.toFixed(2)} recall ${m.recall.toFixed(2)} (n ${m.support})`);
    const misses = results.filter(({ x, u }) => u.routing.topic !== x.topic).map(({ x, u }) => `${x.q} → ${u.routing.topic} (want ${x.topic})`);
    assert.ok(c.accuracy >= 0.9, `accuracy ${c.accuracy}; misses:\n${misses.join('\n')}`);
  });

  it('never routes an out-of-scope question to a topic', () => {
    const routed = results.filter(({ x, u }) => x.intent === 'out_of_scope' && !u.routing.out_of_scope);
    assert.deepEqual(
      routed.map(({ x, u }) => `${x.q} → ${u.routing.topic}`),
      [],
    );
  });

  it('recognises the intent (hunt, similar, change, corpus) of ≥ 90 % of questions', () => {
    const ok = results.filter(({ x, u }) => u.routing.intent === x.intent).length / results.length;
    assert.ok(ok >= 0.9, `intent accuracy ${ok}`);
    for (const { x, u } of results.filter(({ x }) => x.intent === 'hunt')) {
      const term = x.tags.find((t) => t.startsWith('hunt:'))!.slice(5);
      const ev = reg.huntEventsByName.get(term)!;
      assert.equal(u.routing.hunt?.event, ev.event, `${x.q}: hunt event of ${term}`);
    }
  });

  it('finds the expected place in ≥ 90 % of questions that name one (coordinates, cells, names in any script)', () => {
    const named = results.filter(({ x }) => x.place !== null);
    const ok = named.filter(({ x, u }) => {
      const p = u.extraction.place;
      if (x.place === '@point') return p?.kind === 'point';
      if (x.place === '@cell') return p?.kind === 'cell';
      const label = p?.kind === 'name' ? p.match?.selected.label : u.extraction.unknown;
      return typeof label === 'string' && label.startsWith(x.place!);
    });
    assert.ok(ok.length / named.length >= 0.9, `place accuracy ${ok.length}/${named.length}`);
  });

  it('routes negated questions to the topic they negate', () => {
    const neg = results.filter(({ x }) => x.tags.includes('negation'));
    assert.ok(neg.length >= 5);
    for (const { x, u } of neg) {
      assert.equal(u.routing.topic, x.topic, x.q);
      assert.equal(u.routing.negated, true, `${x.q}: negation recorded`);
    }
  });

  it('explains every routed question with matched keywords that name its topic', () => {
    for (const { x, u } of results.filter(({ u }) => u.routing.intent === 'topical')) {
      assert.ok(
        u.routing.matched_keywords.some((m) => m.topic === u.routing.topic),
        x.q,
      );
    }
  });
});
