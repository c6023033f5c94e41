/**
 * Error catalogue (docs/errors.md): every stable code with its HTTP status, MCP code, meaning
 * and recovery hint, and the one error type that carries a code. Adapters map codes to
 * statuses through this table only.
 */

export interface ErrorSpec {
  readonly http: number;
  /** JSON-RPC error code used by the MCP adapter; null where docs/errors.md says n/a. */
  readonly mcp: number | null;
  readonly meaning: string;
  readonly recover: string;
  /** True for codes this responder adds to the protocol's catalogue (docs/protocol-notes.md, "Errors beyond the catalogue"). */
  readonly extension?: true;
}

export const ERROR_CATALOGUE = {
  invalid_cell: {
    http: 422,
    mcp: -27,
    meaning: 'cell64 string failed the grammar or the geographic prefix check',
    recover: 'Pass a cell64 from /v1/locate or from a previous answer; cells are case-sensitive.',
  },
  invalid_resolution: { http: 422, mcp: -1, meaning: 'resolution out of range (see /v1/grid_info)', recover: 'Use the single resolution listed at /v1/grid_info.' },
  tslot_mismatch: { http: 422, mcp: -2, meaning: "tslot is not on the band's tempo grid", recover: "Count the tslot in the band's own tempo unit (see /v1/bands); static bands take tslot 0." },
  band_not_in_registry: { http: 404, mcp: -3, meaning: 'band key not in the active manifest', recover: 'List bands at /v1/bands; keys need their namespace prefix (e.g. indices.ndvi).' },
  function_not_in_registry: { http: 404, mcp: -4, meaning: 'derivation function key not registered', recover: 'List functions at /v1/functions.' },
  source_scheme_unknown: { http: 404, mcp: -5, meaning: 'source scheme not declared', recover: 'List sources at /v1/sources.' },
  cid_not_found: {
    http: 404,
    mcp: -6,
    meaning: 'no fact or bundle stored under that content id here',
    recover: 'Check the id; fact_cids are per responder, the cross-responder key is (cell, band, tslot).',
  },
  no_geocoder_match: {
    http: 404,
    mcp: -7,
    meaning: 'every geocoder tier answered and none knows the place',
    recover: 'Retrying the unchanged query does not help; pass lat and lng or refine the name.',
  },
  place_not_found: { http: 404, mcp: null, meaning: 'place not found in any layer', recover: 'Refine the name or pass lat and lng.' },
  geocoder_transport_down: { http: 502, mcp: null, meaning: 'geocoder transport failure', recover: 'Retry later, or pass lat and lng.' },
  invalid_argument: { http: 422, mcp: -25, meaning: 'semantically invalid field (the message names it)', recover: 'Fix the named field; see /openapi.json for its schema.' },
  registry_cid_unknown: { http: 404, mcp: -8, meaning: 'registry CID does not resolve', recover: 'Fetch current CIDs from /v1/manifests.' },
  schema_cid_unknown: { http: 404, mcp: -9, meaning: 'schema CID does not resolve', recover: 'Fetch current CIDs from /v1/manifests.' },
  privacy_refused: { http: 403, mcp: -10, meaning: 'band privacy class blocks the query', recover: 'Coarsen the cell or use an authorised attester.' },
  level_too_low: { http: 403, mcp: -11, meaning: 'operation needs a higher protocol level', recover: 'Use an attester key with the required level.' },
  attester_revoked: { http: 403, mcp: -12, meaning: 'attester key is revoked', recover: 'Sign with a key that is not revoked.' },
  unauthorized: {
    http: 401,
    mcp: -13,
    meaning: 'missing or invalid attester signature, or a key that may not write here',
    recover: 'Sign blake3(batch_root ‖ registry_cid ‖ schema_cid) with a listed key.',
  },
  claim_undecidable: {
    http: 422,
    mcp: -14,
    meaning: 'verify input yields neither true nor false (NaN, type mismatch)',
    recover: 'Compare like with like: numbers with scalar bands, arrays with vector bands.',
  },
  bad_signature: { http: 401, mcp: -15, meaning: 'ed25519 verification failed', recover: 'Check the key and the digest; with canonical_encoding_divergence, sort map keys per RFC 8949 §4.2.1.' },
  unaddressable_subject: {
    http: 422,
    mcp: -16,
    meaning: 'fact subject is neither a cell64 nor an entity token; refused before the log',
    recover: 'Address the fact to a cell64 (from /v1/locate) or an svc:entity: token.',
  },
  bad_merkle_proof: {
    http: 422,
    mcp: -17,
    meaning: 'inclusion proof malformed or does not reach the batch root',
    recover: 'Rebuild batch_root from the canonical CBOR of each fact (docs/protocol-notes.md §6).',
  },
  canonical_encoding_divergence: {
    http: 422,
    mcp: -18,
    meaning: 'CBOR is not deterministic per RFC 8949 §4.2.1',
    recover: 'Encode with sorted map keys, shortest integers and floats, definite lengths.',
  },
  source_fetch_failed: { http: 502, mcp: -19, meaning: 'upstream transport failure; on a place lookup the geocoder is down', recover: 'Retry later; the failure was not signed.' },
  source_format_mismatch: { http: 502, mcp: -20, meaning: 'fetched bytes do not match the declared scheme', recover: 'Retry later; report if persistent.' },
  compute_timeout: { http: 504, mcp: -21, meaning: 'derivation exceeded the request deadline', recover: 'Retry with a smaller request or a larger budget.' },
  compute_quota_exceeded: { http: 429, mcp: -22, meaning: 'per-attester quota exhausted', recover: 'Wait retry_after seconds.' },
  rate_limited: {
    http: 429,
    mcp: -23,
    meaning: 'per-IP request rate or per-IP quota (new bundles) exceeded',
    recover: 'Wait retry_after seconds (also the Retry-After header: 1 for the request rate, the rest of the window for a quota).',
  },
  cache_error: { http: 500, mcp: -24, meaning: 'hot cache internal error', recover: 'Transient: retry once with a fresh request.' },
  internal: { http: 500, mcp: -26, meaning: 'responder-side bug; receipts already signed remain valid', recover: 'Transient: retry once with a fresh request.' },
  // Extensions: situations the protocol's codes do not cover (docs/protocol-notes.md, "Errors
  // beyond the catalogue").
  not_found: { http: 404, mcp: -32601, meaning: 'no such route or method', recover: 'See /openapi.json for the routes.', extension: true },
  payload_too_large: { http: 413, mcp: -25, meaning: 'request body exceeds the size cap', recover: 'Split the request; see /v1/limits.', extension: true },
  token_claim_mismatch: { http: 409, mcp: -28, meaning: "a readable token's place, band or date does not match the signed body", recover: 'Mint a fresh token from the fact.', extension: true },
  not_yet_implemented: { http: 501, mcp: -29, meaning: 'the responder does not implement this yet', recover: 'See details.workaround.', extension: true },
  overloaded: { http: 503, mcp: -30, meaning: 'the responder is shedding load', recover: 'Retry after retry_after seconds.', extension: true },
  artifact_not_found: {
    http: 404,
    mcp: -32,
    meaning: 'no artifact with that cid is held here: never made here, or evicted to keep the artifact store within its size bound',
    recover: 'Rebuild it: POST /v1/raster/resolve with the token that named it (details.rebuild when the artifact was evicted); the bytes come back identical.',
    extension: true,
  },
  storage_full: {
    http: 503,
    mcp: -31,
    meaning: 'the responder is out of disk space: the write was refused and nothing of it acknowledged; reads still work',
    recover: 'Retry the same write after retry_after seconds (Retry-After header); writes resume by themselves once the operator frees space.',
    extension: true,
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const ERROR_SCHEMA = 'svc.error.v1';
export const ERRORS_SCHEMA = 'svc.errors.v1';

/** The failure envelope (docs/errors.md). */
export interface ErrorEnvelope {
  code: ErrorCode;
  message: string;
  schema: typeof ERROR_SCHEMA;
  path?: string;
  details: Record<string, unknown>;
  retry_after?: number;
}

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CATALOGUE, code);
}

