import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';

const seed = P.blake3(P.utf8('receipt template test key'));
const signer = { publicKey: P.portableEd25519.publicKey(seed), epoch: 2, sign: (d: Uint8Array) => P.portableEd25519.sign(d, seed) };
const manifests = { schema_cid: P.contentId({ s: 1 }), registry_cid: P.contentId({ r: 1 }) };
const cid = (s: string) => P.contentId({ s });
const leaves = [cid('a'), cid('b'), cid('c')].map((c) => P.b32decode(c, 32));
const proof = P.proofToJson(P.batchProofs(leaves).proofs[1]);

// Every optional segment alone and together, with and without cost and intent.
const bodies: Array<[string, P.FixedReceiptBody]> = [
  ['bare', { primitive: 'svc.recall', cells: [P.cellOf(1, 2)], fact_cids: [] }],
  ['merkle proof', { primitive: 'svc.recall', cells: [P.cellOf(1, 2)], fact_cids: [cid('b')], merkle_proof: proof }],
  ['scope', { primitive: 'svc.recall', cells: [P.cellOf(1, 2)], fact_cids: [cid('x')], scope: { user_id: 'u', agent_id: undefined } }],
  ['as_of', { primitive: 'svc.recall', cells: [P.cellOf(1, 2)], fact_cids: [cid('x')], as_of: { valid_tslot: 7, transaction_time: '2026-01-01T00:00:00Z' } }],
  ['edges', { primitive: 'svc.recall', cells: [P.cellOf(1, 2)], fact_cids: [cid('x')], edge_cids: [cid('e2'), cid('e1')] }],
  ['manifest', { primitive: 'svc.recall', cells: [P.cellOf(1, 2)], fact_cids: [cid('x')], source_versions: { copdem: '2024-01', era5: 'x' } }],
  ['field', { primitive: 'svc.field', cells: [P.cellOf(1, 2), P.cellOf(3, 4)], fact_cids: [cid('x'), cid('y')], field: { aoi_cid: cid('aoi'), derivation_cid: cid('d') } }],
  [
    'all + intent + non-ASCII',
    {
      primitive: 'svc.récall',
      cells: ['é'],
      fact_cids: [cid('b'), cid('q')],
      scope: { org_id: 'o"rg' },
      as_of: { valid_tslot: 1 },
      edge_cids: [cid('e')],
      source_versions: { s: 'v' },
      field: { aoi_cid: cid('a'), derivation_cid: cid('d') },
      merkle_proof: proof,
      intent: 'what is "here"?\u2028',
    },
  ],
];
const costs: Array<P.Cost | undefined> = [undefined, { credits: 0, was_cached: true, latency_p50_ms: 0.12, latency_p99_ms: 3.4 }, { credits: 0, was_cached: false, source_freshness_s: 60 }];

describe('receipt templates (re-issued receipts over an unchanged answer)', () => {
  for (const [name, body] of bodies) {
    for (const cost of costs) {
      it(`${name}, cost ${cost ? JSON.stringify(cost) : 'absent'}: the receipt signReceipt builds, with its exact JSON`, () => {
        const template = new P.ReceiptTemplate(structuredClone(body), signer, manifests);
        const requestId = P.ulid();
        const servedAt = P.isoSeconds(new Date());
        const issued = template.issue(requestId, servedAt, cost && { ...cost });
        const direct = P.signReceipt({ ...structuredClone(body), request_id: requestId, served_at: servedAt, cost: cost && { ...cost } }, signer, manifests);
        assert.deepEqual(issued, direct);
        assert.equal(JSON.stringify(issued), JSON.stringify(direct), 'same key order');
        assert.equal(P.toHex(P.receiptDigest(issued)), P.toHex(P.receiptDigest(direct)), 'same bytes signed');
        const verdict = P.verifyReceipt(JSON.parse(JSON.stringify(issued)), { publicKey: signer.publicKey });
        assert.equal(verdict.valid, true, verdict.errors.join('; '));
      });
    }
  }

  it('issues a fresh, independently valid receipt each time', () => {
    const template = new P.ReceiptTemplate(structuredClone(bodies[1][1]), signer, manifests);
    const a = template.issue(P.ulid(), '2026-11-22T10:00:00Z');
    const b = template.issue(P.ulid(), '2026-11-22T10:00:01Z');
    assert.notEqual(a.request_id, b.request_id);
    assert.notEqual(a.signature, b.signature);
    for (const r of [a, b]) assert.equal(P.verifyReceipt(JSON.parse(JSON.stringify(r)), { publicKey: signer.publicKey }).valid, true);
    // Swapping one receipt's served_at into the other breaks its signature.
    const forged = JSON.parse(JSON.stringify(a));
    forged.served_at = b.served_at;
    assert.deepEqual(P.verifyReceipt(forged, { publicKey: signer.publicKey }).failures, ['signature']);
  });

  it('issued receipts are independent objects; the shared body is frozen', () => {
    const template = new P.ReceiptTemplate(structuredClone(bodies[7][1]), signer, manifests);
    const a = template.issue(P.ulid(), P.isoSeconds(new Date()), { credits: 0, was_cached: true });
    const b = template.issue(P.ulid(), P.isoSeconds(new Date()));
    a.intent = 'changed';
    assert.equal(b.intent, bodies[7][1].intent);
    assert.equal(b.cost, undefined);
    assert.throws(() => {
      (a.cells as any).push('x');
    }, TypeError);
    assert.throws(() => {
      (a.scope as any).org_id = 'other';
    }, TypeError);
    assert.throws(() => {
      (a.merkle_proof!.siblings as any).push('x');
    }, TypeError);
  });

  it('fits only the signer and manifests it was built for', () => {
    const template = new P.ReceiptTemplate(structuredClone(bodies[0][1]), signer, manifests);
    assert.equal(template.fits(signer, { ...manifests }), true);
    assert.equal(template.fits({ ...signer }, manifests), false);
    assert.equal(template.fits(signer, { ...manifests, registry_cid: P.contentId({ r: 2 }) }), false);
  });
});
