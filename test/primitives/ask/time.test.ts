/** Time expressions (spec 4.5: "today", "last week", "in 2021", "since 2020" → a stated window). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseTime } from '../../../src/primitives/ask/time.js';

const NOW = new Date('2026-11-21T12:00:00Z');
const nowS = NOW.getTime() / 1000;
const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000;

describe('parseTime', () => {
  const cases: Array<[string, string, number, number, boolean]> = [
    ['How green is Lyon today?', 'now', day('2026-11-21'), nowS, true],
    ['rain yesterday', 'day', day('2026-11-20'), day('2026-11-21') - 1, false],
    ['rain last week', 'window', nowS - 7 * 86400, nowS, true],
    ['NDVI in 2021', 'year', day('2021-01-01'), day('2022-01-01') - 1, false],
    ['What changed since 2020?', 'window', day('2020-01-01'), nowS, true],
    ['since March 2021', 'window', day('2021-03-01'), nowS, true],
    ['floods in October 2024', 'month', day('2024-10-01'), day('2024-11-01') - 1, false],
    ['between 2019 and 2022', 'window', day('2019-01-01'), day('2023-01-01') - 1, false],
    ['in the last 30 days', 'window', nowS - 30 * 86400, nowS, true],
    ['3 days ago', 'day', day('2026-11-18'), day('2026-11-19') - 1, false],
    ['last month', 'month', day('2026-10-01'), day('2026-11-01') - 1, false],
    ['this year', 'year', day('2026-01-01'), nowS, true],
    ['on 2024-05-01', 'day', day('2024-05-01'), day('2024-05-02') - 1, false],
    ['icy in March?', 'month', day('2026-03-01'), day('2026-04-01') - 1, false],
  ];
  for (const [q, kind, start, end, reaches] of cases) {
    it(`${JSON.stringify(q)} → ${kind}`, () => {
      const t = parseTime(q, NOW)!;
      assert.ok(t, 'a time expression');
      assert.deepEqual([t.kind, t.start_unix, t.end_unix, t.reaches_now], [kind, Math.floor(start), Math.floor(end), reaches]);
      assert.match(t.label, /\(UTC\)/);
      assert.equal(q.slice(t.span[0], t.span[1]).trim(), t.expression);
    });
  }
  it('finds none in a question without one, and no year in a height', () => {
    assert.equal(parseTime('Is Lyon flooded?', NOW), undefined);
    assert.equal(parseTime('Is the peak above 2000 metres?', NOW), undefined);
    assert.equal(parseTime('NDVI in 2099', NOW), undefined);
  });
  it('never ends a window after now', () => {
    assert.ok(parseTime('in 2026', NOW)!.end_unix <= nowS);
  });
});
