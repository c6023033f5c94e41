/** Fact and batch builders for store tests: bodies as protocol.md §4 describes, batches as §6–7. */
import { b32encode } from '../../../src/protocol/base32.js';
import { cellOf } from '../../../src/protocol/cell64.js';
import { factCid, factDigest } from '../../../src/protocol/cid.js';
import { portableEd25519 } from '../../../src/protocol/ed25519.js';
import { batchProofs, proofToJson } from '../../../src/protocol/merkle-batch.js';
import { isoSeconds, scopeFieldsSet, type Scope } from '../../../src/protocol/receipt.js';
import { attesterDigest } from '../../../src/protocol/tree-head.js';
import type { AppendBatch, FactKind, LogEntryV1, NewFact, ProvenanceClass, TreeHeadSigner } from '../../../src/store/contract.js';

export const TEST_SCHEMA_CID = 'bafytestschema';
export const TEST_REGISTRY_CID = 'bafytestregistry';

const RESPONDER_SEED = new Uint8Array(32).fill(7);
const ATTESTER_SEED = new Uint8Array(32).fill(9);
const ATTESTER_PUB = portableEd25519.publicKey(ATTESTER_SEED);

/** A deterministic tree-head signer (the test responder key). */
export function testSigner(seed: Uint8Array = RESPONDER_SEED): TreeHeadSigner {
  const publicKey = portableEd25519.publicKey(seed);
  return { publicKey, epoch: 0, sign: (digest) => portableEd25519.sign(digest, seed) };
}

export interface FactSpec {
  cell: string;
  band: string;
  tslot: number;
  value: unknown;
  kind?: FactKind;
  unit?: string;
  provenance?: string;
  /** Varying it mints a new version of the same (cell, band, tslot). */
  signed_at?: string;
  scope?: Scope;
  absence_reason?: string;
}

/** A fact body with the members protocol.md §4 lists for a minted fact. */
export function makeFact(spec: FactSpec): Record<string, unknown> {
  const body: Record<string, unknown> = {
    kind: spec.kind ?? 'primary',
    cell: spec.cell,
    band: spec.band,
    tslot: spec.tslot,
    value: spec.value,
    unit: spec.unit ?? 'm_msl',
    provenance: spec.provenance ?? 'test-source',
    derivation: { fn: 'test.identity', sources: [spec.provenance ?? 'test-source'] },
    signer: b32encode(ATTESTER_PUB),
    signed_at: spec.signed_at ?? '2026-01-01T00:00:00Z',
    schema_cid: TEST_SCHEMA_CID,
  };
  if (spec.kind === 'absence') body.absence_reason = spec.absence_reason ?? 'outside_coverage';
  const scope = scopeFieldsSet(spec.scope);
  if (scope) body.scope = scope;
  return body;
}

export interface BatchOptions {
  /** One class for every fact, or one per fact. */
  provenance_class?: ProvenanceClass | ProvenanceClass[];
  /** Sign with a real Ed25519 key (default true; benches skip it). */
  sign?: boolean;
  /** Another attester's 32-byte seed (default: the suite's attester). */
  attesterSeed?: Uint8Array;
}

/** An AppendBatch over `bodies` with cids, per-fact proofs, batch root and attester signature. */
export function makeBatch(bodies: Record<string, unknown>[], opts: BatchOptions = {}): AppendBatch {
  const digests = bodies.map((b) => factDigest(b));
  const { root, proofs } = batchProofs(digests);
  const facts: NewFact[] = bodies.map((body, i) => ({
    fact_cid: factCid(body),
    body,
    cell: body.cell as string,
    band: body.band as string,
    tslot: body.tslot as number,
    kind: body.kind as FactKind,
    provenance_class: Array.isArray(opts.provenance_class) ? opts.provenance_class[i] : (opts.provenance_class ?? 'direct_sensor'),
    scope: scopeFieldsSet(body.scope as Scope | undefined) ?? null,
    proof: proofToJson(proofs[i]),
  }));
  const seed = opts.attesterSeed ?? ATTESTER_SEED;
  const sig = opts.sign === false ? new Uint8Array(64) : portableEd25519.sign(attesterDigest(root, TEST_REGISTRY_CID, TEST_SCHEMA_CID), seed);
  return {
    facts,
    batch_root: root,
    attester: opts.attesterSeed ? b32encode(portableEd25519.publicKey(seed)) : b32encode(ATTESTER_PUB),
    signature: b32encode(sig),
    registry_cid: TEST_REGISTRY_CID,
    schema_cid: TEST_SCHEMA_CID,
  };
}

/** A stepping clock: `now()` returns the current instant; `advance(s)` moves it on. */
export function steppingClock(start = '2026-03-01T12:00:00Z'): { now: () => Date; advance: (seconds: number) => void; iso: () => string } {
  let t = Date.parse(start);
  return {
    now: () => new Date(t),
    advance: (seconds) => {
      t += seconds * 1000;
    },
    iso: () => new Date(t).toISOString().slice(0, 19) + 'Z',
  };
}

/** The entry append() writes for `b`, as a LogEntryV1. */
export function entryOf(b: AppendBatch, accepted_at = isoSeconds(new Date())): LogEntryV1 {
  return {
    v: 1,
    type: 'batch',
    accepted_at,
    attester: b.attester,
    signature: b.signature,
    batch_root: b.batch_root,
    registry_cid: b.registry_cid,
    schema_cid: b.schema_cid,
    facts: b.facts.map((f) => f.body),
    meta: b.facts.map((f) => ({ provenance_class: f.provenance_class, tslot: f.tslot })),
  };
}

/** A batch of `n` facts over two cells, several bands, scopes, kinds and provenance classes. */
export function mixedBatch(n: number, tag: string): AppendBatch {
  const classes = ['direct_sensor', 'deterministic_index', 'model_output', 'human_curated', 'unclassified'] as const;
  const cells = [cellOf(51.5, -0.12), cellOf(-33.9, 18.4)];
  return makeBatch(
    Array.from({ length: n }, (_, i) =>
      makeFact({
        cell: cells[i % 2],
        band: `test.${tag}${i % 3}`,
        tslot: i % 5,
        value: i % 4 === 0 ? null : i * 0.5,
        kind: i % 4 === 0 ? 'absence' : 'primary',
        scope: i % 3 === 0 ? { user_id: `u${i % 2}`, run_id: 'r' } : undefined,
      }),
    ),
    { sign: false, provenance_class: Array.from({ length: n }, (_, i) => classes[i % classes.length]) },
  );
}
