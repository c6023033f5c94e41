/**
 * The one HTTP client every connector uses: per-request timeout inside the caller's deadline,
 * retries of retryable failures (408, 429, 5xx, transport, timeout) with jittered backoff, a
 * real User-Agent, keep-alive (undici's pooled fetch), and an egress allow-list: only hosts of
 * configured upstream base URLs may be contacted.
 */

export type UpstreamErrorKind = 'timeout' | 'http' | 'transport' | 'egress' | 'format';

/** A failed upstream exchange; `retryable` follows the kind and status. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamErrorKind,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'UpstreamError';
  }
  get retryable(): boolean {
    if (this.kind === 'timeout' || this.kind === 'transport') return true;
    if (this.kind === 'http') return this.status === 408 || this.status === 429 || (this.status ?? 0) >= 500;
    return false;
  }
}

export interface UpstreamResponse {
  status: number;
  headers: Headers;
  body: Uint8Array;
  url: string;
  /** Attempts made (1 = no retry). */
  attempts: number;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'HEAD';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Caller's absolute deadline (ms since epoch); the client never works past it. */
  deadline?: number;
  signal?: AbortSignal;
  /** Inclusive byte range (HTTP Range). */
  range?: [number, number];
  /** Statuses that are answers, not failures (e.g. 404 for a missing tile). */
  acceptStatus?: readonly number[];
  maxBytes?: number;
}

export interface UpstreamClientOptions {
  userAgent: string;
  /** Per-attempt timeout (SVC_MATERIALIZER_TIMEOUT_SECS). */
  timeoutMs: number;
  /** Base URLs whose hosts may be contacted. */
  allowedBaseUrls: readonly string[];
  retries?: number;
  backoffMs?: number;
}

/** host:port of a URL, with the scheme's default port made explicit. */
function hostKey(u: URL): string {
  const port = u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
  return `${u.protocol}//${u.hostname.toLowerCase()}:${port}`;
}

export class UpstreamClient {
  private readonly allowed: Set<string>;
  /** `*.example.net` entries: scheme + port + host suffix. */
  private readonly suffixes: Array<{ scheme: string; port: string; suffix: string }>;
  /** Requests actually sent (tests and benchmarks read it). */
  requests = 0;

  constructor(readonly opts: UpstreamClientOptions) {
    const exact = opts.allowedBaseUrls.filter((b) => !b.includes('://*.'));
    this.allowed = new Set(exact.map((b) => hostKey(new URL(b))));
    this.suffixes = opts.allowedBaseUrls
      .filter((b) => b.includes('://*.'))
      .map((b) => {
        const u = new URL(b.replace('://*.', '://wildcard.'));
        const key = hostKey(u);
        return { scheme: u.protocol, port: key.slice(key.lastIndexOf(':') + 1), suffix: u.hostname.slice('wildcard'.length).toLowerCase() };
      });
  }

  /** Whether `url` is inside the egress allow-list. */
  isAllowed(url: string): boolean {
    try {
      const u = new URL(url);
      const key = hostKey(u);
      if (this.allowed.has(key)) return true;
      const port = key.slice(key.lastIndexOf(':') + 1);
      return this.suffixes.some((s) => s.scheme === u.protocol && s.port === port && u.hostname.toLowerCase().endsWith(s.suffix));
    } catch {
      return false;
    }
  }

  /** One exchange with retries; throws UpstreamError. */
  async request(url: string, o: RequestOptions = {}): Promise<UpstreamResponse> {
    if (!this.isAllowed(url)) throw new UpstreamError('egress', `egress refused: ${new URL(url).host} is not a configured upstream host`);
    const deadline = o.deadline ?? Date.now() + this.opts.timeoutMs;
    const retries = this.opts.retries ?? 2;
    const backoff = this.opts.backoffMs ?? 150;
    let last: UpstreamError | undefined;
    for (let attempt = 1; attempt <= retries + 1; attempt++) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        const res = await this.once(url, o, Math.min(this.opts.timeoutMs, left));
        return { ...res, attempts: attempt };
      } catch (e) {
        last = e instanceof UpstreamError ? e : new UpstreamError('transport', (e as Error).message, undefined, { cause: e });
        if (!last.retryable || o.signal?.aborted) throw last;
        const wait = backoff * 2 ** (attempt - 1) * (0.5 + Math.random());
        if (Date.now() + wait >= deadline) break;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
    throw last ?? new UpstreamError('timeout', `no time left to call ${new URL(url).host}`);
  }

  private async once(url: string, o: RequestOptions, timeoutMs: number): Promise<Omit<UpstreamResponse, 'attempts'>> {
    const ac = new AbortController();
    const onAbort = () => ac.abort();
    o.signal?.addEventListener('abort', onAbort);
    const timer = setTimeout(() => ac.abort(), timeoutMs);
    const headers: Record<string, string> = { 'user-agent': this.opts.userAgent, accept: '*/*', ...o.headers };
    if (o.range) headers.range = `bytes=${o.range[0]}-${o.range[1]}`;
    this.requests++;
    try {
      const res = await fetch(url, { method: o.method ?? 'GET', headers, body: o.body as BodyInit | undefined, signal: ac.signal, redirect: 'manual' });
      // 304 Not Modified answers a conditional request: it is a status, not a redirect.
      if (res.status >= 300 && res.status < 400 && res.status !== 304) {
        const loc = res.headers.get('location');
        // A redirect may not leave the allow-list.
        if (loc && this.isAllowed(new URL(loc, url).href)) return this.once(new URL(loc, url).href, o, timeoutMs);
        throw new UpstreamError('egress', `redirect to a host outside the allow-list refused (${loc})`);
      }
      const ok = (res.status >= 200 && res.status < 300) || (o.acceptStatus ?? []).includes(res.status);
      const buf = new Uint8Array(await res.arrayBuffer());
      if (o.maxBytes !== undefined && buf.length > o.maxBytes) throw new UpstreamError('format', `response of ${buf.length} bytes exceeds ${o.maxBytes}`);
      if (!ok) throw new UpstreamError('http', `HTTP ${res.status} from ${new URL(url).host}`, res.status);
      return { status: res.status, headers: res.headers, body: buf, url };
    } catch (e) {
      if (e instanceof UpstreamError) throw e;
      if (ac.signal.aborted) {
        throw new UpstreamError('timeout', o.signal?.aborted ? 'request aborted by the caller' : `no answer from ${new URL(url).host} within ${timeoutMs} ms`);
      }
      throw new UpstreamError('transport', `transport failure to ${new URL(url).host}: ${(e as Error).message}`, undefined, { cause: e });
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** GET/POST and parse JSON; a body that is not JSON is a `format` error. */
  async json<T = unknown>(url: string, o: RequestOptions = {}): Promise<{ data: T; res: UpstreamResponse }> {
    const res = await this.request(url, { ...o, headers: { accept: 'application/json', ...(o.body ? { 'content-type': 'application/json' } : {}), ...o.headers } });
    try {
      return { data: JSON.parse(new TextDecoder().decode(res.body)) as T, res };
    } catch {
      throw new UpstreamError('format', `upstream ${new URL(url).host} sent bytes that are not JSON`);
    }
  }
}
