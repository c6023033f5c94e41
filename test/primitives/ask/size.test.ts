/** The ask reply's incremental size (memberSizer) equals its whole JSON byte length after any change. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memberSizer } from '../../../src/primitives/ask/size.js';

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = ['flood', 'Zürich', '東京', 'a "quoted" word', 'line\nbreak', '', 'São Paulo', '🙂'];

function value(rnd: () => number, depth = 0): unknown {
  const k = Math.floor(rnd() * (depth > 2 ? 5 : 8));
  if (k === 0) return WORDS[Math.floor(rnd() * WORDS.length)];
  if (k === 1) return Math.round(rnd() * 1e6) / 100;
  if (k === 2) return rnd() < 0.5 ? null : rnd() < 0.5;
  if (k === 3) return undefined;
  if (k === 4) return new Date(Math.floor(rnd() * 2e12));
  if (k === 5) return Array.from({ length: Math.floor(rnd() * 4) }, () => value(rnd, depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) }, (_, i) => [`${WORDS[i % WORDS.length]}${i}`, value(rnd, depth + 1)]));
}

describe('ask reply size', () => {
  it('memberSizer equals Buffer.byteLength(JSON.stringify(reply)) after every replaced member and growing trimmed list', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rnd = seeded(seed);
      const reply: Record<string, unknown> = { trimmed: [] as string[] };
      for (let i = 0; i < 8; i++) reply[`m${i}_${WORDS[i % WORDS.length]}`] = value(rnd);
      const size = memberSizer(reply);
      for (let step = 0; step < 12; step++) {
        assert.equal(size(), Buffer.byteLength(JSON.stringify(reply)), `seed ${seed}, step ${step}`);
        const keys = Object.keys(reply).filter((k) => k !== 'trimmed');
        const key = keys[Math.floor(rnd() * keys.length)];
        // What a cut does: a new value under a member (emptied, shortened or dropped to undefined).
        reply[key] = value(rnd);
        (reply.trimmed as string[]).push(WORDS[step % WORDS.length]);
      }
    }
  });
});
