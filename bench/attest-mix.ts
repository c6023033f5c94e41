/**
 * The realistic attested fact mix the write benchmarks share (bench/ingest.ts attest cases,
 * bench/ingest-http.ts): mostly scalars in range with their declared units, some categorical, a
 * 128-bit code, an absence and a derivative naming stored parents; and the signed envelope over
 * such facts, built before timing as a client would.
 */
import { nodeEd25519 } from '../src/crypto/node-ed25519.js';
import * as P from '../src/protocol/index.js';
import { cellOf } from '../src/protocol/cell64.js';
import { signBits } from '../src/sources/geotessera.js';

const WORLDCOVER = [10, 20, 30, 40, 50, 60, 80, 90];

const EPOCH_MS = Date.UTC(2026, 0, 1);

/** Fact `n` of the mix: distinct for every n (each is signed at its own second of 2026). */
export function attestedFact(n: number, parents: readonly string[]): Record<string, unknown> {
  const cell = cellOf(-50 + (n % 1000) * 0.1, -170 + (Math.floor(n / 1000) % 6000) * 0.05);
  const fast = P.currentTslot('fast') - (n % 97);
  const medium = P.currentTslot('medium') - (n % 29);
  const base = { cell, signed_at: `${new Date(EPOCH_MS + n * 1000).toISOString().slice(0, 19)}Z` };
  switch (n % 16) {
    case 5:
    case 6:
    case 7:
      return { ...base, kind: 'primary', band: 'indices.ndvi', tslot: medium, value: Math.round(((n % 110) / 100 - 0.2) * 1e4) / 1e4, unit: 'unitless' };
    case 8:
    case 9:
      return { ...base, kind: 'primary', band: 'copdem30m.elevation_mean', tslot: 0, value: (n % 4000) - 50, unit: 'm_msl' };
    case 10:
      return { ...base, kind: 'primary', band: 'landcover.esa_worldcover_2021', tslot: 0, value: WORLDCOVER[n % WORLDCOVER.length], unit: 'class' };
    case 11:
      return { ...base, kind: 'primary', band: 'geotessera.bin128', tslot: P.currentTslot('slow') - 1, value: signBits(Array.from({ length: 128 }, (_, i) => Math.sin(n + i))), unit: 'bit' };
    case 12:
      return { ...base, kind: 'absence', band: 'soil.soc_0_30cm', tslot: 0, value: null, unit: 'g_kg', absence_reason: 'outside_coverage' };
    case 13:
      // A derivative and its parent share one cell (the write path refuses anything else).
      return {
        ...base,
        cell: cellOf(70, -170 + (n % parents.length) * 0.01),
        kind: 'derivative',
        band: 'indices.ndvi',
        tslot: medium,
        value: (n % 100) / 100,
        unit: 'unitless',
        derivation: { fn: 'normalized_difference@1', sources: [], parents: [parents[n % parents.length]] },
      };
    case 14:
    case 15:
      return { ...base, kind: 'primary', band: 'weather.precipitation', tslot: fast, value: (n % 500) / 10, unit: 'mm' };
    default:
      return { ...base, kind: 'primary', band: 'weather.temperature_2m', tslot: fast, value: Math.round(((n % 500) / 10 - 10) * 10) / 10, unit: 'degC' };
  }
}

/** The 64 primary parents the derivatives of the mix name (store them first). */
export function parentFacts(): Record<string, unknown>[] {
  return Array.from({ length: 64 }, (_, i) => ({
    kind: 'primary',
    cell: cellOf(70, -170 + i * 0.01),
    band: 'weather.temperature_2m',
    tslot: P.currentTslot('fast'),
    value: i / 10,
    unit: 'degC',
  }));
}

export interface SignedEnvelope {
  batch_root: Uint8Array;
  attester: string;
  signature: string;
  facts: Record<string, unknown>[];
}

/** The attest envelope over `facts` signed by `seed` (node:crypto: signing is the client's cost, done before timing). */
export function signFacts(facts: Record<string, unknown>[], seed: Uint8Array, registryCid: string, schemaCid: string): SignedEnvelope {
  const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
  const sig = nodeEd25519.sign(P.attesterDigest(root, registryCid, schemaCid), seed);
  return { batch_root: root, attester: P.b32encode(nodeEd25519.publicKey(seed)), signature: P.b32encode(sig), facts };
}

/** The JSON body of POST /v1/attest (batch_root as 32 integers). */
export function jsonBody(e: SignedEnvelope): Buffer {
  return Buffer.from(JSON.stringify({ batch_root: Array.from(e.batch_root), attester: e.attester, signature: e.signature, facts: e.facts }));
}

/** The canonical CBOR body of POST /v1/attest_cbor (docs/writes.md: root, key and signature as byte strings). */
export function cborBody(e: SignedEnvelope): Buffer {
  const env = { batch_root: e.batch_root, attester: P.b32decode(e.attester, 32), signature: P.b32decode(e.signature, 64), facts: e.facts as P.CborValue[] };
  return Buffer.from(P.encodeCanonical(env as unknown as P.CborValue));
}
