/** Every operation served over REST (and MCP where marked). */
import type { Operation } from '../operations.js';
import { BACKFILL_OPS } from './backfill.js';
import { corpusStatsOp, verifyReceiptOp } from './core.js';
import { recallOp } from './read.js';
import { READS_MORE_OPS } from './reads-more.js';
import { TOKEN_OPS } from './tokens.js';

export const OPERATIONS: Operation[] = [recallOp, corpusStatsOp, verifyReceiptOp, ...READS_MORE_OPS, ...TOKEN_OPS, ...BACKFILL_OPS];
