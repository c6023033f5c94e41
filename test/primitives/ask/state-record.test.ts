/** The svc:state: token of an answer step (spec 2.5, 4.5): record shape and content id. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { contentId } from '../../../src/protocol/cid.js';
import { loadRegistry } from '../../../src/registry/registry.js';
import { stateRecord } from '../../../src/primitives/ask/state-record.js';
import { understand } from '../../../src/primitives/ask/understand.js';
import type { ServiceContext } from '../../../src/primitives/context/context.js';

const ctx = { config: { prefix: 'svc' }, keys: { publicKeyB32: 'k'.repeat(52) }, manifests: { registry_cid: 'r'.repeat(52), schema_cid: 's'.repeat(52) } } as unknown as ServiceContext;
const u = understand(loadRegistry(), 'What is the NDVI in Lyon since 2020?', new Date('2026-11-21T12:00:00Z'));
const receipt = {
  request_id: '01J0000000000000000000000A',
  served_at: '2026-11-21T12:00:00Z',
  primitive: 'svc.ask',
  cells: ['defi.zb608.zb120.zdc13'],
  fact_cids: ['a'.repeat(52)],
  signature: 'sig',
} as never;
const parts = { question: 'What is the NDVI in Lyon since 2020?', routing: u.routing, time: u.time, place: null, answer: 'NDVI 0.5.', receipt };

describe('stateRecord', () => {
  it("pins question, routing, place, the receipt's lists, the answer and the receipt; its cid is the content id of the record", () => {
    const s = stateRecord(ctx, parts);
    assert.equal(s.token, `svc:state:${s.cid}`);
    assert.equal(s.cid, contentId(s.record));
    assert.equal(s.cid.length, 52);
    assert.equal(s.persisted, false, 'built, not yet kept');
    assert.deepEqual(Object.keys(s.record), ['schema', 'step', 'question', 'routing', 'place', 'cells', 'fact_cids', 'answer', 'receipt', 'responder', 'registry_cid', 'schema_cid']);
    assert.equal(s.record.routing.matched_topic, 'vegetation');
    assert.equal(s.record.routing.time?.expression, 'since 2020');
    assert.deepEqual(s.record.fact_cids, ['a'.repeat(52)]);
  });
  it('is deterministic, and any change of the answer changes the cid', () => {
    assert.equal(stateRecord(ctx, parts).cid, stateRecord(ctx, parts).cid);
    assert.notEqual(stateRecord(ctx, { ...parts, answer: 'NDVI 0.6.' }).cid, stateRecord(ctx, parts).cid);
  });
});
