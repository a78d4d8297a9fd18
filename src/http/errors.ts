import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type AppError, errors, isAppError } from '../kernel/errors.js';

/** `field: problem` for the first validation issue (zod or Fastify's own JSON-schema checks). */
function describeValidation(err: FastifyError): string {
  const first = err.validation?.[0];
  if (!first) return 'invalid request';
  const params = (first.params ?? {}) as { missingProperty?: string; keys?: string[] };
  let field = first.instancePath?.replace(/^\//, '').replace(/\//g, '.') || params.missingProperty || '';
  if (first.keyword === 'unrecognized_keys' && params.keys?.length) {
    field = [field, params.keys.join(', ')].filter(Boolean).join('.');
    return `${field}: unknown field`;
  }
  const where = err.validationContext && err.validationContext !== 'body' ? ` (in ${err.validationContext})` : '';
  return field ? `${field}${where}: ${first.message ?? 'invalid'}` : `${first.message ?? 'invalid request'}${where}`;
}

/** Maps what Fastify throws for malformed requests to our error type (always a 4xx). */
function fromFastify(err: FastifyError): AppError | undefined {
  // A path parameter names a resource: one that cannot exist (a malformed id) is not found.
  if (err.validation && err.validationContext === 'params') return errors.notFound(`no such resource: ${describeValidation(err)}`);
  if (err.validation) return errors.invalidRequest(describeValidation(err));
  if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return errors.invalidRequest('the body is not valid JSON');
  }
  if (typeof err.statusCode !== 'number' || err.statusCode < 400 || err.statusCode >= 500) return undefined;
  if (err.statusCode === 413) return errors.payloadTooLarge();
  if (err.statusCode === 415) return errors.unsupportedMediaType('unsupported content type');
  return errors.invalidRequest('malformed request');
}

/**
 * The AppError for anything thrown: itself, a mapped Fastify error, or `server_error` (logged
 * with its stack). A cause or detail attached to an AppError is logged here, never sent.
 */
export function toAppError(err: unknown, request: FastifyRequest): AppError {
  const appError = isAppError(err) ? err : fromFastify(err as FastifyError);
  if (!appError) {
    request.log.error({ err }, 'unhandled error');
    return errors.serverError();
  }
  if (appError.detail !== undefined || appError.cause !== undefined) {
    const level = appError.status >= 500 ? 'error' : 'info';
    request.log[level]({ error: appError.code, detail: appError.detail, err: appError.cause }, 'request refused');
  }
  return appError;
}

/** The single error renderer: `{error, error_description?}` JSON, never a stack trace. */
export function renderError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const appError = toAppError(err, request);
  for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
  return reply.code(appError.status).header('cache-control', 'no-store').type('application/json').send(appError.toBody());
}
