/** A test attester: builds a batch (root, signature) the way an outside client would, from protocol.md alone. */
import * as P from '../../src/protocol/index.js';

export interface TestAttester {
  seed: Uint8Array;
  publicKey: string;
  batch(
    facts: Record<string, unknown>[],
    manifests: { registry_cid: string; schema_cid: string },
  ): {
    batch_root: number[];
    attester: string;
    signature: string;
    facts: Record<string, unknown>[];
  };
}

export function makeAttester(label: string): TestAttester {
  return attesterFromSeed(P.blake3(P.utf8(`test attester ${label}`)));
}

/** An attester built from a raw 32-byte seed (also the responder's own, in tests). */
export function attesterFromSeed(seed: Uint8Array): TestAttester {
  const publicKey = P.b32encode(P.portableEd25519.publicKey(seed));
  return {
    seed,
    publicKey,
    batch(facts, manifests) {
      const root = P.batchRoot(facts.map((f) => P.factDigest(f)));
      const sig = P.portableEd25519.sign(P.attesterDigest(root, manifests.registry_cid, manifests.schema_cid), seed);
      return { batch_root: Array.from(root), attester: publicKey, signature: P.b32encode(sig), facts };
    },
  };
}

let n = 0;
/** A plain attested fact body at (lat, lng). */
export function sampleFact(over: Record<string, unknown> = {}): Record<string, unknown> {
  n++;
  return {
    kind: 'primary',
    cell: P.cellOf(10 + n * 0.001, 20),
    band: 'weather.temperature_2m',
    value: 20 + n / 10,
    unit: 'degC',
    signed_at: '2026-11-20T12:00:00Z',
    ...over,
  };
}
