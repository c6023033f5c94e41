/** Read operations (docs/reads.md, "Recall"). */
import { Type } from '@sinclair/typebox';
import { PROVENANCE_CLASSES } from '../../store/contract.js';
import { recall, recallEtag } from '../../primitives/reads/recall.js';
import { defineOperation } from '../operations.js';
import { B32Key, Bands, Cell, OneOf, Scope, Tslot } from '../schemas/inputs.js';
import { SignedResponse } from '../schemas/responses.js';

/** The recall fields besides the cell(s): shared by recall and the multi-cell reads. */
export const recallFields = {
  bands: Type.Optional(Bands),
  tslot: Type.Optional(Tslot),
  as_of_tslot: Type.Optional(Type.Integer({ minimum: 0, description: 'valid-time bound: only facts with tslot ≤ this' })),
  as_of_signed_at: Type.Optional(Type.String({ maxLength: 40, description: 'transaction-time bound (RFC 3339): what this responder knew then' })),
  provenance: Type.Optional(Type.Array(OneOf(PROVENANCE_CLASSES), { maxItems: 5 })),
  deterministic: Type.Optional(Type.Boolean({ description: 'true keeps direct_sensor and deterministic_index; false keeps the rest' })),
  attester: Type.Optional(
    Type.Array(B32Key, {
      minItems: 1,
      maxItems: 16,
      description: "keep only facts written by these keys (b32): per band the newest such fact; materializes only when the responder key is listed (fact_meta.attester names each fact's key)",
    }),
  ),
  scope: Type.Optional(Scope),
};

/** `include` of recall and recall_many. */
export const Include = Type.Array(OneOf(['edges', 'freshness'] as const), { maxItems: 2 });

export const recallInput = Type.Object({ cell: Cell, ...recallFields, include: Type.Optional(Include) }, { additionalProperties: false });

/** Sets ETag and Cache-Control; answers 304 on a matching If-None-Match. */
export function conditional(
  result: any,
  req: { headers: Record<string, string | string[] | undefined> },
  reply: { header(k: string, v: string): unknown; code(n: number): unknown; send(p?: unknown): unknown },
): boolean {
  const etag = result !== null && typeof result === 'object' ? recallEtag(result) : undefined;
  if (!etag) return false;
  reply.header('ETag', etag);
  reply.header('Cache-Control', 'private, max-age=60');
  const inm = req.headers['if-none-match'];
  if (inm === undefined) return false;
  // If-None-Match compares weakly (RFC 9110 §13.1.2): W/"x" matches "x" (caches may weaken tags).
  const tags = (Array.isArray(inm) ? inm.join(',') : (inm ?? '')).split(',').map((s) => s.trim().replace(/^W\//, ''));
  if (tags.includes(etag) || tags.includes('*')) {
    reply.code(304);
    reply.send();
    return true;
  }
  return false;
}

export const recallOp = defineOperation({
  name: 'recall',
  method: 'POST',
  path: '/v1/recall',
  summary: 'Signed facts at a cell (materializes on a miss)',
  description: 'SignedResponse: facts, receipt, bands_already_attested_at_cell, caveats, materialize_notes. ETag = hash of the sorted fact_cids; If-None-Match → 304.',
  tags: ['read'],
  input: recallInput,
  output: SignedResponse,
  mcp: 'core',
  run: (ctx, input, call) => recall(ctx, input, { deadline: call.deadline }),
  http: conditional,
});
