/** Corpus snapshot and receipt verification as operations (REST + MCP). */
import { corpusStateStats } from '../../primitives/reads/corpus-stats.js';
import { verifyReceiptPrimitive } from '../../primitives/verify/verify-receipt.js';
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
  summary: 'Verify a receipt (preimage v0, v1, v2) or a whole saved response: every fact recomputed and bound; a failure is valid:false, not an error',
  description: 'Use after any read to check what you were given. Body: the receipt JSON itself, {receipt: …}, or the whole response of a read (recall, recall_many, fetch, a shortcut, verify, a token…): then every fact\'s fact_cid is recomputed from its body and must be listed by a valid receipt covering it that names its cell, and `response` reports per fact and per receipt what was checked. Returns {valid, signer, signer_is_this_responder, preimage_b64, preimage_blake3_hex, failures[], errors[], advisories[] (registry_cid_unknown / schema_cid_unknown when a receipt of this responder names a manifest it never published; advisory only), response?}. Offline: `npx svc verify response.json --pubkey <key>`.',
  tags: ['verify'],
  input: { type: 'object', description: 'a receipt as returned by any read, or {receipt: …}' },
  mcp: 'core',
  async run(ctx, body: Record<string, unknown>) {
    return verifyReceiptPrimitive(ctx, body);
  },
};
