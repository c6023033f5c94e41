/** Per-tool latency and error counts from real traffic (agent_stats, receipt cost figures). */

const WINDOW = 512;

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
