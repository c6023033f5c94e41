/** Corpus snapshot and receipt verification (spec 4.4 corpus_state_stats, 4.8 verify_receipt). */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { corpusStateStats } from '../../primitives/corpus-stats.js';
import { verifyReceiptPrimitive } from '../../primitives/verify-receipt.js';
import type { ServiceContext } from '../../primitives/context.js';

export async function coreRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get('/v1/corpus_state_stats', {
    schema: { summary: 'One signed snapshot of corpus state (cells, bands, facts scanned)', tags: ['read'] },
  }, async () => corpusStateStats(ctx));

  app.post('/v1/verify_receipt', {
    schema: {
      summary: 'Verify any receipt (all preimage versions); an invalid signature is valid:false, not an error',
      tags: ['verify'],
      body: { type: 'object', description: 'a receipt as returned by any read (the full receipt JSON), or {receipt: …}' },
    },
  }, async (req) => {
    const body = req.body as Record<string, unknown>;
    const receipt = body && typeof body === 'object' && 'receipt' in body && typeof body.receipt === 'object' && !('signature' in body) ? body.receipt : body;
    return verifyReceiptPrimitive(ctx, receipt);
  });
}
