/** Every operation served over REST (and MCP where marked). */
import type { Operation } from '../operations.js';
import { AREA_EMBEDDING_OPS } from './area-embeddings.js';
import { ASK_OPS } from './ask.js';
import { BACKFILL_OPS } from './backfill.js';
import { corpusStatsOp, verifyReceiptOp } from './core.js';
import { CUBE_OPS } from './cubes.js';
import { DEVICE_OPS } from './devices.js';
import { DERIVE_OPS } from './derive.js';
import { EMBEDDING_ANALYTICS_OPS } from './embeddings.js';
import { ENTITY_OPS } from './entities.js';
import { EUDR_OPS } from './eudr.js';
import { FIELD_OPS } from './fields.js';
import { huntOp } from './hunt.js';
import { INSIGHT_OPS } from './insight.js';
import { locateOp } from './locate.js';
import { MEMORY_OPS } from './memory.js';
import { recallOp } from './read.js';
import { READS_MORE_OPS } from './reads-more.js';
import { RASTER_OPS } from './rasters.js';
import { SCENE_OPS } from './scene.js';
import { guardScopedRead, scopeBearerOp } from './scopes.js';
import { SHORTCUT_OPS } from './shortcuts.js';
import { SOLVER_OPS } from './solvers.js';
import { TOKEN_OPS } from './tokens.js';
import { VECTOR_OPS } from './vectors.js';

// Every read taking a `scope` runs only with a bearer for it (scopes.ts, docs/scopes.md); the
// bearer's own issuance names a scope too, and is authenticated by the key's signature instead.
export const OPERATIONS: Operation[] = [
  ...[
    locateOp,
    recallOp,
    corpusStatsOp,
    verifyReceiptOp,
    ...READS_MORE_OPS,
    ...SCENE_OPS,
    ...VECTOR_OPS,
    ...EMBEDDING_ANALYTICS_OPS,
    ...TOKEN_OPS,
    ...BACKFILL_OPS,
    ...SHORTCUT_OPS,
    ...ASK_OPS,
    huntOp,
    ...MEMORY_OPS,
    ...DERIVE_OPS,
    ...ENTITY_OPS,
    ...INSIGHT_OPS,
    ...FIELD_OPS,
    ...RASTER_OPS,
    ...AREA_EMBEDDING_OPS,
    ...CUBE_OPS,
    ...SOLVER_OPS,
    ...EUDR_OPS,
  ].map(guardScopedRead),
  scopeBearerOp,
  ...DEVICE_OPS,
];
