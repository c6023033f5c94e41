/**
 * `npm run bench ask-eval`: the /v1/ask routing evaluation (test/primitives/ask/eval/set.json),
 * printed as one JSON object: per half (tuning, held-out) the top-1 topic accuracy and the place
 * accuracy over in-scope questions, the out-of-scope refusal rate, false refusals, accuracy by kind
 * of question; and, for the tuning half only, the confusion of its misses and accuracy per data
 * family. The held-out half's misses are never printed, nor its per-family figures (a family has
 * one to four questions there, so they would name the misses): the router is tuned on the tuning
 * half alone.
 */
import { loadRegistry } from '../src/registry/registry.js';
import { coarse, evaluateSet, loadSet, misses, splitOf, summarize } from '../test/primitives/ask/eval/score.js';

const NOW = new Date('2026-11-21T12:00:00Z');
const items = loadSet();
const wrongSplit = items.filter((x) => splitOf(x.q) !== x.split).length;
const reg = loadRegistry();
const started = performance.now();
const res = evaluateSet(reg, NOW, items);
const ms = performance.now() - started;
const count = (f: (x: (typeof items)[number]) => boolean) => items.filter(f).length;

console.log(
  JSON.stringify(
    {
      bench: 'ask-eval',
      set: {
        n: items.length,
        tuning: res.tuning.length,
        held_out: res.held_out.length,
        out_of_scope: count((x) => x.topic === 'out_of_scope'),
        composite: count((x) => x.kind === 'composite'),
        families: count((x) => x.kind.startsWith('family:')),
        topics: new Set(items.map((x) => x.topic).filter((t) => t !== 'out_of_scope')).size,
        split_mismatches: wrongSplit,
      },
      tuning: { ...summarize(res.tuning), misses: misses(res.tuning) },
      held_out: coarse(summarize(res.held_out)),
      ms_total: Math.round(ms),
    },
    null,
    2,
  ),
);
if (wrongSplit > 0) process.exitCode = 1;
