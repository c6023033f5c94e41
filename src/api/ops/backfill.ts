/** Backfill (docs/writes.md, "Backfill"; a write: REST only) and the wiring catalogues (docs/reads.md, "Discovery and catalogues"). */
import { backfill, BACKFILL_LIMITS, type BackfillRequest } from '../../primitives/backfill/backfill.js';
import { dataAvailability, materializersInfo } from '../../primitives/materialize/materializers-info.js';
import { cellSchema, type Operation } from '../operations.js';

const b32Key = { type: 'string', minLength: 1, maxLength: 120 } as const;

export const backfillInput = {
  type: 'object',
  required: ['band'],
  additionalProperties: false,
  properties: {
    cell: cellSchema,
    cells: { type: 'array', items: cellSchema, minItems: 1, maxItems: BACKFILL_LIMITS.cells, description: 'area form: up to 64 cells' },
    band: { type: 'string', minLength: 1, maxLength: 100, description: 'namespaced band key (see /v1/bands)' },
    start_unix: { type: 'integer', minimum: 0, description: 'default: 30 days before end_unix for fast bands, 365 days for medium and slow' },
    end_unix: { type: 'integer', minimum: 0, description: 'default: now' },
    // No schema `default`: the validator would insert it into the body and break the caller's signature.
    max_facts: { type: 'integer', minimum: BACKFILL_LIMITS.max_facts.min, maximum: BACKFILL_LIMITS.max_facts.max, description: `default ${BACKFILL_LIMITS.max_facts.default}` },
    budget_ms: { type: 'integer', minimum: 1, maximum: 600_000, description: 'area form: stop starting cells after this many ms (the rest are listed in pending)' },
    // Not `required` here: a body without them gets the typed refusal that says what to sign.
    responder: { ...b32Key, description: "the target responder's public key (base32, /.well-known/svc.json responder_pubkey_b32): the signature is valid on this responder only" },
    nonce: { type: 'string', minLength: 16, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$', description: 'single use: a request whose nonce was seen is refused as replayed until its expiry' },
    expires_unix: { type: 'integer', minimum: 0, description: 'the request is refused after this time (seconds since the epoch); at most SVC_BACKFILL_MAX_TTL_SECS ahead' },
    attester: { ...b32Key, description: 'attester public key (base32): the responder, an enrolled device or an operator-listed key' },
    signature: { ...b32Key, maxLength: 200, description: 'ed25519 (base32) over blake3(canonical CBOR of this body without signature), responder, nonce and expires_unix included' },
  },
} as const;

const noInput = { type: 'object', properties: {}, additionalProperties: false } as const;

export const backfillOp: Operation = {
  name: 'backfill',
  method: 'POST',
  path: '/v1/backfill',
  summary: 'Fill the past of a band at a cell (or area) from its historical source',
  description: 'Signed list of (tslot, fact_cid, status) per step, newest first: present, materialized, skipped, present_only. Needs an attester signature (spec part 5) over a body that names this responder, a single-use nonce and an expiry.',
  tags: ['write'],
  input: backfillInput,
  mcp: false,
  run: (ctx, input: BackfillRequest, call) => backfill(ctx, input, { deadline: call.deadline }),
};

export const materializersOp: Operation = {
  name: 'materializers',
  method: 'GET',
  path: '/v1/materializers',
  summary: 'Wired upstream connectors and which bands they serve',
  tags: ['catalogue'],
  input: noInput,
  mcp: 'full',
  run: async (ctx) => materializersInfo(ctx),
};

export const dataAvailabilityOp: Operation = {
  name: 'data_availability',
  method: 'GET',
  path: '/v1/data_availability',
  summary: 'Per band: history available from/to, tempo seconds, materializer',
  tags: ['catalogue'],
  input: noInput,
  mcp: 'full',
  run: async (ctx) => dataAvailability(ctx),
};

/** The operations of this file, for the operation table. */
export const BACKFILL_OPS: readonly Operation[] = [backfillOp, materializersOp, dataAvailabilityOp];
