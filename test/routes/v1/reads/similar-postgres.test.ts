/**
 * find_similar and the coverage map on the PostgreSQL deployment: two responders share one log,
 * and what one acknowledges is searched and mapped by the other (the vector index follows the
 * shared log, not its own write path).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { dropSchema, pgSkip, pgUrl, randomSchema } from '../../../store/support/pg-env.js';
import { attest, post, vec } from './helpers.js';

describe('find_similar across two responders on one PostgreSQL log', { skip: pgSkip }, () => {
  const op = makeAttester('reads-similar-pg-operator');
  const schema = randomSchema();
  let a: TestApp;
  let b: TestApp;
  const Q = P.cellOf(40, -3);
  const N1 = P.cellOf(40.01, -3);
  const N2 = P.cellOf(-12, 130);
  const q = vec(11);

  before(async () => {
    const overrides = { attesterKeys: [op.publicKey], databaseUrl: pgUrl(), databaseSchema: schema };
    a = await build(overrides, {}, { materializers: [] });
    b = await build(overrides, {}, { materializers: [] });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await dropSchema(schema);
  });

  it('a vector acknowledged by one responder is found by the other, before and after its index caught up', async () => {
    await attest(a, op, [
      { kind: 'primary', cell: Q, band: 'geotessera', tslot: 55, value: q, unit: 'unitless' },
      { kind: 'primary', cell: N1, band: 'geotessera', tslot: 55, value: q.map((x) => x * 3), unit: 'unitless' },
    ]);
    const first = await post(b, '/v1/find_similar', { key: Q });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(b.service.store.driver, 'postgres');
    assert.deepEqual(
      first.body.neighbors.map((n: any) => n.cell),
      [N1],
    );

    await attest(a, op, [{ kind: 'primary', cell: N2, band: 'geotessera', tslot: 55, value: q.map((x) => -x), unit: 'unitless' }]);
    const second = await post(b, '/v1/find_similar', { key: Q });
    assert.deepEqual(
      second.body.neighbors.map((n: any) => [n.cell, Math.round(n.score * 1e9) / 1e9]),
      [
        [N1, 1],
        [N2, -1],
      ],
    );
    assert.equal(second.body.searched.index_complete, true);
    assert.equal(second.body.searched.log_size, await a.service.store.log.size());
  });

  it('the coverage map drawn by one responder holds the cells the other wrote', async () => {
    const r = await b.app.inject({ method: 'GET', url: '/v1/coverage_map.svg' });
    assert.equal(r.statusCode, 200);
    assert.match(r.body, /data-cells="3"/);
  });
});
