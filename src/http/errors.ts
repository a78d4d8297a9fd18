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
  if (err.validation) return errors.invalidRequest(describeValidation(err));
  if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return errors.invalidRequest('the body is not valid JSON');
  }
  if (typeof err.statusCode !== 'number' || err.statusCode < 400 || err.statusCode >= 500) return undefined;
  if (err.statusCode === 413) return errors.payloadTooLarge();
  if (err.statusCode === 415) return errors.unsupportedMediaType('unsupported content type');
  return errors.invalidRequest('malformed request');
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
