/**
 * What the responder measures from real traffic: per-tool latency and error counts (agent_stats,
 * receipt cost figures), and the Prometheus registry served at `GET /metrics` (docs/deploy.md,
 * "Metrics"), recorded where each event happens (HTTP answers, MCP tool calls, materializations,
 * log appends) or read at scrape time (the log's size, the hot cache's running counts).
 *
 * Every label value is a bounded, public name: a route pattern, a method, a status class, an
 * operation or MCP tool name, a source key, an error code, an outcome. Never a scope, cell, key,
 * bearer or raw URL: what is asked and by whom stays out of the metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const WINDOW = 512;

/** Latency buckets in seconds: from a warm read (< 1 ms) to the longest gateway timeout. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Log appends: an fsync or a COMMIT, from well under a millisecond to a stalled writer. */
const APPEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15];

/** Hot-cache lookups per kind of read, counted by the cached store (store/cache/cached-store.ts). */
export type CacheLookupCounts = Record<string, { hits: number; misses: number }>;

/** What the registry reads at scrape time rather than on every event. */
export interface MetricsSources {
  /** Entries in the transparency log. */
  logEntries?: () => Promise<number>;
  /** Running hit and miss counts of the hot cache. */
  cacheLookups?: () => CacheLookupCounts;
  /** Constant facts of the deployment (store driver, cache kind), as `svc_info` labels. */
  info?: { driver: string; cache: string };
}

/** How long the log size may take at scrape time before the gauge is left out of that scrape. */
const SCRAPE_READ_MS = 2000;

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

interface ToolStats {
  /** p50/p99 computed at most every 250 ms (sorting per call would cost more than the call). */
  cached?: { at: number; value: { p50_ms: number; p99_ms: number } };
  calls: number;
  errors: number;
  errorsByCode: Map<string, number>;
  samples: Float64Array;
  next: number;
}

export class Metrics {
  private tools = new Map<string, ToolStats>();
  /** This responder's own registry (never prom-client's global one: a process may hold several services). */
  readonly registry = new Registry();
  private defaultsOn = false;
  private readonly http: Histogram<'route' | 'method' | 'status_class'>;
  private readonly mcpTools: Histogram<'tool' | 'outcome'>;
  private readonly upstreamCalls: Counter<'source'>;
  private readonly upstreamErrors: Counter<'source' | 'kind'>;
  private readonly materializations: Counter<'source' | 'outcome'>;
  private readonly appends: Histogram<'outcome'>;

