/**
 * corpus_state_stats (docs/reads.md, "The corpus snapshot and its stream"): one signed snapshot of
 * the corpus; also the stream tick payload. Cells (cell64 only), subjects (records anchored on
 * `svc:entity:…`), bands and facts are public counts (Store.stats):
 * a scope's facts move only the log, which is public anyway (docs/scopes.md).
 */
import { issueReceipt, type ServiceContext } from '../context/context.js';

export async function corpusStateStats(ctx: ServiceContext) {
  const started = performance.now();
  const stats = await ctx.store.stats();
  const head = await ctx.store.log.latestTreeHead();
  const snapshot = {
    schema: `${ctx.config.prefix}.corpus_state.v1`,
    cells: stats.cells,
    subjects: stats.subjects,
    bands: stats.bands,
    facts_scanned: stats.facts,
    log: { tree_size: head.tree_size, root: head.root },
    driver: ctx.store.driver,
    as_of: head.signed_at,
  };
  const receipt = issueReceipt(ctx, 'corpus_state_stats', [], [], {
    cost: { credits: 0, was_cached: false, latency_p50_ms: Math.round(performance.now() - started) },
  });
  return { ...snapshot, tree_head: head, receipt };
}
