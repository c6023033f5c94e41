/**
 * The catalogue documents served twice: as REST routes (GET /v1/bands, /v1/topics,
 * /v1/algorithms, /v1/sources, /v1/limits, /v1/agent_quickref; routes/discovery.ts and
 * routes/agents.ts) and as MCP resources (mcp-resources.ts). Each is built here once, so both
 * channels serve the same bytes.
 */
import { CONFIG_VARS } from '../config.js';
import { cacheBounds } from '../lib/cache.js';
import type { ServiceContext } from '../primitives/context/context.js';
import { publishedCubeLayout } from '../primitives/embeddings/state.js';
import { STATEMENT_TTL_SECS } from '../primitives/keys/common.js';
import { TEMPO_UNIT_S } from '../protocol/tslot.js';
import { LIMITS } from './limits.js';

/** The cube layout depends on the served encoders only: computed once per service context. */
const cubeLayouts = new WeakMap<ServiceContext, ReturnType<typeof publishedCubeLayout>>();

/** GET /v1/bands: the band registry and the cube layout of POST /v1/state {view: "cube"}. */
export function bandsDocument(ctx: ServiceContext) {
  if (!cubeLayouts.has(ctx)) cubeLayouts.set(ctx, publishedCubeLayout(ctx));
  return { manifest_cid: ctx.manifests.bands, tempo_unit_seconds: TEMPO_UNIT_S, bands: ctx.registry.bandList, cube_layout: cubeLayouts.get(ctx) ?? null };
}

/** GET /v1/topics: the declared topics with their bands and algorithms. */
export function topicsDocument(ctx: ServiceContext) {
  return { manifest_cid: ctx.manifests.topics, topics: ctx.registry.topicList };
}

/** GET /v1/algorithms: the algorithm catalogue. */
export function algorithmsDocument(ctx: ServiceContext) {
  return { manifest_cid: ctx.manifests.algorithms, algorithms_cid: ctx.manifests.algorithms, algorithms: ctx.registry.algorithmList };
}

/** GET /v1/sources: the upstream sources, each with the URL this responder is configured for. */
export function sourcesDocument(ctx: ServiceContext) {
  return {
    manifest_cid: ctx.manifests.sources,
    sources: ctx.registry.sourceList.map((s) => ({ ...s, configured_url: ctx.config.upstreams[s.env.replace(/^SVC_UPSTREAM_|_URL$/g, '')] ?? s.default_url })),
  };
}

/** GET /v1/limits: the fixed limits and the configured ones in force. */
export function limitsDocument(ctx: ServiceContext) {
  return {
    ...LIMITS,
    rate_limit: { requests_per_second: ctx.config.rateLimitRps, requests_per_minute: Math.round(ctx.config.rateLimitRps * 60), burst: ctx.config.rateLimitBurst, retry_after_s: 1 },
    gateway_timeout_s: ctx.config.timeoutSecs,
    materializer_timeout_s: ctx.config.materializerTimeoutSecs,
    scan_cell_limit: ctx.config.scanCellLimit,
    body_limit_bytes: ctx.config.bodyLimitBytes,
    log_segment_bytes: ctx.config.segmentMaxBytes,
    http: { ...LIMITS.http, max_connections_per_ip: ctx.config.maxConnectionsPerIp },
    memory: { ...LIMITS.memory, note_daily_quota: ctx.config.noteDailyQuota ?? null, search_concurrency: ctx.config.memorySearchConcurrency },
    // Quotas and windows of docs/security.md, as configured here.
    quotas: {
      attester_daily_facts: ctx.config.attesterDailyFacts ?? null,
      bundles_per_address: { count: ctx.config.bundleQuota.count, bytes: ctx.config.bundleQuota.bytes, window_s: ctx.config.bundleQuota.windowSecs },
      responder_signed_records_per_address: { count: ctx.config.signingQuota.count, window_s: ctx.config.signingQuota.windowSecs },
      unlisted_witness_cosignatures_per_address: { count: ctx.config.witnessQuota.count, window_s: ctx.config.witnessQuota.windowSecs },
      statement_ttl_s: STATEMENT_TTL_SECS,
      scope_bearer_ttl_s: ctx.config.scopeBearerTtlSecs,
      backfill_max_ttl_s: ctx.config.backfillMaxTtlSecs,
      ask_state_retention_s: ctx.config.askStateRetentionSecs,
    },
    // SVC_ARTIFACT_MAX_BYTES: the artifact store's bound (least recently read evicted first; docs/rasters.md).
    artifacts: { max_bytes: ctx.config.artifactMaxBytes, eviction: 'least_recently_used' },
    configuration: CONFIG_VARS,
    // Every in-process cache by name with its entry bound (and TTL or byte bound where it has one).
    caches: cacheBounds(),
  };
}

/** An agent's intent, the tool (or call) that serves it, and why. */
export interface QuickrefEntry {
  intent: string;
  tool: string;
  why: string;
}

/** The intent-to-tool map (GET /v1/agent_quickref; the MCP quickref resource renders it as Markdown). */
export const QUICKREF: QuickrefEntry[] = [
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

/** GET /v1/agent_quickref. */
export function quickrefDocument(prefix: string) {
  return { schema: `${prefix}.agent_quickref.v1`, intents: QUICKREF };
}

/**
 * The quickref as Markdown (the MCP resource): the initialize instructions, then the intent
 * table. Bare tool names get the MCP prefix; REST calls stay as written.
 */
export function quickrefMarkdown(prefix: string, instructions: string): string {
  const tool = (t: string) =>
    t
      .split(/ (→|\/) /)
      .map((part) => (/^[a-z_]+$/.test(part) ? `\`${prefix}_${part}\`` : part))
      .join(' ');
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `# ${prefix} agent quickref`,
    '',
    ...instructions.split('\n').flatMap((p) => [p, '']),
    '| intent | tool | why |',
    '|---|---|---|',
    ...QUICKREF.map((q) => `| ${cell(q.intent)} | ${cell(tool(q.tool))} | ${cell(q.why)} |`),
    '',
  ].join('\n');
}
