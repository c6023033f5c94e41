/**
 * Configuration, declared once: every SVC_* variable with its default, unit and range,
 * validated at start and passed down as a typed object. Nothing else reads process.env.
 */
import { resolve } from 'node:path';

export interface Config {
  port: number;
  /** HTTP worker processes of `svc serve` (1: one process does everything). */
  workers: number;
  /** This process's worker number (1…workers), set by the owning process; 0 when there are no workers. */
  workerId: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  /** PostgreSQL schema (several deployments can share one database). */
  databaseSchema?: string;
  redisUrl?: string;
  /** Deployment prefix word of preimage domains and identifiers (default `svc`). */
  prefix: string;
  scanCellLimit: number;
  rateLimitRps: number;
  rateLimitBurst: number;
  timeoutSecs: number;
  materializerTimeoutSecs: number;
  bodyLimitBytes: number;
  /** Extra attester keys the operator allows to write (b32, comma-separated). */
  attesterKeys: string[];
  /** Keys that may no longer write (b32, comma-separated). */
  revokedKeys: string[];
  /** Enrolled device keys (b32, comma-separated). */
  deviceKeys: string[];
  /** Operator keys that may revoke any key (docs/security.md); listing a key to write gives it no such power. */
  revokerKeys: string[];
  upstreams: Record<string, string>;
  /**
   * Open-Meteo customer key (SVC_OPEN_METEO_API_KEY): when set, every Open-Meteo connector calls
   * the `customer-` host of its API and sends `apikey=` (the free hosts are non-commercial only).
   */
  openMeteoApiKey?: string;
  logLevel: string;
  segmentMaxBytes: number;
  /**
   * Facts one attester key (not the responder's own) may have accepted per UTC day; undefined
   * means unlimited. Counted from the store, so it holds across restarts and shared PostgreSQL.
   */
  attesterDailyFacts?: number;
  /**
   * Facts one key (not the responder's) may have accepted per UTC day when it writes notes
   * (POST /v1/memory/notes), from the same store count; undefined: unlimited (SVC_NOTE_DAILY_QUOTA=0).
   */
  noteDailyQuota?: number;
  /** Note searches (POST /v1/memory/search, memory_search) one process runs at once; more are refused 503 overloaded. */
  memorySearchConcurrency: number;
  /** Open connections one remote address may hold; more are closed on accept. */
  maxConnectionsPerIp: number;
  /**
   * Check every operation's answer against its declared response schema before it is sent
   * (docs/operations.md): a mismatch is logged and answered 500 internal. For tests and staging;
   * it costs a validation per answer.
   */
  checkResponses: boolean;
  /**
   * Scope bindings by operator (docs/scopes.md): `<field>:<value>` of a scope member (e.g.
   * `org_id:acme`) to the keys that may write and read scopes holding that member.
   */
  scopeKeys: Record<string, string[]>;
  /** Longest life of a scope read bearer, in seconds. */
  scopeBearerTtlSecs: number;
  /** New bundle definitions one client address may store per window: count and bytes (docs/reliability.md). */
  bundleQuota: { count: number; bytes: number; windowSecs: number };
  /** Witness keys the operator knows (b32 key → operator name); only these count as independent operators. */
  witnessKeys: Record<string, string>;
  /** Furthest ahead a backfill request's signed expires_unix may lie (also how long its nonce is kept). */
  backfillMaxTtlSecs: number;
  /** How long an answer step of /v1/ask stays resolvable when kept outside the log (the default). */
  askStateRetentionSecs: number;
  /** Records the responder signs on behalf of one anonymous client address per window (contradiction edges). */
  signingQuota: { count: number; windowSecs: number };
  /** Co-signatures by witness keys the operator does not list, per client address per window. */
  witnessQuota: { count: number; windowSecs: number };
  /** Bound on the bytes of stored artifacts (grids; docs/rasters.md): past it the least recently read are evicted. */
  artifactMaxBytes: number;
  /** Serve `GET /metrics` (Prometheus text format; docs/deploy.md). */
  metricsEnabled: boolean;
  /** When set, `GET /metrics` answers only requests with `Authorization: Bearer <token>`. */
  metricsToken?: string;
}

