/**
 * Child process of postgres-multiprocess.test.ts: opens the store on a shared schema and
 * appends single-fact batches with some concurrency, reading in between. Prints one JSON line
 * per acknowledged append ({ w, i, cid, log_index }) between a { ready } line (then it waits for a
 * line on stdin) and a final { done } line; exits non-zero
 * on any failure, including a read that does not see an acknowledged fact.
 *
 * Usage: node --import tsx pg-worker.ts <schema> <worker-tag> <count> <concurrency>
 */
import { cellOf } from '../../../src/protocol/cell64.js';
import { leafHash, verifyInclusion } from '../../../src/protocol/log-tree.js';
import { createPostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { makeBatch, makeFact, testSigner } from './facts.js';
import { pgConfig } from './pg-env.js';
import { cachedStore } from '../../../src/store/cache/cached-store.js';
import { RedisCache } from '../../../src/store/cache/redis-cache.js';

const [schema, tag, countText, concText] = process.argv.slice(2);
const count = Number(countText);
const concurrency = Number(concText);

function fail(msg: string): never {
  process.stderr.write(`pg-worker ${tag}: ${msg}\n`);
  process.exit(1);
}

const pg = await createPostgresStore(pgConfig(), testSigner(), { schema, logger: () => undefined });
// With Redis configured, both processes share one hot cache (generations bumped on every write),
// so every read below also exercises cross-process cache invalidation.
const redisUrl = process.env.SVC_TEST_REDIS_URL;
const store = redisUrl ? cachedStore(pg, new RedisCache({ url: redisUrl, keyPrefix: `svc-test:${schema}:` })) : pg;
// Both workers open first, then start together when the parent writes a line: the appends overlap.
process.stdout.write(JSON.stringify({ ready: tag }) + '\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
process.stdin.pause();
let next = 0;

async function lane(): Promise<void> {
  for (let i = next++; i < count; i = next++) {
    const cell = cellOf(10 + Number(tag) + i / 1000, 20);
    const batch = makeBatch([makeFact({ cell, band: `test.w${tag}`, tslot: i, value: i })], { sign: false });
    const cid = batch.facts[0].fact_cid;
    const res = await store.append(batch);
    process.stdout.write(JSON.stringify({ w: tag, i, cid, log_index: res.log_index }) + '\n');
    if (res.duplicates.length > 0) fail(`append ${i}: unexpected duplicates ${res.duplicates.join(',')}`);
    // Reads interleaved with the other process's writes: an acknowledged fact is visible at once.
    const got = await store.getFact(cid);
    if (got === null || got.log_index !== res.log_index) fail(`append ${i}: getFact does not see ${cid} at ${res.log_index}`);
    if (i % 10 === 0) {
      const latest = await store.latest({ cell, bands: [`test.w${tag}`] });
      if (latest[0]?.fact_cid !== cid) fail(`append ${i}: latest does not return ${cid}`);
      const size = await store.log.size();
      const root = await store.log.root(size);
      const proof = await store.log.inclusionProof(res.log_index, size);
      const entry = await store.log.entry(res.log_index);
      if (entry === null || !verifyInclusion(res.log_index, size, leafHash(entry), proof, root)) fail(`append ${i}: inclusion of ${res.log_index} in ${size} does not verify`);
    }
  }
}

try {
  await Promise.all(Array.from({ length: concurrency }, () => lane()));
  process.stdout.write(JSON.stringify({ done: tag }) + '\n');
} catch (err) {
  fail((err as Error).stack ?? String(err));
} finally {
  await store.close();
}
