/** The log entry codec and the SQLite index's column codecs (batch trees, packed accepted_at). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cellOf } from '../../src/protocol/cell64.js';
import { SvcError } from '../../src/protocol/errors.js';
import type { LogEntryV1 } from '../../src/store/contract.js';
import { decodeCanonical, encodeCanonical } from '../../src/protocol/cbor.js';
import { factCid, factDigest } from '../../src/protocol/cid.js';
import { batchProofs, proofToJson } from '../../src/protocol/merkle-batch.js';
import { decodeLogEntry, encodeLogEntry, encodeLogEntryParts, factsFromEntry, scopeKey } from '../../src/store/entry.js';
import { BatchTree, buildBatchTree } from '../../src/store/batch-tree.js';
import { packAcceptedAt, packedBound, unpackAcceptedAt } from '../../src/store/sqlite/schema.js';
import { entryOf, makeBatch, makeFact, mixedBatch } from './support/facts.js';

const HERE = cellOf(51.5, -0.12);
const THERE = cellOf(-33.9, 18.4);
const ELEV = 'copdem30m.elevation_mean';

describe('log entry codec (src/store/entry.ts)', () => {
  const batch = makeBatch(
    [
      makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 918.5 }),
      makeFact({ cell: THERE, band: 'indices.ndvi', tslot: 12, value: [0.5, -0.25], scope: { org_id: 'o1', user_id: 'u1' } }),
      makeFact({ cell: HERE, band: 'era5.t2m', tslot: 3, value: null, kind: 'absence' }),
    ],
    { provenance_class: ['direct_sensor', 'deterministic_index', 'model_output'] },
  );
  const entry: LogEntryV1 = {
    v: 1,
    type: 'batch',
    accepted_at: '2026-03-01T12:00:00Z',
    attester: batch.attester,
    signature: batch.signature,
    batch_root: batch.batch_root,
    registry_cid: batch.registry_cid,
    schema_cid: batch.schema_cid,
    facts: batch.facts.map((f) => f.body),
    meta: batch.facts.map((f) => ({ provenance_class: f.provenance_class, tslot: f.tslot })),
  };

  it('round-trips through canonical CBOR', () => {
    const bytes = encodeLogEntry(entry);
    assert.deepEqual(decodeCanonical(bytes), decodeLogEntry(bytes), 'the encoding is canonical');
    assert.deepEqual(decodeLogEntry(bytes), entry);
  });

  it('rebuilds every StoredFact from the entry alone', () => {
    const facts = factsFromEntry(decodeLogEntry(encodeLogEntry(entry)), 7);
    const { proofs } = batchProofs(entry.facts.map((b) => factDigest(b)));
    facts.forEach((f, i) => {
      assert.equal(f.fact_cid, factCid(entry.facts[i]));
      assert.equal(f.fact_cid, batch.facts[i].fact_cid);
      assert.deepEqual(f.proof, proofToJson(proofs[i]));
      assert.deepEqual(f.body, entry.facts[i]);
      assert.equal(f.log_index, 7);
      assert.equal(f.accepted_at, entry.accepted_at);
      assert.equal(f.attester, entry.attester);
      assert.equal(f.provenance_class, entry.meta[i].provenance_class);
      assert.equal(f.supersedes, null);
    });
    assert.deepEqual(
      facts.map((f) => f.kind),
      ['primary', 'primary', 'absence'],
    );
    assert.deepEqual(facts[1].scope, { user_id: 'u1', org_id: 'o1' });
    assert.equal(facts[0].scope, null);
  });

  it('names the field of an invalid entry', () => {
    const bad: Array<[string, unknown, RegExp]> = [
      ['version', { ...entry, v: 2 }, /^log entry: v: /],
      ['accepted_at with fractions', { ...entry, accepted_at: '2026-03-01T12:00:00.5Z' }, /accepted_at/],
      ['short batch_root', { ...entry, batch_root: new Uint8Array(31) }, /batch_root/],
      ['meta count', { ...entry, meta: entry.meta.slice(1) }, /meta: expected one entry per fact/],
      ['provenance class', { ...entry, meta: [{ provenance_class: 'guess', tslot: 0 }, ...entry.meta.slice(1)] }, /meta\[0\]\.provenance_class/],
      ['tslot disagreeing with the body', { ...entry, meta: [{ provenance_class: 'direct_sensor', tslot: 1 }, ...entry.meta.slice(1)] }, /meta\[0\]\.tslot: differs/],
      ['a body carrying fact_cid', { ...entry, facts: [{ ...entry.facts[0], fact_cid: 'x' }, ...entry.facts.slice(1)] }, /facts\[0\]/],
      ['a body without a cell', { ...entry, facts: [{ ...entry.facts[0], cell: 5 }, ...entry.facts.slice(1)] }, /facts\[0\]\.cell/],
      ['an unknown member', { ...entry, extra: 1 }, /extra: unknown member/],
    ];
    for (const [what, e, re] of bad) {
      assert.throws(
        () => encodeLogEntry(e as LogEntryV1),
        (err: unknown) => err instanceof SvcError && err.code === 'internal' && re.test(err.message),
        what,
      );
    }
    assert.throws(
      () => decodeLogEntry(new Uint8Array([0xa1])),
      (err: unknown) => err instanceof SvcError && /not decodable/.test(err.message),
    );
  });

  it('encodes each body once and splices it in: the same bytes as encodeCanonical of the whole entry', () => {
    const shapes: LogEntryV1[] = [entry, entryOf(mixedBatch(300, 'x'), '2026-03-01T12:00:00Z')];
    const odd = mixedBatch(10, 'y');
    shapes.push({
      ...entryOf(odd, '0001-01-01T00:00:00Z'),
      attester: 'attester-ü-😀',
      signature: 's'.repeat(300),
      registry_cid: 'r',
      meta: odd.facts.map((f, i) => ({ provenance_class: f.provenance_class, tslot: [0, 23, 24, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1][i] })),
      facts: odd.facts.map((f, i) => ({ ...f.body, tslot: undefined, band: `b€${i}` })),
    });
    for (const e of shapes) {
      const p = encodeLogEntryParts(e);
      assert.deepEqual(p.bytes, encodeCanonical(e as never));
      p.bodies.forEach((body, i) => {
        assert.deepEqual(body, encodeCanonical(e.facts[i] as never));
        assert.deepEqual(p.bytes.subarray(p.bodyAt[i], p.bodyAt[i] + body.length), body);
      });
    }
  });

  it('keys scopes by their set members in a fixed order', () => {
    assert.equal(scopeKey(null), '');
    assert.equal(scopeKey({}), '');
    assert.equal(scopeKey({ user_id: undefined }), '');
    assert.equal(scopeKey({ run_id: 'r', user_id: 'u' }), scopeKey({ user_id: 'u', run_id: 'r' }));
    assert.equal(scopeKey({ run_id: 'r', user_id: 'u' }), '{"user_id":"u","run_id":"r"}');
  });
});

describe('sqlite index: batch tree and column codecs', () => {
  it('stores each batch tree once and rebuilds every proof batchProofs gives', () => {
    const digest = (i: number) => factDigest({ i });
    for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33, 64, 255, 256, 257]) {
      const leaves = Array.from({ length: n }, (_, i) => digest(i));
      if (n > 4) leaves[3] = leaves[1]; // a fact repeated in its batch shares the first one's proof
      const built = buildBatchTree(leaves);
      const { root, proofs } = batchProofs(leaves);
      assert.deepEqual(built.root, root, `n=${n}`);
      const tree = new BatchTree(built.count, built.blob);
      leaves.forEach((leaf, i) => {
        assert.equal(built.leafIndex[i], proofs[i].index);
        assert.deepEqual(tree.leaf(built.leafIndex[i]), leaf);
        assert.deepEqual(tree.proof(built.leafIndex[i]), proofToJson(proofs[i]), `n=${n} i=${i}`);
      });
      // About two nodes per leaf, where per-fact proofs cost log2(n) each.
      assert.ok(built.blob.length <= 32 * (2 * n + Math.ceil(Math.log2(n + 1))), `n=${n}: ${built.blob.length} bytes`);
    }
  });

  it('packs accepted_at into an integer with the same order and back', () => {
    const times = ['0001-01-01T00:00:00Z', '1999-12-31T23:59:59Z', '2026-03-01T12:00:00Z', '2026-03-01T12:00:01Z', '2026-13-45T99:99:99Z', '9999-12-31T23:59:59Z'];
    for (const t of times) assert.equal(unpackAcceptedAt(packAcceptedAt(t)), t);
    const packed = times.map(packAcceptedAt);
    assert.deepEqual(
      [...packed].sort((a, b) => a - b),
      packed,
    );
    // isoSeconds outside four-digit years starts with a sign, which sorted before every stored time.
    assert.equal(packedBound('+010000-01-01T00:00Z'), -1);
    assert.equal(packedBound('2026-03-01T12:00:00Z'), packAcceptedAt('2026-03-01T12:00:00Z'));
  });
});
