/** The writer's envelope and bearer statement (attest-batch.ts, scope-bearer.ts): what svc attest, svc bearer and packages/client send. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';

const seed = P.blake3(P.utf8('attest-batch test'));
const pub = P.portableEd25519.publicKey(seed);
const now = new Date('2026-11-20T12:00:00.750Z');

describe('completeBodies, signEnvelope, expectedBatch', () => {
  it('completes a record shorthand by the subject rule and passes full bodies through', () => {
    const full = { kind: 'primary', cell: P.cellOf(52.1, 5.1), band: 'soil.clay_0_30cm', tslot: 0, value: 21, unit: 'percent', signed_at: '2026-11-20T11:00:00Z' };
    const [note, body] = P.completeBodies([{ band: 'memory.note', value: { text: 'pump failed' }, scope: { agent_id: 'a1' } }, full], now);
    assert.deepEqual(note, P.recordBody('memory.note', { text: 'pump failed' }, { signed_at: '2026-11-20T12:00:00Z', scope: { agent_id: 'a1' } }));
    assert.equal(body, full);
    assert.throws(() => P.completeBodies([], now), /non-empty/);
    assert.throws(() => P.completeBodies([{ band: 'memory.note' }], now), /item 0: expected \{band, value, scope\?\}/);
  });

  it('signs the batch root with the manifest CIDs; expectedBatch names the cids and root', () => {
    const facts = P.completeBodies(
      [
        { band: 'memory.note', value: { text: 'a' } },
        { band: 'memory.note', value: { text: 'b' } },
      ],
      now,
    );
    const env = P.signEnvelope(facts, seed, 'registry', 'schema');
    const root = Uint8Array.from(env.batch_root);
    assert.deepEqual(root, P.batchRoot(facts.map((f) => P.factDigest(f))));
    assert.equal(env.attester, P.b32encode(pub));
    assert.ok(P.verifyStrict(P.b32decode(env.signature, 64), P.attesterDigest(root, 'registry', 'schema'), pub));
    assert.ok(!P.verifyStrict(P.b32decode(env.signature, 64), P.attesterDigest(root, 'registry', 'other'), pub));
    assert.deepEqual(P.expectedBatch(facts), { fact_cids: facts.map((f) => P.factCid(f)), batch_root: P.b32encode(root) });
  });
});

describe('scopeBearerRequest', () => {
  it('is the key signing the scope_bearer_request digest for that responder', () => {
    const responder = P.portableEd25519.publicKey(P.blake3(P.utf8('responder')));
    const r = P.scopeBearerRequest({ agent_id: 'a1' }, seed, 1_800_000_300, P.b32encode(responder));
    assert.equal(r.key, P.b32encode(pub));
    assert.equal(r.exp, 1_800_000_300);
    assert.deepEqual(r.scope, { agent_id: 'a1' });
    assert.ok(P.verifyStrict(P.b32decode(r.signature, 64), P.scopeBearerRequestDigest({ agent_id: 'a1' }, pub, 1_800_000_300, responder), pub));
    const other = P.portableEd25519.publicKey(P.blake3(P.utf8('another responder')));
    assert.ok(!P.verifyStrict(P.b32decode(r.signature, 64), P.scopeBearerRequestDigest({ agent_id: 'a1' }, pub, 1_800_000_300, other), pub));
  });
});