export interface VarSpec {
  /** The variable, or the pattern of a family of variables (`SVC_UPSTREAM_<SOURCE>_URL`). */
  name: string;
  /** The value used when it is unset ('' for none), or a short phrase when that is not one fixed value. */
  default: string;
  /** Its meaning, as the README's configuration table shows it (scripts/config-table.ts writes that table from here). */
  description: string;
}

/** Defaults of the memory limits (docs/memory.md), also listed by /v1/limits. */
export const NOTE_DAILY_QUOTA_DEFAULT = 10_000;
export const MEMORY_SEARCH_CONCURRENCY_DEFAULT = 4;
/** Default of SVC_ARTIFACT_MAX_BYTES: 1 GiB, about a thousand 512 × 512 float32 grids. */
export const ARTIFACT_MAX_BYTES_DEFAULT = 1024 ** 3;

/** Every variable the service reads (README and /v1/limits list them from here). */
export const CONFIG_VARS: readonly VarSpec[] = [
  { name: 'PORT', default: '8080', description: 'HTTP port' },
  { name: 'SVC_HOST', default: '0.0.0.0', description: 'listen address (the default binds every interface)' },
  { name: 'SVC_DATA', default: './var/svc', description: 'data directory of the embedded store, the log and the responder key' },
  { name: 'SVC_DATABASE_URL', default: '', description: 'PostgreSQL connection string: facts and the log live in PostgreSQL, shared by several responder processes' },
  { name: 'SVC_DATABASE_SCHEMA', default: 'svc', description: 'PostgreSQL schema holding the log and the index (several deployments can share one database)' },
  {
    name: 'SVC_REDIS_URL',
    default: '',
    description:
      'Redis hot cache shared by processes (in-process LRU otherwise); keys are prefixed per store (`svc:cache:<hash of database, schema or data directory>:`), so the responders of one deployment share them and other deployments on the same server never do',
  },
  {
    name: 'SVC_WORKERS',
    default: '1',
    description:
      'HTTP worker processes of `svc serve`: above 1, one process owns the store and the log and that many workers serve requests on every core, forwarding store calls and batch attestations to it (docs/deploy.md, "Worker processes")',
  },
  { name: 'SVC_PREFIX', default: 'svc', description: 'prefix word of signed preimages' },
  { name: 'SVC_SCAN_CELL_LIMIT', default: '10000', description: 'rows scanned per cell prefix walk' },
  { name: 'SVC_RATE_LIMIT_RPS', default: '10', description: 'per-IP token bucket: sustained requests per second (600/min)' },
  { name: 'SVC_RATE_LIMIT_BURST', default: '120', description: 'per-IP token bucket: burst' },
  { name: 'SVC_TIMEOUT_SECS', default: '40', description: 'gateway timeout, clamped to 1..600' },
  { name: 'SVC_MATERIALIZER_TIMEOUT_SECS', default: '14', description: 'upstream timeout per request, clamped to 2..240' },
  {
    name: 'SVC_OPEN_METEO_API_KEY',
    default: '',
    description:
      'Open-Meteo customer key for commercial use: every Open-Meteo connector (forecast, archive, air quality, elevation, flood, marine) calls the `customer-<api>.open-meteo.com` host of its API and sends `apikey=`; unset, the free hosts, which are for non-commercial use only ([docs/sources.md](docs/sources.md))',
  },
  { name: 'SVC_BODY_LIMIT_BYTES', default: '4194304', description: 'largest accepted request body' },
  { name: 'SVC_ATTESTER_KEYS', default: '', description: 'operator-listed attester public keys (b32, comma-separated)' },
  { name: 'SVC_REVOKED_KEYS', default: '', description: 'revoked attester keys (b32, comma-separated)' },
  { name: 'SVC_DEVICE_KEYS', default: '', description: 'enrolled device keys (b32, comma-separated)' },
  {
    name: 'SVC_REVOKER_KEYS',
    default: '',
    description: 'operator keys that may revoke any other key (b32, comma-separated); a key listed only to write revokes nobody but itself and the devices it vouched for',
  },
  { name: 'SVC_LOG_LEVEL', default: 'info', description: 'fastify log level (silent, error, warn, info, debug)' },
  { name: 'SVC_SEGMENT_MAX_BYTES', default: '1073741824', description: 'transparency-log segment cap, 4096..1073741824 bytes' },
  {
    name: 'SVC_MAX_CONNECTIONS_PER_IP',
    default: '64',
    description:
      'open connections one remote address may hold (1..1000000); more are closed as they are accepted (slow or idle clients are also reaped: headers within 10 s, a whole request within 30 s, keep-alive 10 s)',
  },
  {
    name: 'SVC_SCOPE_KEYS',
    default: '',
    description:
      'scope bindings, JSON: `{"org_id:acme": ["<b32 key>", …], "user_id:alice": […]}`; a scope with a configured member is written and read only by keys listed for every configured member; other scopes belong to the first listed key that writes them or asks for a bearer (`docs/scopes.md`)',
  },
  { name: 'SVC_SCOPE_BEARER_TTL_SECS', default: '900', description: 'longest life of a scope read bearer (POST /v1/scope_bearer), 60..86400 s' },
  {
    name: 'SVC_BUNDLE_QUOTA_COUNT',
    default: '100',
    description:
      'new bundle definitions one client address (an IPv6 /64) may store per window (1..1000000); beyond: 429 `rate_limited` with the rest of the window in `retry_after`; re-minting a stored bundle is free',
  },
  { name: 'SVC_BUNDLE_QUOTA_BYTES', default: '1048576', description: 'bytes of new bundle definitions one client address may store per window (1024..1073741824)' },
  { name: 'SVC_BUNDLE_QUOTA_WINDOW_SECS', default: '3600', description: 'window of the bundle quota, 1..86400 s; beyond it: 429 rate_limited with retry_after' },
  {
    name: 'SVC_WITNESS_KEYS',
    default: '',
    description:
      'witness keys the operator knows, `<b32 key>=<operator name>` comma-separated; only these count in `independent_operators` of `/v1/log/witnesses`, other co-signatures are listed under `unverified`',
  },
  { name: 'SVC_BACKFILL_MAX_TTL_SECS', default: '300', description: 'furthest ahead (10..3600 s) a backfill request may set its signed expires_unix; its nonce is kept until then' },
  {
    name: 'SVC_ASK_STATE_RETENTION_SECS',
    default: '604800',
    description: 'how long an answer step of /v1/ask (its question text included) stays resolvable when kept outside the log, the default (60..31536000 s); then it is deleted',
  },
  {
    name: 'SVC_SIGNING_QUOTA_COUNT',
    default: '200',
    description: 'records the responder signs on behalf of one anonymous client address (an IPv6 /64) per window, e.g. contradicts edges of memory_contradictions record:true (1..1000000)',
  },
  { name: 'SVC_SIGNING_QUOTA_WINDOW_SECS', default: '3600', description: 'window of the signing quota, 1..86400 s; beyond it: 429 rate_limited with retry_after' },
  {
    name: 'SVC_WITNESS_QUOTA_COUNT',
    default: '60',
    description: 'co-signatures by witness keys not in SVC_WITNESS_KEYS one client address may submit per window (1..1000000); listed keys are not metered',
  },
  { name: 'SVC_WITNESS_QUOTA_WINDOW_SECS', default: '3600', description: 'window of the witness quota, 1..86400 s' },
  { name: 'SVC_ATTESTER_DAILY_FACTS', default: '', description: 'facts each attester key may have accepted per UTC day (integer >= 1; unset: unlimited; the responder key is never counted)' },
  {
    name: 'SVC_NOTE_DAILY_QUOTA',
    default: String(NOTE_DAILY_QUOTA_DEFAULT),
    description:
      'facts a key may have accepted per UTC day and still write notes (POST /v1/memory/notes; its other records count too); 0..100000000, 0: no quota; over it: 429 compute_quota_exceeded with retry_after (to 00:00 UTC)',
  },
  {
    name: 'SVC_CHECK_RESPONSES',
    default: '0',
    description:
      '1: every operation answer is checked against its declared response schema before it is sent, a mismatch is a logged 500 internal (tests and staging; [docs/operations.md](docs/operations.md))',
  },
  {
    name: 'SVC_ARTIFACT_MAX_BYTES',
    default: String(ARTIFACT_MAX_BYTES_DEFAULT),
    description:
      'bytes of artifacts (band_raster grids) the store keeps, 65536..1099511627776; past it the least recently read are evicted (their descriptions stay) and rebuilt from their signed derivation record on the next POST /v1/raster/resolve (docs/rasters.md)',
  },
  {
    name: 'SVC_MEMORY_SEARCH_CONCURRENCY',
    default: String(MEMORY_SEARCH_CONCURRENCY_DEFAULT),
    description: 'note searches (POST /v1/memory/search) one process runs at once, 1..1024; more are refused at once with 503 overloaded, retry_after 1',
  },
  {
    name: 'SVC_METRICS',
    default: '1',
    description: '0: no `GET /metrics` (404); 1: Prometheus text format on the service port, with no scope name, cell, key or raw URL in any label ([docs/deploy.md](docs/deploy.md))',
  },
  {
    name: 'SVC_METRICS_TOKEN',
    default: '',
    description: 'when set (16..256 printable ASCII characters, no spaces), `GET /metrics` needs `Authorization: Bearer <token>` and answers others 401 `unauthorized`',
  },
  // Families read by pattern in loadConfig (every SVC_UPSTREAM_*_URL), listed once each.
  {
    name: 'SVC_UPSTREAM_<SOURCE>_URL',
    default: 'public endpoint',
    description:
      'per-source upstream base URL (see `/v1/sources`): `OPEN_METEO` (forecast + elevation), `OPEN_METEO_AIR`, `OPEN_METEO_ARCHIVE`, `SOILGRIDS`, `ORNL_MODIS`, `EARTH_SEARCH_S2`, `PLANETARY_COMPUTER_S1`, `ESA_WORLDCOVER`, `JRC_GSW`, `HANSEN_GFC`, `JRC_GFC2020`, `CHIRPS`, `GEOTESSERA`, `OPEN_METEO_FLOOD`, `OPEN_METEO_MARINE`, `NASA_POWER`, `JRC_PVGIS`, `TERRACLIMATE`, `METNO_LOCATIONFORECAST`, `NASA_FIRMS`, `ESA_CCI_BIOMASS`, `GEBCO`, `DLR_WSF2019`, `WORLDPOP`, `OVERTURE` (the Overture PMTiles base; the release comes from `OVERTURE_STAC`, its STAC catalogue), and the operator-hosted `VIIRS_LIGHTS` and `KOPPEN_GEIGER`, whose bands stay unwired until set (every provider, its licence and terms: [docs/sources.md](docs/sources.md))',
  },
  { name: 'SVC_UPSTREAM_<SOURCE>_ASSETS_URL', default: "the provider's asset store", description: 'where STAC assets may be fetched (egress allow-list)' },
  { name: 'SVC_UPSTREAM_PHOTON_URL', default: 'public Photon', description: 'network geocoder (Photon); `off` disables this tier' },
  { name: 'SVC_UPSTREAM_NOMINATIM_URL', default: 'public Nominatim', description: 'network geocoder (Nominatim); `off` disables this tier' },
];

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number, clamp = false): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new ConfigError(`${name}: expected a number, got ${JSON.stringify(raw)}`);
  if (clamp) return Math.min(max, Math.max(min, n));
  if (n < min || n > max) throw new ConfigError(`${name}: ${n} is outside ${min}..${max}`);
  return n;
}

