/**
 * Strict RFC 3339 (issue 13, item 12): each valid row names what it exercises, each invalid row
 * the one property that breaks it. The first invalid rows are the probe's: Date.parse accepts
 * "1", rolls "2026-02-31" over to March 3 and reads "+010000-01-01T00:00Z".
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isRfc3339, parseRfc3339 } from '../../src/protocol/rfc3339.js';

/** [text, the instant it names in UTC, why it is valid]. */
const VALID: Array<[string, string, string]> = [
  ['2026-02-28T12:00:00Z', '2026-02-28T12:00:00.000Z', 'plain UTC, seconds present'],
  ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z', 'February 29 of a leap year (divisible by 4)'],
  ['2000-02-29T23:59:59Z', '2000-02-29T23:59:59.000Z', 'February 29 of a century divisible by 400'],
  ['2026-04-30T00:00:00Z', '2026-04-30T00:00:00.000Z', 'last day of a 30-day month'],
  ['2026-01-01T00:00:00.5Z', '2026-01-01T00:00:00.500Z', 'one fractional digit'],
  ['2026-01-01T00:00:00.29Z', '2026-01-01T00:00:00.290Z', 'two fractional digits (no float rounding)'],
  ['2026-01-01T00:00:00.123456789Z', '2026-01-01T00:00:00.123Z', 'nanoseconds, truncated to milliseconds'],
  ['2026-01-01T00:00:00.999999Z', '2026-01-01T00:00:00.999Z', 'a fraction just under a second stays in that second'],
  ['2026-01-01T01:00:00+01:00', '2026-01-01T00:00:00.000Z', 'positive offset'],
  ['2025-12-31T19:00:00-05:00', '2026-01-01T00:00:00.000Z', 'negative offset crossing a year'],
  ['2026-01-01T05:45:00+05:45', '2026-01-01T00:00:00.000Z', 'offset with minutes'],
  ['2026-01-01T23:59:00+23:59', '2026-01-01T00:00:00.000Z', 'largest offset'],
  ['2026-01-01T00:00:00-00:00', '2026-01-01T00:00:00.000Z', '-00:00: UTC with the local offset unknown (RFC 3339 4.3)'],
  ['2026-01-01t00:00:00z', '2026-01-01T00:00:00.000Z', 'lower-case t and z (RFC 3339 5.6, note)'],
  ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z', 'the earliest instant: year 0000'],
  ['0099-06-15T00:00:00Z', '0099-06-15T00:00:00.000Z', 'a year below 100 stays itself (Date.UTC would make it 1999)'],
  ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z', 'the latest instant'],
  ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z', 'the Unix epoch (zero is a valid answer, not a failure)'],
];

/** [input, the property that breaks]. */
const INVALID: Array<[unknown, string]> = [
  ['1', 'not a date-time at all (Date.parse: year 2001)'],
  ['2026-02-31T00:00:00Z', 'February has no 31st (Date.parse: March 3)'],
  ['+010000-01-01T00:00Z', 'expanded six-digit year, and no seconds'],
  ['2026-02-31', 'date only, and not a calendar day'],
  ['2026-02-29T00:00:00Z', '2026 is not a leap year'],
  ['1900-02-29T00:00:00Z', 'a century not divisible by 400 is not a leap year'],
  ['2026-04-31T00:00:00Z', 'April has 30 days'],
  ['2026-13-01T00:00:00Z', 'month 13'],
  ['2026-00-10T00:00:00Z', 'month 0'],
  ['2026-01-00T00:00:00Z', 'day 0'],
  ['2026-01-32T00:00:00Z', 'day 32'],
  ['+002026-01-01T00:00:00Z', 'expanded year form (ISO 8601 extension, not RFC 3339)'],
  ['-000001-01-01T00:00:00Z', 'negative year'],
  ['10000-01-01T00:00:00Z', 'five-digit year'],
  ['2026-01-01', 'date only: no time'],
  ['2026-01-01T00:00Z', 'no seconds'],
  ['2026-01-01T00:00:00', 'no offset: a local time names no instant'],
  ['2026-01-01 00:00:00Z', 'space instead of T (the ABNF requires T)'],
  ['2026-01-01T24:00:00Z', 'hour 24'],
  ['2026-01-01T23:60:00Z', 'minute 60'],
  ['2026-12-31T23:59:60Z', 'leap second: valid RFC 3339, but Unix time cannot name it'],
  ['2026-01-01T00:00:61Z', 'second 61'],
  ['2026-01-01T00:00:00.Z', 'a decimal point without digits'],
  ['2026-01-01T00:00:00,5Z', 'comma decimal sign (ISO 8601 only)'],
  ['2026-01-01T00:00:00+0100', 'offset without a colon'],
  ['2026-01-01T00:00:00+01', 'offset without minutes'],
  ['2026-01-01T00:00:00+24:00', 'offset hour 24'],
  ['2026-01-01T00:00:00+01:60', 'offset minute 60'],
  ['2026-01-01T00:00:00 +01:00', 'space before the offset'],
  ['2026-01-01T00:00:00GMT', 'a zone name instead of an offset'],
  ['20260101T000000Z', 'ISO 8601 basic format (no separators)'],
  ['2026-1-01T00:00:00Z', 'one-digit month'],
  ['2026-01-01T0:00:00Z', 'one-digit hour'],
  [' 2026-01-01T00:00:00Z', 'leading space'],
  ['2026-01-01T00:00:00Z ', 'trailing space'],
  ['2026-01-01T00:00:00Z\n', 'trailing newline'],
  ['２０２６-01-01T00:00:00Z', 'full-width digits'],
  ['0000-01-01T00:00:00+00:01', 'the instant falls before year 0000 in UTC'],
  ['9999-12-31T23:59:59-00:01', 'the instant falls after year 9999 in UTC'],
  ['Thu, 01 Jan 2026 00:00:00 GMT', 'RFC 2822 form (Date.parse accepts it)'],
  ['', 'empty'],
  [1767225600000, 'a number, not a string'],
  [null, 'null'],
  [undefined, 'absent'],
  [new Date(0), 'a Date object, not text'],
];

describe('strict RFC 3339 date-time', () => {
  for (const [text, utc, why] of VALID) {
    it(`accepts ${JSON.stringify(text)}: ${why}`, () => {
      const ms = parseRfc3339(text);
      assert.ok(Number.isFinite(ms), text);
      assert.equal(new Date(ms).toISOString(), utc);
      assert.equal(isRfc3339(text), true);
    });
  }
  for (const [input, why] of INVALID) {
    it(`refuses ${JSON.stringify(input) ?? String(input)}: ${why}`, () => {
      assert.ok(Number.isNaN(parseRfc3339(input)), String(input));
      assert.equal(isRfc3339(input), false);
    });
  }

  it('agrees with Date.parse on every valid row from 1970 on (it only refuses more)', () => {
    for (const [text] of VALID) if (text >= '1970') assert.equal(parseRfc3339(text), Date.parse(text.replace(/\.(\d{3})\d+/, '.$1')), text);
  });

  it("the probe's three are what Date.parse lets through", () => {
    for (const text of ['1', '2026-02-31T00:00:00Z', '+010000-01-01T00:00Z']) assert.ok(Number.isFinite(Date.parse(text)), text);
  });
});
