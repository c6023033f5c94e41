/** Every operation served over REST (and MCP where marked). */
import type { Operation } from '../operations.js';
import { recallOp } from './read.js';

export const OPERATIONS: readonly Operation[] = [recallOp];
