/**
 * The machine-readable signing and verification specification served at GET /v1/verifier_spec
 * and /.well-known/svc-verifier.json: everything an outside verifier needs, generated from the
 * same constants the code uses, plus live golden vectors computed by this module.
 */
import { b32encode } from './base32.js';
import { toHex, utf8 } from './bytes.js';
import { encodeCanonical } from './cbor.js';
import { cellOf, CELL64_PATTERN, CELL_PREFIX, LAT_MAX, LNG_MAX } from './cell64.js';
import { factCid } from './cid.js';
import { portableEd25519 } from './ed25519.js';
import { blake3 } from './hash.js';
import { batchProofs, proofToJson, BATCH_RULE_VERSION } from './merkle-batch.js';
import { leafHash, memoryNodeSource, treeRoot } from './log-tree.js';
import { MERKLE_ABSENT_MARKER, receiptDigest, receiptPreimage, signReceipt, CURRENT_PREIMAGE_VERSION } from './receipt.js';
import { sthDigest, witnessDigest } from './tree-head.js';
import { DEFAULT_PREFIX } from './preimage.js';

/** Build the verifier specification for a deployment prefix. */
export function verifierSpec(prefix: string = DEFAULT_PREFIX) {
  // Golden vectors from a published, throwaway key: anyone can recompute them.
  const seed = blake3(utf8('svc verifier_spec example key (public, never used to serve)'));
  const pub = portableEd25519.publicKey(seed);
  const signer = { publicKey: pub, epoch: 0, sign: (d: Uint8Array) => portableEd25519.sign(d, seed) };
  const fact = { kind: 'primary', cell: cellOf(0, 0), band: 'copdem30m.elevation_mean', tslot: 0, value: 918.0, unit: 'm_msl' };
  const cid = factCid(fact);
  const { proofs, root } = batchProofs([blake3(encodeCanonical(fact))]);
  const receipt = signReceipt(
    {
      request_id: '01JAAAAAAAAAAAAAAAAAAAAAAA',
      served_at: '2026-01-01T00:00:00Z',
      primitive: `${prefix}.recall`,
      cells: [fact.cell],
      fact_cids: [cid],
      scope: { user_id: 'example' },
      merkle_proof: proofToJson(proofs[0]),
    },
    signer,
    { schema_cid: 'example-schema-cid', registry_cid: 'example-registry-cid' },
    prefix,
  );
  const entries = [0, 1, 2].map((i) => utf8(`entry ${i}`));
  const logRoot = treeRoot(memoryNodeSource(entries.map(leafHash)), 3);
  return {
    schema: `${prefix}.verifier_spec.v1`,
    prefix,
    stream_header: `utf8("${prefix}.preimage.v1") ‖ 0x00 ‖ u32le(len(domain)) ‖ utf8(domain)`,
    segment_encoding: {
      scalar: 'tag[1] ‖ u32le(len) ‖ bytes',
      list: 'tag[1] ‖ u32le(count) ‖ (u32le(len) ‖ bytes)*; an empty list still writes its count',
      text: 'UTF-8',
    },
    digest: 'BLAKE3-256 of the whole stream; Ed25519 signs the 32-byte digest; strict verification (canonical S < L, canonical point encodings, no small-order or torsioned keys)',
    receipt: {
      domain: 'receipt',
      current_version: CURRENT_PREIMAGE_VERSION,
      version_rule: "take the version from the receipt's own preimage_version (absent = 0)",
      versions: {
        '2': { tags: receiptTags(true) },
        '1': { tags: receiptTags(false) },
        '0': {
          rule: 'H(request_id "|" served_at "|" [scope_hex "|"] [as_of_hex "|"] [edges_hex "|"] [manifest_hex "|"] primitive "|" (cell ",")* "|" (fact_cid ",")*)',
          note: 'field_hex and merkle data are not part of the legacy rule',
        },
      },
      optional_segment_sources: {
        scope_hex: 'hex(H(cbor(scope))) where scope = the set members of {user_id, agent_id, run_id, org_id}',
        as_of_hex: 'hex(H(cbor(as_of))) where as_of = {valid_tslot?, transaction_time? (YYYY-MM-DDTHH:MM:SSZ)}',
        edges_hex: 'hex(H(cbor(sorted(edge_cids))))',
        manifest_hex: 'hex(H(cbor(source_versions)))',
        field_hex: 'hex(H(stream("field") ‖ seg(0x01, aoi_cid) ‖ seg(0x02, derivation_cid)))',
        presence: 'a segment is present exactly when its field is present and non-empty',
      },
      merkle_sub_preimage: {
        domain: 'merkle',
        absent_marker_hex: toHex(MERKLE_ABSENT_MARKER),
        with_proof: 'seg(0x01, root[32]) ‖ seg(0x02, u32le(index)) ‖ seg(0x03, siblings concatenated) ‖ seg(0x04, [rule_version])',
        merkle_hex: 'hex(H(stream("merkle") ‖ body))',
        proof_semantics: 'merkle_proof = {index, siblings[], root, rule_version} (b32 digests) proves fact_cids[0] against its batch root',
      },
    },
    batch_merkle: {
      rule_version: BATCH_RULE_VERSION,
      leaves: 'the 32-byte BLAKE3 digest of each fact body canonical CBOR (= b32-decoded fact_cid), sorted bytewise',
      leaf_node: 'H(leaf ‖ leaf)',
      parent: 'H(left ‖ right); a lone last node pairs with itself',
      empty: '32 zero bytes',
    },
    log_tree: {
      rule: 'RFC 6962 §2.1 with BLAKE3-256: leaf H(0x00 ‖ entry), node H(0x01 ‖ left ‖ right), split at the largest power of two below n, empty tree H("")',
      proofs: 'inclusion and consistency as RFC 9162 §2.1.3–2.1.4',
      sth: 'Ed25519 over H(stream("sth") ‖ seg(1, u64be(tree_size)) ‖ seg(2, root[32]) ‖ seg(3, signed_at) ‖ seg(4, responder_key[32]))',
      witness: 'Ed25519 by the witness over H(stream("witness") ‖ seg(1, u64be(tree_size)) ‖ seg(2, root[32]) ‖ seg(3, witness_key[32]))',
      segment_record: '[u32le length][entry CBOR][32-byte BLAKE3 of the CBOR]',
    },
    attester: 'Ed25519 over H(batch_root[32] ‖ utf8(registry_cid) ‖ utf8(schema_cid))',
    cid: {
      fact_cid: 'b32(H(cbor(body))), 52 characters; body = the fact as served minus fact_cid and receipt',
      anchors: 'b32 of the first 16 bytes of the digest, 26 characters (entity_cid, bundle_cid, aoi_cid)',
      base32: 'RFC 4648 alphabet, lowercase, no padding, canonical trailing bits',
    },
    cbor: {
      rules: [
        'RFC 8949 §4.2.1 core deterministic encoding: definite lengths, shortest arguments',
        'map keys sorted by the bytewise order of their encoded form; duplicate keys refused',
        'integral numbers within ±(2^53-1) are integers (also 918.0); others the shortest IEEE 754 float that round-trips',
        '-0.0 → integer 0; NaN → f97e00; ±Infinity → f97c00 / f9fc00',
        'untrusted input is decoded, re-encoded and compared byte for byte (canonical_encoding_divergence)',
      ],
    },
    grid: {
      cell64_pattern: CELL64_PATTERN,
      id_prefix: '0x' + CELL_PREFIX.toString(16),
      lat_max: LAT_MAX,
      lng_max: LNG_MAX,
      encode: 'latq = round((lat+90)/180·LAT_MAX), lngq = round((lng+180)/360·LNG_MAX) after wrapping lng into [-180,180); lngq == LNG_MAX → 0; poles force lngq = 0',
    },
    golden_vectors: {
      example_public_key: b32encode(pub),
      example_seed_hex: toHex(seed),
      fact: { body: fact, cbor_hex: toHex(encodeCanonical(fact)), fact_cid: cid, batch_root_hex: toHex(root) },
      receipt: { receipt, preimage_hex: toHex(receiptPreimage(receipt, prefix)), digest_hex: toHex(receiptDigest(receipt, prefix)) },
      log_tree_3_entries: { entries: ['entry 0', 'entry 1', 'entry 2'], root_hex: toHex(logRoot) },
      sth: { tree_size: 3, root_hex: toHex(logRoot), signed_at: '2026-01-01T00:00:00Z', digest_hex: toHex(sthDigest(3, logRoot, '2026-01-01T00:00:00Z', pub, prefix)) },
      witness: { tree_size: 3, root_hex: toHex(logRoot), witness_key: b32encode(pub), digest_hex: toHex(witnessDigest(3, logRoot, pub, prefix)) },
    },
  };
}

function receiptTags(withMerkle: boolean) {
  const tags = [
    { tag: '0x01', segment: 'request_id', presence: 'always' },
    { tag: '0x02', segment: 'served_at', presence: 'always' },
    { tag: '0x03', segment: 'scope_hex', presence: 'omitted when absent' },
    { tag: '0x04', segment: 'as_of_hex', presence: 'omitted when absent' },
    { tag: '0x05', segment: 'edges_hex', presence: 'omitted when absent' },
    { tag: '0x06', segment: 'manifest_hex', presence: 'omitted when absent' },
    { tag: '0x07', segment: 'primitive', presence: 'always' },
    { tag: '0x08', segment: 'cells', kind: 'list', presence: 'always; an empty list still emits its count' },
    { tag: '0x09', segment: 'fact_cids', kind: 'list', presence: 'always; an empty list still emits its count' },
    { tag: '0x0a', segment: 'field_hex', presence: 'omitted when absent' },
  ];
  if (withMerkle) tags.push({ tag: '0x0b', segment: 'merkle_hex', presence: 'never omitted: ABSENT marker when the receipt carries no proof' });
  return tags;
}
