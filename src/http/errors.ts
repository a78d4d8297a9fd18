import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type AppError, errors, isAppError } from '../kernel/errors.js';

/** Maps what Fastify throws for malformed requests to our error type (always a 4xx). */
function fromFastify(err: FastifyError): AppError | undefined {
  if (err.validation) {
    const first = err.validation[0];
    const field = first?.instancePath?.replace(/^\//, '').replace(/\//g, '.') || (first?.params as { missingProperty?: string })?.missingProperty;
    return errors.invalidRequest(field ? `invalid field: ${field}` : 'invalid request');
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.payloadTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType('unsupported content type');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidRequest('the body is not valid JSON');
  }
  if (err instanceof SyntaxError) return errors.invalidRequest('the body is not valid JSON');
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    if (err.statusCode === 413) return errors.payloadTooLarge();
    if (err.statusCode === 415) return errors.unsupportedMediaType('unsupported content type');
    return errors.invalidRequest('malformed request');
  }
  return undefined;
}

/** The single error renderer: `{error, error_description?}` JSON, never a stack trace. */
export function renderError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  let appError = isAppError(err) ? err : fromFastify(err as FastifyError);
  if (!appError) {
    request.log.error({ err }, 'unhandled error');
    appError = errors.serverError();
  }
  for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
  return reply.code(appError.status).header('cache-control', 'no-store').type('application/json').send(appError.toBody());
}
