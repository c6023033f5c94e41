/**
 * Protocol-core throughput: Ed25519 sign/verify (node:crypto vs portable), BLAKE3 on small
 * messages, canonical CBOR encode + strict decode, receipt build + sign (and re-issue from a
 * template), cell64 encode/decode.
 * Prints one JSON object; ratios are measured in the same run.
 */
import * as P from '../src/protocol/index.js';
import { nodeEd25519 } from '../src/crypto/node-ed25519.js';
import { serverEd25519 } from '../src/crypto/server-ed25519.js';
import { rate } from './harness.js';
import { installFastBlake3 } from '../src/crypto/fast-blake3.js';

const portableBlake3 = rate(() => P.blake3(new Uint8Array(200)));
const fastInstalled = installFastBlake3();

const seed = P.blake3(P.utf8('bench key'));
const pub = nodeEd25519.publicKey(seed);
const digest = P.blake3(P.utf8('digest'));
const sig = nodeEd25519.sign(digest, seed);
const msg200 = new Uint8Array(200).map((_, i) => i);
const fact = {
  kind: 'primary',
  cell: P.cellOf(51.5, -0.12),
  band: 'weather.temperature_2m',
  tslot: 20412,
  value: 11.25,
  unit: 'degC',
  provenance: 'open-meteo-forecast',
  derivation: { fn: 'open_meteo_current@1', sources: ['open-meteo:forecast'] },
  signer: P.b32encode(pub),
  signed_at: '2026-11-22T10:00:00Z',
  schema_cid: P.contentId({ s: 1 }),
};
const factBytes = P.encodeCanonical(fact);
// An embedding fact: 128 dequantized values (float32-exact, as geotessera writes them).
const vectorFact = { ...fact, band: 'geotessera', unit: 'unitless', value: Array.from({ length: 128 }, (_, i) => Math.fround((((i * 37) % 255) - 127) * 0.0123)) };
const vectorBytes = P.encodeCanonical(vectorFact);
// The responder's backend (libsodium signing when it loads), as `svc serve` signs receipts.
const signer = { publicKey: pub, epoch: 0, sign: (d: Uint8Array) => serverEd25519.sign(d, seed) };
const manifests = { schema_cid: P.contentId({ s: 1 }), registry_cid: P.contentId({ r: 1 }) };
const cell = P.cellOf(12.9716, 77.5946);
let k = 0;
const template = new P.ReceiptTemplate({ primitive: 'svc.recall', cells: [cell], fact_cids: [P.contentId({ a: 1 })] }, signer, manifests);

const r = {
  ed25519_sign_node: rate(() => nodeEd25519.sign(digest, seed)),
  ed25519_sign_server: rate(() => serverEd25519.sign(digest, seed)),
  ed25519_sign_portable: rate(() => P.portableEd25519.sign(digest, seed), 300, 1),
  ed25519_verify_strict_node: rate(() => P.verifyStrict(sig, digest, pub, nodeEd25519)),
  ed25519_verify_strict_portable: rate(() => P.verifyStrict(sig, digest, pub, P.portableEd25519), 300, 1),
  blake3_200B_portable: portableBlake3,
  blake3_200B_server: rate(() => P.blake3(msg200)),
  cbor_encode_fact: rate(() => P.encodeCanonical(fact)),
  cbor_strict_decode_fact: rate(() => P.decodeCanonical(factBytes)),
  cbor_encode_vector_fact: rate(() => P.encodeCanonical(vectorFact)),
  cbor_decode_trusted_vector_fact: rate(() => P.decodeTrusted(vectorBytes)),
  fact_cid: rate(() => P.factCid(fact)),
  receipt_build_sign: rate(() =>
    P.signReceipt({ request_id: P.ulid(), served_at: '2026-11-22T10:00:00Z', primitive: 'svc.recall', cells: [cell], fact_cids: [P.contentId({ a: 1 })] }, signer, manifests),
  ),
  // The same receipt re-issued over an unchanged answer (warm recall): preimage tail prepared once.
  receipt_template_issue: rate(() => template.issue(P.ulid(), '2026-11-22T10:00:00Z', { credits: 0, was_cached: true })),
  cell64_encode: rate(() => P.cellOf(((k++ % 1000) / 1000) * 170 - 85, ((k % 997) / 997) * 350 - 175)),
  cell64_decode_centre: rate(() => P.cellCenter(cell)),
};

const out = {
  bench: 'protocol',
  node: process.version,
  blake3_server_impl: fastInstalled ? 'blake3-wasm' : 'portable',
  results: Object.fromEntries(Object.entries(r).map(([key, v]) => [key, v.ops_per_s])),
  ratios: {
    sign_node_over_portable: Number((r.ed25519_sign_node.ops_per_s / r.ed25519_sign_portable.ops_per_s).toFixed(1)),
    verify_node_over_portable: Number((r.ed25519_verify_strict_node.ops_per_s / r.ed25519_verify_strict_portable.ops_per_s).toFixed(1)),
    receipt_over_raw_sign: Number((r.receipt_build_sign.ops_per_s / r.ed25519_sign_server.ops_per_s).toFixed(2)),
    template_receipt_over_raw_sign: Number((r.receipt_template_issue.ops_per_s / r.ed25519_sign_server.ops_per_s).toFixed(2)),
    server_sign_backend: serverEd25519.name,
  },
};
console.log(JSON.stringify(out, null, 2));
