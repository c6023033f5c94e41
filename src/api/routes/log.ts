/** Transparency log routes (docs/protocol-notes.md §6 and "Transparency log"; docs/verification.md). */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../primitives/context/context.js';
import { consistency, inclusion, listWitnesses, logEntry, submitWitness, treeHead, type WitnessRequest } from '../../primitives/log/log.js';

const u = { type: 'string', pattern: '^[0-9]{1,16}$' } as const;

export async function logRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get('/v1/log/sth', { schema: { summary: 'Signed tree head (tree_size, root)', tags: ['log'] } }, async () => treeHead(ctx));
  app.get(
    '/v1/log/inclusion',
    {
      schema: {
        summary: 'Audit path from one entry to the head, by leaf index or entry (leaf) hash',
        tags: ['log'],
        querystring: { type: 'object', properties: { index: u, entry_hash: { type: 'string', maxLength: 64 }, tree_size: u }, additionalProperties: false },
      },
    },
    async (req) => inclusion(ctx, req.query as Record<string, unknown>),
  );
  app.get(
    '/v1/log/consistency',
    {
      schema: {
        summary: 'Proof that the tree of size `second` extends the tree of size `first`',
        tags: ['log'],
        querystring: { type: 'object', required: ['first'], properties: { first: u, second: u }, additionalProperties: false },
      },
    },
    async (req) => consistency(ctx, req.query as Record<string, unknown>),
  );
  app.get(
    '/v1/log/entries/:index',
    {
      schema: {
        summary: 'One log entry, decoded (bytes as b32) with its CBOR; an entry of scoped facts shows its leaf hash and batch header only, unless a bearer for its scope is sent',
        tags: ['log'],
        params: { type: 'object', properties: { index: u }, required: ['index'] },
      },
    },
    async (req) => logEntry(ctx, (req.params as { index: string }).index, req.headers.authorization),
  );
  app.post(
    '/v1/log/witness',
    {
      schema: {
        summary: "Submit a witness co-signature over a head; refused unless the root is this log's root at that size",
        tags: ['log'],
        body: {
          type: 'object',
          required: ['tree_size', 'root', 'witness', 'signature'],
          additionalProperties: false,
          properties: {
            tree_size: { type: 'integer', minimum: 0 },
            root: { type: 'string' },
            witness: { type: 'string' },
            signature: { type: 'string' },
            operator: { type: 'string', maxLength: 200 },
          },
        },
      },
    },
    async (req) => submitWitness(ctx, req.body as WitnessRequest, req.ip),
  );
  app.get(
    '/v1/log/witnesses',
    {
      schema: {
        summary: "Co-signatures on record (paged: limit, after = a list's next_after) and the count of independent operators",
        tags: ['log'],
        querystring: { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer', minimum: 1, maximum: 1000 }, after: { type: 'string', maxLength: 80 } } },
      },
    },
    async (req) => listWitnesses(ctx, req.query as { limit?: unknown; after?: unknown }),
  );
}
