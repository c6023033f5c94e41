/**
 * Agent discovery (docs/reads.md, "Discovery and catalogues"): MCP and agent cards, the recommended
 * tool order, an intent-to-endpoint map, live per-tool stats, the tool list, coverage and
 * contributors.
 */
import type {} from '@fastify/swagger';
import { jsonOnce } from '../json.js';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../primitives/context/context.js';
import { attesterRole } from '../../primitives/facts/fact-meta.js';
import { REPUTATION_NOTE, attesterReputation } from '../../primitives/memory/reputation.js';
import type { Operation } from '../operations.js';
import { GEO_ATTRIBUTION } from '../../geo/attribution.js';
import { MCP_CORE_TOOL_COUNT, toolName, toolsOf } from '../mcp.js';

/** The order an agent should try tools in: find the place, read, then verify. */
const RECOMMENDED_ORDER = [
  'ask',
  'locate',
  'recall',
  'hunt',
  'at',
  'fetch',
  'recall_many',
  'recall_polygon',
  'query_region',
  'trajectory',
  'compare',
  'compare_bands',
  'find_similar',
  'state',
  'verify',
  'verify_receipt',
  'memory_token_resolve',
  'corpus_state_stats',
];

const QUICKREF: Array<{ intent: string; tool: string; why: string }> = [
  {
    intent: 'a question in plain words',
    tool: 'ask',
    why: 'routes the question to a topic and a place, reads the signed facts, answers from them and lists the literal next calls; its svc:state: token resolves later (state_resolve)',
  },
  { intent: 'what is at a place name', tool: 'locate → recall', why: 'resolve the name, check selected.is_high_confidence, then read the cell' },
  { intent: 'where in a region an event is happening', tool: 'hunt', why: "samples up to 32 cells over the region, reads the event algorithm's primary and gate bands, ranks signed hotspots" },
  { intent: 'read given bands at a cell', tool: 'recall', why: 'signed facts, materialized on a miss; notes say what was skipped and why' },
  { intent: 'one value by id', tool: 'fetch', why: 'fetch by fact_cid or (cell, band, tslot)' },
  { intent: 'many cells at once', tool: 'recall_many', why: 'up to 256 cells, one receipt per cell' },
  { intent: 'an area', tool: 'recall_polygon / query_region', why: 'sampled cells inside a polygon; aggregates over stored cells' },
  { intent: 'a time series', tool: 'trajectory', why: 'stored history of one band at one cell; never fetches' },
  { intent: 'places that look alike', tool: 'find_similar', why: 'nearest stored cells by embedding (cosine, or Hamming on the .bin128 codes); only stored public vectors are searched' },
  { intent: 'the embedding of a cell', tool: 'state / state_diff', why: 'the encoder vector (fetched on a miss) with a typed missing[]; its change between two years' },
  { intent: 'see the place', tool: 'GET /v1/cells/<cell64>/scene.png (cell_scene_rgb)', why: 'true-colour Sentinel-2 thumbnail of the scene the point values come from' },
  { intent: 'check a statement', tool: 'verify', why: 'a structured claim evaluated against signed facts, with evidence cids' },
  { intent: 'check an answer', tool: 'verify_receipt', why: 'give the whole response: every fact is recomputed and matched to its receipt (or npx svc verify offline)' },
  { intent: 'hand a reading to another agent', tool: 'memory_token / memory_token_resolve', why: 'short tokens that resolve to the signed bytes' },
  { intent: 'add facts', tool: 'POST /v1/attest (REST only)', why: 'signed batches from listed keys; every write lands in the Merkle log' },
  {
    intent: 'recall what agents wrote',
    tool: 'memory_search',
    why: "notes ranked by the store's full-text engine plus cosine over agent vectors, filtered by place, time, tags, entity, author; write them with POST /v1/memory/notes (REST)",
  },
  {
    intent: 'which real-world object a phrase means',
    tool: 'entity_resolve → entity_recall',
    why: "candidates ranked by how many independent keys named them, with the evidence; then the facts at the entity's cells and its own",
  },
  { intent: 'what a record is linked to, then or now', tool: 'edges_recall', why: 'typed edges with valid time and transaction time: as-of queries; closed edges stay listed' },
  { intent: 'where agents disagree', tool: 'memory_contradictions', why: "slots where signed values of different keys differ beyond the band's tolerance, with both fact_cids" },
  { intent: 'cite a stored value or fetch a fresh one', tool: 'temporal_route', why: 'per band cite_now or fetch_for_intent from cadence, age and intent, with the reasoning as data' },
  { intent: 'explain a response in words', tool: 'explain', why: 'deterministic prose (signed:false) citing the fact_cids, after verifying the response' },
];

function byOrder(ops: readonly Operation[]): Operation[] {
  const rank = (o: Operation) => {
    const i = RECOMMENDED_ORDER.indexOf(o.name);
    return i < 0 ? RECOMMENDED_ORDER.length : i;
  };
  return [...ops].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
}

