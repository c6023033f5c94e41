/**
 * The one place that turns failures into the error envelope (docs/errors.md): SvcError keeps its
 * code; fastify's own failures (validation, body parsing, size, bad URLs) are mapped to catalogue
 * codes; anything else is `internal` and logged. Failures Node answers before fastify sees a
 * request are in socket-errors.ts.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_SCHEMA, SvcError } from '../protocol/errors.js';
import { HTTP_LIMITS } from './limits.js';

/** One Ajv error object, as far as the envelope needs it. */
export interface AjvErrorLike {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/**
 * An Ajv validation error as `invalid_argument` naming the field (dotted path, plus the missing
 * or unknown property): REST and MCP validate with the same schemas and report the same way.
 */
export function validationError(v: AjvErrorLike | undefined, fallbackField: string): SvcError {
  const path = (v?.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const missing = v?.params?.missingProperty ?? v?.params?.additionalProperty;
  const field = [path, typeof missing === 'string' ? missing : ''].filter(Boolean).join('.') || fallbackField;
  let why = v?.message ?? 'is invalid';
  if (v?.keyword === 'additionalProperties') why = 'is not a known field';
  if (v?.keyword === 'required') why = 'is required';
  return new SvcError('invalid_argument', `${field}: ${why}`, { field, keyword: v?.keyword ?? null });
}

/**
 * A framework error known only by its HTTP status, as the catalogue code for that status, so no
 * status escapes the catalogue when fastify adds an error this table does not name yet.
 */
function byStatus(status: number, message: string): SvcError | undefined {
  if (status === 404) return new SvcError('not_found', message, {});
  if (status === 413) return new SvcError('payload_too_large', `body: ${message}`, { field: 'body' });
  if (status >= 400 && status < 500) return new SvcError('invalid_argument', `request: ${message}`, { field: 'request' }, { status });
  return undefined;
}

/** Map any thrown value to an SvcError; `bodyLimit` (bytes) names the cap in a 413's message. */
export function toSvcError(err: unknown, bodyLimit?: number): SvcError {
  if (err instanceof SvcError) return err;
  const e = err as FastifyError;
  if (e && Array.isArray(e.validation)) return validationError(e.validation[0] as AjvErrorLike, e.validationContext ?? 'body');
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // fastify's message carries no number; a client needs the cap to split its request.
      return new SvcError('payload_too_large', bodyLimit === undefined ? 'body: larger than the size cap (see /v1/limits body_limit_bytes)' : `body: larger than the ${bodyLimit} byte cap`, {
        field: 'body',
        limit_bytes: bodyLimit ?? null,
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new SvcError('invalid_argument', 'content-type: unsupported media type (send application/json)', { field: 'content-type' }, { status: 415 });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new SvcError('invalid_argument', 'body: empty JSON body', { field: 'body' }, { status: 400 });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new SvcError('invalid_argument', `body: ${e.message}`, { field: 'body' }, { status: 400 });
    case 'FST_ERR_BAD_URL':
      return new SvcError('invalid_argument', 'path: not a valid URL (a percent-escape does not decode to UTF-8)', { field: 'path' }, { status: 400 });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new SvcError(
        'invalid_argument',
        `path: a path parameter is longer than ${HTTP_LIMITS.max_path_param_chars} characters`,
        { field: 'path', max_chars: HTTP_LIMITS.max_path_param_chars },
        { status: 414 },
      );
  }
  if (err instanceof SyntaxError || (e?.statusCode === 400 && /JSON/i.test(e.message ?? ''))) {
    return new SvcError('invalid_argument', `body: not valid JSON (${(err as Error).message})`, { field: 'body' }, { status: 400 });
  }
  // Only fastify's own errors are mapped by status: another library's statusCode says nothing
  // about this request, and its failure stays `internal` (and logged).
  const framework = typeof e?.code === 'string' && e.code.startsWith('FST_') && typeof e.statusCode === 'number';
  const mapped = framework || e?.statusCode === 413 ? byStatus(e.statusCode!, e.message ?? '') : undefined;
  if (mapped) return mapped;
  return new SvcError('internal', 'internal error; receipts already signed remain valid', {}, { cause: err });
}

/** fastify error handler: envelope, status, Retry-After where the code asks for it. */
export function errorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  // Only a 413 reads the route's cap: framework errors (bad URL) come with no route to read.
  const se = toSvcError(err, (err as FastifyError)?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? req.routeOptions.bodyLimit : undefined);
  if (se.code === 'internal') req.log.error({ err }, 'internal error');
  const status = se.httpStatus;
  // The refusal's own wait when it names one (a quota window's rest); the rate limit's is 1 s.
  if (typeof se.details.retry_after === 'number') reply.header('Retry-After', String(se.details.retry_after));
  else if (se.code === 'rate_limited') reply.header('Retry-After', '1');
  void reply
    .status(status)
    .type('application/json')
    .send(se.toEnvelope(req.url.split('?')[0]));
}

/** 404 for unknown routes, in the same envelope (the message quotes a long path only in part: the answer must not outgrow the request). */
export function notFoundHandler(req: FastifyRequest, reply: FastifyReply): void {
  const path = req.url.split('?')[0];
  const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  void reply.status(404).send({ code: 'not_found', message: `${req.method} ${shown}: no such route (see /openapi.json)`, schema: ERROR_SCHEMA, path, details: {} });
}
