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
import { quickrefDocument } from '../catalogues.js';
import { PROMPT_NAMES } from '../mcp-prompts.js';
import { resourceUris } from '../mcp-resources.js';

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
    // Both endpoints serve the catalogues as resources and the same prompts (docs/reads.md, "MCP").
    resources: resourceUris(p),
    prompts: PROMPT_NAMES,
    progress: 'a tools/call carrying _meta.progressToken and accepting text/event-stream is answered as an event stream: progress notifications, then the result',
    stdio_bridge: 'npx svc mcp --url <this responder> [--full]',
  }));
  app.get('/.well-known/agent-card.json', opts('Agent card'), async () => card());
  app.get('/agent.json', opts('Agent card (alias)'), async () => card());
  app.get('/v1/agent_card', opts('Agent card with the recommended tool order'), async () => card());
  app.get('/v1/agent_quickref', opts('Intent-to-endpoint map'), async () => quickrefDocument(p));
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