export async function agentRoutes(app: FastifyInstance, ctx: ServiceContext, ops: readonly Operation[], attributions: () => unknown[]): Promise<void> {
  const p = ctx.config.prefix;
  const card = () => ({
    schema: `${p}.agent_card.v1`,
    name: `${p} — verifiable geospatial memory`,
    description: 'Signed facts about places on Earth at cell × band × time slot, with Ed25519 receipts anyone can verify offline and an append-only Merkle log of every write.',
    version: '1.1.0',
    responder: { public_key: ctx.keys.publicKeyB32, epoch: ctx.keys.epoch, well_known: `/.well-known/${p}.json` },
    mcp: { endpoint: '/mcp', full: '/mcp/full', transport: 'streamable-http', core_tools: MCP_CORE_TOOL_COUNT },
    rest: { openapi: '/openapi.json' },
    recommended_tool_order: byOrder(toolsOf(ops, 'full')).map((o) => toolName(ctx, o)),
    capabilities: { reads: 'anonymous (L0/L1)', writes: 'REST only, attester keys (L2)', verification: 'offline, /v1/verifier_spec, /verify page' },
    cautions: [
      'A signature proves who signed and that the bytes are unchanged, not that the value is correct.',
      'A wrong geocode yields a valid signature for the wrong cell: check locate.selected.is_high_confidence.',
      'A skipped materialize note means unknown, never zero.',
    ],
  });
  const opts = (summary: string) => ({ schema: { summary, tags: ['discovery'] } });
  app.get('/.well-known/mcp.json', opts('MCP discovery'), async () => ({
    schema: `${p}.mcp.v1`,
    endpoint: '/mcp',
    full_endpoint: '/mcp/full',
    transport: 'streamable-http',
    stateless: true,
    tools: toolsOf(ops, 'core').map((o) => ({ name: toolName(ctx, o), rest: `${o.method} ${o.path}`, summary: o.summary })),
  }));
  app.get('/.well-known/agent-card.json', opts('Agent card'), async () => card());
  app.get('/agent.json', opts('Agent card (alias)'), async () => card());
  app.get('/v1/agent_card', opts('Agent card with the recommended tool order'), async () => card());
  app.get('/v1/agent_quickref', opts('Intent-to-endpoint map'), async () => ({ schema: `${p}.agent_quickref.v1`, intents: QUICKREF }));
  app.get('/v1/agent_stats', opts('Per-tool latency and error counts from real traffic (REST and MCP)'), async () => ({
    schema: `${p}.agent_stats.v1`,
    since: startedAt,
    tools: ctx.metrics.snapshot(),
  }));
  // Every operation, so REST-only ones are listed too: `tier` null says the name is not callable over MCP.
  app.get(
    '/v1/tools',
    opts('Every tool: name, REST method and path, MCP tier (core, full or null), input schema'),
    jsonOnce(() => ({
      core_count: toolsOf(ops, 'core').length,
      full_count: toolsOf(ops, 'full').length,
      mcp: { core: '/mcp', full: '/mcp/full', note: 'core tools are listed on /mcp, core and full on /mcp/full; either endpoint calls any tool by name. Writes are REST only.' },
      tools: byOrder(ops).map((o) => ({ name: toolName(ctx, o), tier: o.mcp || null, method: o.method, path: o.path, summary: o.summary, mcp: o.mcp, input_schema: o.input })),
    })),
  );
  app.get('/v1/coverage_matrix', opts('Per band: wired connector, history, facts stored'), async () => {
    const stats = await ctx.store.stats();
    return {
      corpus: stats,
      bands: ctx.registry.bandList.map((b) => {
        const m = ctx.materializers.forBand(b.key);
        return { band: b.key, tempo: b.tempo, source: b.source, materializer: m?.key ?? null, history: m?.history ?? false, provenance_class: b.provenance_class };
      }),
    };
  });
  // The per-attester count scans the facts: recomputed only when the log has grown.
  let attesters: { size: number; list: Array<{ attester: string; role: string; facts: number }> } | undefined;
  app.get('/v1/contributors', opts('Who wrote the public facts (per attester key) and how often other attesters agree with them, data sources, licences and attributions'), async () => {
    const size = await ctx.store.log.size();
    if (attesters?.size !== size) {
      const list = (await ctx.store.publicFactsByAttester()).map((a) => ({ attester: a.attester, role: attesterRole(ctx, a.attester), facts: a.facts }));
      attesters = { size, list };
    }
    // Best effort (docs/reads.md, "Discovery and catalogues"): a listing without reputation rather than no listing.
    const rep = await attesterReputation(ctx, attesters.list);
    return {
      attesters: attesters.list.map((a) => {
        const r = rep?.by_attester.get(a.attester);
        return { ...a, reputation: { accepted: a.facts, corroborated: r?.corroborated ?? 0, contradicted: r?.contradicted ?? 0 } };
      }),
      attesters_note:
        'Public (unscoped) facts stored per attester key; role is responder (fetched and signed by this responder), operator, device, revoked or unlisted. Facts written under a scope are not counted here.',
      reputation: {
        note: REPUTATION_NOTE,
        available: rep?.available ?? false,
        slots_scanned: rep?.slots_scanned ?? 0,
        truncated: rep?.truncated ?? false,
        log_size: rep?.log_size ?? size,
        computed_at: rep?.computed_at ?? null,
      },
      sources: ctx.registry.sourceList.map((s) => ({ key: s.key, name: s.name, provider: s.provider, license: s.license, attribution: s.attribution })),
      datasets: [...GEO_ATTRIBUTION, ...attributions()],
    };
  });
}

const startedAt = new Date().toISOString();
