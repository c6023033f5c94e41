/** Read operations (docs/reads.md, "Recall"). */
import { PROVENANCE_CLASSES } from '../../store/contract.js';
import { recall, recallEtag, type RecallRequest } from '../../primitives/reads/recall.js';
import { bandsSchema, cellSchema, scopeSchema, tslotSchema, type Operation } from '../operations.js';

/** The recall fields besides the cell(s): shared by recall and the multi-cell reads. */
export const recallFields = {
  bands: bandsSchema,
  tslot: tslotSchema,
  as_of_tslot: { type: 'integer', minimum: 0, description: 'valid-time bound: only facts with tslot ≤ this' },
  as_of_signed_at: { type: 'string', maxLength: 40, description: 'transaction-time bound (RFC 3339): what this responder knew then' },
  provenance: { type: 'array', items: { type: 'string', enum: [...PROVENANCE_CLASSES] }, maxItems: 5 },
  deterministic: { type: 'boolean', description: 'true keeps direct_sensor and deterministic_index; false keeps the rest' },
  attester: {
    type: 'array', items: { type: 'string', pattern: '^[a-z2-7]{52}$' }, minItems: 1, maxItems: 16,
    description: 'keep only facts written by these keys (b32): per band the newest such fact; materializes only when the responder key is listed (fact_meta.attester names each fact\'s key)',
  },
  scope: scopeSchema,
} as const;

/** `include` of recall and recall_many. */
export const includeSchema = { type: 'array', items: { type: 'string', enum: ['edges', 'freshness'] }, maxItems: 2 } as const;

export const recallInput = {
  type: 'object',
  required: ['cell'],
  additionalProperties: false,
  properties: { cell: cellSchema, ...recallFields, include: includeSchema },
} as const;

/** Sets ETag and Cache-Control; answers 304 on a matching If-None-Match. */
export function conditional(result: any, req: { headers: Record<string, string | string[] | undefined> }, reply: { header(k: string, v: string): unknown; code(n: number): unknown; send(p?: unknown): unknown }): boolean {
  const etag = result !== null && typeof result === 'object' ? recallEtag(result) : undefined;
  if (!etag) return false;
  reply.header('ETag', etag);
  reply.header('Cache-Control', 'private, max-age=60');
  const inm = req.headers['if-none-match'];
  if (inm === undefined) return false;
  // If-None-Match compares weakly (RFC 9110 §13.1.2): W/"x" matches "x" (caches may weaken tags).
  const tags = (Array.isArray(inm) ? inm.join(',') : inm ?? '').split(',').map((s) => s.trim().replace(/^W\//, ''));
  if (tags.includes(etag) || tags.includes('*')) {
    reply.code(304);
    reply.send();
    return true;
  }
  return false;
}

export const recallOp: Operation = {
  name: 'recall',
  method: 'POST',
  path: '/v1/recall',
  summary: 'Signed facts at a cell (materializes on a miss)',
  description: 'SignedResponse: facts, receipt, bands_already_attested_at_cell, caveats, materialize_notes. ETag = hash of the sorted fact_cids; If-None-Match → 304.',
  tags: ['read'],
  input: recallInput,
  mcp: 'core',
  run: (ctx, input: RecallRequest, call) => recall(ctx, input, { deadline: call.deadline }),
  http: conditional,
};
