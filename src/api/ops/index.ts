/** Every operation served over REST (and MCP where marked). */
import type { Operation } from '../operations.js';
import { corpusStatsOp, verifyReceiptOp } from './core.js';
import { recallOp } from './read.js';

export const OPERATIONS: Operation[] = [recallOp, corpusStatsOp, verifyReceiptOp];
