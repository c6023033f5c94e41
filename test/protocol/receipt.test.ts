import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { loadVectors } from '../support/vectors.js';

const V = loadVectors('receipts/receipts.json');
const seed = P.blake3(P.utf8('receipt test key'));
const signer = { publicKey: P.portableEd25519.publicKey(seed), epoch: 3, sign: (d: Uint8Array) => P.portableEd25519.sign(d, seed) };
const manifests = { schema_cid: P.contentId({ s: 1 }), registry_cid: P.contentId({ r: 1 }) };
const body: P.ReceiptBody = {
  request_id: P.ulid(),
  served_at: P.isoSeconds(new Date()),
  primitive: 'svc.recall',
  cells: [P.cellOf(1, 2)],
  fact_cids: [],
};

describe('receipts (spec 2.4, protocol.md §5)', () => {
  describe('golden vectors', () => {
    V.cases.forEach((c: any, i: number) => {
      it(`${c.name}: preimage, digest and signature recompute`, () => {
        assert.equal(P.toHex(P.receiptPreimage(c.receipt)), c.preimage_hex, `vector ${i}`);
        assert.equal(P.toHex(P.receiptDigest(c.receipt)), c.digest_hex, `vector ${i}`);
        const verdict = P.verifyReceipt(c.receipt, { publicKey: V.public_key });
        assert.equal(verdict.valid, true, `vector ${i}: ${verdict.errors.join('; ')}`);
        assert.equal(verdict.trusted, true);
      });
    });
    it('encodes non-ASCII text as UTF-8 with its byte length, like the segment builders', () => {
      const r = { ...body, preimage_version: 1, primitive: 'svc.récall→北', cells: ['é', 'plain'], fact_cids: ['ß'] };
      const expected = P.concatBytes(
        P.streamHeader('receipt'),
        P.segment(0x01, r.request_id),
        P.segment(0x02, r.served_at),
        P.segment(0x07, r.primitive),
        P.listSegment(0x08, r.cells),
        P.listSegment(0x09, r.fact_cids),
      );
      assert.equal(P.toHex(P.receiptPreimage(r)), P.toHex(expected));
    });
    it('the ABSENT marker is tag 5 with length 0', () => assert.equal(V.merkle_absent_marker_hex, '0500000000'));
    it('a v2 receipt without proof differs from v1 only by the merkle segment', () => {
      const v1 = V.cases.find((c: any) => c.name === 'v1/bare');
      const v2 = V.cases.find((c: any) => c.name === 'v2/bare');
      assert.ok(v2.preimage_hex.startsWith(v1.preimage_hex));
      assert.equal(v2.preimage_hex.length - v1.preimage_hex.length, (1 + 4 + 64) * 2);
    });
  });

  describe('signing', () => {
    it('a fresh receipt verifies and pins every optional segment only when present', () => {
      const r = P.signReceipt({ ...body, scope: { user_id: 'u' }, as_of: { valid_tslot: 5 } }, signer, manifests);
      assert.equal(r.preimage_version, 2);
      assert.equal(r.responder, r.responder_pubkey_b32);
      assert.equal(r.responder_key_epoch, 3);
      assert.ok(P.verifyReceipt(r).valid);
      const hx = P.segmentHexes(r);
      assert.deepEqual(Object.keys(hx).sort(), ['as_of_hex', 'scope_hex']);
    });
    it('drops empty optional fields instead of signing empty segments', () => {
      const r = P.signReceipt({ ...body, scope: {}, edge_cids: [], source_versions: {} }, signer, manifests);
      assert.equal(r.scope, undefined);
      assert.equal(r.edge_cids, undefined);
      assert.equal(r.source_versions, undefined);
    });
  });

  describe('when the receipt was tampered with', () => {
    const good = P.signReceipt({ ...body, fact_cids: [P.contentId({ a: 1 })] }, signer, manifests);
    const mutations: Array<[string, (r: any) => void]> = [
      ['request_id', (r) => (r.request_id = P.ulid())],
      ['served_at', (r) => (r.served_at = '2000-01-01T00:00:00Z')],
      ['primitive', (r) => (r.primitive = 'svc.fetch')],
      ['cells', (r) => (r.cells = [P.cellOf(1, 3)])],
      ['fact_cids', (r) => r.fact_cids.push(P.contentId({ b: 2 }))],
      ['scope added', (r) => (r.scope = { user_id: 'x' })],
      ['as_of added', (r) => (r.as_of = { valid_tslot: 1 })],
      ['edges added', (r) => (r.edge_cids = [P.contentId({ e: 1 })])],
      ['manifest added', (r) => (r.source_versions = { a: 'b' })],
      ['field added', (r) => (r.field = { aoi_cid: 'a', derivation_cid: 'b' })],
      ['version downgraded', (r) => (r.preimage_version = 1)],
    ];
    for (const [name, mutate] of mutations) {
      it(`fails with 'signature' when ${name} changes`, () => {
        const r = structuredClone(good);
        mutate(r);
        const v = P.verifyReceipt(r);
        assert.equal(v.valid, false);
        assert.deepEqual(v.failures, ['signature']);
      });
    }
    it('reports a merkle proof that does not reach its root as merkle_inclusion', () => {
      const leaves = [P.blake3(P.utf8('x')), P.blake3(P.utf8('y'))];
      const { proofs } = P.batchProofs(leaves);
      const proof = P.proofToJson(proofs[0]);
      const r = P.signReceipt({ ...body, fact_cids: [P.b32encode(leaves[1])], merkle_proof: proof }, signer, manifests);
      const v = P.verifyReceipt(r);
      assert.ok(v.failures.includes('merkle_inclusion'));
      assert.equal(v.valid, false);
    });
    it('reports a key the caller did not pin as untrusted_key, separate from validity', () => {
      const other = P.b32encode(P.portableEd25519.publicKey(P.blake3(P.utf8('other'))));
      const v = P.verifyReceipt(good, { publicKey: other });
      assert.equal(v.valid, true);
      assert.equal(v.trusted, false);
      assert.deepEqual(v.failures, ['untrusted_key']);
      assert.equal(P.verifyReceipt(good, { publicKey: other, trustedKeys: [good.responder] }).trusted, true);
    });
    it('verifies under another deployment prefix only with that prefix', () => {
      const r = P.signReceipt(body, signer, manifests, 'other');
      assert.equal(P.verifyReceipt(r).valid, false);
      assert.equal(P.verifyReceipt(r, { prefix: 'other' }).valid, true);
    });
  });

  describe('malformed input', () => {
    const bad: Array<[unknown, RegExp]> = [
      [null, /expected a JSON object/],
      [[], /expected a JSON object/],
      [{}, /request_id: expected a string/],
      [{ ...structuredClone(body), signature: 'x', responder_pubkey_b32: 'y', cells: 'no' }, /cells: expected an array/],
      [{ ...structuredClone(body), signature: 'AAAA', responder_pubkey_b32: 'abc' }, /malformed/],
      [{ ...structuredClone(body), signature: 'aa', responder_pubkey_b32: 'aa', preimage_version: 7 }, /preimage_version/],
    ];
    bad.forEach(([input, re], i) => {
      it(`#${i} is reported as malformed, never thrown`, () => {
        const v = P.verifyReceipt(input);
        assert.equal(v.valid, false);
        assert.deepEqual(v.failures, ['malformed']);
        assert.match(v.errors.join(' '), re);
      });
    });
  });
});
