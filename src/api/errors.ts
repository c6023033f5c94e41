/**
 * The one place that turns failures into the spec's envelope (part 7): SvcError keeps its code;
 * fastify's own failures (validation, body parsing, size) are mapped to catalogue codes;
 * anything else is `internal` and logged.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_SCHEMA, SvcError } from '../protocol/errors.js';

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

/** Map any thrown value to an SvcError. */
export function toSvcError(err: unknown): SvcError {
  if (err instanceof SvcError) return err;
  const e = err as FastifyError;
  if (e && Array.isArray(e.validation)) return validationError(e.validation[0] as AjvErrorLike, e.validationContext ?? 'body');
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new SvcError('payload_too_large', `body: larger than the ${e.message.match(/\d+/)?.[0] ?? ''} byte cap`.trim(), { field: 'body' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new SvcError('invalid_argument', 'content-type: unsupported media type (send application/json)', { field: 'content-type' }, { status: 415 });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new SvcError('invalid_argument', 'body: empty JSON body', { field: 'body' }, { status: 400 });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new SvcError('invalid_argument', `body: ${e.message}`, { field: 'body' }, { status: 400 });
  }
  if (err instanceof SyntaxError || (e?.statusCode === 400 && /JSON/i.test(e.message ?? ''))) {
    return new SvcError('invalid_argument', `body: not valid JSON (${(err as Error).message})`, { field: 'body' }, { status: 400 });
  }
  if (e?.statusCode === 413) return new SvcError('payload_too_large', 'body: larger than the size cap', { field: 'body' });
  return new SvcError('internal', 'internal error; receipts already signed remain valid', {}, { cause: err });
}

/** fastify error handler: envelope, status, Retry-After where the code asks for it. */
export function errorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const se = toSvcError(err);
  if (se.code === 'internal') req.log.error({ err }, 'internal error');
  const status = se.httpStatus;
  if (se.code === 'rate_limited') reply.header('Retry-After', '1');
  else if (typeof se.details.retry_after === 'number') reply.header('Retry-After', String(se.details.retry_after));
  void reply.status(status).type('application/json').send(se.toEnvelope(req.url.split('?')[0]));
}

/** 404 for unknown routes, in the same envelope. */
export function notFoundHandler(req: FastifyRequest, reply: FastifyReply): void {
  const path = req.url.split('?')[0];
  void reply.status(404).send({ code: 'not_found', message: `${req.method} ${path}: no such route (see /openapi.json)`, schema: ERROR_SCHEMA, path, details: {} });
}