/** A 0/1 switch (also true/false); anything else is a configuration error. */
function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(`${name}: expected 0 or 1, got ${JSON.stringify(env[name])}`);
}

/** An optional whole count >= 1: unset or empty means no limit. */
function optionalCount(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new ConfigError(`${name}: expected an integer >= 1 (or unset for no limit), got ${JSON.stringify(raw)}`);
  return n;
}

const SCOPE_MEMBER_RE = /^(user_id|agent_id|run_id|org_id):.{1,200}$/s;
const KEY_RE = /^[a-z2-7]{52}$/;

/** SVC_OPEN_METEO_API_KEY: printable ASCII without spaces (it travels in a query string), or unset. */
function openMeteoApiKey(env: NodeJS.ProcessEnv): string | undefined {
  const raw = (env.SVC_OPEN_METEO_API_KEY ?? '').trim();
  if (raw === '') return undefined;
  if (!/^[\x21-\x7e]{1,256}$/.test(raw)) throw new ConfigError('SVC_OPEN_METEO_API_KEY: expected 1..256 printable ASCII characters without spaces');
  return raw;
}

/** SVC_METRICS_TOKEN: a bearer secret for /metrics, or unset. */
function metricsToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = (env.SVC_METRICS_TOKEN ?? '').trim();
  if (raw === '') return undefined;
  if (!/^[\x21-\x7e]{16,256}$/.test(raw)) throw new ConfigError('SVC_METRICS_TOKEN: expected 16..256 printable ASCII characters without spaces');
  return raw;
}