/** The single error type: a catalogue code, a human message and machine-readable details. */
export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  /** Overrides the catalogue status where docs/errors.md ("Another status than the catalogue's") names another (400 for n_cells, …). */
  readonly httpStatus: number;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, options?: { status?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SvcError';
    this.code = code;
    this.details = details;
    this.httpStatus = options?.status ?? ERROR_CATALOGUE[code].http;
  }

  /** The envelope for this error at `path`. */
  toEnvelope(path?: string): ErrorEnvelope {
    const env: ErrorEnvelope = { code: this.code, message: this.message, schema: ERROR_SCHEMA, details: this.details };
    if (path !== undefined) env.path = path;
    const ra = this.details.retry_after;
    if (typeof ra === 'number') env.retry_after = ra;
    return env;
  }
}

/** Shorthand for the most common failure: a field that is present but wrong. */
export function invalidArgument(field: string, why: string, status?: number): SvcError {
  return new SvcError('invalid_argument', `${field}: ${why}`, { field }, status === undefined ? undefined : { status });
}

/** The machine-readable catalogue served at GET /v1/errors. */
export function errorCatalogueDocument() {
  return {
    schema: ERRORS_SCHEMA,
    codes: Object.entries(ERROR_CATALOGUE).map(([code, s]) => ({
      code,
      http_status: s.http,
      mcp_error_code: s.mcp,
      meaning: s.meaning,
      recover: s.recover,
      extension: 'extension' in s ? true : false,
    })),
    next: [
      'Branch on `code`, never on `message` or the HTTP status.',
      'rate_limited and compute_quota_exceeded carry retry_after (seconds); honour it.',
      'internal and cache_error are transient: retry once with a fresh request.',
      'A signed absence is a 200 answer, not an error.',
    ],
  };
}
