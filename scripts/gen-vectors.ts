/**
 * Writes the generated golden vectors under test/vectors/ from deterministic inputs.
 * The committed files are the reference: tests recompute every value with src/protocol and
 * an independent implementation (../shared/tools/svcref.py) re-checks them.
 * Run: node --import tsx scripts/gen-vectors.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as P from '../src/protocol/index.js';

const out = (path: string, value: unknown) => {
  mkdirSync(new URL(`../test/vectors/${path.split('/').slice(0, -1).join('/')}/`, import.meta.url), { recursive: true });
  writeFileSync(new URL(`../test/vectors/${path}`, import.meta.url), JSON.stringify(value, null, 1) + '\n');
};

// Deterministic PRNG (mulberry32) so the vectors never change between runs.
function prng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const seedBytes = (tag: number) => P.blake3(P.utf8(`svc golden vector key ${tag}`));

// ---- cell64: random points with their cells and centres
{
  const rnd = prng(42);
  const cases = [] as unknown[];
  for (let i = 0; i < 200; i++) {
    const lat = Number((rnd() * 180 - 90).toFixed(6));
    const lng = Number((rnd() * 360 - 180).toFixed(6));
    const cell = P.cellOf(lat, lng);
    cases.push({ lat, lng, cell, center: P.cellCenter(cell), neighbours: i < 10 ? P.neighbours(cell) : undefined });
  }
  out('cell64/generated.json', { rule: 'protocol.md §1', cases });
}

// ---- receipts: each version, with and without optional segments
{
  const seed = seedBytes(1);
  const pub = P.portableEd25519.publicKey(seed);
  const signer = { publicKey: pub, epoch: 0, sign: (d: Uint8Array) => P.portableEd25519.sign(d, seed) };
  const cells = [P.cellOf(51.5074, -0.1278), P.cellOf(12.9716, 77.5946)];
  const fact = { kind: 'primary', cell: cells[0], band: 'copdem30m.elevation_mean', tslot: 0, value: 11.5, unit: 'm_msl' };
  const fcid = P.factCid(fact);
  const other = P.factCid({ ...fact, value: 12 });
  const leaves = [P.b32decode(fcid, 32), P.b32decode(other, 32)];
  const { proofs } = P.batchProofs(leaves);
  const base = {
    request_id: '01JAAAAAAAAAAAAAAAAAAAAAAA',
    served_at: '2026-01-02T03:04:05Z',
    primitive: 'svc.recall',
    cells,
    fact_cids: [fcid, other],
  };
  const optional = {
    scope: { user_id: 'u-1', org_id: 'org-9' },
    as_of: { valid_tslot: 20000, transaction_time: '2026-01-01T00:00:00Z' },
    edge_cids: [other, fcid],
    source_versions: { 'open-meteo': '2026-01-01', copdem: 'glo-90' },
    field: { aoi_cid: P.anchorId({ bbox: [0, 0, 1, 1] }), derivation_cid: P.contentId({ recipe: 'band_raster@1' }) },
    merkle_proof: P.proofToJson(proofs[0]),
  };
  const manifests = { schema_cid: P.contentId({ schema: 'svc.fact.v1' }), registry_cid: P.contentId({ registry: 'golden' }) };
  const cases = [] as unknown[];
  const variants: Array<[string, Record<string, unknown>]> = [
    ['bare', {}],
    ['empty_lists', { cells: [], fact_cids: [] }],
    ['scope', { scope: optional.scope }],
    ['as_of', { as_of: optional.as_of }],
    ['edges', { edge_cids: optional.edge_cids }],
    ['manifest', { source_versions: optional.source_versions }],
    ['field', { field: optional.field }],
    ['merkle', { merkle_proof: optional.merkle_proof }],
    ['all', optional],
  ];
  for (const version of [0, 1, 2]) {
    for (const [name, extra] of variants) {
      const body = { ...base, ...extra };
      const signed = P.signReceipt(body as P.ReceiptBody, signer, manifests);
      const r: P.Receipt = { ...signed, preimage_version: version };
      if (version === 0) delete r.preimage_version;
      const preimage = P.receiptPreimage(r);
      r.signature = P.b32encode(signer.sign(P.blake3(preimage)));
      cases.push({ name: `v${version}/${name}`, receipt: r, preimage_hex: P.toHex(preimage), digest_hex: P.toHex(P.blake3(preimage)), segment_hexes: P.segmentHexes(r) });
    }
  }
  out('receipts/receipts.json', { rule: 'spec 2.4, protocol.md §5', public_key: P.b32encode(pub), merkle_absent_marker_hex: P.toHex(P.MERKLE_ABSENT_MARKER), cases });
}

// ---- batch Merkle roots and proofs
{
  const cases = [] as unknown[];
  for (let n = 0; n <= 9; n++) {
    const leaves = Array.from({ length: n }, (_, i) => P.blake3(P.utf8(`leaf ${i}`)));
    const { root, proofs } = P.batchProofs(leaves);
    cases.push({
      leaves: leaves.map(P.b32encode),
      root_hex: P.toHex(root),
      proofs: proofs.map((p) => P.proofToJson(p)),
    });
  }
  out('merkle/batch.json', { rule: 'spec 4.13, protocol.md §6 (sorted leaves, H(l‖l) leaf nodes, lone node pairs with itself)', cases });
}

// ---- RFC 6962 log tree, sizes 0..64
{
  const entries = Array.from({ length: 64 }, (_, i) => P.utf8(`entry ${i}`));
  const leafHashes = entries.map(P.leafHash);
  const src = P.memoryNodeSource(leafHashes);
  const sizes = [] as unknown[];
  for (let n = 0; n <= 64; n++) {
    const inclusion = [] as unknown[];
    const consistency = [] as unknown[];
    const picks = n === 0 ? [] : [...new Set([0, n >> 1, n - 1])];
    for (const m of picks) inclusion.push({ index: m, path: P.inclusionProof(src, m, n).map(P.toHex) });
    for (const m of [...new Set([1, n >> 1, n - 1])].filter((m) => m >= 1 && m <= n)) {
      consistency.push({ first: m, first_root: P.toHex(P.treeRoot(src, m)), path: P.consistencyProof(src, m, n).map(P.toHex) });
    }
    sizes.push({ size: n, root: P.toHex(P.treeRoot(src, n)), inclusion, consistency });
  }
  out('rfc6962/tree.json', { rule: 'RFC 6962 §2.1 with BLAKE3; entry i is utf8("entry " + i)', sizes });
}

// ---- tree heads, witness and attester digests
{
  const seed = seedBytes(2);
  const pub = P.portableEd25519.publicKey(seed);
  const wseed = seedBytes(3);
  const wpub = P.portableEd25519.publicKey(wseed);
  const root = P.blake3(P.utf8('root'));
  const cases = [0, 1, 7, 2 ** 40].map((size) => {
    const signedAt = '2026-05-06T07:08:09Z';
    const sd = P.sthDigest(size, root, signedAt, pub);
    const wd = P.witnessDigest(size, root, wpub);
    return {
      tree_size: size,
      root_hex: P.toHex(root),
      signed_at: signedAt,
      responder: P.b32encode(pub),
      sth_digest_hex: P.toHex(sd),
      sth_signature: P.b32encode(P.portableEd25519.sign(sd, seed)),
      witness: P.b32encode(wpub),
      witness_digest_hex: P.toHex(wd),
      witness_signature: P.b32encode(P.portableEd25519.sign(wd, wseed)),
    };
  });
  const batchRootBytes = P.blake3(P.utf8('batch'));
  const attester = {
    batch_root: Array.from(batchRootBytes),
    registry_cid: P.contentId({ registry: 'golden' }),
    schema_cid: P.contentId({ schema: 'svc.fact.v1' }),
    digest_hex: P.toHex(P.attesterDigest(batchRootBytes, P.contentId({ registry: 'golden' }), P.contentId({ schema: 'svc.fact.v1' }))),
  };
  out('tree-heads/sth.json', { rule: 'protocol.md §6, §7', cases, attester });
}

// ---- facts and content ids
{
  const facts = [
    { kind: 'primary', cell: P.cellOf(0, 0), band: 'copdem30m.elevation_mean', tslot: 0, value: 918.0, unit: 'm_msl', provenance: 'open-meteo-elevation' },
    { kind: 'absence', cell: P.cellOf(10, -30), band: 'copdem30m.elevation_mean', tslot: 0, value: null, unit: 'm_msl', absence_reason: 'outside_coverage' },
    { kind: 'primary', cell: P.cellOf(-33.8688, 151.2093), band: 'geotessera', tslot: 56, value: [0.5, -0.25, 1e-7, 3], unit: 'unitless' },
  ];
  out('facts/cids.json', {
    rule: 'protocol.md §4: fact_cid = b32(H(cbor(body))); anchors = first 16 bytes',
    cases: facts.map((f) => ({ body: f, cbor_hex: P.toHex(P.encodeCanonical(f)), fact_cid: P.factCid(f), anchor_id: P.anchorId(f) })),
  });
}
console.log('vectors written');