/** SVC_SCOPE_KEYS: a JSON object of scope member → b32 keys (unset or empty: no bindings). */
function scopeKeys(env: NodeJS.ProcessEnv): Record<string, string[]> {
  const raw = env.SVC_SCOPE_KEYS;
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (e) {
    throw new ConfigError(`SVC_SCOPE_KEYS: not JSON (${(e as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError('SVC_SCOPE_KEYS: expected a JSON object such as {"org_id:acme": ["<b32 key>"]}');
  const out: Record<string, string[]> = {};
  for (const [member, keys] of Object.entries(parsed)) {
    if (!SCOPE_MEMBER_RE.test(member)) throw new ConfigError(`SVC_SCOPE_KEYS: ${JSON.stringify(member)} is not <user_id|agent_id|run_id|org_id>:<value>`);
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string' && KEY_RE.test(k))) throw new ConfigError(`SVC_SCOPE_KEYS: ${member}: expected an array of b32 public keys (52 characters)`);
    out[member] = keys as string[];
  }
  return out;
}

/** SVC_WITNESS_KEYS: `<b32 key>=<operator name>, …` (one operator may run several keys). */
function witnessKeys(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list(env, 'SVC_WITNESS_KEYS')) {
    const at = item.indexOf('=');
    const key = item.slice(0, at).trim();
    const name = item.slice(at + 1).trim();
    if (at < 0 || !KEY_RE.test(key) || name === '' || name.length > 200) {
      throw new ConfigError(`SVC_WITNESS_KEYS: expected <b32 key (52 characters)>=<operator name>, got ${JSON.stringify(item)}`);
    }
    out[key] = name;
  }
  return out;
}

function list(env: NodeJS.ProcessEnv, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Reads and validates the configuration from an environment (process.env by default). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const upstreams: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    const m = /^SVC_UPSTREAM_([A-Z0-9_]+)_URL$/.exec(k);
    if (m && v) {
      // `off` disables an optional upstream tier (the network geocoders).
      if (v.toLowerCase() === 'off') {
        upstreams[m[1]] = 'off';
        continue;
      }
      try {
        new URL(v);
      } catch {
        throw new ConfigError(`${k}: not a URL: ${v}`);
      }
      upstreams[m[1]] = v.replace(/\/+$/, '');
    }
  }
  const prefix = env.SVC_PREFIX || 'svc';
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(prefix)) throw new ConfigError(`SVC_PREFIX: expected a short lowercase word, got ${prefix}`);
  const cfg: Config = {
    port: int(env, 'PORT', 8080, 0, 65535),
    workers: Math.floor(int(env, 'SVC_WORKERS', 1, 1, 256)),
    // Set by the owning process for each worker it starts (src/workers.ts), not by operators.
    workerId: Math.floor(int(env, 'SVC_WORKER_ID', 0, 0, 1_000_000)),
    host: env.SVC_HOST || '0.0.0.0',
    dataDir: resolve(env.SVC_DATA || './var/svc'),
    databaseUrl: env.SVC_DATABASE_URL || undefined,
    databaseSchema: env.SVC_DATABASE_SCHEMA || undefined,
    redisUrl: env.SVC_REDIS_URL || undefined,
    prefix,
    scanCellLimit: int(env, 'SVC_SCAN_CELL_LIMIT', 10_000, 1, 10_000_000),
    rateLimitRps: int(env, 'SVC_RATE_LIMIT_RPS', 10, 0.001, 1_000_000),
    rateLimitBurst: int(env, 'SVC_RATE_LIMIT_BURST', 120, 1, 10_000_000),
    timeoutSecs: int(env, 'SVC_TIMEOUT_SECS', 40, 1, 600, true),
    materializerTimeoutSecs: int(env, 'SVC_MATERIALIZER_TIMEOUT_SECS', 14, 2, 240, true),
    bodyLimitBytes: int(env, 'SVC_BODY_LIMIT_BYTES', 4 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    attesterKeys: list(env, 'SVC_ATTESTER_KEYS'),
    revokedKeys: list(env, 'SVC_REVOKED_KEYS'),
    deviceKeys: list(env, 'SVC_DEVICE_KEYS'),
    revokerKeys: list(env, 'SVC_REVOKER_KEYS'),
    upstreams,
    openMeteoApiKey: openMeteoApiKey(env),
    logLevel: env.SVC_LOG_LEVEL || 'info',
    segmentMaxBytes: int(env, 'SVC_SEGMENT_MAX_BYTES', 1024 ** 3, 4096, 1024 ** 3),
    attesterDailyFacts: optionalCount(env, 'SVC_ATTESTER_DAILY_FACTS'),
    noteDailyQuota: Math.floor(int(env, 'SVC_NOTE_DAILY_QUOTA', NOTE_DAILY_QUOTA_DEFAULT, 0, 100_000_000)) || undefined,
    memorySearchConcurrency: Math.floor(int(env, 'SVC_MEMORY_SEARCH_CONCURRENCY', MEMORY_SEARCH_CONCURRENCY_DEFAULT, 1, 1024)),
    maxConnectionsPerIp: Math.floor(int(env, 'SVC_MAX_CONNECTIONS_PER_IP', 64, 1, 1_000_000)),
    checkResponses: flag(env, 'SVC_CHECK_RESPONSES'),
    scopeKeys: scopeKeys(env),
    scopeBearerTtlSecs: Math.floor(int(env, 'SVC_SCOPE_BEARER_TTL_SECS', 900, 60, 86_400)),
    bundleQuota: {
      count: Math.floor(int(env, 'SVC_BUNDLE_QUOTA_COUNT', 100, 1, 1_000_000)),
      bytes: Math.floor(int(env, 'SVC_BUNDLE_QUOTA_BYTES', 1 << 20, 1024, 1 << 30)),
      windowSecs: Math.floor(int(env, 'SVC_BUNDLE_QUOTA_WINDOW_SECS', 3600, 1, 86_400)),
    },
    witnessKeys: witnessKeys(env),
    backfillMaxTtlSecs: Math.floor(int(env, 'SVC_BACKFILL_MAX_TTL_SECS', 300, 10, 3600)),
    askStateRetentionSecs: Math.floor(int(env, 'SVC_ASK_STATE_RETENTION_SECS', 604_800, 60, 31_536_000)),
    signingQuota: {
      count: Math.floor(int(env, 'SVC_SIGNING_QUOTA_COUNT', 200, 1, 1_000_000)),
      windowSecs: Math.floor(int(env, 'SVC_SIGNING_QUOTA_WINDOW_SECS', 3600, 1, 86_400)),
    },
    witnessQuota: {
      count: Math.floor(int(env, 'SVC_WITNESS_QUOTA_COUNT', 60, 1, 1_000_000)),
      windowSecs: Math.floor(int(env, 'SVC_WITNESS_QUOTA_WINDOW_SECS', 3600, 1, 86_400)),
    },
    artifactMaxBytes: Math.floor(int(env, 'SVC_ARTIFACT_MAX_BYTES', ARTIFACT_MAX_BYTES_DEFAULT, 65_536, 1024 ** 4)),
    // On unless switched off: the labels carry nothing scope-private (docs/deploy.md, "Metrics").
    metricsEnabled: (env.SVC_METRICS ?? '').trim() === '' ? true : flag(env, 'SVC_METRICS'),
    metricsToken: metricsToken(env),
  };
  return { ...cfg, ...overrides };
}
