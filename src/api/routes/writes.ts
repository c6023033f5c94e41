/** Writes (docs/writes.md): attest (JSON) and attest_cbor (canonical CBOR). REST only, never MCP. */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { b32encode } from '../../protocol/base32.js';
import { decodeCanonical, type CborValue } from '../../protocol/cbor.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { AttestRequest } from '../../primitives/write/attest.js';
import { attest, type AttestAnswerOptions } from '../../primitives/write/forwarded.js';
import type { ServiceContext } from '../../primitives/context/context.js';

const attestBody = {
  type: 'object',
  // attester and signature are checked by the write path, which answers 401 unauthorized when
  // either is missing (docs/writes.md, "Signatures"), not the schema's 422.
  required: ['batch_root', 'facts'],
  properties: {
    batch_root: {
      type: 'array',
      items: { type: 'integer', minimum: 0, maximum: 255 },
      minItems: 32,
      maxItems: 32,
      description: 'BLAKE3 Merkle root over the facts (docs/protocol-notes.md §6) as 32 integers',
    },
    attester: { type: 'string', description: 'attester public key, b32' },
    signature: { type: 'string', description: 'Ed25519 over blake3(batch_root ‖ registry_cid ‖ schema_cid), b32' },
    registry_cid: { type: 'string' },
    schema_cid: { type: 'string' },
    facts: {
      type: 'array',
      minItems: 1,
      maxItems: 4096,
      items: {
        type: 'object',
        required: ['kind', 'cell', 'band', 'value'],
        properties: {
          kind: { type: 'string', enum: ['primary', 'derivative', 'absence'] },
          cell: { type: 'string' },
          band: { type: 'string' },
          value: {},
          tslot: { type: 'integer', minimum: 0 },
          signed_at: { type: 'string' },
          privacy_class: { type: 'string' },
        },
      },
    },
  },
  additionalProperties: false,
} as const;

/** How the answer is shaped (docs/writes.md, "The answer"). */
const answerQuery = {
  type: 'object',
  properties: {
    proofs: {
      type: 'string',
      enum: ['all', 'none'],
      default: 'all',
      description: "'none' leaves merkle_proofs out of the answer (each fact's proof to batch_root, which the signer can rebuild from its own batch)",
    },
  },
  additionalProperties: false,
} as const;

/** Is `v` inside the JSON data model (no byte strings or bigints), so a fact can be served as JSON? */
function jsonOnly(v: CborValue): boolean {
  if (v instanceof Uint8Array || typeof v === 'bigint') return false;
  if (Array.isArray(v)) return v.every(jsonOnly);
  if (v && typeof v === 'object') return Object.values(v).every((x) => jsonOnly(x as CborValue));
  return typeof v !== 'number' || Number.isFinite(v);
}

/** The CBOR envelope → the JSON request: 32/64-byte values arrive as byte strings. */
export function attestFromCbor(bytes: Uint8Array): AttestRequest {
  const env = decodeCanonical(bytes);
  if (!env || typeof env !== 'object' || Array.isArray(env) || env instanceof Uint8Array) throw invalidArgument('body', 'expected a CBOR map');
  const o = env as Record<string, CborValue>;
  const allowed = new Set(['batch_root', 'attester', 'signature', 'facts', 'registry_cid', 'schema_cid']);
  for (const k of Object.keys(o)) if (!allowed.has(k)) throw invalidArgument(k, 'is not a known field');
  const keyText = (field: string, v: CborValue | undefined, len: number) => {
    if (v instanceof Uint8Array) {
      if (v.length !== len) throw invalidArgument(field, `expected ${len} bytes`);
      return b32encode(v);
    }
    if (typeof v === 'string') return v;
    throw new SvcError('unauthorized', `${field}: missing`, { field });
  };
  if (!(o.batch_root instanceof Uint8Array)) throw invalidArgument('batch_root', 'expected a 32-byte byte string');
  if (!Array.isArray(o.facts)) throw invalidArgument('facts', 'expected an array of maps');
  o.facts.forEach((f, i) => {
    if (!f || typeof f !== 'object' || Array.isArray(f) || f instanceof Uint8Array) throw invalidArgument(`facts[${i}]`, 'expected a map');
    if (!jsonOnly(f)) throw invalidArgument(`facts[${i}]`, 'must stay inside the JSON data model (no byte strings, bigints or non-finite numbers)');
  });
  return {
    batch_root: o.batch_root,
    attester: keyText('attester', o.attester, 32),
    signature: keyText('signature', o.signature, 64),
    facts: o.facts as Record<string, unknown>[],
    registry_cid: typeof o.registry_cid === 'string' ? o.registry_cid : undefined,
    schema_cid: typeof o.schema_cid === 'string' ? o.schema_cid : undefined,
  };
}

export async function writeRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.post(
    '/v1/attest',
    {
      schema: {
        summary: 'Append a signed batch of facts (responder, device or operator-listed keys only)',
        tags: ['write'],
        querystring: answerQuery,
        body: attestBody,
      },
    },
    // The parsed body belongs to this request alone: its facts are frozen and encoded once (in
    // the store-owning process when this is a worker: write/forwarded.ts).
    async (req) => attest(ctx, req.body as AttestRequest, req.query as AttestAnswerOptions),
  );

  await app.register(async (scope) => {
    scope.addContentTypeParser('application/cbor', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.post(
      '/v1/attest_cbor',
      {
        schema: {
          summary: 'attest with the envelope in canonical CBOR (RFC 8949 §4.2.1); non-canonical bytes → canonical_encoding_divergence',
          tags: ['write'],
          consumes: ['application/cbor'],
          querystring: answerQuery,
        },
      },
      async (req) => {
        const body = req.body;
        if (!(body instanceof Uint8Array)) throw invalidArgument('content-type', 'send application/cbor', 415);
        return attest(ctx, attestFromCbor(new Uint8Array(body.buffer, body.byteOffset, body.byteLength)), req.query as AttestAnswerOptions);
      },
    );
  });
}
