/** Corpus snapshot and receipt verification as operations (REST + MCP). */
import { corpusStateStats } from '../../primitives/corpus-stats.js';
import { verifyReceiptPrimitive } from '../../primitives/verify-receipt.js';
import type { Operation } from '../operations.js';

export const corpusStatsOp: Operation = {
  name: 'corpus_state_stats',
  method: 'GET',
  path: '/v1/corpus_state_stats',
  summary: 'One signed snapshot of corpus state (cells, bands, facts scanned); the stream tick payload',
  tags: ['read'],
  input: { type: 'object', properties: {}, additionalProperties: false },
  mcp: 'core',
  run: (ctx) => corpusStateStats(ctx),
};

export const verifyReceiptOp: Operation = {
  name: 'verify_receipt',
  method: 'POST',
  path: '/v1/verify_receipt',
  summary: 'Verify any receipt (preimage v0, v1, v2); an invalid signature is valid:false, not an error',
  description: 'Body: the receipt JSON itself, or {receipt: …}. Returns {valid, signer, preimage_b64, preimage_blake3_hex, errors[]}.',
  tags: ['verify'],
  input: { type: 'object', description: 'a receipt as returned by any read, or {receipt: …}' },
  mcp: 'core',
  async run(ctx, body: Record<string, unknown>) {
    const receipt = body && typeof body === 'object' && !('signature' in body) && body.receipt && typeof body.receipt === 'object' ? body.receipt : body;
    return verifyReceiptPrimitive(ctx, receipt);
  },
};
