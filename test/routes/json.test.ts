import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toJson } from '../../src/api/json.js';

describe('reply serializer', () => {
  const shapes: unknown[] = [
    null,
    0,
    -0,
    1.5,
    NaN,
    Infinity,
    'é"\\\n\u2028',
    true,
    [],
    {},
    [undefined, () => 1, Symbol('s'), null],
    { a: undefined, b: () => 1, c: Symbol('x'), d: 1, [Symbol('k')]: 2, 2: 'two', 1: 'one', z: [1, [2, [3, [4, [5, { deep: true }]]]]] },
    { when: new Date(0), buf: Buffer.from('hi'), map: new Map([[1, 2]]), set: new Set([1]), typed: new Uint8Array([1, 2]) },
    { nested: { toJSON: () => ({ replaced: 1 }) } },
  ];
  shapes.forEach((v, i) => it(`equals JSON.stringify for shape #${i}`, () => assert.equal(toJson(v), JSON.stringify(v))));

  it('keeps the text of a frozen object once and reuses it across responses', () => {
    const fact = Object.freeze({ band: 'b', value: 1, receipt: Object.freeze({ signature: 's' }) });
    const a = toJson({ facts: [fact], n: 1 });
    const b = toJson({ facts: [fact, fact], n: 2 });
    assert.equal(a, JSON.stringify({ facts: [fact], n: 1 }));
    assert.equal(b, JSON.stringify({ facts: [fact, fact], n: 2 }));
  });

  it('serializes top-level undefined like JSON.stringify', () => assert.equal(toJson(undefined), JSON.stringify(undefined)));
});