  constructor(sources: MetricsSources = {}) {
    const registers = [this.registry];
    this.http = new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'HTTP requests by route pattern, method and status class: time from the request to the end of its response',
      labelNames: ['route', 'method', 'status_class'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.mcpTools = new Histogram({
      name: 'svc_mcp_tool_duration_seconds',
      help: 'MCP tools/call by tool and outcome (ok, or the error code of a failed call)',
      labelNames: ['tool', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.upstreamCalls = new Counter({ name: 'svc_upstream_calls_total', help: 'Calls to upstream connectors (one per materialization started), by source', labelNames: ['source'], registers });
    this.upstreamErrors = new Counter({
      name: 'svc_upstream_errors_total',
      help: 'Upstream connector calls that failed, by source and kind (timeout, error)',
      labelNames: ['source', 'kind'],
      registers,
    });
    this.materializations = new Counter({
      name: 'svc_materializations_total',
      help: 'Materializations on a read miss by source and outcome (value, absence, timeout, upstream_error, refused, no_materializer, backoff, failed)',
      labelNames: ['source', 'outcome'],
      registers,
    });
    this.appends = new Histogram({
      name: 'svc_log_append_duration_seconds',
      help: 'Batches appended to the transparency log (durable when ok: fsync or COMMIT), by outcome (ok, error)',
      labelNames: ['outcome'],
      buckets: APPEND_BUCKETS,
      registers,
    });
    const { logEntries, cacheLookups, info } = sources;
    if (logEntries) {
      new Gauge({
        name: 'svc_log_entries',
        help: 'Entries (accepted batches) in the transparency log, read at scrape time',
        registers,
        async collect() {
          // A store that does not answer in time leaves the gauge out of this scrape rather than
          // holding the scrape or repeating an old value.
          this.reset();
          const n = await withinMs(logEntries(), SCRAPE_READ_MS);
          if (n !== undefined) this.set(n);
        },
      });
    }
    if (cacheLookups) {
      const counts = (field: 'hits' | 'misses') =>
        function (this: Counter<'kind'>) {
          this.reset();
          for (const [kind, c] of Object.entries(cacheLookups())) this.inc({ kind }, c[field]);
        };
      new Counter({ name: 'svc_cache_hits_total', help: 'Hot-cache lookups answered from the cache, by kind of read (fact, query, bands)', labelNames: ['kind'], registers, collect: counts('hits') });
      new Counter({
        name: 'svc_cache_misses_total',
        help: 'Hot-cache lookups that went to the store (a miss, or a cache that could not vouch for the cell), by kind of read',
        labelNames: ['kind'],
        registers,
        collect: counts('misses'),
      });
    }
    if (info) {
      const g = new Gauge({ name: 'svc_info', help: 'Constant 1, labelled with the store driver and the hot-cache kind', labelNames: ['driver', 'cache'], registers });
      g.set(info, 1);
    }
  }

  /**
   * The Prometheus text exposition of everything recorded. Node's default process metrics
   * (process_*, nodejs_*) join at the first scrape: they install observers that live as long as
   * the process, so responders that are never scraped (tests build many) do not pay for them.
   */
  async exposition(): Promise<{ contentType: string; text: string }> {
    if (!this.defaultsOn) {
      this.defaultsOn = true;
      collectDefaultMetrics({ register: this.registry });
    }
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  /** One HTTP request: `route` is the matched route pattern (never the URL), `seconds` its whole time. */
  httpRequest(route: string, method: string, status: number, seconds: number): void {
    const statusClass = STATUS_CLASSES[Math.floor(status / 100) - 1] ?? 'other';
    this.http.observe({ route, method: METHODS.has(method) ? method : 'OTHER', status_class: statusClass }, seconds);
  }

  /** One MCP tools/call of a known tool (or `unknown`): `outcome` is `ok` or the failure's error code. */
  mcpToolCall(tool: string, outcome: string, seconds: number): void {
    this.mcpTools.observe({ tool, outcome }, seconds);
  }

  /** One upstream connector call started for `source` (a registry source key). */
  upstreamCall(source: string): void {
    this.upstreamCalls.inc({ source });
  }

  /** One upstream connector call of `source` that failed. */
  upstreamError(source: string, kind: 'timeout' | 'error'): void {
    this.upstreamErrors.inc({ source, kind });
  }

  /** One materialization attempt and how it ended. */
  materialization(source: string, outcome: string): void {
    this.materializations.inc({ source, outcome });
  }

  /** One batch append to the log and how long it took. */
  logAppend(seconds: number, ok: boolean): void {
    this.appends.observe({ outcome: ok ? 'ok' : 'error' }, seconds);
  }

  private of(tool: string): ToolStats {
    let s = this.tools.get(tool);
    if (!s) {
      s = { calls: 0, errors: 0, errorsByCode: new Map(), samples: new Float64Array(WINDOW), next: 0 };
      this.tools.set(tool, s);
    }
    return s;
  }

  /** Record one call of `tool` that took `ms`, failing with `errorCode` if given. */
  record(tool: string, ms: number, errorCode?: string): void {
    const s = this.of(tool);
    s.calls++;
    s.samples[s.next++ % WINDOW] = ms;
    if (errorCode) {
      s.errors++;
      s.errorsByCode.set(errorCode, (s.errorsByCode.get(errorCode) ?? 0) + 1);
    }
  }

  /** p50/p99 over the last calls of `tool` (undefined before the first call). */
  latency(tool: string): { p50_ms: number; p99_ms: number } | undefined {
    const s = this.tools.get(tool);
    if (!s || s.calls === 0) return undefined;
    const now = performance.now();
    if (s.cached && now - s.cached.at < 250) return s.cached.value;
    const n = Math.min(s.calls, WINDOW);
    const arr = Array.from(s.samples.subarray(0, n)).sort((a, b) => a - b);
    const at = (q: number) => Number(arr[Math.min(n - 1, Math.floor(q * n))].toFixed(2));
    const value = { p50_ms: at(0.5), p99_ms: at(0.99) };
    s.cached = { at: now, value };
    return value;
  }

  snapshot() {
    return [...this.tools.entries()]
      .map(([tool, s]) => ({ tool, calls: s.calls, errors: s.errors, errors_by_code: Object.fromEntries(s.errorsByCode), ...this.latency(tool) }))
      .sort((a, b) => b.calls - a.calls);
  }
}

/** `p`'s value, or undefined when it fails or takes longer than `ms`. */
async function withinMs<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([p.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
